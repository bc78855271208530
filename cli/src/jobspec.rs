//! The job YAML of DESIGN.md (snake_case) -> GraphQL's `JobInput` (camelCase).
//!
//! The same mapping as the portal's `yamlToJobInput` (portal/src/jobs/jobInput.ts), rule for
//! rule: the same defaults, the same fields left out, the same structural errors with the same
//! field paths and messages. Both are tested against the shared files in `examples/jobs/`.
//! Semantic checks (DNS names, ranges, quotas) are the server's: its VALIDATION errors are
//! printed per field by the client.

use serde::Serialize;
use serde_yaml::{Mapping, Value};

/// One structural error: `field` is the JobInput path (`tasks.0.resources.gpuMilli`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInput {
    pub name: String,
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<GangInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elastic: Option<ElasticInput>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<PolicyInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_runtime: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceInput>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<KeyValue>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cluster_selector: Vec<KeyValue>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
    pub tasks: Vec<TaskInput>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GangInput {
    pub min_members: i64,
}

/// `checkpoint: {}` (the pod annotation only) or `{ http_port: N, http_path: /path }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_port: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_path: Option<String>,
}

/// `workspace: { port: 8888, idle_timeout: 30m, idle_action: stop | suspend }`: an interactive
/// workspace; each key may be left out (the server's defaults).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_action: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ElasticInput {
    pub min: i64,
    pub max: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyInput {
    pub on: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(rename = "do")]
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInput {
    pub name: String,
    pub replicas: i64,
    pub image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<KeyValue>,
    pub resources: ResourcesInput,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyInput>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesInput {
    pub gpus: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_milli: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_memory_mib: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_models: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig_profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_milli: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopologyInput {
    pub scope: &'static str,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "project",
    "queue",
    "priority",
    "preemptible",
    "gang",
    "elastic",
    "policies",
    "max_runtime",
    "checkpoint",
    "workspace",
    "labels",
    "cluster_selector",
    "pools",
    "tasks",
];
const TASK_KEYS: &[&str] = &["name", "replicas", "image", "command", "env", "resources", "topology"];
const RESOURCE_KEYS: &[&str] =
    &["gpus", "gpu_milli", "gpu_memory_mib", "gpu_models", "mig_profile", "cpu_milli", "memory_mib"];
const SCOPES: &[&str] = &["ANY", "NODE", "NVLINK", "RACK"];

/// Collects errors while reading, like the portal's `Reader`.
#[derive(Default)]
pub(crate) struct Reader {
    pub(crate) errors: Vec<FieldError>,
}

/// A mapping key as JavaScript's `toJS` makes it: scalars become their string form.
fn key_string(k: &Value) -> Option<String> {
    match k {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => scalar_string(k),
        Value::Null => Some("null".into()),
        _ => None,
    }
}

/// `String(v)` of a YAML scalar (numbers as JavaScript prints them: `2.0` is `2`).
fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(if let Some(i) = n.as_i64() {
            i.to_string()
        } else if let Some(u) = n.as_u64() {
            u.to_string()
        } else {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 {
                format!("{f:.0}")
            } else if f.is_nan() {
                "NaN".into()
            } else if f.is_infinite() {
                if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
            } else {
                f.to_string()
            }
        }),
        _ => None,
    }
}

pub(crate) fn get<'a>(m: &'a Mapping, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

