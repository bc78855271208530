//! The `grus` placement policy: FGD's fragmentation gradient without its integer sigmoid,
//! with tie-breaks.
//!
//! (Design notes are filled in once the variants have been measured.)

use crate::cluster::{DeviceShare, Node};
use crate::place::Demand;
use crate::score::fgd::fragmentation_drop;
use crate::score::{Policy, ScoreContext, ScorePlugin};

/// Milli of fragmentation change per score point: ±8000 (a whole 8-GPU node) spans 0..=100.
const MILLI_PER_POINT: f64 = 160.0;

/// The real-valued drop in the node's fragmentation F(n) − F(n'), mapped linearly to 0..=100
/// (50: no change).
pub struct FragmentationDrop;

impl ScorePlugin for FragmentationDrop {
    fn name(&self) -> &'static str {
        "fragmentation-drop"
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        (50.0 + fragmentation_drop(node, demand, devices, ctx.workload) / MILLI_PER_POINT).clamp(0.0, 100.0)
    }
}

/// Tightest fit: how full the node's GPUs and CPU are after the placement (0..=100).
pub struct TightFit;

impl ScorePlugin for TightFit {
    fn name(&self) -> &'static str {
        "tight-fit"
    }

    fn score(&self, _: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        let cpu = (node.cpu_used + demand.cpu_milli) as f64 / node.cpu_milli.max(1) as f64;
        let gpu = if node.gpus.is_empty() {
            1.0
        } else {
            let used: u64 = node.gpus.iter().map(|g| g.used_milli as u64).sum::<u64>()
                + devices.iter().map(|d| d.milli as u64).sum::<u64>();
            used as f64 / (node.gpus.len() as f64 * 1000.0)
        };
        50.0 * (cpu + gpu)
    }
}

impl Policy {
    /// The grus composite (see the module doc). Needs the typical workload in the
    /// [`ScoreContext`]; every plugin looks at the node alone, so scores may be cached per
    /// node until it changes.
    pub fn grus() -> Policy {
        Policy::new("grus").with(1.0, FragmentationDrop).with(0.001, TightFit)
    }

    /// Published FGD alone.
    pub fn fgd() -> Policy {
        Policy::new("fgd").with(1.0, crate::score::fgd::Fgd)
    }
}
