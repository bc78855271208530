//! The interference experiment on the replay: synthetic GPU load, so that interference-aware
//! sharing (`Demand::would_crowd`) has measurements to judge.
//!
//! Each placed pod drives each of its devices at a fraction of what it booked, drawn uniformly
//! from 20–100 % (a 500-milli share: 10–50 % busy; a whole GPU: 20–100 %), seeded from the
//! run's seed by a stream of its own (the placement's draws are unchanged). A device reports
//! the sum of its pods' load, at most 100 %, as its measured busy % after every placement.
//! Pods never leave in the published protocol, so the end of a run shows where shares were
//! packed. The replay in time ([`super::timeline`]) draws each pod's fraction from the pod
//! alone ([`pod_fraction`]: the same pod drives its devices alike under every policy) and
//! takes the load off again when the pod leaves or is evicted.

use crate::cluster::{Cluster, LiveUtilization, ReplicaAllocation};
use crate::rng::SeededRng;

/// The experiment's setting: the sharing limit placement works under (`None`: off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticLoad {
    pub limit_pct: Option<u8>,
}

/// The lowest and highest fraction of its booking a pod drives.
const LOAD_RANGE: (f64, f64) = (0.2, 1.0);
/// Separates the load's random stream from the placement's.
const STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// Each device's load so far, and the draws.
pub struct DeviceLoad {
    rng: SeededRng,
    /// Per node, per device: summed load in busy %, and how many pods share it.
    load: Vec<Vec<(f64, u32)>>,
}

/// The measured busy % of the devices shared by two pods or more (the ones whose pods can slow
/// each other down), at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedBusy {
    pub devices: usize,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
    /// Share of them above 70 %, in percent.
    pub over_70_pct: f64,
}

/// The fraction of its booking pod `key` drives under `seed`, uniform in [`LOAD_RANGE`]: a
/// function of the pod alone, so that it does not depend on where or when the pod runs.
pub fn pod_fraction(seed: u64, key: u64) -> f64 {
    let z = crate::rng::splitmix64_mix(seed ^ STREAM ^ key.wrapping_mul(0xD1B5_4A32_D192_ED03));
    LOAD_RANGE.0 + (LOAD_RANGE.1 - LOAD_RANGE.0) * ((z >> 11) as f64 / (1u64 << 53) as f64)
}

impl DeviceLoad {
    pub fn new(seed: u64) -> DeviceLoad {
        DeviceLoad { rng: SeededRng::new(seed ^ STREAM), load: Vec::new() }
    }

    /// Every device of `cluster` measured idle: a fleet whose profiler reports everywhere, so
    /// that the utilization term compares measured devices, not measured against unknown.
    pub fn measure_idle(cluster: &mut Cluster) {
        let devices: Vec<_> =
            cluster.nodes().iter().flat_map(|n| (0..n.gpus.len() as u8).map(move |g| (n.id, g))).collect();
        for (node, gpu) in devices {
            cluster.set_live_utilization(node, gpu, Some(LiveUtilization { busy_pct: 0.0, memory_used_mib: 0 }));
        }
    }

    /// A pod was placed: its devices take its load, a fraction of its booking drawn from this
    /// run's stream, and report their new busy %.
    pub fn add(&mut self, cluster: &mut Cluster, alloc: &ReplicaAllocation) {
        let fraction = LOAD_RANGE.0 + (LOAD_RANGE.1 - LOAD_RANGE.0) * self.rng.unit();
        self.apply(cluster, alloc, fraction, 1);
    }

    /// A pod that drives `fraction` of its booking was placed (`+1`) or left (`-1`).
    pub fn change(&mut self, cluster: &mut Cluster, alloc: &ReplicaAllocation, fraction: f64, placed: bool) {
        self.apply(cluster, alloc, fraction, if placed { 1 } else { -1 });
    }

