//! Hierarchical fair share: tenant → project → queue, each level with a weight, a guarantee
//! and a limit (Kueue's cohorts, KAI's hierarchical queues).
//!
//! One progressive filling over the queues, as [`super::fair_shares`] does, but the rate at
//! which each queue's dominant share grows is split down the tree: among the tenants that still
//! grow by their weights, inside a tenant among its growing projects by theirs, inside a project
//! among its growing queues by theirs. A queue stops when its demand is met, when a resource it
//! needs runs out, or when a level above it reaches a bound on a resource it needs; its rate
//! then goes to its siblings first, and once a whole subtree stops, to the subtree's siblings
//! (unused share flows to siblings first, then up). With one tenant and one project this is
//! exactly the flat fill.
//!
//! Guarantees come first, innermost first: a pass where only queues with a guarantee grow, each
//! up to it; then one where projects with a guarantee grow up to it (their queues sharing it by
//! weight); then tenants; then the over-quota pass where everybody grows up to limits and
//! demand. Limits bound every pass. A queue's fair share is the dominant share of what the fill
//! gives it, a project's and a tenant's the dominant share of what their queues get together.

use std::collections::BTreeMap;

use super::{FairShareConfig, QueueDemand, QueueShare};
use crate::job::QueueId;
use crate::queue::{ProjectId, Queues, ResourceKey, ResourceVector, TenantId};

/// Fair shares at every level of the hierarchy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeShares {
    pub queues: BTreeMap<QueueId, QueueShare>,
    /// What the fill gives each queue, per resource (the fair share in resource units).
    pub allocations: BTreeMap<QueueId, BTreeMap<ResourceKey, f64>>,
    /// Each project's fair dominant share (its queues' fair allocations together).
    pub projects: BTreeMap<ProjectId, f64>,
    /// Each tenant's fair dominant share.
    pub tenants: BTreeMap<TenantId, f64>,
}

/// What a pass fills up to: one level's guarantees, or (`OverQuota`) limits and demand, by weight.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Guarantee(Level),
    OverQuota,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Queue,
    Project,
    Tenant,
}

/// A level's bounds on each key (`None`: unbounded), and whether it holds any guarantee.
struct Bounds {
    weight: f64,
    guarantee: Vec<Option<f64>>,
    has_guarantee: bool,
    limit: Vec<Option<f64>>,
}

impl Bounds {
    fn new(keys: &[ResourceKey], weight: u32, guarantee: &ResourceVector, limit: &ResourceVector) -> Bounds {
        Bounds {
            weight: weight.max(1) as f64,
            guarantee: keys.iter().map(|k| guarantee.guaranteed_amount(k).map(|x| x as f64)).collect(),
            has_guarantee: !guarantee.is_empty(),
            limit: keys.iter().map(|k| limit.iter().find(|(l, _)| *l == k).map(|(_, x)| x as f64)).collect(),
        }
    }

