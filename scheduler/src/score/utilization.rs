//! Live utilization: prefer devices and nodes that the profiler measures as idle.
//!
//! Bookkeeping (milli booked per device) says what may run; the profiler says what does run.
//! A share placed on a device whose tenants are busy gets fewer cycles than it booked, and a
//! device whose measured memory use leaves no room for the share's memory will fail at run
//! time even though the books balance. `Gpu::live` is supplied by the caller; `None` means
//! no metrics, and a node without any metrics scores the neutral 50 so that missing telemetry
//! neither attracts nor repels work.

use crate::cluster::{DeviceShare, Gpu, Node};
use crate::demand::Demand;
use crate::score::{ScoreContext, ScorePlugin};

/// Score of an option nothing is known about.
const NEUTRAL: f64 = 50.0;

/// Weight of compute (busy %) against memory pressure in a device's load.
const BUSY_WEIGHT: f64 = 0.6;

/// Measured load of one device in 0..=1, or `None` without metrics.
fn device_load(gpu: &Gpu) -> Option<f64> {
    let live = gpu.live?;
    let busy = (live.busy_pct as f64 / 100.0).clamp(0.0, 1.0);
    let mem = if gpu.memory_mib == 0 { 0.0 } else { (live.memory_used_mib as f64 / gpu.memory_mib as f64).min(1.0) };
    Some(BUSY_WEIGHT * busy + (1.0 - BUSY_WEIGHT) * mem)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Prefers idle devices (for shares, above all the device the share lands on) and idle nodes.
pub struct Utilization;

impl ScorePlugin for Utilization {
    fn name(&self) -> &'static str {
        "utilization"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, _: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        let node_load = mean(node.gpus.iter().filter_map(device_load));
        let chosen = || devices.iter().filter_map(|d| node.gpus.get(d.gpu as usize));
        if demand.is_fractional() {
            // The share will only get the memory the device really has left, whatever the books say.
            let starved = chosen().any(|g| {
                g.live.is_some_and(|l| l.memory_used_mib.saturating_add(demand.gpu_memory_mib) > g.memory_mib)
            });
            if starved {
                return 0.0;
            }
        }
        let device = mean(chosen().filter_map(device_load));
        // A share competes for the very device it lands on; a whole GPU is exclusive, so what
        // matters more is the host around it (PCIe, CPU, neighbours' memory traffic).
        let device_weight = if demand.gpus == 0 {
            0.0
        } else if demand.is_fractional() {
            0.8
        } else {
            0.5
        };
        let load = match (device, node_load) {
            (Some(d), Some(n)) => device_weight * d + (1.0 - device_weight) * n,
            (Some(d), None) => d,
            (None, Some(n)) => n,
            (None, None) => return NEUTRAL,
        };
        100.0 * (1.0 - load.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, LiveUtilization, NodeId, NodeSpec};
    use crate::resources::ModelSet;

    fn share(milli: u32, gpu_memory_mib: u64) -> Demand {
        Demand {
            gpus: 1,
            milli,
            gpu_memory_mib,
            models: ModelSet::ANY,
            cpu_milli: 0,
            memory_mib: 0,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    fn one(gpu: u8, milli: u32) -> [DeviceShare; 1] {
        [DeviceShare::plain(gpu, milli, 0)]
    }

    fn score(c: &Cluster, node: u32, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        let ctx = ScoreContext { cluster: c, gang: &[], workload: &[] };
        Utilization.score(&ctx, c.node(NodeId(node)), demand, devices)
    }

    fn live(busy_pct: f32, memory_used_mib: u64) -> Option<LiveUtilization> {
        Some(LiveUtilization { busy_pct, memory_used_mib })
    }

    #[test]
    fn no_metrics_is_neutral() {
        let c = Cluster::new(vec![NodeSpec::new("a", 8000, 65536, 2, "T4")]).unwrap();
        assert_eq!(score(&c, 0, &share(300, 0), &one(0, 300)), NEUTRAL);
        assert_eq!(score(&c, 0, &Demand::cpu_only(1000, 1024), &[]), NEUTRAL);
    }

    #[test]
    fn a_share_prefers_the_idle_device_of_a_node() {
        let mut c = Cluster::new(vec![NodeSpec::new("a", 8000, 65536, 2, "T4")]).unwrap();
        c.set_live_utilization(NodeId(0), 0, live(90.0, 40 * 1024));
        c.set_live_utilization(NodeId(0), 1, live(5.0, 1024));
        let busy = score(&c, 0, &share(300, 0), &one(0, 300));
        let idle = score(&c, 0, &share(300, 0), &one(1, 300));
        assert!(idle > busy + 30.0, "idle {idle} busy {busy}");
    }

    #[test]
    fn a_share_weighs_its_device_more_than_a_whole_gpu_does() {
        let mut c = Cluster::new(vec![NodeSpec::new("a", 8000, 65536, 2, "T4")]).unwrap();
        c.set_live_utilization(NodeId(0), 0, live(100.0, 0));
        c.set_live_utilization(NodeId(0), 1, live(0.0, 0));
        let share_on_busy = score(&c, 0, &share(300, 0), &one(0, 300));
        let whole_on_busy = score(&c, 0, &Demand { milli: 1000, ..share(1000, 0) }, &one(0, 1000));
        assert!(share_on_busy < whole_on_busy, "share {share_on_busy} whole {whole_on_busy}");
    }

    #[test]
    fn an_idle_node_beats_a_busy_one_and_an_unmeasured_one_sits_between() {
        let mut c = Cluster::new(vec![
            NodeSpec::new("busy", 8000, 65536, 1, "T4"),
            NodeSpec::new("idle", 8000, 65536, 1, "T4"),
            NodeSpec::new("dark", 8000, 65536, 1, "T4"),
        ])
        .unwrap();
        c.set_live_utilization(NodeId(0), 0, live(95.0, 60 * 1024));
        c.set_live_utilization(NodeId(1), 0, live(2.0, 512));
        let d = share(1000, 0);
        let [busy, idle, dark] = [0, 1, 2].map(|n| score(&c, n, &d, &one(0, 1000)));
        assert!(idle > dark && dark > busy, "idle {idle} dark {dark} busy {busy}");
    }

    #[test]
    fn a_share_whose_memory_is_already_used_up_scores_zero() {
        let mut c = Cluster::new(vec![NodeSpec::new("a", 8000, 65536, 1, "T4")]).unwrap();
        // 80 GiB devices; 75 GiB measured in use leaves no room for a 10 GiB share.
        c.set_live_utilization(NodeId(0), 0, live(10.0, 75 * 1024));
        assert_eq!(score(&c, 0, &share(250, 10 * 1024), &one(0, 250)), 0.0);
        assert!(score(&c, 0, &share(250, 4 * 1024), &one(0, 250)) > 0.0);
    }
}
