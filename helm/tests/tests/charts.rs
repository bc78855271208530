//! Renders both charts with the Helm CLI (`helm template`) and checks what a cluster would get:
//!
//! - every manifest is a known kind and deserializes into its k8s-openapi type, and serializing
//!   it back gives the same document (k8s-openapi ignores unknown fields, so a misspelt or
//!   misplaced field shows up as a difference);
//! - the agent's ClusterRole grants what the kube backend calls (`pods/binding` create, ...);
//! - every `--flag` in a container's args and every environment variable is one the real
//!   binary accepts (its `--help`);
//! - registerCluster's install command renders the agent chart (strict schema: unknown keys fail);
//! - the schemas reject wrong types, unknown keys and missing required values.
//!
//! Helm comes from `$HELM`, `scripts/get-helm.sh`'s cache or `PATH`; without it the tests say so
//! and return (scripts/test.sh installs it, so CI never skips). The binaries come from this
//! test's target directory (`cargo build -p grus-api -p grus-agent`; a workspace test run
//! builds them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, PersistentVolumeClaim, Pod, PodSpec, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const CONTROL_PLANE: &str = "grus-control-plane";
const AGENT: &str = "grus-agent";

/// The values each chart cannot do without (the README's install commands pass them).
fn required(chart: &str) -> Vec<String> {
    let sets: &[&str] = match chart {
        CONTROL_PLANE => &[
            "oidc.issuer=https://sso.example.com/realms/research",
            "oidc.audience=grus",
            "database.existingSecret=grus-postgres",
            "redis.existingSecret=grus-redis",
        ],
        AGENT => &["cluster.id=east", "redis.url=redis://redis.example.com:6379"],
        other => panic!("unknown chart {other}"),
    };
    sets.iter().flat_map(|s| ["--set".to_string(), s.to_string()]).collect()
}

fn example(chart: &str) -> Vec<String> {
    let file = match chart {
        CONTROL_PLANE => "production.yaml",
        AGENT => "gpu-cluster.yaml",
        other => panic!("unknown chart {other}"),
    };
    vec!["-f".into(), chart_dir(chart).join("examples").join(file).display().to_string()]
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn chart_dir(chart: &str) -> PathBuf {
    repo_root().join("helm").join(chart)
}

/// The Helm binary, or `None` (with a message) when there is none.
fn helm() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("HELM").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    let tools = std::env::var_os("GRUS_TOOLS_DIR").map_or_else(|| PathBuf::from("/var/tmp/grus-tools"), PathBuf::from);
    if let Ok(versions) = std::fs::read_dir(tools.join("helm")) {
        let mut found: Vec<PathBuf> =
            versions.flatten().map(|v| v.path().join("helm")).filter(|p| p.is_file()).collect();
        found.sort();
        if let Some(h) = found.pop() {
            return Some(h);
        }
    }
    if Command::new("helm").arg("version").output().is_ok_and(|o| o.status.success()) {
        return Some(PathBuf::from("helm"));
    }
    eprintln!("SKIPPED: no helm binary (set HELM or run scripts/get-helm.sh); the chart checks did not run");
    None
}

/// `helm template` of `chart` with `args`: Ok(stdout) or Err(stderr).
fn template(helm: &Path, chart: &str, args: &[String]) -> Result<String, String> {
    let out = Command::new(helm)
        .args(["template", "grus", &chart_dir(chart).display().to_string(), "--namespace", "grus-system"])
        .arg("--include-crds")
        .args(args)
        .output()
        .expect("run helm");
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).expect("utf-8 manifests"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Every non-empty YAML document of a rendering, as JSON.
fn documents(rendered: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(rendered)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("rendered YAML does not parse: {e}\n{rendered}")))
        .filter(|doc| !doc.is_null())
        .collect()
}

fn render(helm: &Path, chart: &str, args: &[String]) -> Vec<Value> {
    let rendered = template(helm, chart, args).unwrap_or_else(|e| panic!("helm template {chart} {args:?}: {e}"));
    documents(&rendered)
}

