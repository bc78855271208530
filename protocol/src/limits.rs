//! Bounds on what one message, and one job, may carry: the one definition both ends check.
//!
//! A reader refuses a message that breaks them at decode time ([`check_value`] for every
//! message, [`check_event`] for an agent's reports), so nothing unbounded is stored or served
//! (an 8 MB version string) and nothing PostgreSQL would refuse (a NUL byte in text) reaches a
//! transaction that would then fail for ever. [`check_job`] is what one job may ask for: the
//! api refuses it at submit with per-field errors, the agent rejects a dispatch beyond it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::event::Event;
use crate::wire::{JobSpec, NodeInfo};

/// A whole encoded message.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// Any one string inside a message.
pub const MAX_TEXT_BYTES: usize = 64 << 10;
/// Any one list or map inside a message.
pub const MAX_ITEMS: usize = 200_000;

/// Names: nodes, tasks, racks, label keys of jobs (Kubernetes' DNS subdomain length).
pub const MAX_NAME_BYTES: usize = 253;
/// A label key of a node (a DNS-subdomain prefix, `/`, a 63-character name).
pub const MAX_LABEL_KEY_BYTES: usize = 317;
/// A label value, a GPU model or UUID, an agent version.
pub const MAX_SHORT_TEXT_BYTES: usize = 1024;
/// An agent's version string and each capability.
pub const MAX_VERSION_BYTES: usize = 128;
pub const MAX_CAPABILITIES: usize = 64;
/// GPUs on one node, devices held by one replica.
pub const MAX_GPUS_PER_NODE: usize = 64;
/// Labels on one node.
pub const MAX_NODE_LABELS: usize = 256;

/// One job: tasks, replicas over all tasks, labels (and cluster selector entries), policies.
pub const MAX_TASKS_PER_JOB: usize = 64;
pub const MAX_REPLICAS_PER_JOB: u64 = 4096;
pub const MAX_JOB_LABELS: usize = 64;
pub const MAX_POLICIES: usize = 32;
/// One task: environment variables, command arguments, each one's size, accepted GPU models.
pub const MAX_ENV_VARS: usize = 256;
pub const MAX_ARGS: usize = 256;
pub const MAX_ARG_BYTES: usize = 32 << 10;
pub const MAX_GPU_MODELS: usize = 32;
/// Node pools one job may name.
pub const MAX_JOB_POOLS: usize = 16;
/// The job as stored and dispatched, encoded.
pub const MAX_SPEC_BYTES: usize = 256 << 10;

/// What breaks a bound: where (a dotted path) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {why}")]
pub struct OutOfBounds {
    pub path: String,
    pub why: String,
}

impl OutOfBounds {
    fn new(path: impl Into<String>, why: impl Into<String>) -> OutOfBounds {
        OutOfBounds { path: path.into(), why: why.into() }
    }
}

/// Why a string is unacceptable, if it is: a NUL character, or more than `max` bytes.
pub fn text_problem(s: &str, max: usize) -> Option<String> {
    if s.len() > max {
        Some(format!("{} bytes, at most {max}", s.len()))
    } else if s.contains('\0') {
        Some("contains a NUL character".to_owned())
    } else {
        None
    }
}

fn text(path: impl FnOnce() -> String, s: &str, max: usize) -> Result<(), OutOfBounds> {
    match text_problem(s, max) {
        Some(why) => Err(OutOfBounds::new(path(), why)),
        None => Ok(()),
    }
}

fn count(path: &str, n: usize, max: usize) -> Result<(), OutOfBounds> {
    if n > max {
        return Err(OutOfBounds::new(path, format!("{n} items, at most {max}")));
    }
    Ok(())
}

