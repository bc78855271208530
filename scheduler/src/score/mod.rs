//! Scoring plugins and the weighted policies built from them.
//!
//! A plugin scores one placement option (a node plus the devices chosen on it) in 0..=100,
//! higher is better. A [`Policy`] sums weighted plugin scores; the placement engine keeps the
//! best option. Plugins never mutate state and never see more than the cluster snapshot, the
//! gang members placed so far and the typical workload.

use crate::cluster::{Cluster, DeviceShare, Node, ReplicaAllocation};
use crate::place::Demand;

mod basic;
mod topology;
mod utilization;

pub use basic::{Binpack, Spread};
pub use topology::Topology;
pub use utilization::Utilization;

/// A demand shape that is common in the workload, with its share (FGD's target workload).
#[derive(Clone, Debug, PartialEq)]
pub struct TypicalDemand {
    pub demand: Demand,
    pub weight: f64,
}

/// What a plugin may look at besides the node itself.
pub struct ScoreContext<'a> {
    pub cluster: &'a Cluster,
    /// Allocations of the same gang already placed in this attempt.
    pub gang: &'a [ReplicaAllocation],
    /// The typical workload, weights summing to 1 (empty when unknown).
    pub workload: &'a [TypicalDemand],
}

pub trait ScorePlugin: Send + Sync {
    fn name(&self) -> &'static str;

    /// Score in 0..=100 of putting `demand` on `node` using `devices`.
    fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64;
}

/// A named, weighted sum of plugins.
pub struct Policy {
    pub name: String,
    plugins: Vec<(f64, Box<dyn ScorePlugin>)>,
    /// Stop looking after this many feasible nodes (tightest fits first); `usize::MAX` scores all.
    pub max_feasible_nodes: usize,
    /// For a gang held to a topology scope: stop after this many domains (nodes, NVLink
    /// groups, racks) that hold the whole gang; `usize::MAX` tries all. Each try places every
    /// member, so this bounds a gang's cost separately from `max_feasible_nodes`.
    pub max_gang_domains: usize,
}

impl Policy {
    pub fn new(name: &str) -> Policy {
        Policy {
            name: name.to_string(),
            plugins: Vec::new(),
            max_feasible_nodes: usize::MAX,
            max_gang_domains: usize::MAX,
        }
    }

    pub fn with(mut self, weight: f64, plugin: impl ScorePlugin + 'static) -> Policy {
        self.plugins.push((weight, Box::new(plugin)));
        self
    }

    pub fn with_max_feasible_nodes(mut self, n: usize) -> Policy {
        self.max_feasible_nodes = n.max(1);
        self
    }

    pub fn with_max_gang_domains(mut self, n: usize) -> Policy {
        self.max_gang_domains = n.max(1);
        self
    }

    pub fn plugin_names(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.plugins.iter().map(|(w, p)| (p.name(), *w))
    }

    pub fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        self.plugins.iter().map(|(w, p)| w * p.score(ctx, node, demand, devices)).sum()
    }

    /// Binpack alone: fill the fullest node that fits.
    pub fn binpack() -> Policy {
        Policy::new("binpack").with(1.0, Binpack)
    }

    /// Spread alone: prefer the emptiest node.
    pub fn spread() -> Policy {
        Policy::new("spread").with(1.0, Spread)
    }
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("name", &self.name)
            .field("plugins", &self.plugin_names().collect::<Vec<_>>())
            .field("max_feasible_nodes", &self.max_feasible_nodes)
            .field("max_gang_domains", &self.max_gang_domains)
            .finish()
    }
}