/// Drops nulls, which YAML writes for empty values and k8s-openapi leaves out.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// Deserializes `doc` as `T` and checks that nothing was lost on the way.
fn typed<T: DeserializeOwned + Serialize>(doc: &Value) -> T {
    let name = describe(doc);
    let t: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let back = serde_json::to_value(&t).expect("serialize");
    let (want, got) = (without_nulls(doc), without_nulls(&back));
    if let Some(path) = first_difference(&want, &got, String::new()) {
        panic!("{name}: at {path}: a field k8s-openapi does not know, or of the wrong shape\nrendered: {want:#}");
    }
    t
}

/// The JSON path of the first place where `a` and `b` differ.
fn first_difference(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(v), Some(w)) => first_difference(v, w, format!("{path}.{k}")),
                (Some(_), None) => Some(format!("{path}.{k} (dropped)")),
                _ => Some(format!("{path}.{k} (added)")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (v, w))| first_difference(v, w, format!("{path}[{i}]")))
        }
        _ if a == b => None,
        // JSON Schema bounds are f64 in k8s-openapi: 0 and 0.0 are the same value.
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

fn describe(doc: &Value) -> String {
    format!("{} {}", doc["kind"].as_str().unwrap_or("?"), doc["metadata"]["name"].as_str().unwrap_or("?"))
}