impl Reader {
    pub(crate) fn fail(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError { field: field.into(), message: message.into() });
    }

    pub(crate) fn keys(&mut self, m: &Mapping, allowed: &[&str], at: &str) {
        for k in m.keys() {
            let name = key_string(k).unwrap_or_else(|| "?".into());
            if !allowed.contains(&name.as_str()) {
                let field = if at.is_empty() { name } else { format!("{at}.{name}") };
                self.fail(field, format!("unknown field (expected one of {})", allowed.join(", ")));
            }
        }
    }

    pub(crate) fn str(&mut self, v: Option<&Value>, field: &str) -> Option<String> {
        let v = v.filter(|v| !v.is_null())?;
        let s = scalar_string(v);
        if s.is_none() {
            self.fail(field, "must be a string");
        }
        s
    }

    pub(crate) fn int(&mut self, v: Option<&Value>, field: &str) -> Option<i64> {
        let v = v.filter(|v| !v.is_null())?;
        let n = match v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= i64::MAX as f64).map(|f| f as i64)),
            _ => None,
        };
        if n.is_none() {
            self.fail(field, "must be an integer");
        }
        n
    }

    pub(crate) fn bool(&mut self, v: Option<&Value>, field: &str) -> Option<bool> {
        let v = v.filter(|v| !v.is_null())?;
        match v {
            Value::Bool(b) => Some(*b),
            _ => {
                self.fail(field, "must be true or false");
                None
            }
        }
    }

    pub(crate) fn str_list(&mut self, v: Option<&Value>, field: &str) -> Option<Vec<String>> {
        let v = v.filter(|v| !v.is_null())?;
        let Value::Sequence(items) = v else {
            self.fail(field, "must be a list");
            return None;
        };
        Some(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| self.str(Some(x), &format!("{field}.{i}")).unwrap_or_default())
                .collect(),
        )
    }

    pub(crate) fn pairs(&mut self, v: Option<&Value>, field: &str) -> Option<Vec<KeyValue>> {
        let v = v.filter(|v| !v.is_null())?;
        let Value::Mapping(m) = v else {
            self.fail(field, "must be a map of key: value");
            return None;
        };
        Some(
            m.iter()
                .map(|(k, value)| {
                    let key = key_string(k).unwrap_or_default();
                    let value = self.str(Some(value), &format!("{field}.{key}")).unwrap_or_default();
                    KeyValue { key, value }
                })
                .collect(),
        )
    }

    fn policy(&mut self, v: &Value, at: &str) -> Option<PolicyInput> {
        let Value::Mapping(m) = v else {
            self.fail(at, "must be a map with on and do");
            return None;
        };
        self.keys(m, &["on", "do"], at);
        let mut on = None;
        let mut task = None;
        match m.get("on") {
            Some(Value::String(s)) if s == "replica_failed" => on = Some("REPLICA_FAILED"),
            Some(Value::String(s)) if s == "job_timeout" => on = Some("JOB_TIMEOUT"),
            Some(Value::Mapping(o)) if o.len() == 1 => {
                let (k, t) = o.iter().next().expect("one entry");
                match key_string(k).as_deref() {
                    Some("task_succeeded") => on = Some("TASK_SUCCEEDED"),
                    Some("task_failed") => on = Some("TASK_FAILED"),
                    _ => {}
                }
                if on.is_some() {
                    task = self.str(Some(t), &format!("{at}.task"));
                }
            }
            _ => {}
        }
        if on.is_none() {
            self.fail(
                format!("{at}.on"),
                "one of { task_succeeded: TASK }, { task_failed: TASK }, replica_failed, job_timeout",
            );
        }
        let mut action = None;
        let mut max = None;
        match m.get("do") {
            Some(Value::String(s)) => {
                action = match s.as_str() {
                    "complete_job" => Some("COMPLETE_JOB"),
                    "abort_job" => Some("ABORT_JOB"),
                    "restart_task" => Some("RESTART_TASK"),
                    _ => None,
                }
            }
            Some(Value::Mapping(d)) if d.len() == 1 => {
                if let Some(Value::Mapping(r)) = d.get("restart_job") {
                    action = Some("RESTART_JOB");
                    max = self.int(r.get("max"), &format!("{at}.max"));
                }
            }
            _ => {}
        }
        if action.is_none() {
            self.fail(format!("{at}.do"), "one of complete_job, abort_job, { restart_job: { max: N } }, restart_task");
        }
        Some(PolicyInput { on: on?, task, action: action?, max })
    }

    /// A `resources:` map; `rat` is its field path.
    pub(crate) fn resources(&mut self, res: &Value, rat: &str) -> ResourcesInput {
        let mut r = ResourcesInput::default();
        let Value::Mapping(res) = res else {
            self.fail(rat, "must be a map");
            return r;
        };
        self.keys(res, RESOURCE_KEYS, rat);
        r.gpus = self.int(res.get("gpus"), &format!("{rat}.gpus")).unwrap_or(0);
        r.gpu_milli = self.int(res.get("gpu_milli"), &format!("{rat}.gpuMilli"));
        r.gpu_memory_mib = self.int(res.get("gpu_memory_mib"), &format!("{rat}.gpuMemoryMib"));
        r.gpu_models = self.str_list(res.get("gpu_models"), &format!("{rat}.gpuModels")).unwrap_or_default();
        r.mig_profile = self.str(res.get("mig_profile"), &format!("{rat}.migProfile"));
        // Zero is the default and left out, as in the portal.
        r.cpu_milli = self.int(res.get("cpu_milli"), &format!("{rat}.cpuMilli")).filter(|n| *n != 0);
        r.memory_mib = self.int(res.get("memory_mib"), &format!("{rat}.memoryMib")).filter(|n| *n != 0);
        r
    }

    fn task(&mut self, v: &Value, i: usize) -> Option<TaskInput> {
        let at = format!("tasks.{i}");
        let Value::Mapping(m) = v else {
            self.fail(at, "must be a map");
            return None;
        };
        self.keys(m, TASK_KEYS, &at);
        let mut task = TaskInput {
            name: self.str(m.get("name"), &format!("{at}.name")).unwrap_or_default(),
            replicas: self.int(m.get("replicas"), &format!("{at}.replicas")).unwrap_or(1),
            image: self.str(m.get("image"), &format!("{at}.image")).unwrap_or_default(),
            command: Vec::new(),
            env: Vec::new(),
            resources: ResourcesInput::default(),
            topology: None,
        };
        task.command = self.str_list(m.get("command"), &format!("{at}.command")).unwrap_or_default();
        task.env = self.pairs(m.get("env"), &format!("{at}.env")).unwrap_or_default();
        if let Some(res) = get(m, "resources") {
            task.resources = self.resources(res, &format!("{at}.resources"));
        }
        if let Some(topology) = get(m, "topology") {
            let scope = match topology {
                Value::Mapping(t) => self.str(t.get("scope"), &format!("{at}.topology.scope")),
                _ => None,
            };
            let up = scope.map(|s| s.to_uppercase());
            match SCOPES.iter().find(|s| Some(**s) == up.as_deref()) {
                Some(scope) => task.topology = Some(TopologyInput { scope }),
                None => self.fail(format!("{at}.topology"), "must be { scope: any | node | nvlink | rack }"),
            }
        }
        Some(task)
    }
}