/// Every string and list of a decoded JSON value, at any depth: strings at most
/// [`MAX_TEXT_BYTES`] and without NUL, lists and maps at most [`MAX_ITEMS`].
pub fn check_value(value: &Value) -> Result<(), OutOfBounds> {
    fn walk(v: &Value, path: &mut Vec<String>) -> Result<(), OutOfBounds> {
        let here = |path: &[String]| if path.is_empty() { "body".to_owned() } else { path.join(".") };
        match v {
            Value::String(s) => text(|| here(path), s, MAX_TEXT_BYTES),
            Value::Array(items) => {
                count(&here(path), items.len(), MAX_ITEMS)?;
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    walk(item, path)?;
                    path.pop();
                }
                Ok(())
            }
            Value::Object(map) => {
                count(&here(path), map.len(), MAX_ITEMS)?;
                for (k, item) in map {
                    path.push(k.clone());
                    text(|| here(path), k, MAX_TEXT_BYTES)?;
                    walk(item, path)?;
                    path.pop();
                }
                Ok(())
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
    walk(value, &mut Vec::new())
}

fn check_nodes(path: &str, nodes: &[NodeInfo]) -> Result<(), OutOfBounds> {
    for (i, n) in nodes.iter().enumerate() {
        let at = |field: &str| format!("{path}.{i}.{field}");
        text(|| at("name"), &n.name, MAX_NAME_BYTES)?;
        if let Some(rack) = &n.rack {
            text(|| at("rack"), rack, MAX_NAME_BYTES)?;
        }
        count(&at("labels"), n.labels.len(), MAX_NODE_LABELS)?;
        for (k, v) in &n.labels {
            text(|| at("labels"), k, MAX_LABEL_KEY_BYTES)?;
            text(|| at(&format!("labels.{k}")), v, MAX_SHORT_TEXT_BYTES)?;
        }
        count(&at("gpus"), n.gpus.len(), MAX_GPUS_PER_NODE)?;
        for (g, gpu) in n.gpus.iter().enumerate() {
            text(|| at(&format!("gpus.{g}.model")), &gpu.model, MAX_SHORT_TEXT_BYTES)?;
            if let Some(uuid) = &gpu.uuid {
                text(|| at(&format!("gpus.{g}.uuid")), uuid, MAX_SHORT_TEXT_BYTES)?;
            }
        }
    }
    Ok(())
}

/// The field-specific bounds of an agent's report (on top of [`check_value`]).
pub fn check_event(event: &Event) -> Result<(), OutOfBounds> {
    match event {
        Event::Hello { version, capabilities } => {
            text(|| "version".into(), version, MAX_VERSION_BYTES)?;
            count("capabilities", capabilities.len(), MAX_CAPABILITIES)?;
            for (i, c) in capabilities.iter().enumerate() {
                text(|| format!("capabilities.{i}"), c, MAX_VERSION_BYTES)?;
            }
            Ok(())
        }
        Event::Inventory { nodes } => check_nodes("nodes", nodes),
        Event::Capacity { summary } => {
            for (i, m) in summary.models.iter().enumerate() {
                text(|| format!("summary.models.{i}.model"), &m.model, MAX_SHORT_TEXT_BYTES)?;
            }
            for (i, p) in summary.pools.iter().enumerate() {
                text(|| format!("summary.pools.{i}.name"), &p.name, MAX_NAME_BYTES)?;
                for (j, m) in p.models.iter().enumerate() {
                    text(|| format!("summary.pools.{i}.models.{j}.model"), &m.model, MAX_SHORT_TEXT_BYTES)?;
                }
            }
            Ok(())
        }
        Event::JobState { task, node, devices, checkpoint, endpoint, .. } => {
            if let Some(endpoint) = endpoint {
                text(|| "endpoint".into(), endpoint, MAX_SHORT_TEXT_BYTES)?;
            }
            if let Some(checkpoint) = checkpoint {
                text(|| "checkpoint".into(), checkpoint, MAX_SHORT_TEXT_BYTES)?;
            }
            if let Some(task) = task {
                text(|| "task".into(), task, MAX_NAME_BYTES)?;
            }
            if let Some(node) = node {
                text(|| "node".into(), node, MAX_NAME_BYTES)?;
            }
            count("devices", devices.len(), MAX_GPUS_PER_NODE)
        }
        Event::Metrics { gpus, replicas } => {
            for (i, g) in gpus.iter().enumerate() {
                text(|| format!("gpus.{i}.node"), &g.node, MAX_NAME_BYTES)?;
            }
            for (i, r) in replicas.iter().enumerate() {
                text(|| format!("replicas.{i}.task"), &r.task, MAX_NAME_BYTES)?;
            }
            Ok(())
        }
        Event::Snapshot { jobs, inventory } => {
            check_nodes("inventory", inventory)?;
            for (i, j) in jobs.iter().enumerate() {
                let replicas = u64::try_from(j.replicas.len()).unwrap_or(u64::MAX);
                if replicas > MAX_REPLICAS_PER_JOB {
                    return Err(OutOfBounds::new(
                        format!("jobs.{i}.replicas"),
                        format!("{replicas} items, at most {MAX_REPLICAS_PER_JOB}"),
                    ));
                }
                for (r, rep) in j.replicas.iter().enumerate() {
                    text(|| format!("jobs.{i}.replicas.{r}.task"), &rep.task, MAX_NAME_BYTES)?;
                    if let Some(node) = &rep.node {
                        text(|| format!("jobs.{i}.replicas.{r}.node"), node, MAX_NAME_BYTES)?;
                    }
                    count(&format!("jobs.{i}.replicas.{r}.devices"), rep.devices.len(), MAX_GPUS_PER_NODE)?;
                }
            }
            Ok(())
        }
    }
}

fn check_pairs(path: &str, pairs: &BTreeMap<String, String>, max: usize, value_max: usize) -> Result<(), OutOfBounds> {
    count(path, pairs.len(), max)?;
    for (k, v) in pairs {
        if k.is_empty() {
            return Err(OutOfBounds::new(path, "an empty key"));
        }
        text(|| format!("{path}.{k}"), k, MAX_NAME_BYTES)?;
        text(|| format!("{path}.{k}"), v, value_max)?;
    }
    Ok(())
}

/// What one job may ask for. Paths are the job YAML's (`tasks.0.env`); the api reports the
/// same bounds per field of its input, and the agent rejects a dispatch that breaks them.
pub fn check_job(job: &JobSpec) -> Result<(), OutOfBounds> {
    text(|| "name".into(), &job.name, MAX_NAME_BYTES)?;
    count("tasks", job.tasks.len(), MAX_TASKS_PER_JOB)?;
    let replicas: u64 = job.tasks.iter().map(|t| u64::from(t.replicas)).sum();
    if replicas > MAX_REPLICAS_PER_JOB {
        return Err(OutOfBounds::new("tasks", format!("{replicas} replicas in all, at most {MAX_REPLICAS_PER_JOB}")));
    }
    check_pairs("labels", &job.labels, MAX_JOB_LABELS, MAX_SHORT_TEXT_BYTES)?;
    check_pairs("clusterSelector", &job.node_selector, MAX_JOB_LABELS, MAX_SHORT_TEXT_BYTES)?;
    count("policies", job.policies.len(), MAX_POLICIES)?;
    count("pools", job.pools.len(), MAX_JOB_POOLS)?;
    for (i, p) in job.pools.iter().enumerate() {
        text(|| format!("pools.{i}"), p, MAX_NAME_BYTES)?;
    }
    if let Some(c) = &job.checkpoint {
        if let Some(http) = &c.http {
            text(|| "checkpoint.http.path".into(), &http.path, MAX_SHORT_TEXT_BYTES)?;
            if !http.path.starts_with('/') {
                return Err(OutOfBounds::new("checkpoint.http.path", "must start with /"));
            }
        }
        if let Some(r) = &c.resume_from {
            text(|| "checkpoint.resumeFrom".into(), r, MAX_SHORT_TEXT_BYTES)?;
        }
    }
    if let Some(s) = &job.service {
        text(|| "service.name".into(), &s.name, MAX_NAME_BYTES)?;
        if let Some(r) = &s.readiness {
            text(|| "service.readiness.path".into(), &r.path, MAX_SHORT_TEXT_BYTES)?;
            if !r.path.starts_with('/') {
                return Err(OutOfBounds::new("service.readiness.path", "must start with /"));
            }
        }
    }
    for (i, t) in job.tasks.iter().enumerate() {
        let at = |field: &str| format!("tasks.{i}.{field}");
        text(|| at("name"), &t.name, MAX_NAME_BYTES)?;
        text(|| at("image"), &t.image, MAX_SHORT_TEXT_BYTES)?;
        count(&at("command"), t.command.len(), MAX_ARGS)?;
        for (a, arg) in t.command.iter().enumerate() {
            text(|| at(&format!("command.{a}")), arg, MAX_ARG_BYTES)?;
        }
        check_pairs(&at("env"), &t.env, MAX_ENV_VARS, MAX_ARG_BYTES)?;
        count(&at("resources.gpuModels"), t.resources.gpu_models.len(), MAX_GPU_MODELS)?;
        for (m, model) in t.resources.gpu_models.iter().enumerate() {
            text(|| at(&format!("resources.gpuModels.{m}")), model, MAX_SHORT_TEXT_BYTES)?;
        }
        if let Some(profile) = &t.resources.mig_profile {
            text(|| at("resources.migProfile"), profile, MAX_NAME_BYTES)?;
        }
    }
    let encoded = serde_json::to_vec(job).map(|v| v.len()).unwrap_or(usize::MAX);
    if encoded > MAX_SPEC_BYTES {
        return Err(OutOfBounds::new("job", format!("{encoded} bytes encoded, at most {MAX_SPEC_BYTES}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ResourcesSpec, TaskSpec};
    use serde_json::json;

    fn job(tasks: usize, replicas: u32) -> JobSpec {
        JobSpec {
            id: 1,
            name: "j".into(),
            project: "p".into(),
            queue: "q".into(),
            priority: 0,
            preemptible: false,
            may_preempt: true,
            tasks: (0..tasks)
                .map(|i| TaskSpec {
                    name: format!("t{i}"),
                    replicas,
                    image: "img".into(),
                    command: vec![],
                    env: BTreeMap::new(),
                    resources: ResourcesSpec::default(),
                    topology: None,
                })
                .collect(),
            gang: None,
            elastic: None,
            policies: vec![],
            max_runtime_s: None,
            min_runtime_s: None,
            predicted_runtime_s: None,
            labels: BTreeMap::new(),
            node_selector: BTreeMap::new(),
            pools: Vec::new(),
            submitted_by: "u".into(),
            submitted_at_ms: 0,
            checkpoint: None,
            workspace: None,
            service: None,
        }
    }

    #[test]
    fn values_with_nul_or_oversized_strings_are_refused_with_their_path() {
        assert!(check_value(&json!({"a": ["ok", {"b": "fine"}]})).is_ok());
        let err = check_value(&json!({"a": ["ok", {"b": "nul\u{0}"}]})).unwrap_err();
        assert_eq!(err.path, "a.1.b");
        assert!(err.why.contains("NUL"), "{err}");
        let big = "x".repeat(MAX_TEXT_BYTES + 1);
        assert_eq!(check_value(&json!({ "version": big })).unwrap_err().path, "version");
        assert!(check_value(&json!({ "k\u{0}": 1 })).is_err(), "keys too");
    }

    #[test]
    fn an_oversized_agent_version_is_refused() {
        let hello = Event::Hello { version: "v".repeat(8 << 20), capabilities: vec![] };
        assert_eq!(check_event(&hello).unwrap_err().path, "version");
        let hello = Event::Hello { version: "v".repeat(200), capabilities: vec![] };
        assert_eq!(check_event(&hello).unwrap_err().why, "200 bytes, at most 128");
        let hello = Event::Hello { version: "1.2.3".into(), capabilities: vec!["sim".into()] };
        assert!(check_event(&hello).is_ok());
    }

    #[test]
    fn a_job_is_bounded_in_tasks_replicas_and_size() {
        assert!(check_job(&job(MAX_TASKS_PER_JOB, 1)).is_ok());
        assert_eq!(check_job(&job(MAX_TASKS_PER_JOB + 1, 1)).unwrap_err().path, "tasks");
        assert_eq!(check_job(&job(2, 3000)).unwrap_err().path, "tasks", "6000 replicas in all");
        let mut env = job(1, 1);
        env.tasks[0].env.insert("A".into(), "v".repeat(MAX_ARG_BYTES + 1));
        assert_eq!(check_job(&env).unwrap_err().path, "tasks.0.env.A");
        let mut args = job(1, 1);
        args.tasks[0].command = vec!["x".repeat(30_000); 10];
        assert_eq!(check_job(&args).unwrap_err().path, "job", "300 kB of arguments");
    }
}