    fn bound(&self, pass: Pass, here: Level, k: usize) -> Option<f64> {
        let g = match pass {
            Pass::Guarantee(level) if level == here => self.guarantee[k],
            _ => None,
        };
        match (g, self.limit[k]) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// One queue being filled: its demand direction (resource per unit of dominant share), how far
/// it may grow (`d`) and how far it has (`x`).
struct Leaf {
    queue: QueueId,
    project: usize,
    tenant: usize,
    bounds: Bounds,
    dir: Vec<f64>,
    d: f64,
    x: f64,
    active: bool,
}

/// Relative tolerance for "reached".
const EPS: f64 = 1e-9;

fn reached(value: f64, bound: f64) -> bool {
    value >= bound - EPS * bound.abs().max(1.0)
}

/// Hierarchical weighted DRF fair shares of `capacity` among the queues of `queues`, given each
/// queue's demand (`demands`; a queue's weight is the one its demand carries, so that a caller
/// may pass per-pool weights). Queues the hierarchy does not know are left out. History blends
/// into each queue's effective share as in [`super::fair_shares`].
pub fn hierarchical_fair_shares(
    capacity: &ResourceVector,
    queues: &Queues,
    demands: &[QueueDemand],
    cfg: &FairShareConfig,
    now: u64,
) -> TreeShares {
    let keys: Vec<ResourceKey> = capacity.iter().map(|(k, _)| k.clone()).collect();
    let cap: Vec<f64> = capacity.iter().map(|(_, v)| v as f64).collect();
    let tenant_ids: Vec<TenantId> = queues.tenants().map(|t| t.id).collect();
    let project_ids: Vec<ProjectId> = queues.projects().map(|p| p.id).collect();
    let tenants: Vec<Bounds> = queues.tenants().map(|t| Bounds::new(&keys, t.weight, &t.guarantee, &t.limit)).collect();
    let projects: Vec<Bounds> =
        queues.projects().map(|p| Bounds::new(&keys, p.weight, &p.guarantee, &p.limit)).collect();
    let project_tenant: Vec<usize> = queues
        .projects()
        .map(|p| tenant_ids.iter().position(|t| *t == p.tenant).expect("validated hierarchy"))
        .collect();
    let mut leaves: Vec<Leaf> = demands
        .iter()
        .filter_map(|qd| {
            let q = queues.queue(qd.queue)?;
            let project = project_ids.iter().position(|p| *p == q.project).expect("validated hierarchy");
            let d = super::dominant_share(&qd.demand, capacity);
            let dir = keys.iter().map(|k| if d > 0.0 { qd.demand.get(k) as f64 / d } else { 0.0 }).collect();
            Some(Leaf {
                queue: qd.queue,
                project,
                tenant: project_tenant[project],
                bounds: Bounds::new(&keys, qd.weight, &q.guarantee, &q.limit),
                dir,
                d,
                x: 0.0,
                active: false,
            })
        })
        .collect();
    let mut fill = Fill { cap: cap.clone(), tenants: &tenants, projects: &projects, leaves: &mut leaves };
    for pass in [
        Pass::Guarantee(Level::Queue),
        Pass::Guarantee(Level::Project),
        Pass::Guarantee(Level::Tenant),
        Pass::OverQuota,
    ] {
        fill.run(pass);
    }
    // A subtree's fair share: the dominant share of what its queues get together.
    let share_of = |member: &dyn Fn(&Leaf) -> bool| {
        let mut held = vec![0.0; keys.len()];
        for l in leaves.iter().filter(|l| member(l)) {
            for (k, x) in held.iter_mut().enumerate() {
                *x += l.x * l.dir[k];
            }
        }
        held.iter().zip(&cap).filter(|(_, c)| **c > 0.0).map(|(x, c)| x / c).fold(0.0, f64::max)
    };
    let projects_out =
        project_ids.iter().enumerate().map(|(i, id)| (*id, share_of(&|l: &Leaf| l.project == i))).collect();
    let tenants_out = tenant_ids.iter().enumerate().map(|(i, id)| (*id, share_of(&|l: &Leaf| l.tenant == i))).collect();
    let queues_out = demands
        .iter()
        .filter_map(|qd| {
            let leaf = leaves.iter().find(|l| l.queue == qd.queue)?;
            let past = match (cfg.half_life_s, &qd.past) {
                (Some(h), Some(p)) => p.dominant_share(capacity, now, h),
                _ => 0.0,
            };
            let share = QueueShare { fair: leaf.x, current: 0.0, effective: 0.0, deficit: 0.0 }
                .with_usage(&qd.usage, capacity, past, cfg);
            Some((qd.queue, share))
        })
        .collect();
    let allocations = leaves
        .iter()
        .map(|l| {
            let held = keys.iter().zip(&l.dir).filter(|(_, d)| **d > 0.0).map(|(k, d)| (k.clone(), l.x * d));
            (l.queue, held.collect())
        })
        .collect();
    TreeShares { queues: queues_out, allocations, projects: projects_out, tenants: tenants_out }
}

struct Fill<'a> {
    cap: Vec<f64>,
    tenants: &'a [Bounds],
    projects: &'a [Bounds],
    leaves: &'a mut [Leaf],
}

/// Per key: what a set of leaves holds, and how fast it grows at the current rates.
#[derive(Clone)]
struct Flow {
    held: Vec<f64>,
    rate: Vec<f64>,
}

impl Flow {
    fn new(n: usize) -> Flow {
        Flow { held: vec![0.0; n], rate: vec![0.0; n] }
    }

