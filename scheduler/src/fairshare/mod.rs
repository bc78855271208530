//! Fair share: weighted dominant-resource fairness (DRF) across queues, with optional decayed
//! past usage; [`tree`] fills the tenant → project → queue hierarchy.
//!
//! A queue's dominant share is the largest fraction of any one resource (GPUs of a model, all
//! GPUs, CPU, memory) it holds. Its fair share comes from weighted progressive filling: every
//! queue with demand grows its dominant share in proportion to its weight, along the resource
//! mix of its demand, until its demand is met or a resource it needs runs out. The deficit is
//! fair share minus effective share (current share blended with decayed history); the cycle
//! serves the queue with the largest deficit first. Everything here is pure arithmetic over its
//! inputs: past usage and the time are given, never read.

pub mod tree;

use std::collections::BTreeMap;

use crate::job::QueueId;
use crate::queue::{ResourceKey, ResourceVector};

pub use tree::{hierarchical_fair_shares, TreeShares};

/// How history counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairShareConfig {
    /// Past usage loses half its weight every this many seconds. `None`: ignore history.
    pub half_life_s: Option<u64>,
    /// Weight of the past share in the effective share, 0..=1 (0: only current usage counts).
    pub history_weight: f64,
}

impl Default for FairShareConfig {
    fn default() -> Self {
        FairShareConfig { half_life_s: None, history_weight: 0.0 }
    }
}

/// Exponentially decayed resource-seconds of one queue, as of a time. The shell stores it and
/// feeds it back; [`PastUsage::accumulate`] rolls it forward.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PastUsage {
    pub amounts: BTreeMap<ResourceKey, f64>,
    pub as_of: u64,
}

fn decay_factor(elapsed_s: u64, half_life_s: u64) -> f64 {
    if half_life_s == 0 {
        return 0.0;
    }
    0.5f64.powf(elapsed_s as f64 / half_life_s as f64)
}

impl PastUsage {
    /// The amounts decayed to `now`.
    pub fn decayed(&self, now: u64, half_life_s: u64) -> BTreeMap<ResourceKey, f64> {
        let f = decay_factor(now.saturating_sub(self.as_of), half_life_s);
        self.amounts.iter().map(|(k, v)| (k.clone(), v * f)).collect()
    }

    /// `before` (none: a queue first seen now, whose history starts now, not at the epoch)
    /// rolled forward to `now` with `usage` held since; never backwards (a clock that stepped
    /// back adds nothing).
    pub fn rolled(before: Option<&PastUsage>, usage: &ResourceVector, now: u64, half_life_s: u64) -> PastUsage {
        match before {
            Some(b) => b.accumulate(usage, now.max(b.as_of), half_life_s),
            None => PastUsage { amounts: BTreeMap::new(), as_of: now },
        }
    }

    /// Rolls forward to `now`, assuming `usage` was held since `as_of`: the old amounts decay,
    /// and the interval adds usage × the integral of the decay over it.
    pub fn accumulate(&self, usage: &ResourceVector, now: u64, half_life_s: u64) -> PastUsage {
        let dt = now.saturating_sub(self.as_of);
        let mut amounts = self.decayed(now, half_life_s);
        // ∫_0^dt 0.5^(s/h) ds = h / ln 2 · (1 − 0.5^(dt/h)); dt when there is no decay.
        let weight = if half_life_s == 0 {
            0.0
        } else {
            half_life_s as f64 / std::f64::consts::LN_2 * (1.0 - decay_factor(dt, half_life_s))
        };
        for (k, v) in usage.iter() {
            *amounts.entry(k.clone()).or_default() += v as f64 * weight;
        }
        PastUsage { amounts, as_of: now }
    }

