//! Does a job's gang fit in one cluster's capacity summary, and what does it take?
//!
//! The summary is coarse (free whole GPUs per node without node names, free milli per
//! partly used device, the largest gang per topology scope), so every step here errs on the
//! side of "does not fit": a job the allocator sends somewhere fits there as far as the
//! summary can tell, and the agent's own scheduler makes the exact placement. Deductions
//! (reservations, jobs dispatched earlier in the same round) shrink the view the same way.

use std::collections::BTreeMap;

use grus_protocol::wire::{CapacitySummary, JobSpec, ModelCapacity, PoolCapacity, TopologyScope};
use grus_scheduler::resources::MILLI_PER_GPU;

use super::{GpuTake, SkipReason};

/// One task's members that must be placed, with one replica's needs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MemberGroup {
    pub members: u32,
    /// Whole GPUs per member (1 for a share).
    pub gpus: u32,
    /// Milli per GPU: 1000 for whole GPUs.
    pub milli: u32,
    /// Allowed models (any of); empty means any.
    pub models: Vec<String>,
    pub scope: TopologyScope,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// A MIG instance of this profile per member (then `gpus` is 1).
    pub mig: Option<String>,
}

/// The members the allocator must find room for before it dispatches: every replica, or
/// the first `gang.min_members` replicas in task order when the gang is smaller than the
/// job (the rest are placed by the agent when room appears, as with Volcano's minAvailable).
pub(crate) fn demand_of(spec: &JobSpec) -> Vec<MemberGroup> {
    let total: u32 = spec.tasks.iter().map(|t| t.replicas).sum();
    let mut left = match spec.gang {
        Some(g) if g.min_members > 0 && g.min_members < total => g.min_members,
        _ => total,
    };
    let mut groups = Vec::new();
    for t in &spec.tasks {
        if left == 0 {
            break;
        }
        let members = t.replicas.min(left);
        left -= members;
        let r = &t.resources;
        let milli = if r.gpus == 0 { 0 } else { r.gpu_milli.unwrap_or(MILLI_PER_GPU).clamp(1, MILLI_PER_GPU) };
        groups.push(MemberGroup {
            members,
            gpus: r.gpus,
            milli,
            models: r.gpu_models.clone(),
            scope: t.topology.map(|s| s.scope).unwrap_or_default(),
            cpu_milli: r.cpu_milli,
            memory_mib: r.memory_mib,
            mig: r.mig_profile.clone(),
        });
    }
    groups
}

/// Free capacity of one GPU model while planning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModelFree {
    pub model: String,
    /// Free whole GPUs per node (unordered; zeros allowed).
    pub whole: Vec<u32>,
    /// Free milli per partly used device.
    pub shares: Vec<u32>,
    /// Largest gang in whole GPUs per scope (`node`, `nvlink`, `rack`); never above the truth.
    pub largest: BTreeMap<String, u32>,
    /// Per MIG profile, instances the model's MIG-mode GPUs can still take (each counted as
    /// if filled with that profile alone); never above the truth.
    pub mig: BTreeMap<String, u32>,
}

impl ModelFree {
    pub fn free_whole(&self) -> u64 {
        self.whole.iter().map(|&w| w as u64).sum()
    }

    pub fn free_milli(&self) -> u64 {
        self.free_whole() * MILLI_PER_GPU as u64 + self.shares.iter().map(|&s| s as u64).sum::<u64>()
    }

    fn max_node(&self) -> u32 {
        self.whole.iter().copied().max().unwrap_or(0)
    }

    /// The largest gang inside `scope`; a missing entry falls back to a safe bound.
    fn largest_in(&self, scope: TopologyScope) -> u32 {
        let node = self.largest.get("node").copied().unwrap_or(u32::MAX).min(self.max_node());
        match scope {
            TopologyScope::Node => node,
            // An NVLink island is inside one node; without the entry, assume single GPUs only.
            TopologyScope::Nvlink => self.largest.get("nvlink").copied().unwrap_or(1.min(node)).min(node),
            // A rack holds at least its best node; without the entry, only claim that.
            TopologyScope::Rack => {
                let total = self.free_whole().min(u32::MAX as u64) as u32;
                self.largest.get("rack").copied().unwrap_or(node).min(total)
            }
            TopologyScope::Any => self.free_whole().min(u32::MAX as u64) as u32,
        }
    }

