//! The interference experiment on the replay: synthetic GPU load, so that interference-aware
//! sharing (`Demand::would_crowd`) has measurements to judge.
//!
//! Each placed pod drives each of its devices at a fraction of what it booked, drawn uniformly
//! from 20–100 % (a 500-milli share: 10–50 % busy; a whole GPU: 20–100 %), seeded from the
//! run's seed by a stream of its own (the placement's draws are unchanged). A device reports
//! the sum of its pods' load, at most 100 %, as its measured busy % after every placement.
//! Pods never leave in this protocol, so the end of a run shows where shares were packed.

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

impl DeviceLoad {
    pub fn new(seed: u64) -> DeviceLoad {
        DeviceLoad { rng: SeededRng::new(seed ^ STREAM), load: Vec::new() }
    }

    /// A pod was placed: its devices take its load and report their new busy %.
    pub fn add(&mut self, cluster: &mut Cluster, alloc: &ReplicaAllocation) {
        let fraction = LOAD_RANGE.0 + (LOAD_RANGE.1 - LOAD_RANGE.0) * self.rng.unit();
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
            devices[gpu].0 += f64::from(d.milli) / 10.0 * fraction;
            devices[gpu].1 += 1;
            let busy = devices[gpu].0.min(100.0) as f32;
            cluster.set_live_utilization(
                alloc.node,
                d.gpu,
                Some(LiveUtilization { busy_pct: busy, memory_used_mib: 0 }),
            );
        }
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