    /// Decayed usage as a dominant share of the decayed capacity a cluster of `capacity` would
    /// have offered over the same (infinite) past: capacity × half-life / ln 2.
    pub fn dominant_share(&self, capacity: &ResourceVector, now: u64, half_life_s: u64) -> f64 {
        let horizon = half_life_s as f64 / std::f64::consts::LN_2;
        self.decayed(now, half_life_s)
            .iter()
            .filter_map(|(k, v)| {
                let cap = capacity.get(k) as f64 * horizon;
                (cap > 0.0).then(|| v / cap)
            })
            .fold(0.0, f64::max)
    }
}

/// The largest fraction of any resource `usage` holds; resources without capacity are ignored.
pub fn dominant_share(usage: &ResourceVector, capacity: &ResourceVector) -> f64 {
    usage
        .iter()
        .filter_map(|(k, v)| {
            let cap = capacity.get(k);
            (cap > 0).then(|| v as f64 / cap as f64)
        })
        .fold(0.0, f64::max)
}

/// A current share blended with a decayed past one, as `cfg` weighs history.
pub fn effective_share(current: f64, past: f64, cfg: &FairShareConfig) -> f64 {
    let w = if cfg.half_life_s.is_some() { cfg.history_weight.clamp(0.0, 1.0) } else { 0.0 };
    (1.0 - w) * current + w * past
}

/// One queue's input to [`fair_shares`].
#[derive(Clone, Debug, PartialEq)]
pub struct QueueDemand {
    pub queue: QueueId,
    pub weight: u32,
    /// What the queue holds now.
    pub usage: ResourceVector,
    /// What it would hold if all its pending work ran (usage + pending requests).
    pub demand: ResourceVector,
    /// Its decayed past usage, if history counts.
    pub past: Option<PastUsage>,
}

/// One queue's place in the fair-share order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueShare {
    /// The dominant share weighted DRF entitles it to, given everyone's demand.
    pub fair: f64,
    /// Its dominant share now.
    pub current: f64,
    /// Current blended with decayed history.
    pub effective: f64,
    /// `fair - effective`: the larger, the sooner it is served.
    pub deficit: f64,
}

impl QueueShare {
    /// Recomputes current, effective and deficit for new usage (fair stays: it is per cycle).
    pub fn with_usage(
        self,
        usage: &ResourceVector,
        capacity: &ResourceVector,
        past: f64,
        cfg: &FairShareConfig,
    ) -> Self {
        let current = dominant_share(usage, capacity);
        let effective = effective_share(current, past, cfg);
        QueueShare { fair: self.fair, current, effective, deficit: self.fair - effective }
    }
}