    /// Takes `n` whole GPUs from the node with the fewest free GPUs that still holds them
    /// (best fit keeps large nodes whole for large gangs).
    fn take_on_one_node(&mut self, n: u32) -> bool {
        let best = self.whole.iter().enumerate().filter(|(_, &w)| w >= n).min_by_key(|(i, &w)| (w, *i));
        match best.map(|(i, _)| i) {
            Some(i) => {
                self.whole[i] -= n;
                self.after_take(n);
                true
            }
            None => false,
        }
    }

    /// Takes one share of `milli` from the tightest partly used device, else opens a whole GPU.
    fn take_share(&mut self, milli: u32) -> bool {
        let best = self.shares.iter().enumerate().filter(|(_, &s)| s >= milli).min_by_key(|(i, &s)| (s, *i));
        if let Some(i) = best.map(|(i, _)| i) {
            self.shares[i] -= milli;
            return true;
        }
        if self.take_on_one_node(1) {
            self.shares.push(MILLI_PER_GPU - milli);
            return true;
        }
        false
    }

    /// Takes one MIG instance of `profile`. Which GPU it lands on is unknown (the summary
    /// counts each profile alone), so each other profile loses as many instances as the taken
    /// one's memory slices could overlap (its slices over the other's, plus one for alignment),
    /// but never more than one GPU holds of it: never above the truth.
    fn take_mig(&mut self, profile: &str) -> bool {
        use grus_scheduler::mig::{known_profile, MigLayout};
        let Some(left) = self.mig.get_mut(profile).filter(|n| **n > 0) else { return false };
        *left -= 1;
        let taken = known_profile(profile);
        for (name, n) in self.mig.iter_mut().filter(|(name, _)| name.as_str() != profile) {
            let loss = match (taken, known_profile(name)) {
                (Some(t), Some(o)) => {
                    let overlapped = u32::from(t.memory.div_ceil(o.memory.max(1))) + 1;
                    overlapped.min(MigLayout::default().instances_left(o))
                }
                _ => *n,
            };
            *n = n.saturating_sub(loss);
        }
        true
    }

    /// Conservatively shrinks the per-scope bounds: the GPUs taken may have come from the
    /// largest island, so every bound drops by what was taken.
    fn after_take(&mut self, n: u32) {
        for v in self.largest.values_mut() {
            *v = v.saturating_sub(n);
        }
    }

    /// Deducts a take that is already promised (a reservation). If the view no longer has
    /// the exact node, it takes from the largest nodes instead, so the view only shrinks.
    pub fn deduct(&mut self, take: &GpuTake) {
        for &n in &take.per_node {
            if n == 0 || self.take_on_one_node(n) {
                continue;
            }
            let mut left = n;
            while left > 0 {
                let Some(i) = (0..self.whole.len()).max_by_key(|&i| (self.whole[i], std::cmp::Reverse(i))) else {
                    break;
                };
                let t = self.whole[i].min(left);
                if t == 0 {
                    break;
                }
                self.whole[i] -= t;
                self.after_take(t);
                left -= t;
            }
        }
        for p in &take.mig {
            if !self.take_mig(p) {
                // Nothing left to hold it: the profile's count is already 0, so no more.
                self.mig.entry(p.clone()).or_default();
            }
        }
        for &m in &take.shares {
            if !self.take_share(m) {
                // Nothing left to hold it: drop the smallest device share that remains.
                if let Some(i) = (0..self.shares.len()).min_by_key(|&i| (self.shares[i], i)) {
                    self.shares[i] = self.shares[i].saturating_sub(m);
                }
            }
        }
    }

    /// Gives back what a job held (reclaim). Node identities are unknown, so each freed node
    /// share becomes a node entry of its own: never more than the truth.
    pub fn give_back(&mut self, take: &GpuTake) {
        self.whole.extend(take.per_node.iter().copied());
        self.shares.extend(take.shares.iter().copied());
        // A freed instance proves room for one more of its profile, and no more.
        for p in &take.mig {
            *self.mig.entry(p.clone()).or_default() += 1;
        }
        // A freed node entry of n GPUs proves a node (and so a rack) with at least n free;
        // NVLink islands stay unknown, so that bound is left as it was.
        for &n in &take.per_node {
            for key in ["node", "rack"] {
                if let Some(v) = self.largest.get_mut(key) {
                    *v = (*v).max(n);
                }
            }
        }
    }
}

/// One cluster's free capacity while planning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FreeView {
    /// Sorted by model name so that choices do not depend on the agent's order.
    pub models: Vec<ModelFree>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

impl FreeView {
    pub fn of(summary: &CapacitySummary) -> FreeView {
        FreeView::of_models(&summary.models, summary)
    }

