//! The service YAML (snake_case, like the job YAML) -> GraphQL's `ServiceInput` (camelCase).
//!
//! ```yaml
//! name: chat
//! project: vision
//! image: ghcr.io/acme/llm-server:1.4
//! resources: { gpus: 1, gpu_models: [A100-80GB] }   # or { mig_profile: 3g.40gb }
//! port: 8000
//! readiness: { path: /healthz, initial_delay_s: 10, period_s: 5 }
//! min_replicas: 1
//! max_replicas: 8
//! autoscaling: { metric: request_rate, target: 20, scale_down_delay: 5m }
//! rollout: { max_surge: 1, max_unavailable: 0 }
//! ```
//!
//! Structural errors (unknown keys, wrong types) are reported per field before anything is
//! sent, with the `ServiceInput` path; semantic checks (ranges, min ≤ max) are the server's.

use serde::Serialize;
use serde_yaml::Value;

use crate::jobspec::{document, get, FieldError, KeyValue, Reader, ResourcesInput};

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceInput {
    pub name: String,
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    pub image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<KeyValue>,
    pub resources: ResourcesInput,
    pub port: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness: Option<ReadinessInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutInput>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<KeyValue>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cluster_selector: Vec<KeyValue>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessInput {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_delay_seconds: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_seconds: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingInput {
    pub metric: &'static str,
    pub target: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_down_delay: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<i64>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "project",
    "queue",
    "priority",
    "min_replicas",
    "max_replicas",
    "replicas",
    "image",
    "command",
    "env",
    "resources",
    "port",
    "readiness",
    "autoscaling",
    "rollout",
    "labels",
    "cluster_selector",
    "pools",
];

/// The metrics as the YAML names them, and as the API does.
const METRICS: &[(&str, &str)] = &[("request_rate", "REQUEST_RATE"), ("gpu_utilization", "GPU_UTILIZATION")];

fn number(r: &mut Reader, v: Option<&Value>, field: &str) -> Option<f64> {
    let v = v.filter(|v| !v.is_null())?;
    let n = match v {
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    if n.is_none() {
        r.fail(field, "must be a number");
    }
    n
}

/// Parses the service YAML into a `ServiceInput`, or every structural error found.
pub fn parse(text: &str) -> Result<ServiceInput, Vec<FieldError>> {
    let v = document(text, "name:, project:, image:, port:, ...")?;
    let mut r = Reader::default();
    r.keys(&v, TOP_KEYS, "");
    let mut input = ServiceInput {
        name: r.str(v.get("name"), "name").unwrap_or_default(),
        project: r.str(v.get("project"), "project").unwrap_or_default(),
        queue: r.str(v.get("queue"), "queue"),
        priority: r.str(v.get("priority"), "priority"),
        min_replicas: r.int(v.get("min_replicas"), "minReplicas"),
        max_replicas: r.int(v.get("max_replicas"), "maxReplicas"),
        replicas: r.int(v.get("replicas"), "replicas"),
        image: r.str(v.get("image"), "image").unwrap_or_default(),
        command: r.str_list(v.get("command"), "command").unwrap_or_default(),
        env: r.pairs(v.get("env"), "env").unwrap_or_default(),
        port: r.int(v.get("port"), "port").unwrap_or(0),
        labels: r.pairs(v.get("labels"), "labels").unwrap_or_default(),
        cluster_selector: r.pairs(v.get("cluster_selector"), "clusterSelector").unwrap_or_default(),
        pools: r.str_list(v.get("pools"), "pools").unwrap_or_default(),
        ..ServiceInput::default()
    };
    if input.name.is_empty() {
        r.fail("name", "required");
    }
    if input.project.is_empty() {
        r.fail("project", "required");
    }
    if input.image.is_empty() {
        r.fail("image", "required");
    }
    if get(&v, "port").is_none() {
        r.fail("port", "required: the port a replica serves on");
    }
    if let Some(res) = get(&v, "resources") {
        input.resources = r.resources(res, "resources");
    }
    if let Some(readiness) = get(&v, "readiness") {
        match readiness {
            Value::Mapping(m) => {
                r.keys(m, &["path", "initial_delay_s", "period_s"], "readiness");
                input.readiness = Some(ReadinessInput {
                    path: r.str(m.get("path"), "readiness.path").unwrap_or_default(),
                    initial_delay_seconds: r.int(m.get("initial_delay_s"), "readiness.initialDelaySeconds"),
                    period_seconds: r.int(m.get("period_s"), "readiness.periodSeconds"),
                });
            }
            _ => r.fail("readiness", "must be { path: /healthz, initial_delay_s: N, period_s: N }"),
        }
    }
    if let Some(autoscaling) = get(&v, "autoscaling") {
        match autoscaling {
            Value::Mapping(m) => {
                r.keys(m, &["metric", "target", "scale_down_delay"], "autoscaling");
                let metric = r.str(m.get("metric"), "autoscaling.metric");
                let api = METRICS.iter().find(|(yaml, _)| Some(*yaml) == metric.as_deref()).map(|(_, api)| *api);
                if api.is_none() {
                    r.fail("autoscaling.metric", "one of request_rate, gpu_utilization");
                }
                let target = number(&mut r, m.get("target"), "autoscaling.target");
                if target.is_none() {
                    r.fail("autoscaling.target", "required: the value per replica to keep");
                }
                let scale_down_delay = r.str(m.get("scale_down_delay"), "autoscaling.scaleDownDelay");
                if let (Some(metric), Some(target)) = (api, target) {
                    input.autoscaling = Some(AutoscalingInput { metric, target, scale_down_delay });
                }
            }
            _ => r.fail("autoscaling", "must be { metric: request_rate | gpu_utilization, target: N }"),
        }
    }
    if let Some(rollout) = get(&v, "rollout") {
        match rollout {
            Value::Mapping(m) => {
                r.keys(m, &["max_surge", "max_unavailable"], "rollout");
                input.rollout = Some(RolloutInput {
                    max_surge: r.int(m.get("max_surge"), "rollout.maxSurge"),
                    max_unavailable: r.int(m.get("max_unavailable"), "rollout.maxUnavailable"),
                });
            }
            _ => r.fail("rollout", "must be { max_surge: N, max_unavailable: N }"),
        }
    }
    if r.errors.is_empty() {
        Ok(input)
    } else {
        Err(r.errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_service_reads_as_the_api_expects() {
        let input = parse(include_str!("../../examples/services/chat.yaml")).unwrap();
        let json = serde_json::to_value(&input).unwrap();
        assert_eq!(json["name"], "chat");
        assert_eq!(json["port"], 8000);
        assert_eq!(json["resources"]["gpuModels"][0], "A100-80GB");
        assert_eq!(
            json["autoscaling"],
            serde_json::json!({ "metric": "REQUEST_RATE", "target": 20.0, "scaleDownDelay": "5m" })
        );
        assert_eq!(json["rollout"], serde_json::json!({ "maxSurge": 1, "maxUnavailable": 0 }));
        assert_eq!(json["readiness"]["initialDelaySeconds"], 10);
        assert_eq!(json["minReplicas"], 1);
    }

    #[test]
    fn structural_errors_name_their_fields() {
        let errors =
            parse("name: x\nproject: p\nimage: i\nport: web\nautoscaling: { metric: qps, target: high }\nreplica: 2\n")
                .unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        for f in ["replica", "port", "autoscaling.metric", "autoscaling.target"] {
            assert!(fields.contains(&f), "{f} in {fields:?}");
        }
        let errors = parse("name: x\nproject: p\n").unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"image") && fields.contains(&"port"), "{fields:?}");
        assert_eq!(parse("- a\n").unwrap_err()[0].field, "yaml");
    }
}