    fn apply(&mut self, cluster: &mut Cluster, alloc: &ReplicaAllocation, fraction: f64, sign: i32) {
        let node = alloc.node.index();
        if self.load.len() <= node {
            self.load.resize(node + 1, Vec::new());
        }
        for d in &alloc.devices {
            let gpu = d.gpu as usize;
            let devices = &mut self.load[node];
            if devices.len() <= gpu {
                devices.resize(gpu + 1, (0.0, 0));
            }
            let device = &mut devices[gpu];
            device.0 += f64::from(sign) * f64::from(d.milli) / 10.0 * fraction;
            device.1 = device.1.saturating_add_signed(sign);
            if device.1 == 0 {
                // Sums of floats do not return to exactly zero.
                device.0 = 0.0;
            }
            let busy = device.0.clamp(0.0, 100.0) as f32;
            cluster.set_live_utilization(
                alloc.node,
                d.gpu,
                Some(LiveUtilization { busy_pct: busy, memory_used_mib: 0 }),
            );
        }
    }

    /// Devices held by two pods or more now, and how many of them are measured above
    /// `limit_pct` busy.
    pub fn shared_now(&self, limit_pct: f64) -> (usize, usize) {
        let shared = self.load.iter().flatten().filter(|(_, pods)| *pods >= 2);
        shared.fold((0, 0), |(n, over), (l, _)| (n + 1, over + usize::from(*l > limit_pct)))
    }

    /// The busy-% distribution of the shared devices.
    pub fn shared_busy(&self) -> SharedBusy {
        let mut busy: Vec<f64> =
            self.load.iter().flatten().filter(|(_, pods)| *pods >= 2).map(|(l, _)| l.min(100.0)).collect();
        busy.sort_by(f64::total_cmp);
        let at = |q: f64| busy.get(((busy.len() as f64 * q).ceil() as usize).clamp(1, busy.len().max(1)) - 1).copied();
        SharedBusy {
            devices: busy.len(),
            p50: at(0.5).unwrap_or(0.0),
            p90: at(0.9).unwrap_or(0.0),
            max: busy.last().copied().unwrap_or(0.0),
            over_70_pct: if busy.is_empty() {
                0.0
            } else {
                busy.iter().filter(|b| **b > 70.0).count() as f64 * 100.0 / busy.len() as f64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{DeviceShare, NodeId, NodeSpec};

    #[test]
    fn a_device_is_idle_again_once_its_pods_left() {
        let mut cluster = Cluster::new(vec![NodeSpec::new("n0", 32_000, 1 << 20, 2, "T4")]).unwrap();
        DeviceLoad::measure_idle(&mut cluster);
        let share = |milli| ReplicaAllocation {
            node: NodeId(0),
            cpu_milli: 1000,
            memory_mib: 0,
            devices: vec![DeviceShare::plain(1, milli, 0)],
        };
        let mut load = DeviceLoad::new(1);
        let (a, b) = (pod_fraction(1, 10), pod_fraction(1, 11));
        assert!((0.2..=1.0).contains(&a) && a != b, "{a} {b}");
        assert_eq!(pod_fraction(1, 10), a, "a pod's fraction is its own");
        load.change(&mut cluster, &share(500), a, true);
        load.change(&mut cluster, &share(300), b, true);
        let busy = cluster.node(NodeId(0)).gpus[1].live.unwrap().busy_pct;
        assert!((f64::from(busy) - (50.0 * a + 30.0 * b)).abs() < 1e-3, "{busy}");
        assert_eq!(load.shared_now(0.0), (1, 1));
        load.change(&mut cluster, &share(500), a, false);
        assert_eq!(load.shared_now(0.0), (0, 0));
        load.change(&mut cluster, &share(300), b, false);
        let gpus = &cluster.node(NodeId(0)).gpus;
        assert_eq!(gpus[1].live.unwrap().busy_pct, 0.0);
        assert_eq!(gpus[0].live.unwrap().busy_pct, 0.0, "measured idle from the start");
    }
}