    /// One node pool's view: its models as reported; host CPU and memory are the cluster's
    /// (the summary does not split them by pool).
    pub fn of_pool(pool: &PoolCapacity, summary: &CapacitySummary) -> FreeView {
        FreeView::of_models(&pool.models, summary)
    }

    fn of_models(models: &[ModelCapacity], summary: &CapacitySummary) -> FreeView {
        let mut models: Vec<ModelFree> = models
            .iter()
            .map(|m| ModelFree {
                model: m.model.clone(),
                whole: m.free_whole_per_node.clone(),
                shares: m.free_milli_per_device.iter().map(|&s| s.min(MILLI_PER_GPU)).collect(),
                largest: m
                    .largest_gang_gpus
                    .iter()
                    .filter(|(k, _)| k.as_str() != "any")
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
                mig: m.mig_free.clone(),
            })
            .collect();
        models.sort_by(|a, b| a.model.cmp(&b.model));
        FreeView { models, cpu_milli: summary.cpu_free_milli, memory_mib: summary.memory_free_mib }
    }

    pub fn model_mut(&mut self, model: &str) -> Option<&mut ModelFree> {
        self.models.iter_mut().find(|m| m.model == model)
    }

    pub fn deduct(&mut self, takes: &[GpuTake], cpu_milli: u64, memory_mib: u64) {
        for t in takes {
            if let Some(m) = self.model_mut(&t.model) {
                m.deduct(t);
            }
        }
        self.cpu_milli = self.cpu_milli.saturating_sub(cpu_milli);
        self.memory_mib = self.memory_mib.saturating_sub(memory_mib);
    }

    /// Gives back what a job holds (see [`ModelFree::give_back`]: never more than the truth).
    pub fn give_back(&mut self, takes: &[GpuTake], cpu_milli: u64, memory_mib: u64) {
        for t in takes {
            if let Some(m) = self.model_mut(&t.model) {
                m.give_back(t);
            }
        }
        self.cpu_milli = self.cpu_milli.saturating_add(cpu_milli);
        self.memory_mib = self.memory_mib.saturating_add(memory_mib);
    }

    pub fn free_gpus(&self) -> u64 {
        self.models.iter().map(|m| m.free_whole()).sum()
    }
}

/// What a job takes in a cluster when it fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fit {
    pub takes: Vec<GpuTake>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

