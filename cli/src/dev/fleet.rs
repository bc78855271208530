//! The simulated fleet of `grus dev`: which clusters, with which nodes, GPU models and prices.
//!
//! Pure data: the first two clusters are `east` (4 nodes x 8 A100-80GB, two of them in the node
//! pool `a100-train`, one with its GPUs in MIG mode for jobs asking a `mig_profile`) and `west` (4 x 4 T4); further ones take other models, so a newcomer sees
//! the allocator choose between clusters by model. Past the table the shapes repeat under
//! numbered names (`east-2`, ...).

use grus_protocol::keys::is_valid_cluster_id;

/// One simulated cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimCluster {
    /// The cluster id: the optional prefix, then the name.
    pub id: String,
    /// `grus-agent --sim-nodes` syntax: nodes x GPUs x model, then node labels.
    pub nodes: &'static str,
    /// `grus-agent --node-pool` definitions (NAME=SELECTOR).
    pub node_pools: &'static [&'static str],
    pub gpu_model: &'static str,
    pub region: &'static str,
    /// What the banner says about it.
    pub description: &'static str,
}

/// A GPU model's seeded price (decimal strings, as `setPrice` takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Price {
    pub gpu_model: &'static str,
    pub list: &'static str,
    pub contracted: &'static str,
}

struct Shape {
    name: &'static str,
    nodes: &'static str,
    node_pools: &'static [&'static str],
    gpu_model: &'static str,
    region: &'static str,
    description: &'static str,
    price: Price,
}

const SHAPES: [Shape; 4] = [
    Shape {
        name: "east",
        nodes: "2x8xA100-80GB:pool=a100-train,1x8xA100-80GB:mig,1x8xA100-80GB",
        node_pools: &["a100-train=pool=a100-train"],
        gpu_model: "A100-80GB",
        region: "us-east",
        description: "4 nodes x 8 A100-80GB (2 in node pool a100-train, 1 with its GPUs in MIG mode)",
        price: Price { gpu_model: "A100-80GB", list: "2.50", contracted: "1.90" },
    },
    Shape {
        name: "west",
        nodes: "4x4xT4",
        node_pools: &[],
        gpu_model: "T4",
        region: "us-west",
        description: "4 nodes x 4 T4",
        price: Price { gpu_model: "T4", list: "0.35", contracted: "0.30" },
    },
    Shape {
        name: "north",
        nodes: "2x8xH100-80GB",
        node_pools: &[],
        gpu_model: "H100-80GB",
        region: "eu-north",
        description: "2 nodes x 8 H100-80GB",
        price: Price { gpu_model: "H100-80GB", list: "4.20", contracted: "3.40" },
    },
    Shape {
        name: "south",
        nodes: "4x2xL4",
        node_pools: &[],
        gpu_model: "L4",
        region: "eu-south",
        description: "4 nodes x 2 L4",
        price: Price { gpu_model: "L4", list: "0.80", contracted: "0.65" },
    },
];

/// The most clusters `grus dev` runs (all in one process).
pub const MAX_CLUSTERS: usize = 16;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FleetError {
    #[error("--clusters must be 1 to {MAX_CLUSTERS}, not {0}")]
    Count(usize),
    #[error("--cluster-prefix `{prefix}` makes the invalid cluster id `{id}` (ids: 1-63 characters of a-z, 0-9, '-')")]
    Prefix { prefix: String, id: String },
}

/// The first `count` clusters, their ids prefixed with `prefix` (tests use a random prefix so
/// their Redis streams do not meet another test's).
pub fn fleet(count: usize, prefix: &str) -> Result<Vec<SimCluster>, FleetError> {
    if !(1..=MAX_CLUSTERS).contains(&count) {
        return Err(FleetError::Count(count));
    }
    (0..count)
        .map(|i| {
            let shape = &SHAPES[i % SHAPES.len()];
            let round = i / SHAPES.len();
            let name = if round == 0 { shape.name.to_owned() } else { format!("{}-{}", shape.name, round + 1) };
            let id = format!("{prefix}{name}");
            if !is_valid_cluster_id(&id) {
                return Err(FleetError::Prefix { prefix: prefix.to_owned(), id });
            }
            Ok(SimCluster {
                id,
                nodes: shape.nodes,
                node_pools: shape.node_pools,
                gpu_model: shape.gpu_model,
                region: shape.region,
                description: shape.description,
            })
        })
        .collect()
}

/// Prices of the models in `clusters`, each model once.
pub fn prices(clusters: &[SimCluster]) -> Vec<Price> {
    let mut out: Vec<Price> = Vec::new();
    for c in clusters {
        let price = SHAPES.iter().find(|s| s.gpu_model == c.gpu_model).map(|s| s.price);
        if let Some(p) = price.filter(|p| !out.contains(p)) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_clusters_with_different_models_by_default() {
        let f = fleet(2, "").unwrap();
        assert_eq!(f.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["east", "west"]);
        assert_eq!(f[0].nodes, "2x8xA100-80GB:pool=a100-train,1x8xA100-80GB:mig,1x8xA100-80GB");
        assert_eq!(f[0].node_pools, ["a100-train=pool=a100-train"]);
        assert_eq!(f[1].nodes, "4x4xT4");
        assert_eq!(prices(&f).iter().map(|p| p.gpu_model).collect::<Vec<_>>(), ["A100-80GB", "T4"]);
    }

    #[test]
    fn more_clusters_vary_and_stay_unique() {
        let f = fleet(9, "t1-").unwrap();
        let ids: Vec<&str> = f.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[..5], ["t1-east", "t1-west", "t1-north", "t1-south", "t1-east-2"]);
        let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), 9);
        assert_eq!(prices(&f).len(), SHAPES.len(), "one price per model");
        for c in &f {
            assert!(grus_agent::backend::sim::spec::parse_compact(c.nodes).is_ok(), "{}", c.nodes);
            assert!(c.nodes.ends_with(c.gpu_model));
            for p in c.node_pools {
                assert!(grus_scheduler::pool::PoolDef::parse(p).is_ok(), "{p}");
            }
        }
    }

    #[test]
    fn bad_counts_and_prefixes_are_refused() {
        assert_eq!(fleet(0, ""), Err(FleetError::Count(0)));
        assert_eq!(fleet(MAX_CLUSTERS + 1, ""), Err(FleetError::Count(MAX_CLUSTERS + 1)));
        assert!(matches!(fleet(1, "Bad_"), Err(FleetError::Prefix { .. })));
        assert!(matches!(fleet(1, &"x".repeat(63)), Err(FleetError::Prefix { .. })));
    }
}