/// Prometheus Operator's ServiceMonitor, the fields the chart writes (not in k8s-openapi).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)] // read by serde only: unknown or mistyped fields fail
struct ServiceMonitor {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: ServiceMonitorSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct ServiceMonitorSpec {
    selector: LabelSelector,
    endpoints: Vec<ServiceMonitorEndpoint>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct ServiceMonitorEndpoint {
    port: String,
    path: String,
    interval: String,
    scrape_timeout: String,
}

/// A rendered object, checked against its type.
enum Object {
    Workload { name: String, pod: Box<PodSpec> },
    ClusterRole(Box<ClusterRole>),
    Other,
}

fn check(doc: &Value) -> Object {
    let api_version = doc["apiVersion"].as_str().unwrap_or_default();
    let kind = doc["kind"].as_str().unwrap_or_default();
    let name = describe(doc);
    let spec_of = |pod: Option<PodSpec>| Object::Workload { name: name.clone(), pod: Box::new(pod.expect("pod spec")) };
    match (api_version, kind) {
        ("apps/v1", "Deployment") => spec_of(typed::<Deployment>(doc).spec.and_then(|s| s.template.spec)),
        ("apps/v1", "DaemonSet") => spec_of(typed::<DaemonSet>(doc).spec.and_then(|s| s.template.spec)),
        ("batch/v1", "Job") => spec_of(typed::<Job>(doc).spec.and_then(|s| s.template.spec)),
        ("v1", "Pod") => {
            typed::<Pod>(doc);
            Object::Other
        }
        ("v1", "Service") => {
            typed::<Service>(doc);
            Object::Other
        }
        ("v1", "Secret") => {
            typed::<Secret>(doc);
            Object::Other
        }
        ("v1", "ServiceAccount") => {
            typed::<ServiceAccount>(doc);
            Object::Other
        }
        ("v1", "PersistentVolumeClaim") => {
            typed::<PersistentVolumeClaim>(doc);
            Object::Other
        }
        ("networking.k8s.io/v1", "Ingress") => {
            typed::<Ingress>(doc);
            Object::Other
        }
        ("policy/v1", "PodDisruptionBudget") => {
            typed::<PodDisruptionBudget>(doc);
            Object::Other
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => Object::ClusterRole(Box::new(typed::<ClusterRole>(doc))),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            typed::<ClusterRoleBinding>(doc);
            Object::Other
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            typed::<CustomResourceDefinition>(doc);
            Object::Other
        }
        ("monitoring.coreos.com/v1", "ServiceMonitor") => {
            serde_json::from_value::<ServiceMonitor>(doc.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
            Object::Other
        }
        _ => panic!("{name}: unknown kind {api_version}/{kind}: add it to this test with its type"),
    }
}

/// Flags and env variables of one binary's (sub)command, from its `--help`.
struct Help {
    flags: BTreeSet<String>,
    env: BTreeSet<String>,
}

fn binary(name: &str) -> PathBuf {
    // This test runs as <target>/debug/deps/charts-<hash>; the binaries are in <target>/debug.
    let exe = std::env::current_exe().expect("test executable");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join(name);
    assert!(bin.is_file(), "{} is missing: build it first (cargo build -p grus-api -p grus-agent)", bin.display());
    bin
}

fn help(bin: &str, sub: Option<&str>) -> Help {
    let out = Command::new(binary(bin)).args(sub).arg("--help").output().expect("run --help");
    assert!(out.status.success(), "{bin} {sub:?} --help failed");
    let text = String::from_utf8(out.stdout).expect("utf-8 help");
    let words = |prefix: &str, ok: fn(char) -> bool| -> BTreeSet<String> {
        text.match_indices(prefix)
            .map(|(i, _)| text[i + prefix.len()..].chars().take_while(|c| ok(*c)).collect::<String>())
            .filter(|w| !w.is_empty())
            .collect()
    };
    Help {
        flags: words("--", |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        env: words("[env: ", |c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
    }
}

/// Variables read by the runtime rather than by the binaries' flags.
const RUNTIME_ENV: &[&str] = &["RUST_LOG", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"];

/// Checks a Grus container's args and env against its binary; returns `bin [sub]`.
fn check_container(workload: &str, c: &Container, cache: &mut BTreeMap<(String, Option<String>), Help>) -> String {
    let command = c.command.clone().unwrap_or_default();
    let bin = command.first().unwrap_or_else(|| panic!("{workload}/{}: no command", c.name)).clone();
    assert!(bin == "grus-api" || bin == "grus-agent", "{workload}/{}: runs {bin}, not a Grus binary", c.name);
    let args = c.args.clone().unwrap_or_default();
    let sub = args.first().filter(|a| !a.starts_with('-')).cloned();
    let help = cache.entry((bin.clone(), sub.clone())).or_insert_with(|| help(&bin, sub.as_deref()));
    for arg in args.iter().skip(usize::from(sub.is_some())) {
        let flag = arg.strip_prefix("--").unwrap_or_else(|| panic!("{workload}/{}: `{arg}` is not a --flag", c.name));
        let flag = flag.split('=').next().unwrap_or_default();
        assert!(help.flags.contains(flag), "{workload}/{}: `{bin} {sub:?}` has no flag --{flag}", c.name);
    }
    for env in c.env.iter().flatten() {
        assert!(
            help.env.contains(&env.name) || RUNTIME_ENV.contains(&env.name.as_str()),
            "{workload}/{}: `{bin} {sub:?}` reads no env variable {}",
            c.name,
            env.name
        );
    }
    match sub {
        Some(s) => format!("{bin} {s}"),
        None => bin,
    }
}

/// Renders `chart` with `args` and runs every check; returns the commands the workloads run.
fn check_rendering(helm: &Path, chart: &str, args: &[String]) -> (Vec<Value>, BTreeSet<String>) {
    let docs = render(helm, chart, args);
    let mut cache = BTreeMap::new();
    let mut commands = BTreeSet::new();
    for doc in &docs {
        if let Object::Workload { name, pod } = check(doc) {
            for c in &pod.containers {
                commands.insert(check_container(&name, c, &mut cache));
            }
        }
    }
    (docs, commands)
}

fn cluster_roles(docs: &[Value]) -> Vec<ClusterRole> {
    docs.iter()
        .filter_map(|d| match check(d) {
            Object::ClusterRole(r) => Some(*r),
            _ => None,
        })
        .collect()
}

fn grants(role: &ClusterRole, group: &str, resource: &str, verb: &str) -> bool {
    role.rules.iter().flatten().any(|r| {
        r.api_groups.iter().flatten().any(|g| g == group)
            && r.resources.iter().flatten().any(|x| x == resource)
            && r.verbs.iter().any(|v| v == verb)
    })
}

#[test]
fn control_plane_renders_valid_manifests_with_real_flags() {
    let Some(helm) = helm() else { return };
    for args in [required(CONTROL_PLANE), example(CONTROL_PLANE)] {
        let (docs, commands) = check_rendering(&helm, CONTROL_PLANE, &args);
        assert_eq!(
            commands,
            BTreeSet::from(["grus-api serve".to_string(), "grus-api migrate".to_string()]),
            "{args:?}"
        );
        let kinds: BTreeSet<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        for kind in ["Deployment", "Service", "Job", "Pod", "PodDisruptionBudget"] {
            assert!(kinds.contains(kind), "{args:?}: no {kind} in {kinds:?}");
        }
    }
    // The example turns on what is off by default.
    let (docs, _) = check_rendering(&helm, CONTROL_PLANE, &example(CONTROL_PLANE));
    let kinds: BTreeSet<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert!(kinds.contains("Ingress") && kinds.contains("ServiceMonitor"), "{kinds:?}");
    let server = docs.iter().find(|d| d["kind"] == "Deployment").expect("server");
    let args = server["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(args.contains("--fair-share-half-life=7d"), "{args}");
    // The migrations run as a pre-install/pre-upgrade hook.
    let job = docs.iter().find(|d| d["kind"] == "Job").expect("migrations job");
    assert_eq!(job["metadata"]["annotations"]["helm.sh/hook"], "pre-install,pre-upgrade");
}

#[test]
fn agent_renders_valid_manifests_with_real_flags_and_rbac() {
    let Some(helm) = helm() else { return };
    for args in [required(AGENT), example(AGENT)] {
        let (docs, commands) = check_rendering(&helm, AGENT, &args);
        assert_eq!(commands, BTreeSet::from(["grus-agent".to_string(), "grus-agent node".to_string()]), "{args:?}");
        let crd = docs.iter().find(|d| d["kind"] == "CustomResourceDefinition").expect("the PodGroup CRD");
        assert_eq!(crd["metadata"]["name"], "podgroups.scheduling.x-k8s.io");
        assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
        let roles = cluster_roles(&docs);
        let agent = roles.iter().find(|r| r.metadata.name.as_deref() == Some("grus-grus-agent")).expect("agent role");
        // What cluster-agent/src/backend/kube/mod.rs calls ("Permissions").
        for (group, resource, verb) in [
            ("", "pods/binding", "create"),
            ("", "pods/log", "get"),
            ("", "nodes/proxy", "get"),
            ("", "pods", "create"),
            ("", "pods", "delete"),
            ("", "pods", "watch"),
            ("", "pods", "patch"),
            ("", "services", "create"),
            ("", "services", "delete"),
            ("", "nodes", "list"),
            ("", "nodes", "watch"),
            ("scheduling.x-k8s.io", "podgroups", "create"),
            ("scheduling.x-k8s.io", "podgroups", "list"),
            ("scheduling.x-k8s.io", "podgroups", "delete"),
        ] {
            assert!(grants(agent, group, resource, verb), "agent ClusterRole lacks {verb} {resource}");
        }
        let node =
            roles.iter().find(|r| r.metadata.name.as_deref() == Some("grus-grus-agent-node")).expect("node role");
        assert!(grants(node, "", "pods", "patch") && grants(node, "", "pods", "watch"));
        assert!(!grants(node, "", "pods/binding", "create"), "the node daemon binds nothing");
        // The agent is the cluster's only consumer: one replica, replaced, not rolled.
        let deploy: Deployment = typed(docs.iter().find(|d| d["kind"] == "Deployment").expect("agent"));
        let spec = deploy.spec.expect("spec");
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.strategy.and_then(|s| s.type_).as_deref(), Some("Recreate"));
        if args == example(AGENT) {
            let agent_args = spec.template.spec.expect("pod").containers[0].args.clone().unwrap_or_default();
            assert!(agent_args.contains(&"--node-pool=a100-train=pool=a100-train".to_string()), "{agent_args:?}");
            assert!(agent_args.contains(&"--fair-share-half-life=7d".to_string()), "{agent_args:?}");
        }
    }
}

#[test]
fn agent_credentials_secret_is_created_or_taken_from_an_existing_one() {
    let Some(helm) = helm() else { return };
    let with = |extra: &[&str]| {
        let mut args = required(AGENT);
        for s in extra {
            args.extend(["--set".to_string(), s.to_string()]);
        }
        render(&helm, AGENT, &args)
    };
    let env_of = |docs: &[Value]| -> Vec<Value> {
        let d = docs.iter().find(|d| d["kind"] == "Deployment").expect("agent");
        d["spec"]["template"]["spec"]["containers"][0]["env"].as_array().cloned().unwrap_or_default()
    };
    let secret_ref = |env: &[Value], name: &str| -> Option<String> {
        env.iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["valueFrom"]["secretKeyRef"]["name"].as_str().map(str::to_string))
    };

    let created = with(&["redis.username=grus-east", "redis.password=s3cret"]);
    let secret: Secret = typed(created.iter().find(|d| d["kind"] == "Secret").expect("created secret"));
    let data = secret.string_data.expect("stringData");
    assert_eq!(data.get("username").map(String::as_str), Some("grus-east"));
    assert_eq!(data.get("password").map(String::as_str), Some("s3cret"));
    let env = env_of(&created);
    assert_eq!(secret_ref(&env, "GRUS_REDIS_PASSWORD").as_deref(), Some("grus-grus-agent-redis"));
    assert_eq!(secret_ref(&env, "GRUS_REDIS_USER").as_deref(), Some("grus-grus-agent-redis"));

    let existing = with(&["redis.existingSecret=east-redis", "redis.password=ignored"]);
    assert!(existing.iter().all(|d| d["kind"] != "Secret"), "no Secret is created next to an existing one");
    assert_eq!(secret_ref(&env_of(&existing), "GRUS_REDIS_PASSWORD").as_deref(), Some("east-redis"));

    let none = with(&[]);
    assert!(none.iter().all(|d| d["kind"] != "Secret"));
    assert!(secret_ref(&env_of(&none), "GRUS_REDIS_PASSWORD").is_none(), "no AUTH without credentials");
}

#[test]
fn register_cluster_command_installs_the_real_chart() {
    let Some(helm) = helm() else { return };
    let chart = chart_dir(AGENT).display().to_string();
    let agents = grus_api::graphql::clusters::AgentInstall {
        redis_url: "rediss://redis.grus.example.com:6380".into(),
        chart,
        api_url: Some("https://grus.example.com".into()),
    };
    let command = grus_api::graphql::clusters::helm_install_command("east", &agents);
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..4], ["helm", "upgrade", "--install", "grus-agent"], "{command}");
    assert_eq!(words[4], agents.chart);
    // The rest are install flags that `helm template` takes too; the strict schema rejects any
    // --set key the chart does not have.
    let flags: Vec<String> = words[5..].iter().map(|w| w.to_string()).collect();
    let out =
        Command::new(&helm).args(["template", "grus-agent", &agents.chart]).args(&flags).output().expect("run helm");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command}\n{stderr}");
    let docs = documents(&String::from_utf8(out.stdout).expect("utf-8"));
    let deploy: Deployment = typed(docs.iter().find(|d| d["kind"] == "Deployment").expect("agent"));
    let args = deploy.spec.and_then(|s| s.template.spec).expect("pod").containers[0].args.clone().unwrap_or_default();
    assert!(args.contains(&"--cluster=east".to_string()), "{args:?}");
    assert!(args.contains(&"--redis=rediss://redis.grus.example.com:6380".to_string()), "{args:?}");
    assert!(docs.iter().all(|d| d["metadata"]["namespace"].as_str().is_none_or(|ns| ns == "grus-system")));
    // The agent exchanges its registration token (from the Secret) for its own Redis user.
    let d = docs.iter().find(|d| d["kind"] == "Deployment").expect("agent");
    let env = d["spec"]["template"]["spec"]["containers"][0]["env"].as_array().cloned().unwrap_or_default();
    let var = |name: &str| env.iter().find(|e| e["name"] == name).cloned().unwrap_or_default();
    assert_eq!(var("GRUS_API_URL")["value"], "https://grus.example.com", "{env:?}");
    assert_eq!(var("GRUS_AGENT_TOKEN")["valueFrom"]["secretKeyRef"]["name"], "grus-agent-token", "{env:?}");
    // It keeps the exchanged credentials in its release's Secret, and may touch only that one.
    let kept = var("GRUS_CREDENTIALS_SECRET")["value"].as_str().unwrap_or_default().to_owned();
    assert_eq!(var("GRUS_CREDENTIALS_NAMESPACE")["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace");
    assert!(docs.iter().any(|d| d["kind"] == "Secret" && d["metadata"]["name"] == kept.as_str()), "no Secret {kept}");
    let role = docs.iter().find(|d| d["kind"] == "Role").expect("a Role for the credentials Secret");
    assert_eq!(
        role["rules"],
        serde_json::json!([{ "apiGroups": [""], "resources": ["secrets"], "resourceNames": [kept], "verbs": ["get", "patch"] }])
    );
    assert!(docs.iter().any(|d| d["kind"] == "RoleBinding" && d["roleRef"]["name"] == role["metadata"]["name"]));
}

#[test]
fn schemas_reject_bad_values() {
    let Some(helm) = helm() else { return };
    let rejects = |chart: &str, set: &str, expect: &str| {
        let mut args = required(chart);
        args.extend(["--set".to_string(), set.to_string()]);
        let err = template(&helm, chart, &args).expect_err(&format!("{chart} accepted {set}"));
        assert!(err.contains(expect), "{chart} {set}: expected `{expect}` in:\n{err}");
    };
    // Wrong types, unknown keys, bad formats.
    rejects(CONTROL_PLANE, "replicaCount=two", "replicaCount");
    rejects(CONTROL_PLANE, "replicaz=2", "replicaz");
    rejects(CONTROL_PLANE, "oidc.issuer=sso.example.com", "/oidc/issuer");
    rejects(CONTROL_PLANE, "oidc.clientSecret.name=x", "name");
    rejects(CONTROL_PLANE, "server.sessionTtl=soon", "sessionTtl");
    rejects(CONTROL_PLANE, "agents.redisUrl=redis://user:pw@redis:6379", "redisUrl");
    rejects(CONTROL_PLANE, "server.extraArgs[0]=serve", "extraArgs");
    rejects(CONTROL_PLANE, "server.jobsCache.maxJobs=0", "maxJobs");
    rejects(CONTROL_PLANE, "server.jobsCache.perProject=-1", "perProject");
    rejects(CONTROL_PLANE, "server.fairShare.halfLife=a week", "halfLife");
    rejects(AGENT, "cluster.id=Bad_Id", "/cluster/id");
    rejects(AGENT, "redis.url=redis://agent:pw@redis:6379", "/redis/url");
    rejects(AGENT, "node.metricsPort=nine", "metricsPort");
    rejects(AGENT, "agent.nodePools[0].name=default,agent.nodePools[0].selector=a=b", "nodePools");
    rejects(AGENT, "agent.nodePools[0].name=train", "selector");
    rejects(AGENT, "node.limiter.enable=true", "enable");
    rejects(AGENT, "agent.fairShare.historyWeight=2", "historyWeight");
    rejects(AGENT, "agent.fairShare.halfLife=a week", "halfLife");
    rejects(AGENT, "agent.persistence.enabled=yes please", "enabled");
    // Cross-field rules the templates enforce.
    rejects(CONTROL_PLANE, "oidc.clientId=grus-portal", "publicUrl");
    // The defaults alone lack the required values, and say which.
    let err = template(&helm, AGENT, &[]).expect_err("defaults without cluster.id");
    assert!(err.contains("/cluster/id") && err.contains("/redis/url"), "{err}");
    let err = template(&helm, CONTROL_PLANE, &[]).expect_err("defaults without OIDC and secrets");
    for key in ["/oidc/issuer", "/oidc/audience", "/database/existingSecret", "/redis/existingSecret"] {
        assert!(err.contains(key), "{key} in {err}");
    }
}