/// Fits every member group into `view` (mutating it); all or nothing for the caller, who
/// works on a copy.
pub(crate) fn fit(view: &mut FreeView, groups: &[MemberGroup]) -> Result<Fit, SkipReason> {
    let mut takes: BTreeMap<String, GpuTake> = BTreeMap::new();
    let (mut cpu, mut mem) = (0u64, 0u64);
    for g in groups {
        cpu = cpu.saturating_add(g.cpu_milli.saturating_mul(g.members as u64));
        mem = mem.saturating_add(g.memory_mib.saturating_mul(g.members as u64));
        if g.gpus == 0 || g.members == 0 {
            continue;
        }
        let candidates: Vec<usize> = (0..view.models.len())
            .filter(|&i| g.models.is_empty() || g.models.iter().any(|m| *m == view.models[i].model))
            .filter(|&i| g.mig.as_deref().is_none_or(|p| grus_scheduler::mig::model_offers(&view.models[i].model, p)))
            .collect();
        if candidates.is_empty() {
            return Err(SkipReason::NoSuchGpuModel {
                wanted: g.models.clone(),
                available: view.models.iter().map(|m| m.model.clone()).collect(),
            });
        }
        // Each task's members use one model (a gang of mixed models would run at the slowest
        // one's pace); the first model, by name, that holds all of them wins.
        let mut first_err = None;
        let mut done = false;
        for i in candidates {
            let mut trial = view.models[i].clone();
            match fit_group(&mut trial, g) {
                Ok(take) => {
                    view.models[i] = trial;
                    let t = takes
                        .entry(take.model.clone())
                        .or_insert_with(|| GpuTake { model: take.model.clone(), ..GpuTake::default() });
                    t.per_node.extend(take.per_node);
                    t.shares.extend(take.shares);
                    t.mig.extend(take.mig);
                    done = true;
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if !done {
            return Err(first_err.expect("at least one candidate model was tried"));
        }
    }
    if cpu > view.cpu_milli {
        return Err(SkipReason::InsufficientCapacity {
            resource: "cpu_milli".into(),
            needed: cpu,
            free: view.cpu_milli,
        });
    }
    if mem > view.memory_mib {
        return Err(SkipReason::InsufficientCapacity {
            resource: "memory_mib".into(),
            needed: mem,
            free: view.memory_mib,
        });
    }
    view.cpu_milli -= cpu;
    view.memory_mib -= mem;
    Ok(Fit { takes: takes.into_values().collect(), cpu_milli: cpu, memory_mib: mem })
}

fn fit_group(m: &mut ModelFree, g: &MemberGroup) -> Result<GpuTake, SkipReason> {
    let mut take = GpuTake { model: m.model.clone(), ..GpuTake::default() };
    if let Some(profile) = &g.mig {
        let free = m.mig.get(profile).copied().unwrap_or(0);
        if u64::from(g.members) > u64::from(free) {
            return Err(SkipReason::InsufficientCapacity {
                resource: format!("mig/{profile}/{}", m.model),
                needed: u64::from(g.members),
                free: u64::from(free),
            });
        }
        for _ in 0..g.members {
            if !m.take_mig(profile) {
                return Err(SkipReason::InsufficientCapacity {
                    resource: format!("mig/{profile}/{}", m.model),
                    needed: u64::from(g.members),
                    free: u64::from(free),
                });
            }
            take.mig.push(profile.clone());
        }
        return Ok(take);
    }
    if g.gpus == 1 && g.milli < MILLI_PER_GPU {
        let needed = g.milli as u64 * g.members as u64;
        if needed > m.free_milli() {
            return Err(SkipReason::InsufficientCapacity {
                resource: format!("gpu_milli/{}", m.model),
                needed,
                free: m.free_milli(),
            });
        }
        for _ in 0..g.members {
            if !m.take_share(g.milli) {
                return Err(SkipReason::GangDoesNotFit {
                    model: m.model.clone(),
                    members: g.members,
                    per_member_gpus: 1,
                    scope: g.scope,
                    largest: m.max_node(),
                });
            }
            take.shares.push(g.milli);
        }
        return Ok(take);
    }
    let needed = g.gpus as u64 * g.members as u64;
    if needed > m.free_whole() {
        return Err(SkipReason::InsufficientCapacity {
            resource: format!("gpu/{}", m.model),
            needed,
            free: m.free_whole(),
        });
    }
    let gang_err = |m: &ModelFree| SkipReason::GangDoesNotFit {
        model: m.model.clone(),
        members: g.members,
        per_member_gpus: g.gpus,
        scope: g.scope,
        // For `any`, each member needs one node: the largest node is what limits it.
        largest: if g.scope == TopologyScope::Any { m.max_node() } else { m.largest_in(g.scope) },
    };
    match g.scope {
        TopologyScope::Node | TopologyScope::Nvlink => {
            let n = u32::try_from(needed).map_err(|_| gang_err(m))?;
            if m.largest_in(g.scope) < n || !m.take_on_one_node(n) {
                return Err(gang_err(m));
            }
            take.per_node.push(n);
        }
        TopologyScope::Rack | TopologyScope::Any => {
            if g.scope == TopologyScope::Rack && (m.largest_in(g.scope) as u64) < needed {
                return Err(gang_err(m));
            }
            let before = m.clone();
            for _ in 0..g.members {
                if !m.take_on_one_node(g.gpus) {
                    let e = gang_err(&before);
                    *m = before;
                    return Err(e);
                }
                take.per_node.push(g.gpus);
            }
        }
    }
    Ok(take)
}

/// The fewest of `candidates` (tried in order, then pruned of any not needed, the latest
/// first) whose room lets `groups` fit: their indexes, the view after the job took its room,
/// and what it took. `with(chosen)` is the view with the room of `chosen` given back. `None`
/// when even all of them are not enough. What cross-cluster reclaim and the room from
/// shrinking elastic jobs both plan with.
pub(crate) fn fewest_that_fit(
    candidates: &[usize],
    groups: &[MemberGroup],
    with: impl Fn(&[usize]) -> FreeView,
) -> Option<(Vec<usize>, FreeView, Fit)> {
    let mut chosen = Vec::new();
    let mut fits = false;
    for &c in candidates {
        chosen.push(c);
        if fit(&mut with(&chosen), groups).is_ok() {
            fits = true;
            break;
        }
    }
    if !fits {
        return None;
    }
    let mut i = chosen.len();
    while i > 0 {
        i -= 1;
        let mut fewer = chosen.clone();
        fewer.remove(i);
        if !fewer.is_empty() && fit(&mut with(&fewer), groups).is_ok() {
            chosen = fewer;
        }
    }
    let mut after = with(&chosen);
    let take = fit(&mut after, groups).ok()?;
    Some((chosen, after, take))
}