/// Weighted DRF fair shares by continuous progressive filling with demand caps.
///
/// Each queue's allocation grows along the direction of its demand vector; its dominant share
/// rises at a rate proportional to its weight. A queue stops when its demand is met, or when a
/// resource its demand uses is exhausted. The result is each queue's fair dominant share.
pub fn fair_shares(
    capacity: &ResourceVector,
    queues: &[QueueDemand],
    cfg: &FairShareConfig,
    now: u64,
) -> BTreeMap<QueueId, QueueShare> {
    let keys: Vec<&ResourceKey> = capacity.iter().map(|(k, _)| k).collect();
    let cap: Vec<f64> = capacity.iter().map(|(_, v)| v as f64).collect();
    // Per queue: dominant share of its demand, and demand per key divided by it (the resource
    // used per unit of dominant share).
    struct Q {
        d: f64,
        w: f64,
        per_share: Vec<f64>,
        share: f64,
        active: bool,
    }
    let mut qs: Vec<Q> = queues
        .iter()
        .map(|q| {
            let d = dominant_share(&q.demand, capacity);
            let per_share =
                keys.iter().map(|k| if d > 0.0 { q.demand.get(k) as f64 / d } else { 0.0 }).collect::<Vec<_>>();
            Q { d, w: q.weight.max(1) as f64, per_share, share: 0.0, active: d > 0.0 }
        })
        .collect();
    // Each round caps or freezes at least one queue, so this ends after at most |queues| rounds.
    for _ in 0..=qs.len() {
        if !qs.iter().any(|q| q.active) {
            break;
        }
        let used: Vec<f64> =
            (0..keys.len()).map(|k| qs.iter().map(|q| q.per_share[k] * q.share).sum::<f64>()).collect();
        let rate: Vec<f64> = (0..keys.len())
            .map(|k| qs.iter().filter(|q| q.active).map(|q| q.per_share[k] * q.w).sum::<f64>())
            .collect();
        let mut step = f64::INFINITY;
        for q in qs.iter().filter(|q| q.active) {
            step = step.min((q.d - q.share) / q.w);
        }
        for k in 0..keys.len() {
            if rate[k] > 0.0 {
                step = step.min(((cap[k] - used[k]) / rate[k]).max(0.0));
            }
        }
        for q in qs.iter_mut().filter(|q| q.active) {
            q.share = (q.share + step * q.w).min(q.d);
        }
        let eps = 1e-12;
        let saturated: Vec<bool> = (0..keys.len())
            .map(|k| rate[k] > 0.0 && qs.iter().map(|q| q.per_share[k] * q.share).sum::<f64>() >= cap[k] * (1.0 - eps))
            .collect();
        for q in qs.iter_mut().filter(|q| q.active) {
            if q.share >= q.d * (1.0 - eps) || (0..keys.len()).any(|k| saturated[k] && q.per_share[k] > 0.0) {
                q.active = false;
            }
        }
    }
    queues
        .iter()
        .zip(&qs)
        .map(|(input, q)| {
            let past = match (cfg.half_life_s, &input.past) {
                (Some(h), Some(p)) => p.dominant_share(capacity, now, h),
                _ => 0.0,
            };
            let share = QueueShare { fair: q.share, current: 0.0, effective: 0.0, deficit: 0.0 }.with_usage(
                &input.usage,
                capacity,
                past,
                cfg,
            );
            (input.queue, share)
        })
        .collect()
}

