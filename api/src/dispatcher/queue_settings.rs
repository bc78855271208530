//! What agents are told of the queues (`SetQueues`): every queue, keyed `<project>/<queue>`,
//! with its weight, under its project and tenant with theirs, so that each cluster's scheduler
//! orders its waiting jobs by the same tenant → project → queue tree as the fleet's rounds do
//! (DESIGN.md, "Fair share is hierarchical"), and each queue's weights per node pool.
//!
//! Guarantees and limits stay with the control plane: they bound the fleet, and admission has
//! applied them before anything is dispatched. An agent told a fleet-wide guarantee would count
//! it whole in every cluster; told none, it treats each queue as entitled to what it was sent.

use std::collections::BTreeMap;

use grus_protocol::command::Command;
use grus_protocol::wire::{ProjectShare, ShareHierarchy};
use sha2::{Digest, Sha256};

use crate::allocator::ShareTree;

/// The command for every agent, and a digest that changes whenever it does.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSettings {
    pub command: Command,
    pub digest: String,
}

/// The settings of `tree` (its levels and weights; what anyone holds does not matter here).
pub fn queue_settings(tree: &ShareTree) -> QueueSettings {
    let mut hierarchy = ShareHierarchy::default();
    for t in &tree.tenants {
        hierarchy.tenants.insert(t.name.clone(), t.weight);
    }
    let tenant_names: BTreeMap<i64, &str> = tree.tenants.iter().map(|t| (t.id, t.name.as_str())).collect();
    let mut project_names = BTreeMap::new();
    for p in &tree.projects {
        let Some(tenant) = tenant_names.get(&p.parent) else { continue };
        project_names.insert(p.id, p.name.as_str());
        hierarchy.projects.insert(p.name.clone(), ProjectShare { tenant: (*tenant).to_owned(), weight: p.weight });
    }
    let (mut weights, mut pool_weights) = (BTreeMap::new(), BTreeMap::new());
    for q in &tree.queues {
        let Some(project) = project_names.get(&q.parent) else { continue };
        let key = ShareHierarchy::queue_key(project, &q.name);
        if let Some(per_pool) = tree.pool_weights.get(&q.id).filter(|p| !p.is_empty()) {
            pool_weights.insert(key.clone(), per_pool.clone());
        }
        weights.insert(key, q.weight);
    }
    let command = Command::SetQueues { weights, quotas: Default::default(), pool_weights, hierarchy: Some(hierarchy) };
    let encoded = serde_json::to_vec(&command).expect("commands serialize");
    QueueSettings { digest: hex::encode(&Sha256::digest(&encoded)[..16]), command }
}

#[cfg(test)]
mod tests {
    use grus_scheduler::queue::ResourceVector;

    use super::*;
    use crate::allocator::ShareNode;

    fn node(id: i64, parent: i64, name: &str, weight: f64) -> ShareNode {
        let guarantees = ResourceVector::new().with_gpus(8_000);
        ShareNode { id, parent, name: name.into(), weight, guarantees, limits: ResourceVector::new().with_gpus(9_000) }
    }

    fn tree() -> ShareTree {
        ShareTree {
            tenants: vec![node(1, 0, "acme", 3.0), node(2, 0, "beta", 1.0)],
            projects: vec![node(10, 1, "vision", 2.0), node(11, 2, "nlp", 0.5)],
            queues: vec![node(100, 10, "default", 1.0), node(101, 11, "default", 4.0), node(102, 99, "orphan", 1.0)],
            ..ShareTree::default()
        }
    }

    #[test]
    fn every_queue_goes_under_its_project_and_tenant_with_the_stored_weights() {
        let mut stored = tree();
        stored.pool_weights.insert(101, [("train".to_string(), 3.0)].into());
        let QueueSettings { command: Command::SetQueues { weights, quotas, hierarchy, pool_weights }, .. } =
            queue_settings(&stored)
        else {
            panic!("not a SetQueues")
        };
        assert_eq!(pool_weights, [("nlp/default".to_string(), [("train".to_string(), 3.0)].into())].into());
        assert_eq!(weights, [("nlp/default".to_string(), 4.0), ("vision/default".to_string(), 1.0)].into());
        assert!(quotas.is_empty(), "fleet-wide guarantees are not the agents'");
        let h = hierarchy.unwrap();
        assert_eq!(h.tenants, [("acme".to_string(), 3.0), ("beta".to_string(), 1.0)].into());
        assert_eq!(h.projects["nlp"], ProjectShare { tenant: "beta".into(), weight: 0.5 });
    }

    #[test]
    fn the_digest_follows_the_settings_and_nothing_else() {
        let base = queue_settings(&tree());
        let mut held = tree();
        held.held.insert(100, 4_000);
        held.capacity_milli = 64_000;
        held.queues[0].guarantees = ResourceVector::new();
        held.tenants[0].limits = ResourceVector::new();
        assert_eq!(queue_settings(&held).digest, base.digest, "usage, guarantees and limits are not sent");
        let mut reweighted = tree();
        reweighted.projects[1].weight = 0.75;
        assert_ne!(queue_settings(&reweighted).digest, base.digest);
        assert_eq!(base.digest.len(), 32);
    }
}
