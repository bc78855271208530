//! Job specs as the wire carries them (`grus_protocol::wire`), for tests that dispatch to an
//! agent directly: a task of whole GPUs of one model, and a job of tasks that runs a given
//! time in the simulator (a gang when it has several replicas). Tests override fields with
//! struct update syntax.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use grus_protocol::wire::{GangSpec, JobSpec, ResourcesSpec, TaskSpec};

/// The simulator's label for how long a replica runs, seconds.
pub const SIM_DURATION_LABEL: &str = "grus.io/sim-duration-s";

/// A task of `replicas` replicas with `gpus` whole GPUs of `model` each (1 CPU, 1 GiB).
pub fn task(name: &str, replicas: u32, gpus: u32, model: &str) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        replicas,
        image: "example/train:1".into(),
        command: vec!["train".into()],
        env: BTreeMap::new(),
        resources: ResourcesSpec {
            gpus,
            gpu_milli: None,
            gpu_memory_mib: None,
            gpu_models: vec![model.into()],
            cpu_milli: 1_000,
            memory_mib: 1_024,
            mig_profile: None,
        },
        topology: None,
    }
}

/// Job `id` of project `vision`, queue `default`, whose replicas run `duration_s` in the
/// simulator; a gang of all its replicas when it has several.
pub fn job(id: u64, tasks: Vec<TaskSpec>, duration_s: f64) -> JobSpec {
    let total: u32 = tasks.iter().map(|t| t.replicas).sum();
    JobSpec {
        id,
        name: format!("job-{id}"),
        project: "vision".into(),
        queue: "default".into(),
        priority: 100,
        preemptible: true,
        may_preempt: true,
        tasks,
        gang: (total > 1).then_some(GangSpec { min_members: total }),
        elastic: None,
        policies: Vec::new(),
        max_runtime_s: None,
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels: [(SIM_DURATION_LABEL.to_string(), duration_s.to_string())].into_iter().collect(),
        node_selector: BTreeMap::new(),
        pools: Vec::new(),
        submitted_by: "tester".into(),
        submitted_at_ms: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64),
        checkpoint: None,
        workspace: None,
        service: None,
    }
}