    fn add(&mut self, leaf: &Leaf, rate: f64) {
        for k in 0..self.held.len() {
            self.held[k] += leaf.x * leaf.dir[k];
            self.rate[k] += rate * leaf.dir[k];
        }
    }

    /// The time until `self` reaches `bound` on key `k` at its rate.
    fn time_to(&self, k: usize, bound: f64) -> f64 {
        if self.rate[k] > 0.0 {
            ((bound - self.held[k]) / self.rate[k]).max(0.0)
        } else {
            f64::INFINITY
        }
    }
}

impl Fill<'_> {
    fn eligible(&self, leaf: &Leaf, pass: Pass) -> bool {
        match pass {
            Pass::OverQuota => true,
            Pass::Guarantee(Level::Queue) => leaf.bounds.has_guarantee,
            Pass::Guarantee(Level::Project) => self.projects[leaf.project].has_guarantee,
            Pass::Guarantee(Level::Tenant) => self.tenants[leaf.tenant].has_guarantee,
        }
    }

    fn run(&mut self, pass: Pass) {
        for i in 0..self.leaves.len() {
            let eligible = self.eligible(&self.leaves[i], pass);
            let l = &mut self.leaves[i];
            l.active = eligible && l.d > 0.0 && !reached(l.x, l.d);
        }
        // Every round stops at least one queue (the one whose event came first), so this ends.
        for _ in 0..self.leaves.len() + 2 {
            let rates = self.rates();
            let (total, tenants, projects) = self.flows(&rates);
            self.stop_bound(pass, &total, &tenants, &projects);
            if !self.leaves.iter().any(|l| l.active) {
                return;
            }
            let rates = self.rates();
            let (total, tenants, projects) = self.flows(&rates);
            let mut step = f64::INFINITY;
            for (l, r) in self.leaves.iter().zip(&rates).filter(|(l, _)| l.active) {
                step = step.min((l.d - l.x) / r);
                for k in 0..self.cap.len() {
                    if let Some(b) = l.bounds.bound(pass, Level::Queue, k) {
                        if l.dir[k] > 0.0 {
                            step = step.min(((b - l.x * l.dir[k]) / (r * l.dir[k])).max(0.0));
                        }
                    }
                }
            }
            for k in 0..self.cap.len() {
                step = step.min(total.time_to(k, self.cap[k]));
                for (i, b) in self.tenants.iter().enumerate() {
                    if let Some(bound) = b.bound(pass, Level::Tenant, k) {
                        step = step.min(tenants[i].time_to(k, bound));
                    }
                }
                for (i, b) in self.projects.iter().enumerate() {
                    if let Some(bound) = b.bound(pass, Level::Project, k) {
                        step = step.min(projects[i].time_to(k, bound));
                    }
                }
            }
            if !step.is_finite() {
                return;
            }
            for (l, r) in self.leaves.iter_mut().zip(&rates) {
                if l.active {
                    l.x = (l.x + step * r).min(l.d);
                    if reached(l.x, l.d) {
                        l.active = false;
                    }
                }
            }
        }
    }

    /// Each active leaf's rate: 1 shared among growing tenants by weight, then among a tenant's
    /// growing projects, then among a project's growing queues.
    fn rates(&self) -> Vec<f64> {
        // Per project, its growing queues' weights; per tenant, its growing projects' weights.
        let mut queue_w = vec![0.0; self.projects.len()];
        let mut project_w = vec![0.0; self.tenants.len()];
        let mut tenant_w = 0.0;
        let mut tenant_seen = vec![false; self.tenants.len()];
        for l in self.leaves.iter().filter(|l| l.active) {
            if queue_w[l.project] == 0.0 {
                project_w[l.tenant] += self.projects[l.project].weight;
            }
            queue_w[l.project] += l.bounds.weight;
            if !std::mem::replace(&mut tenant_seen[l.tenant], true) {
                tenant_w += self.tenants[l.tenant].weight;
            }
        }
        self.leaves
            .iter()
            .map(|l| {
                if !l.active {
                    return 0.0;
                }
                (self.tenants[l.tenant].weight / tenant_w)
                    * (self.projects[l.project].weight / project_w[l.tenant])
                    * (l.bounds.weight / queue_w[l.project])
            })
            .collect()
    }

