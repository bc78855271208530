//! What the run time predictor judges a job by: its project, submitter, name pattern, first
//! image, priority and shape, read from the job as dispatched. Pure.

use grus_protocol::wire::JobSpec;
use grus_scheduler::predict::{name_pattern, RunFeatures};

use crate::admission::{demand, QuotaScopes, GPU};

/// The job's GPU demand, in milli-GPUs (what it holds once every replica runs).
pub fn gpu_milli(spec: &JobSpec) -> u64 {
    let want = demand(spec.tasks.iter().map(|t| (t.replicas, &t.resources)), &[], &QuotaScopes::default());
    want.get(GPU).copied().map_or(0, |m| u64::try_from(m).unwrap_or(0))
}

/// The predictor's view of `spec`.
pub fn run_features(spec: &JobSpec) -> RunFeatures {
    let first = spec.tasks.first();
    RunFeatures {
        project: spec.project.clone(),
        user: spec.submitted_by.clone(),
        name_pattern: name_pattern(&spec.name),
        image: first.map(|t| t.image.clone()).unwrap_or_default(),
        class: spec.priority.to_string(),
        gpu_milli: gpu_milli(spec),
        gpu_model: first.map(|t| t.resources.gpu_models.join("|")).unwrap_or_default(),
        cpu_milli: spec.tasks.iter().map(|t| t.resources.cpu_milli.saturating_mul(u64::from(t.replicas))).sum(),
        memory_mib: spec.tasks.iter().map(|t| t.resources.memory_mib.saturating_mul(u64::from(t.replicas))).sum(),
        replicas: spec.tasks.iter().map(|t| t.replicas).sum(),
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::{ResourcesSpec, TaskSpec};

    use super::*;

    #[test]
    fn runs_of_one_name_with_different_numbers_look_alike() {
        let spec = |name: &str| JobSpec {
            id: 1,
            name: name.into(),
            project: "vision".into(),
            queue: "default".into(),
            priority: 100,
            preemptible: false,
            may_preempt: true,
            tasks: vec![TaskSpec {
                name: "main".into(),
                replicas: 2,
                image: "example/train:1".into(),
                command: vec![],
                env: Default::default(),
                resources: ResourcesSpec { gpus: 4, cpu_milli: 8000, memory_mib: 1024, ..Default::default() },
                topology: None,
            }],
            gang: None,
            elastic: None,
            policies: vec![],
            max_runtime_s: None,
            min_runtime_s: None,
            predicted_runtime_s: None,
            labels: Default::default(),
            node_selector: Default::default(),
            pools: vec![],
            submitted_by: "dev:alice".into(),
            submitted_at_ms: 0,
            checkpoint: None,
            workspace: None,
            service: None,
        };
        let f = run_features(&spec("train-0041"));
        assert_eq!(f, run_features(&spec("train-0042")));
        assert_eq!((f.gpu_milli, f.replicas, f.cpu_milli, f.name_pattern.as_str()), (8000, 2, 16_000, "train"));
    }
}
