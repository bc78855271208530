//! Binpack and spread: how full the node's GPUs (and, for CPU-only work, CPU) would be.

use crate::cluster::{DeviceShare, Node};
use crate::demand::Demand;
use crate::score::{ScoreContext, ScorePlugin};

/// Fraction of the node's GPU capacity (or CPU, for CPU-only demands) in use after placing.
fn fill_after(node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
    if node.gpus.is_empty() || demand.gpus == 0 {
        return (node.cpu_used + demand.cpu_milli) as f64 / node.cpu_milli.max(1) as f64;
    }
    let cap = node.gpus.len() as f64 * 1000.0;
    let used: f64 = node.gpus.iter().map(|g| g.used_milli as f64).sum::<f64>()
        + devices.iter().map(|d| d.milli as f64).sum::<f64>();
    used / cap
}

/// Prefers the node that is fullest after placing: keeps whole nodes free for big gangs.
pub struct Binpack;

impl ScorePlugin for Binpack {
    fn name(&self) -> &'static str {
        "binpack"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, _: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        100.0 * fill_after(node, demand, devices)
    }
}

/// Prefers the emptiest node: limits the blast radius of a node failure.
pub struct Spread;

impl ScorePlugin for Spread {
    fn name(&self) -> &'static str {
        "spread"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, _: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        100.0 * (1.0 - fill_after(node, demand, devices))
    }
}