/// The YAML document as a map (`expected` says what it holds), or the one error why not.
pub(crate) fn document(text: &str, expected: &str) -> Result<Mapping, Vec<FieldError>> {
    let doc: Value = serde_yaml::from_str(text).map_err(|e| {
        let message = e.to_string();
        vec![FieldError { field: "yaml".into(), message: message.lines().next().unwrap_or(&message).to_owned() }]
    })?;
    match doc {
        Value::Mapping(v) => Ok(v),
        _ => {
            Err(vec![FieldError { field: "yaml".into(), message: format!("the document must be a map ({expected})") }])
        }
    }
}

/// Parses the job YAML into a `JobInput`, or every structural error found.
pub fn parse(text: &str) -> Result<JobInput, Vec<FieldError>> {
    let v = document(text, "name:, project:, tasks:, ...")?;
    let mut r = Reader::default();
    r.keys(&v, TOP_KEYS, "");
    let mut input = JobInput {
        name: r.str(v.get("name"), "name").unwrap_or_default(),
        project: r.str(v.get("project"), "project").unwrap_or_default(),
        ..JobInput::default()
    };
    input.queue = r.str(v.get("queue"), "queue");
    input.priority = r.str(v.get("priority"), "priority");
    input.preemptible = r.bool(v.get("preemptible"), "preemptible");
    if let Some(gang) = get(&v, "gang") {
        match gang {
            Value::Mapping(g) => {
                input.gang =
                    Some(GangInput { min_members: r.int(g.get("min_members"), "gang.minMembers").unwrap_or(0) })
            }
            _ => r.fail("gang", "must be { min_members: N }"),
        }
    }
    if let Some(elastic) = get(&v, "elastic") {
        match elastic {
            Value::Mapping(e) => {
                input.elastic = Some(ElasticInput {
                    min: r.int(e.get("min"), "elastic").unwrap_or(0),
                    max: r.int(e.get("max"), "elastic").unwrap_or(0),
                })
            }
            _ => r.fail("elastic", "must be { min: N, max: M }"),
        }
    }
    if let Some(policies) = get(&v, "policies") {
        match policies {
            Value::Sequence(ps) => {
                input.policies =
                    ps.iter().enumerate().filter_map(|(i, p)| r.policy(p, &format!("policies.{i}"))).collect()
            }
            _ => r.fail("policies", "must be a list"),
        }
    }
    input.max_runtime = r.str(v.get("max_runtime"), "maxRuntime");
    match get(&v, "checkpoint") {
        None => {}
        Some(Value::Mapping(c)) => {
            input.checkpoint = Some(CheckpointInput {
                http_port: r.int(c.get("http_port"), "checkpoint.httpPort"),
                http_path: r.str(c.get("http_path"), "checkpoint.httpPath"),
            })
        }
        Some(_) => r.fail("checkpoint", "must be {} or { http_port: N, http_path: /path }"),
    }
    match get(&v, "workspace") {
        None => {}
        Some(Value::Mapping(w)) => {
            r.keys(w, &["port", "idle_timeout", "idle_action"], "workspace");
            let action = r.str(w.get("idle_action"), "workspace.idleAction");
            let idle_action = match action.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None => None,
                Some("stop") => Some("STOP"),
                Some("suspend") => Some("SUSPEND"),
                Some(_) => {
                    r.fail("workspace.idleAction", "must be stop or suspend");
                    None
                }
            };
            input.workspace = Some(WorkspaceInput {
                port: r.int(w.get("port"), "workspace.port"),
                idle_timeout: r.str(w.get("idle_timeout"), "workspace.idleTimeout"),
                idle_action,
            })
        }
        Some(_) => r.fail("workspace", "must be { port: N, idle_timeout: 30m, idle_action: stop | suspend }"),
    }
    input.labels = r.pairs(v.get("labels"), "labels").unwrap_or_default();
    input.cluster_selector = r.pairs(v.get("cluster_selector"), "clusterSelector").unwrap_or_default();
    input.pools = r.str_list(v.get("pools"), "pools").unwrap_or_default();
    match get(&v, "tasks") {
        None => r.fail("tasks", "a job needs at least one task"),
        Some(Value::Sequence(tasks)) => {
            input.tasks = tasks.iter().enumerate().filter_map(|(i, t)| r.task(t, i)).collect();
        }
        Some(_) => r.fail("tasks", "must be a list"),
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

    fn errors(yaml: &str) -> Vec<(String, String)> {
        parse(yaml).unwrap_err().into_iter().map(|e| (e.field, e.message)).collect()
    }

    #[test]
    fn minimal_job_gets_the_portals_defaults() {
        let input = parse("name: t\nproject: demo\ntasks:\n  - { name: w, image: busybox }\n").unwrap();
        assert_eq!(
            serde_json::to_value(&input).unwrap(),
            serde_json::json!({
                "name": "t", "project": "demo",
                "tasks": [{ "name": "w", "replicas": 1, "image": "busybox", "resources": { "gpus": 0 } }]
            })
        );
    }

    #[test]
    fn syntax_errors_are_one_yaml_error() {
        let errs = errors("name: [unclosed\n");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].0, "yaml");
        assert_eq!(errors("- a\n- b\n")[0].1, "the document must be a map (name:, project:, tasks:, ...)");
        assert_eq!(errors("")[0].0, "yaml", "an empty file is not a job");
    }

    #[test]
    fn scalars_become_strings_like_javascript() {
        let input = parse(
            "name: 7\nproject: demo\nlabels: { a: 1, b: true, c: 2.5, d: 3.0 }\ntasks: [{ name: w, image: i }]\n",
        )
        .unwrap();
        assert_eq!(input.name, "7");
        let values: Vec<_> = input.labels.iter().map(|kv| kv.value.as_str()).collect();
        assert_eq!(values, ["1", "true", "2.5", "3"]);
    }

    #[test]
    fn integers_accept_whole_floats_only() {
        let yaml = "name: t\nproject: p\ntasks: [{ name: w, image: i, replicas: 2.0, resources: { gpus: 1.5 } }]\n";
        assert_eq!(errors(yaml), [("tasks.0.resources.gpus".to_owned(), "must be an integer".to_owned())]);
    }

    #[test]
    fn restart_job_without_max_has_no_max() {
        let yaml = "name: t\nproject: p\npolicies: [{ on: job_timeout, do: { restart_job: {} } }]\n\
                    tasks: [{ name: w, image: i }]\n";
        let p = &parse(yaml).unwrap().policies[0];
        assert_eq!((p.on, p.action, p.max), ("JOB_TIMEOUT", "RESTART_JOB", None));
    }

    mod fuzz {
        //! Damaged and arbitrary YAML: the parser answers (an input or per-field errors), never
        //! panics. Seeds: the shared examples (`examples/jobs/`).

        use proptest::prelude::*;

        use super::*;

        fn examples() -> Vec<String> {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/jobs");
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .expect("examples/jobs")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .collect();
            files.sort();
            files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(500))]

            #[test]
            fn damaged_examples_never_panic(which in 0usize..16, at in any::<usize>(), len in 0usize..40, junk in ".{0,12}") {
                let examples = examples();
                let text = &examples[which % examples.len()];
                let mut cut = at % (text.len() + 1);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let mut end = (cut + len).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let damaged = format!("{}{junk}{}", &text[..cut], &text[end..]);
                let _ = parse(&damaged);
                let _ = parse(&text[..cut]);
            }

            #[test]
            fn arbitrary_text_never_panics(text in "(.|\n){0,200}") {
                let _ = parse(&text);
            }
        }
    }
}