/// Classic DRF (Ghodsi et al.) by discrete progressive filling: users with a per-task demand
/// vector and a weight; repeatedly launch one task for the user with the lowest weighted
/// dominant share whose next task still fits, until nobody's does. Returns tasks per user.
/// Used to check [`fair_shares`] against the textbook, and by callers that count tasks.
pub fn drf_tasks(capacity: &ResourceVector, users: &[(u32, ResourceVector, u32)]) -> Vec<u32> {
    let mut tasks = vec![0u32; users.len()];
    let mut used = ResourceVector::new();
    loop {
        let mut best: Option<(f64, usize)> = None;
        for (i, (w, per_task, max)) in users.iter().enumerate() {
            if tasks[i] >= *max || per_task.is_empty() {
                continue;
            }
            let next = used.plus(per_task);
            if next.first_over_limit(capacity).is_some() {
                continue;
            }
            let mut held = ResourceVector::new();
            for _ in 0..tasks[i] {
                held.add(per_task);
            }
            let s = dominant_share(&held, capacity) / (*w).max(1) as f64;
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, i));
            }
        }
        match best {
            Some((_, i)) => {
                used.add(&users[i].1);
                tasks[i] += 1;
            }
            None => return tasks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_mem(cpu: u64, mem: u64) -> ResourceVector {
        ResourceVector::new().with(ResourceKey::Cpu, cpu).with(ResourceKey::Memory, mem)
    }

    fn demand(q: u32, weight: u32, demand: ResourceVector) -> QueueDemand {
        QueueDemand { queue: QueueId(q), weight, usage: ResourceVector::new(), demand, past: None }
    }

    #[test]
    fn textbook_drf_example_gives_three_and_two_tasks() {
        // 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>, B's <3 CPU, 1 GB>: A gets 3 tasks, B gets 2,
        // both at a dominant share of 2/3.
        let cap = cpu_mem(9, 18);
        let users = [(1, cpu_mem(1, 4), 100), (1, cpu_mem(3, 1), 100)];
        assert_eq!(drf_tasks(&cap, &users), vec![3, 2]);
        let shares = fair_shares(
            &cap,
            &[demand(1, 1, cpu_mem(100, 400)), demand(2, 1, cpu_mem(300, 100))],
            &FairShareConfig::default(),
            0,
        );
        let a = shares[&QueueId(1)].fair;
        let b = shares[&QueueId(2)].fair;
        assert!((a - 2.0 / 3.0).abs() < 1e-9 && (b - 2.0 / 3.0).abs() < 1e-9, "{a} {b}");
    }

    #[test]
    fn weights_scale_the_dominant_share() {
        let gpus = ResourceVector::new().with_gpus(12);
        let want = ResourceVector::new().with_gpus(100);
        let shares =
            fair_shares(&gpus, &[demand(1, 2, want.clone()), demand(2, 1, want)], &FairShareConfig::default(), 0);
        assert!((shares[&QueueId(1)].fair - 2.0 / 3.0).abs() < 1e-9);
        assert!((shares[&QueueId(2)].fair - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(
            drf_tasks(
                &gpus,
                &[(2, ResourceVector::new().with_gpus(1), 99), (1, ResourceVector::new().with_gpus(1), 99)]
            ),
            vec![8, 4]
        );
    }

    #[test]
    fn a_small_demand_is_met_and_the_rest_goes_to_others() {
        let gpus = ResourceVector::new().with_gpus(10);
        let shares = fair_shares(
            &gpus,
            &[demand(1, 1, ResourceVector::new().with_gpus(2)), demand(2, 1, ResourceVector::new().with_gpus(50))],
            &FairShareConfig::default(),
            0,
        );
        assert!((shares[&QueueId(1)].fair - 0.2).abs() < 1e-9);
        assert!((shares[&QueueId(2)].fair - 0.8).abs() < 1e-9);
    }

    #[test]
    fn deficit_falls_as_usage_rises_and_history_counts_when_asked() {
        let gpus = ResourceVector::new().with_gpus(10);
        let mut a = demand(1, 1, ResourceVector::new().with_gpus(10));
        a.usage = ResourceVector::new().with_gpus(5);
        let b = demand(2, 1, ResourceVector::new().with_gpus(10));
        let s = fair_shares(&gpus, &[a.clone(), b.clone()], &FairShareConfig::default(), 0);
        assert!(s[&QueueId(2)].deficit > s[&QueueId(1)].deficit);
        assert!((s[&QueueId(1)].deficit - 0.0).abs() < 1e-9);
        // Queue 2 used the whole cluster for a long time: with history it now comes second.
        let past = PastUsage::default().accumulate(&ResourceVector::new().with_gpus(10), 100_000, 3600);
        let b = QueueDemand { past: Some(past), ..b };
        let cfg = FairShareConfig { half_life_s: Some(3600), history_weight: 0.8 };
        let s = fair_shares(&gpus, &[a, b], &cfg, 100_000);
        assert!(s[&QueueId(1)].deficit > s[&QueueId(2)].deficit, "{s:?}");
    }

    #[test]
    fn past_usage_halves_every_half_life() {
        let p = PastUsage { amounts: [(ResourceKey::Gpus, 800.0)].into_iter().collect(), as_of: 0 };
        assert!((p.decayed(100, 100)[&ResourceKey::Gpus] - 400.0).abs() < 1e-9);
        assert!((p.decayed(200, 100)[&ResourceKey::Gpus] - 200.0).abs() < 1e-9);
        // Holding the whole cluster forever converges to a past share of 1.
        let cap = ResourceVector::new().with_gpus(4);
        let full = PastUsage::default().accumulate(&cap, 1_000_000, 60);
        assert!((full.dominant_share(&cap, 1_000_000, 60) - 1.0).abs() < 1e-6);
    }
}