    fn flows(&self, rates: &[f64]) -> (Flow, Vec<Flow>, Vec<Flow>) {
        let n = self.cap.len();
        let mut total = Flow::new(n);
        let mut tenants = vec![Flow::new(n); self.tenants.len()];
        let mut projects = vec![Flow::new(n); self.projects.len()];
        for (l, r) in self.leaves.iter().zip(rates) {
            total.add(l, *r);
            tenants[l.tenant].add(l, *r);
            projects[l.project].add(l, *r);
        }
        (total, tenants, projects)
    }

    /// Stops every active leaf that needs a key on which it, its project, its tenant or the
    /// capacity has reached its bound in this pass.
    fn stop_bound(&mut self, pass: Pass, total: &Flow, tenants: &[Flow], projects: &[Flow]) {
        let n = self.cap.len();
        let full: Vec<bool> = (0..n).map(|k| reached(total.held[k], self.cap[k])).collect();
        let at = |b: &Bounds, level: Level, flow: &Flow, k: usize| {
            b.bound(pass, level, k).is_some_and(|bound| reached(flow.held[k], bound))
        };
        for i in 0..self.leaves.len() {
            let l = &self.leaves[i];
            if !l.active {
                continue;
            }
            let blocked = (0..n).any(|k| {
                l.dir[k] > 0.0
                    && (full[k]
                        || at(&self.tenants[l.tenant], Level::Tenant, &tenants[l.tenant], k)
                        || at(&self.projects[l.project], Level::Project, &projects[l.project], k)
                        || l.bounds.bound(pass, Level::Queue, k).is_some_and(|b| reached(l.x * l.dir[k], b)))
            });
            if blocked {
                self.leaves[i].active = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fairshare::fair_shares;
    use crate::queue::{Project, Queue, Tenant};
    use proptest::prelude::*;

    fn gpus(n: u64) -> ResourceVector {
        ResourceVector::new().with_gpus(n)
    }

    fn want(queue: u32, weight: u32, n: u64) -> QueueDemand {
        QueueDemand { queue: QueueId(queue), weight, usage: ResourceVector::new(), demand: gpus(n), past: None }
    }

    /// Tenants 0 and 1; projects 0, 1 (tenant 0) and 2 (tenant 1); queues by (id, project).
    fn tree(queues: &[(u32, u32)], edit: impl FnOnce(&mut Vec<Tenant>, &mut Vec<Project>, &mut Vec<Queue>)) -> Queues {
        let mut tenants = vec![Tenant::new(0, "t0"), Tenant::new(1, "t1")];
        let mut projects = vec![Project::new(0, 0, "p0"), Project::new(1, 0, "p1"), Project::new(2, 1, "p2")];
        let mut qs: Vec<Queue> = queues.iter().map(|&(id, p)| Queue::new(id, p, &format!("q{id}"))).collect();
        edit(&mut tenants, &mut projects, &mut qs);
        Queues::new(tenants, projects, qs).unwrap()
    }

    fn gpus_of(s: &TreeShares, q: u32) -> f64 {
        s.allocations.get(&QueueId(q)).and_then(|a| a.get(&ResourceKey::Gpus)).copied().unwrap_or(0.0) / 1000.0
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn tenants_share_by_weight_whatever_their_number_of_queues() {
        // Tenant 0 has one queue, tenant 1 three: each tenant gets half of 12 GPUs.
        let qs = tree(&[(1, 0), (2, 2), (3, 2), (4, 2)], |_, _, _| {});
        let d = [want(1, 1, 100), want(2, 1, 100), want(3, 1, 100), want(4, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(12), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 1), 6.0), "{s:?}");
        for q in 2..=4 {
            assert!(close(gpus_of(&s, q), 2.0), "{s:?}");
        }
        assert!(close(s.tenants[&TenantId(0)], 0.5) && close(s.tenants[&TenantId(1)], 0.5));
    }

    #[test]
    fn unused_share_flows_to_siblings_first_then_up() {
        // Tenant 0: project 0 wants 1 GPU, project 1 wants 100; tenant 1 wants 100. Of 12 GPUs
        // tenant 0 gets 6: project 0's unused 5 go to its sibling project 1 (5), not to tenant 1.
        let qs = tree(&[(1, 0), (2, 1), (3, 2)], |_, _, _| {});
        let d = [want(1, 1, 1), want(2, 1, 100), want(3, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(12), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 1), 1.0) && close(gpus_of(&s, 2), 5.0) && close(gpus_of(&s, 3), 6.0), "{s:?}");
        // Tenant 0 as a whole wants 3: the rest goes up, to tenant 1.
        let d = [want(1, 1, 1), want(2, 1, 2), want(3, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(12), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 2), 2.0) && close(gpus_of(&s, 3), 9.0), "{s:?}");
    }

    #[test]
    fn guarantees_come_first_innermost_first_then_over_quota_by_weight() {
        // 10 GPUs; queue 1 guaranteed 6, queue 2 nothing (same project): 6 + 2 against 2.
        let qs = tree(&[(1, 0), (2, 0)], |_, _, q| q[0].guarantee = gpus(6));
        let d = [want(1, 1, 100), want(2, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(10), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 1), 8.0) && close(gpus_of(&s, 2), 2.0), "{s:?}");
        // Project 2 (tenant 1) guaranteed 8 of 10: tenant weights would say 5; its queue gets 8
        // first, then the last 2 are shared 1 / 1.
        let qs = tree(&[(1, 0), (3, 2)], |_, p, _| p[2].guarantee = gpus(8));
        let d = [want(1, 1, 100), want(3, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(10), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 3), 9.0) && close(gpus_of(&s, 1), 1.0), "{s:?}");
        // A guarantee above demand gives only the demand; the rest goes to others.
        let d = [want(1, 1, 100), want(3, 1, 3)];
        let s = hierarchical_fair_shares(&gpus(10), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 3), 3.0) && close(gpus_of(&s, 1), 7.0), "{s:?}");
    }

    #[test]
    fn limits_bound_every_level_and_what_they_leave_goes_to_others() {
        let qs = tree(&[(1, 0), (2, 1), (3, 2)], |t, p, _| {
            t[0].limit = gpus(4);
            p[2].weight = 3;
        });
        let d = [want(1, 1, 100), want(2, 1, 100), want(3, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(12), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 1) + gpus_of(&s, 2), 4.0) && close(gpus_of(&s, 3), 8.0), "{s:?}");
        assert!(close(gpus_of(&s, 1), 2.0), "{s:?}");
    }

    #[test]
    fn weights_split_a_level_and_pool_weights_come_with_the_demand() {
        let qs = tree(&[(1, 0), (2, 0)], |_, _, _| {});
        let d = [want(1, 3, 100), want(2, 1, 100)];
        let s = hierarchical_fair_shares(&gpus(8), &qs, &d, &FairShareConfig::default(), 0);
        assert!(close(gpus_of(&s, 1), 6.0) && close(gpus_of(&s, 2), 2.0), "{s:?}");
    }

    fn resources() -> impl Strategy<Value = ResourceVector> {
        (0u64..20, 0u64..40, 0u64..3).prop_map(|(g, c, m)| {
            ResourceVector::new()
                .with(ResourceKey::Gpus, g * 500)
                .with(ResourceKey::Cpu, c * 1000)
                .with(ResourceKey::gpu_model("A100"), m * 1000)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// With one tenant and one project, no guarantees and no limits, the tree is the flat
        /// weighted DRF fill.
        #[test]
        fn one_tenant_one_project_is_the_flat_fill(
            demands in prop::collection::vec((1u32..5, resources()), 1..6),
        ) {
            let cap = ResourceVector::new()
                .with(ResourceKey::Gpus, 16_000)
                .with(ResourceKey::Cpu, 64_000)
                .with(ResourceKey::gpu_model("A100"), 4000);
            let qs = Queues::flat((0..demands.len() as u32).map(|i| Queue::new(i, 0, "q")).collect()).unwrap();
            let d: Vec<QueueDemand> = demands
                .iter()
                .enumerate()
                .map(|(i, (w, v))| QueueDemand {
                    queue: QueueId(i as u32),
                    weight: *w,
                    usage: ResourceVector::new(),
                    demand: v.clone(),
                    past: None,
                })
                .collect();
            let flat = fair_shares(&cap, &d, &FairShareConfig::default(), 0);
            let tree = hierarchical_fair_shares(&cap, &qs, &d, &FairShareConfig::default(), 0);
            for (q, s) in &flat {
                prop_assert!((s.fair - tree.queues[q].fair).abs() < 1e-6, "{q:?}: {} vs {}", s.fair, tree.queues[q].fair);
            }
        }

        /// Whatever the tree: nothing is given beyond capacity, demand or any level's limit,
        /// every guarantee that fits is met, and a queue short of its demand is short because a
        /// resource it needs is used up, everywhere or at a level above it.
        #[test]
        fn the_fill_is_feasible_meets_guarantees_and_leaves_nothing_it_could_give(
            demands in prop::collection::vec((0u32..3, 1u32..4, 0u64..24), 1..7),
            guarantees in prop::collection::vec(0u64..6, 7),
            tenant_limit in prop::option::of(1u64..16),
            project_guarantee in 0u64..6,
            capacity in 4u64..24,
        ) {
            let ids: Vec<(u32, u32)> = demands.iter().enumerate().map(|(i, (p, _, _))| (i as u32, *p)).collect();
            let qs = tree(&ids, |t, p, q| {
                t[0].limit = tenant_limit.map_or_else(ResourceVector::new, gpus);
                p[2].guarantee = gpus(project_guarantee);
                for (i, queue) in q.iter_mut().enumerate() {
                    queue.guarantee = gpus(guarantees[i]);
                }
            });
            let d: Vec<QueueDemand> =
                demands.iter().enumerate().map(|(i, (_, w, n))| want(i as u32, *w, *n)).collect();
            let s = hierarchical_fair_shares(&gpus(capacity), &qs, &d, &FairShareConfig::default(), 0);
            let got: Vec<f64> = (0..d.len() as u32).map(|q| gpus_of(&s, q)).collect();
            let total: f64 = got.iter().sum();
            let tol = 1e-6;
            prop_assert!(total <= capacity as f64 + tol, "{got:?}");
            let tenant0: f64 = ids.iter().zip(&got).filter(|((_, p), _)| *p < 2).map(|(_, g)| g).sum();
            if let Some(l) = tenant_limit {
                prop_assert!(tenant0 <= l as f64 + tol, "{got:?}");
            }
            for (i, (_, _, n)) in demands.iter().enumerate() {
                prop_assert!(got[i] <= *n as f64 + tol);
            }
            // Guarantees are met when together they fit (and the tenant limit allows them).
            let guaranteed: u64 = demands.iter().enumerate().map(|(i, (_, _, n))| guarantees[i].min(*n)).sum();
            if guaranteed <= capacity && tenant_limit.is_none() {
                for (i, (_, _, n)) in demands.iter().enumerate() {
                    prop_assert!(got[i] >= guarantees[i].min(*n) as f64 - tol, "queue {i}: {got:?}");
                }
            }
            for (i, (p, _, n)) in demands.iter().enumerate() {
                if got[i] < *n as f64 - tol {
                    let limited = *p < 2 && tenant_limit.is_some_and(|l| tenant0 >= l as f64 - tol);
                    prop_assert!(total >= capacity as f64 - tol || limited, "queue {i} short: {got:?}");
                }
            }
        }
    }
}
