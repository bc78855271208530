//! `JobInput`: DESIGN.md's job YAML in camelCase, and its validation into a [`NewJob`].
//!
//! Validation is pure (no I/O) and collects every invalid field at once, so a client can mark
//! all of them in a form; the caller resolves the project and queue first.

use std::collections::BTreeMap;
use std::time::Duration;

use async_graphql::{Enum, InputObject};
use grus_protocol::limits;
use grus_protocol::wire::{
    CheckpointHttp, CheckpointSpec, ElasticSpec, GangSpec, IdleAction, JobSpec, PolicyAction, PolicySpec,
    PolicyTrigger, ResourcesSpec, TaskSpec, TopologySpec, WorkspaceSpec,
};
use grus_scheduler::pool::valid_pool_name;

use crate::db::{NewJob, NewTask};
use crate::domain::{self, ClassOfService, PriorityClass};
use crate::error::{ApiError, ApiResult, FieldError};

/// Replicas of one task (and of the whole job: `limits::MAX_REPLICAS_PER_JOB`).
const MAX_REPLICAS: i32 = limits::MAX_REPLICAS_PER_JOB as i32;

#[derive(InputObject, Clone, Debug)]
pub struct KeyValueInput {
    pub key: String,
    pub value: String,
}

#[derive(InputObject, Clone, Debug)]
pub struct GangInput {
    pub min_members: i32,
}

#[derive(InputObject, Clone, Debug)]
pub struct ElasticInput {
    pub min: i32,
    pub max: i32,
}

/// The job checkpoints: before it is stopped to make room (eviction, suspension, shrink) it is
/// asked to write a checkpoint and stopped as soon as every replica acknowledged (within the
/// grace period); the next run gets the checkpoint's reference in `GRUS_CHECKPOINT_REF`.
/// Kubernetes asks by the pod annotation `grus.io/checkpoint-requested` and, with a port and
/// path, a POST to the pod; the workload acknowledges by setting `grus.io/checkpoint`.
#[derive(InputObject, Clone, Debug, Default)]
pub struct CheckpointInput {
    pub http_port: Option<i32>,
    /// Starts with `/`; needs `httpPort`.
    pub http_path: Option<String>,
}

/// An interactive workspace instead of a batch job: one task of one replica whose server
/// listens on `port`, stopped or suspended after `idleTimeout` without GPU activity (a warning
/// event comes first), and ended at the job's `maxRuntime` (its maximum lifetime) like any job.
#[derive(InputObject, Clone, Debug)]
pub struct WorkspaceInput {
    #[graphql(default = 8888)]
    pub port: i32,
    /// Humantime (`30m`, `2h`), 10 seconds to 7 days.
    #[graphql(default_with = "String::from(\"30m\")")]
    pub idle_timeout: String,
    #[graphql(default_with = "IdleActionInput::Stop")]
    pub idle_action: IdleActionInput,
}

/// What happens to an idle workspace.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "IdleAction")]
pub enum IdleActionInput {
    /// Cancelled: it ends and gives everything back.
    Stop,
    /// Suspended: it gives back its GPUs and quota and may be resumed.
    Suspend,
}

impl From<IdleActionInput> for IdleAction {
    fn from(a: IdleActionInput) -> IdleAction {
        match a {
            IdleActionInput::Stop => IdleAction::Stop,
            IdleActionInput::Suspend => IdleAction::Suspend,
        }
    }
}

impl From<IdleAction> for IdleActionInput {
    fn from(a: IdleAction) -> IdleActionInput {
        match a {
            IdleAction::Stop => IdleActionInput::Stop,
            IdleAction::Suspend => IdleActionInput::Suspend,
        }
    }
}

#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyOn {
    TaskSucceeded,
    TaskFailed,
    ReplicaFailed,
    JobTimeout,
}

#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyDo {
    CompleteJob,
    AbortJob,
    RestartJob,
    RestartTask,
}

/// `{ on: { task_succeeded: main }, do: complete_job }` flattened: `task` names the task of
/// TASK_SUCCEEDED/TASK_FAILED, `max` the restarts of RESTART_JOB.
#[derive(InputObject, Clone, Debug)]
pub struct PolicyInput {
    pub on: PolicyOn,
    pub task: Option<String>,
    #[graphql(name = "do")]
    pub action: PolicyDo,
    pub max: Option<i32>,
}

// The wire's `TopologyScope` in the API.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(remote = "grus_protocol::wire::TopologyScope")]
pub enum Scope {
    Any,
    Node,
    Nvlink,
    Rack,
}

#[derive(InputObject, Clone, Debug)]
pub struct TopologyInput {
    pub scope: Scope,
}

#[derive(InputObject, Clone, Debug, Default)]
pub struct ResourcesInput {
    #[graphql(default)]
    pub gpus: i32,
    /// 1..1000: a fraction of one GPU (only with gpus = 1).
    pub gpu_milli: Option<i32>,
    pub gpu_memory_mib: Option<i64>,
    #[graphql(default)]
    pub gpu_models: Vec<String>,
    /// One MIG instance of this profile (`1g.10gb`, `3g.40gb`, ...) on a GPU in MIG mode,
    /// instead of whole GPUs or a share: then `gpus` is 1 (or left out), `gpuMilli` and
    /// `gpuMemoryMib` are left out, and every model named in `gpuModels` must offer it.
    pub mig_profile: Option<String>,
    #[graphql(default)]
    pub cpu_milli: i64,
    #[graphql(default)]
    pub memory_mib: i64,
}

#[derive(InputObject, Clone, Debug)]
pub struct TaskInput {
    pub name: String,
    #[graphql(default = 1)]
    pub replicas: i32,
    pub image: String,
    #[graphql(default)]
    pub command: Vec<String>,
    #[graphql(default)]
    pub env: Vec<KeyValueInput>,
    pub resources: ResourcesInput,
    pub topology: Option<TopologyInput>,
}

#[derive(InputObject, Clone, Debug)]
pub struct JobInput {
    pub name: String,
    /// Project slug.
    pub project: String,
    /// Queue name; the project's `default` queue when absent.
    pub queue: Option<String>,
    /// Priority class name: low, normal (default), high, critical.
    pub priority: Option<String>,
    #[graphql(default)]
    pub preemptible: bool,
    pub gang: Option<GangInput>,
    pub elastic: Option<ElasticInput>,
    #[graphql(default)]
    pub policies: Vec<PolicyInput>,
    /// Humantime duration (`90m`, `2h`).
    pub max_runtime: Option<String>,
    pub checkpoint: Option<CheckpointInput>,
    /// Makes the job an interactive workspace.
    pub workspace: Option<WorkspaceInput>,
    #[graphql(default)]
    pub labels: Vec<KeyValueInput>,
    #[graphql(default)]
    pub cluster_selector: Vec<KeyValueInput>,
    /// Node pools the job may use, in order of preference: its gang goes whole into the first
    /// that has room and quota for it. Empty: any node (quota is charged to every pool the
    /// queue has a quota for).
    #[graphql(default)]
    pub pools: Vec<String>,
    pub tasks: Vec<TaskInput>,
}

/// Where the job goes and who submits it, resolved by the caller.
pub struct Resolved<'a> {
    pub project_id: i64,
    pub queue_id: i64,
    pub queue_name: &'a str,
    /// The queue's class of service: the job's runtime limit is settled against it.
    pub service: ClassOfService,
    pub submitted_by: i64,
    pub submitted_by_subject: &'a str,
}

/// The profile a task's `migProfile` names, or the field at fault and why: a name no supported
/// GPU model offers, a model in `gpuModels` without it, or GPUs, a share or GPU memory asked
/// beside it (a MIG instance is one device whose profile fixes its size).
fn mig_profile_problem(
    r: &ResourcesInput,
    name: &str,
) -> Result<&'static grus_scheduler::mig::MigProfile, (&'static str, String)> {
    use grus_scheduler::mig;
    let Some(profile) = mig::known_profile(name) else {
        let known = mig::known_profile_names().join(", ");
        return Err(("resources.migProfile", format!("unknown MIG profile `{name}`; known profiles: {known}")));
    };
    if let Some(model) = r.gpu_models.iter().find(|m| !mig::model_offers(m, name)) {
        let offered = mig::profiles_of(model)
            .map(|t| t.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))
            .unwrap_or_else(|| "none: it has no MIG".to_owned());
        return Err((
            "resources.migProfile",
            format!("GPU model `{model}` has no MIG profile `{name}` (its profiles: {offered})"),
        ));
    }
    if r.gpus > 1 {
        return Err(("resources.gpus", "a MIG instance is one device: gpus must be 1 or left out".to_owned()));
    }
    if r.gpu_milli.is_some() {
        return Err(("resources.gpuMilli", "not with migProfile: the profile fixes the instance's size".to_owned()));
    }
    if r.gpu_memory_mib.is_some() {
        return Err((
            "resources.gpuMemoryMib",
            "not with migProfile: the profile fixes the instance's memory".to_owned(),
        ));
    }
    Ok(profile)
}

fn dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=63).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn pairs(
    list: &[KeyValueInput],
    field: &str,
    (max, value_max): (usize, usize),
    errs: &mut Vec<FieldError>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if list.len() > max {
        errs.push(FieldError { field: field.into(), message: format!("at most {max} entries") });
    }
    for (i, kv) in list.iter().enumerate() {
        if kv.key.is_empty() || kv.key.len() > limits::MAX_NAME_BYTES {
            errs.push(FieldError { field: format!("{field}.{i}.key"), message: "must be 1 to 253 characters".into() });
        } else if kv.key.contains('\0') {
            errs.push(FieldError { field: format!("{field}.{i}.key"), message: NUL.into() });
        } else if out.insert(kv.key.clone(), kv.value.clone()).is_some() {
            errs.push(FieldError { field: format!("{field}.{i}.key"), message: "duplicate key".into() });
        }
        if let Some(why) = limits::text_problem(&kv.value, value_max) {
            errs.push(FieldError { field: format!("{field}.{i}.value"), message: why });
        }
    }
    out
}

const NUL: &str = "must not contain a NUL character";

/// A free-text field: no NUL (PostgreSQL refuses it), at most `max` bytes.
fn text(field: impl FnOnce() -> String, value: &str, max: usize, errs: &mut Vec<FieldError>) {
    if let Some(message) = limits::text_problem(value, max) {
        errs.push(FieldError { field: field(), message });
    }
}

/// Validates `input` into the row to store. All errors together, as VALIDATION.
pub fn validate(input: &JobInput, at: &Resolved<'_>, now_ms: i64) -> Result<NewJob, ApiError> {
    let mut errs = Vec::new();
    let mut err = |field: String, message: &str| errs.push(FieldError { field, message: message.into() });
    if !dns_label(&input.name) {
        err("name".into(), "must be a DNS label: lowercase letters, digits and '-', at most 63");
    }
    let class = input.priority.as_deref().unwrap_or("normal");
    let priority = PriorityClass::parse(class).map(PriorityClass::value);
    if priority.is_none() {
        err("priority".into(), &format!("unknown priority class ({})", PriorityClass::names()));
    }
    if input.tasks.is_empty() {
        err("tasks".into(), "a job needs at least one task");
    } else if input.tasks.len() > limits::MAX_TASKS_PER_JOB {
        err("tasks".into(), &format!("at most {} tasks", limits::MAX_TASKS_PER_JOB));
    }
    if input.policies.len() > limits::MAX_POLICIES {
        err("policies".into(), &format!("at most {} policies", limits::MAX_POLICIES));
    }
    let mut tasks = Vec::new();
    let mut total_replicas: u64 = 0;
    for (i, t) in input.tasks.iter().enumerate() {
        let f = |name: &str| format!("tasks.{i}.{name}");
        if !dns_label(&t.name) {
            err(f("name"), "must be a DNS label");
        } else if input.tasks[..i].iter().any(|o| o.name == t.name) {
            err(f("name"), "duplicate task name");
        }
        if !(1..=MAX_REPLICAS).contains(&t.replicas) {
            err(f("replicas"), &format!("must be 1 to {MAX_REPLICAS}"));
        }
        if t.image.trim().is_empty() {
            err(f("image"), "required");
        } else if let Some(why) = limits::text_problem(&t.image, limits::MAX_SHORT_TEXT_BYTES) {
            err(f("image"), &why);
        }
        if t.command.len() > limits::MAX_ARGS {
            err(f("command"), &format!("at most {} arguments", limits::MAX_ARGS));
        }
        for (a, arg) in t.command.iter().enumerate() {
            if let Some(why) = limits::text_problem(arg, limits::MAX_ARG_BYTES) {
                err(f(&format!("command.{a}")), &why);
            }
        }
        let r = &t.resources;
        if !(0..=64).contains(&r.gpus) {
            err(f("resources.gpus"), "must be 0 to 64");
        }
        if let Some(m) = r.gpu_milli {
            if !(1..=1000).contains(&m) {
                err(f("resources.gpuMilli"), "must be 1 to 1000");
            } else if m < 1000 && r.gpus != 1 {
                err(f("resources.gpuMilli"), "a fraction of a GPU needs gpus = 1");
            }
        }
        if r.gpu_memory_mib.is_some_and(|m| m <= 0) {
            err(f("resources.gpuMemoryMib"), "must be positive");
        }
        if r.cpu_milli < 0 {
            err(f("resources.cpuMilli"), "must not be negative");
        }
        if r.memory_mib < 0 {
            err(f("resources.memoryMib"), "must not be negative");
        }
        if r.gpu_models.iter().any(|m| m.is_empty() || m.contains('/')) {
            err(f("resources.gpuModels"), "model names are non-empty and contain no '/'");
        } else if r.gpu_models.len() > limits::MAX_GPU_MODELS {
            err(f("resources.gpuModels"), &format!("at most {} models", limits::MAX_GPU_MODELS));
        } else if r.gpu_models.iter().any(|m| limits::text_problem(m, limits::MAX_SHORT_TEXT_BYTES).is_some()) {
            err(f("resources.gpuModels"), "model names are at most 1024 bytes, without NUL");
        }
        let mig = r.mig_profile.as_deref().and_then(|name| match mig_profile_problem(r, name) {
            Ok(profile) => Some(profile),
            Err((field, why)) => {
                err(f(field), &why);
                None
            }
        });
        total_replicas += u64::try_from(t.replicas).unwrap_or(0);
        let env: BTreeMap<String, String> = t.env.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
        let resources = ResourcesSpec {
            gpus: if mig.is_some() { 1 } else { u32::try_from(r.gpus).unwrap_or(0) },
            gpu_milli: match mig {
                Some(profile) => Some(grus_scheduler::mig::milli_of(profile)),
                None => r.gpu_milli.and_then(|m| u32::try_from(m).ok()),
            },
            gpu_memory_mib: r.gpu_memory_mib.and_then(|m| u64::try_from(m).ok()),
            gpu_models: r.gpu_models.clone(),
            mig_profile: mig.map(|p| p.name.to_string()),
            cpu_milli: u64::try_from(r.cpu_milli).unwrap_or(0),
            memory_mib: u64::try_from(r.memory_mib).unwrap_or(0),
        };
        let topology = t.topology.as_ref().map(|tp| TopologySpec { scope: tp.scope.into() });
        tasks.push(TaskSpec {
            name: t.name.clone(),
            replicas: u32::try_from(t.replicas).unwrap_or(1),
            image: t.image.clone(),
            command: t.command.clone(),
            env,
            resources,
            topology,
        });
    }
    if total_replicas > limits::MAX_REPLICAS_PER_JOB {
        err("tasks".into(), &format!("at most {} replicas in all", limits::MAX_REPLICAS_PER_JOB));
    }
    let gang = match &input.gang {
        Some(g) if g.min_members < 1 || u64::try_from(g.min_members).unwrap_or(0) > total_replicas => {
            err("gang.minMembers".into(), "must be 1 to the job's total replicas");
            None
        }
        Some(g) => Some(GangSpec { min_members: u32::try_from(g.min_members).unwrap_or(1) }),
        None => None,
    };
    let elastic = match &input.elastic {
        Some(e) if e.min < 1 || e.max < e.min => {
            err("elastic".into(), "needs 1 <= min <= max");
            None
        }
        Some(e) => Some(ElasticSpec { min: u32::try_from(e.min).unwrap_or(1), max: u32::try_from(e.max).unwrap_or(1) }),
        None => None,
    };
    let checkpoint = input.checkpoint.as_ref().map(|c| {
        let http = match (c.http_port, &c.http_path) {
            (None, None) => None,
            (Some(port), Some(path)) => {
                let port = u16::try_from(port).ok().filter(|p| *p > 0);
                if port.is_none() {
                    err("checkpoint.httpPort".into(), "a port from 1 to 65535");
                }
                if !path.starts_with('/') {
                    err("checkpoint.httpPath".into(), "a path starting with /");
                }
                port.map(|port| CheckpointHttp { port, path: path.clone() })
            }
            (Some(_), None) => {
                err("checkpoint.httpPath".into(), "needed with httpPort");
                None
            }
            (None, Some(_)) => {
                err("checkpoint.httpPort".into(), "needed with httpPath");
                None
            }
        };
        CheckpointSpec { http, resume_from: None }
    });
    let workspace = input.workspace.as_ref().and_then(|w| {
        let one_replica = input.tasks.len() == 1 && input.tasks[0].replicas == 1;
        if !one_replica || input.gang.is_some() || input.elastic.is_some() {
            err("workspace".into(), "a workspace is one task of one replica, without gang or elastic bounds");
        }
        let port = u16::try_from(w.port).ok().filter(|p| *p > 0);
        if port.is_none() {
            err("workspace.port".into(), "a port from 1 to 65535");
        }
        let idle_after_s = humantime::parse_duration(&w.idle_timeout)
            .ok()
            .map(|d| d.as_secs())
            .filter(|s| (domain::MIN_IDLE_AFTER_S..=domain::MAX_IDLE_AFTER_S).contains(s));
        if idle_after_s.is_none() {
            err("workspace.idleTimeout".into(), "a duration from 10s to 7d, such as 30m or 2h");
        }
        Some(WorkspaceSpec { port: port?, idle_after_s: idle_after_s?, idle_action: w.idle_action.into() })
    });
    let mut policies = Vec::new();
    for (i, p) in input.policies.iter().enumerate() {
        let task = p.task.clone().unwrap_or_default();
        let names_task = matches!(p.on, PolicyOn::TaskSucceeded | PolicyOn::TaskFailed);
        if names_task && !input.tasks.iter().any(|t| t.name == task) {
            err(format!("policies.{i}.task"), "must name a task of this job");
        }
        let on = match p.on {
            PolicyOn::TaskSucceeded => PolicyTrigger::TaskSucceeded(task),
            PolicyOn::TaskFailed => PolicyTrigger::TaskFailed(task),
            PolicyOn::ReplicaFailed => PolicyTrigger::ReplicaFailed,
            PolicyOn::JobTimeout => PolicyTrigger::JobTimeout,
        };
        let action = match p.action {
            PolicyDo::CompleteJob => PolicyAction::CompleteJob,
            PolicyDo::AbortJob => PolicyAction::AbortJob,
            PolicyDo::RestartTask => PolicyAction::RestartTask,
            PolicyDo::RestartJob => match p.max.map(u32::try_from) {
                Some(Ok(max)) => PolicyAction::RestartJob { max },
                _ => {
                    err(format!("policies.{i}.max"), "RESTART_JOB needs max >= 0");
                    PolicyAction::RestartJob { max: 0 }
                }
            },
        };
        policies.push(PolicySpec { on, action });
    }
    let max_runtime_s = match input.max_runtime.as_deref().map(humantime::parse_duration) {
        Some(Ok(d)) if d >= Duration::from_secs(1) => at.service.runtime_for(Some(d.as_secs()), at.queue_name),
        Some(_) => Err("a duration of at least 1s, like 90m or 2h".to_owned()),
        None => at.service.runtime_for(None, at.queue_name),
    }
    .unwrap_or_else(|why| {
        err("maxRuntime".into(), &why);
        None
    });
    if input.pools.len() > limits::MAX_JOB_POOLS {
        err("pools".into(), &format!("at most {} node pools", limits::MAX_JOB_POOLS));
    }
    for (i, p) in input.pools.iter().enumerate() {
        if !valid_pool_name(p) {
            err(format!("pools.{i}"), "a node pool name: 1-63 lowercase letters, digits and '-'");
        } else if input.pools[..i].contains(p) {
            err(format!("pools.{i}"), &format!("pool {p} is named twice"));
        }
    }
    let label_bounds = (limits::MAX_JOB_LABELS, limits::MAX_SHORT_TEXT_BYTES);
    let labels = pairs(&input.labels, "labels", label_bounds, &mut errs);
    let node_selector = pairs(&input.cluster_selector, "clusterSelector", label_bounds, &mut errs);
    for (i, t) in input.tasks.iter().enumerate() {
        pairs(&t.env, &format!("tasks.{i}.env"), (limits::MAX_ENV_VARS, limits::MAX_ARG_BYTES), &mut errs);
    }
    text(|| "project".into(), &input.project, limits::MAX_NAME_BYTES, &mut errs);
    if let Some(queue) = &input.queue {
        text(|| "queue".into(), queue, limits::MAX_NAME_BYTES, &mut errs);
    }
    for (i, p) in input.policies.iter().enumerate() {
        if let Some(task) = &p.task {
            text(|| format!("policies.{i}.task"), task, limits::MAX_NAME_BYTES, &mut errs);
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::Validation(errs));
    }
    let priority = priority.unwrap_or(100);
    let spec = JobSpec {
        // The id is the row's; the dispatcher fills it in.
        id: 0,
        name: input.name.clone(),
        project: input.project.clone(),
        queue: at.queue_name.to_owned(),
        priority,
        preemptible: input.preemptible,
        may_preempt: true,
        tasks: tasks.clone(),
        gang,
        elastic,
        policies,
        max_runtime_s,
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels,
        node_selector,
        pools: input.pools.clone(),
        submitted_by: at.submitted_by_subject.to_owned(),
        submitted_at_ms: now_ms,
        checkpoint,
        workspace,
        service: None,
    };
    // The backstop: the whole job within what an agent accepts (its encoded size above all).
    if let Err(e) = limits::check_job(&spec) {
        return Err(ApiError::Validation(vec![FieldError { field: e.path, message: e.why }]));
    }
    let new_tasks = tasks
        .into_iter()
        .map(|t| {
            let spec = serde_json::to_value(&t).map_err(|e| ApiError::internal(&e))?;
            Ok(NewTask { name: t.name, replicas: t.replicas, resources: t.resources, spec })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(NewJob {
        project_id: at.project_id,
        queue_id: at.queue_id,
        name: input.name.clone(),
        priority,
        priority_class: class.to_owned(),
        preemptible: input.preemptible,
        spec: serde_json::to_value(&spec).map_err(|e| ApiError::internal(&e))?,
        tasks: new_tasks,
        pools: input.pools.clone(),
        submitted_by: at.submitted_by,
    })
}

/// Refuses (VALIDATION, per task) a job no node of any registered cluster could ever hold: it
/// would otherwise be admitted and hold its queue's quota for good (`domain::node_fit`).
pub(crate) async fn check_fits_fleet(ctx: &async_graphql::Context<'_>, new: &NewJob) -> ApiResult<()> {
    let Ok(shapes) = ctx.data::<std::sync::Arc<crate::fleet_shapes::FleetShapes>>() else { return Ok(()) };
    let spec: grus_protocol::wire::JobSpec =
        serde_json::from_value(new.spec.clone()).map_err(|e| ApiError::internal(&e))?;
    let refused = crate::domain::node_fit::never_fits(&spec, &shapes.get().await?);
    if refused.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(
            refused.into_iter().map(|r| FieldError { field: r.field, message: r.message }).collect(),
        ))
    }
}

/// The queue a job input names (the project's `default` when absent), after checking that the
/// caller is at least a member of the project: what submitJob and dryRunJob both start with.
/// Refuses a priority class above what the project's tenant allows (`field` names the input).
pub(crate) async fn check_tenant_rights(
    pool: &sqlx::PgPool,
    project_id: i64,
    class: &str,
    field: &str,
) -> ApiResult<()> {
    let Some(class) = PriorityClass::parse(class) else { return Ok(()) };
    let (tenant, rights) = crate::db::tenant_rights::project_tenant_rights(pool, project_id).await?;
    rights.allows_class(class, &tenant).map_err(|message| ApiError::field(field, message))
}

pub(crate) async fn target_queue(ctx: &async_graphql::Context<'_>, input: &JobInput) -> ApiResult<crate::db::Queue> {
    let pool = super::pool(ctx)?;
    let user = &super::caller(ctx)?.user;
    for (field, value) in [("project", Some(&input.project)), ("queue", input.queue.as_ref())] {
        if let Some(why) = value.and_then(|v| limits::text_problem(v, limits::MAX_NAME_BYTES)) {
            return Err(ApiError::field(field, why));
        }
    }
    let queue_name = input.queue.as_deref().unwrap_or(crate::db::DEFAULT_QUEUE);
    let target = crate::db::submission_target(pool, user.id, &input.project, queue_name).await?;
    match target.role {
        // No role at all: the project's existence does not leak (as in `authorize`).
        None => return Err(ApiError::NotFound("project")),
        Some(role) if role < crate::domain::Role::Member => return Err(ApiError::Forbidden),
        Some(_) => {}
    }
    target.queue.ok_or_else(|| ApiError::field("queue", "no such queue in the project"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str) -> TaskInput {
        TaskInput {
            name: name.into(),
            replicas: 2,
            image: "busybox".into(),
            command: vec![],
            env: vec![],
            resources: ResourcesInput { gpus: 1, ..Default::default() },
            topology: None,
        }
    }

    fn job() -> JobInput {
        JobInput {
            name: "train".into(),
            project: "p".into(),
            queue: None,
            priority: Some("high".into()),
            preemptible: false,
            gang: Some(GangInput { min_members: 2 }),
            elastic: None,
            policies: vec![],
            max_runtime: Some("2h".into()),
            checkpoint: None,
            workspace: None,
            labels: vec![],
            cluster_selector: vec![],
            pools: vec![],
            tasks: vec![task("main")],
        }
    }

    const AT: Resolved<'static> = Resolved {
        project_id: 1,
        queue_id: 2,
        queue_name: "default",
        service: ClassOfService {
            max_wait_s: None,
            default_runtime_s: None,
            max_runtime_s: None,
            borrowed_suspend: None,
            interactive_reserve_milli: 0,
        },
        submitted_by: 3,
        submitted_by_subject: "dev:a",
    };

    #[test]
    fn valid_job_resolves_priority() {
        let j = validate(&job(), &AT, 0).unwrap();
        assert_eq!((j.priority, j.priority_class.as_str()), (1000, "high"));
        assert_eq!(j.spec["max_runtime_s"], 7200);
        assert_eq!(j.tasks[0].replicas, 2);
    }

    #[test]
    fn the_queues_runtime_fills_a_job_without_one_and_bounds_one_that_names_one() {
        let service =
            ClassOfService { default_runtime_s: Some(600), max_runtime_s: Some(3600), ..ClassOfService::default() };
        let at = Resolved { service, ..AT };
        let mut j = job();
        j.max_runtime = None;
        assert_eq!(validate(&j, &at, 0).unwrap().spec["max_runtime_s"], 600);
        j.max_runtime = Some("1h".into());
        assert_eq!(validate(&j, &at, 0).unwrap().spec["max_runtime_s"], 3600);
        j.max_runtime = Some("2h".into());
        let Err(ApiError::Validation(errs)) = validate(&j, &at, 0) else { panic!("a runtime above the queue's") };
        assert_eq!(errs[0].field, "maxRuntime");
        assert_eq!(errs[0].message, "queue default allows at most 1h (3600s)");
    }

    #[test]
    fn a_workspace_is_one_replica_with_a_port_and_an_idle_timeout() {
        let mut j = job();
        j.gang = None;
        j.tasks[0].replicas = 1;
        let ws = |port: i32, idle: &str| WorkspaceInput {
            port,
            idle_timeout: idle.into(),
            idle_action: IdleActionInput::Suspend,
        };
        j.workspace = Some(ws(8888, "45m"));
        let spec = validate(&j, &AT, 0).unwrap().spec;
        assert_eq!(
            spec["workspace"],
            serde_json::json!({ "port": 8888, "idle_after_s": 2700, "idle_action": "suspend" })
        );
        for (w, field) in [
            (ws(0, "30m"), "workspace.port"),
            (ws(70000, "30m"), "workspace.port"),
            (ws(8888, "soon"), "workspace.idleTimeout"),
            (ws(8888, "1s"), "workspace.idleTimeout"),
            (ws(8888, "30d"), "workspace.idleTimeout"),
        ] {
            j.workspace = Some(w);
            assert_eq!(fields(&j)[0].0, field);
        }
        j.workspace = Some(ws(8888, "30m"));
        j.tasks[0].replicas = 2;
        assert_eq!(fields(&j)[0].0, "workspace", "a workspace is one replica");
    }

    #[test]
    fn a_checkpointing_job_names_a_whole_http_endpoint_or_none() {
        let mut j = job();
        j.checkpoint = Some(CheckpointInput::default());
        assert_eq!(validate(&j, &AT, 0).unwrap().spec["checkpoint"], serde_json::json!({}));
        j.checkpoint = Some(CheckpointInput { http_port: Some(8080), http_path: Some("/ckpt".into()) });
        let spec = validate(&j, &AT, 0).unwrap().spec;
        assert_eq!(spec["checkpoint"], serde_json::json!({ "http": { "port": 8080, "path": "/ckpt" } }));
        for (port, path, field) in [
            (Some(0), Some("/x"), "checkpoint.httpPort"),
            (Some(70000), Some("/x"), "checkpoint.httpPort"),
            (Some(80), Some("x"), "checkpoint.httpPath"),
            (Some(80), None, "checkpoint.httpPath"),
            (None, Some("/x"), "checkpoint.httpPort"),
        ] {
            j.checkpoint = Some(CheckpointInput { http_port: port, http_path: path.map(str::to_owned) });
            let Err(ApiError::Validation(errs)) = validate(&j, &AT, 0) else { panic!("{port:?} {path:?}") };
            assert_eq!(errs[0].field, field, "{port:?} {path:?}");
        }
    }

    #[test]
    fn a_mig_profile_is_one_device_counted_by_its_compute_slices() {
        let mut j = job();
        j.tasks[0].resources = ResourcesInput { mig_profile: Some("3g.40gb".into()), ..ResourcesInput::default() };
        let spec = validate(&j, &AT, 0).unwrap().spec;
        let r = &spec["tasks"][0]["resources"];
        assert_eq!((r["gpus"].as_u64(), r["gpu_milli"].as_u64()), (Some(1), Some(428)), "{r}");
        assert_eq!(r["mig_profile"], "3g.40gb");
        j.tasks[0].resources.gpu_models = vec!["H100-80GB".into(), "A100-80GB".into()];
        assert!(validate(&j, &AT, 0).is_ok(), "both models offer 3g.40gb");
    }

    #[test]
    fn a_bad_mig_request_names_its_field() {
        let bad = |r: ResourcesInput| {
            let mut j = job();
            j.tasks[0].resources = r;
            fields(&j)
        };
        let mig = |name: &str| ResourcesInput { mig_profile: Some(name.into()), ..ResourcesInput::default() };
        let got = bad(mig("5g.50gb"));
        assert_eq!(got[0].0, "tasks.0.resources.migProfile");
        assert!(got[0].1.starts_with("unknown MIG profile `5g.50gb`; known profiles: 1g.10gb"), "{}", got[0].1);
        let got = bad(ResourcesInput { gpu_models: vec!["A100-40GB".into()], ..mig("1g.10gb") });
        assert_eq!(got[0].0, "tasks.0.resources.migProfile");
        assert!(got[0].1.contains("`A100-40GB` has no MIG profile `1g.10gb` (its profiles: 1g.5gb"), "{}", got[0].1);
        let got = bad(ResourcesInput { gpu_models: vec!["T4".into()], ..mig("1g.10gb") });
        assert!(got[0].1.ends_with("(its profiles: none: it has no MIG)"), "{}", got[0].1);
        assert_eq!(bad(ResourcesInput { gpus: 2, ..mig("1g.10gb") })[0].0, "tasks.0.resources.gpus");
        assert_eq!(bad(ResourcesInput { gpu_milli: Some(1000), ..mig("1g.10gb") })[0].0, "tasks.0.resources.gpuMilli");
        assert_eq!(
            bad(ResourcesInput { gpu_memory_mib: Some(1), ..mig("1g.10gb") })[0].0,
            "tasks.0.resources.gpuMemoryMib"
        );
    }

    #[test]
    fn reports_every_bad_field() {
        let mut j = job();
        j.name = "Bad Name".into();
        j.priority = Some("urgent".into());
        j.gang = Some(GangInput { min_members: 5 });
        j.tasks[0].resources.gpu_milli = Some(250);
        j.tasks[0].resources.gpus = 2;
        j.tasks.push(task("main"));
        let Err(ApiError::Validation(fields)) = validate(&j, &AT, 0) else { panic!("expected validation") };
        let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["name", "priority", "tasks.0.resources.gpuMilli", "tasks.1.name", "gang.minMembers"]);
    }

    fn fields(j: &JobInput) -> Vec<(String, String)> {
        match validate(j, &AT, 0) {
            Err(ApiError::Validation(fields)) => fields.into_iter().map(|f| (f.field, f.message)).collect(),
            other => panic!("expected validation, got {other:?}"),
        }
    }

    #[test]
    fn a_nul_character_is_a_validation_error_of_its_field() {
        let mut j = job();
        j.tasks[0].command = vec!["python".into(), "train\0.py".into()];
        j.tasks[0].env = vec![KeyValueInput { key: "A".into(), value: "x\0".into() }];
        j.labels = vec![KeyValueInput { key: "te\0am".into(), value: "v".into() }];
        j.project = "p\0".into();
        let got: Vec<String> = fields(&j).into_iter().map(|(f, _)| f).collect();
        assert_eq!(got, ["tasks.0.command.1", "labels.0.key", "tasks.0.env.0.value", "project"]);
    }

    #[test]
    fn one_job_is_bounded_in_tasks_replicas_and_size() {
        // 1,200 single-replica tasks pinned an agent: refused at submit.
        let mut j = job();
        j.tasks = (0..1200).map(|i| task(&format!("t{i}"))).collect();
        j.policies.clear();
        assert!(fields(&j).iter().any(|(f, m)| f == "tasks" && m.contains("at most 64 tasks")), "{:?}", fields(&j));
        let mut j = job();
        j.tasks[0].replicas = 5000;
        assert_eq!(fields(&j)[0].0, "tasks.0.replicas");
        let mut j = job();
        j.tasks = (0..3).map(|i| TaskInput { replicas: 2000, ..task(&format!("t{i}")) }).collect();
        j.policies.clear();
        j.gang = None;
        assert_eq!(fields(&j), [("tasks".to_owned(), "at most 4096 replicas in all".to_owned())]);
        // Each argument within bounds, the whole spec not.
        let mut j = job();
        j.tasks[0].command = vec!["x".repeat(30_000); 10];
        assert_eq!(fields(&j)[0].0, "job");
        let mut j = job();
        j.labels = (0..65).map(|i| KeyValueInput { key: format!("k{i}"), value: "v".into() }).collect();
        assert_eq!(fields(&j)[0], ("labels".to_owned(), "at most 64 entries".to_owned()));
    }

    mod fuzz {
        //! Any input at all: validation answers (a job or per-field errors) and never panics,
        //! and every job it accepts is within what an agent accepts (`limits::check_job`).

        use proptest::prelude::*;

        use super::*;

        fn small() -> impl Strategy<Value = String> {
            prop_oneof![4 => "[a-z0-9-]{0,12}", 1 => ".{0,20}", 1 => Just("x\0y".to_owned())]
        }

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![6 => small(), 1 => (0usize..40_000).prop_map(|n| "a".repeat(n))]
        }

        fn pairs() -> impl Strategy<Value = Vec<KeyValueInput>> {
            prop::collection::vec((small(), small()).prop_map(|(key, value)| KeyValueInput { key, value }), 0..70)
        }

        fn task_input() -> impl Strategy<Value = TaskInput> {
            (
                text(),
                -3i32..5000,
                text(),
                prop::collection::vec(text(), 0..5),
                pairs(),
                (-2i32..70, prop::option::of(-5i32..1100), prop::collection::vec(small(), 0..3)),
            )
                .prop_map(|(name, replicas, image, command, env, (gpus, gpu_milli, gpu_models))| {
                    TaskInput {
                        name,
                        replicas,
                        image,
                        command,
                        env,
                        resources: ResourcesInput {
                            gpus,
                            gpu_milli,
                            gpu_memory_mib: None,
                            gpu_models,
                            mig_profile: None,
                            cpu_milli: 1000,
                            memory_mib: 1024,
                        },
                        topology: None,
                    }
                })
        }

        fn job_input() -> impl Strategy<Value = JobInput> {
            (
                text(),
                text(),
                prop::option::of(text()),
                prop::collection::vec(task_input(), 0..70),
                pairs(),
                prop::option::of(-2i32..5000),
                prop::option::of(text()),
            )
                .prop_map(|(name, project, priority, tasks, labels, gang, max_runtime)| JobInput {
                    name,
                    project,
                    queue: None,
                    priority,
                    preemptible: false,
                    gang: gang.map(|min_members| GangInput { min_members }),
                    elastic: None,
                    policies: vec![],
                    max_runtime,
                    checkpoint: None,
                    workspace: None,
                    labels,
                    cluster_selector: vec![],
                    pools: vec![],
                    tasks,
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]

            #[test]
            fn any_input_is_a_job_within_bounds_or_field_errors(input in job_input()) {
                match validate(&input, &AT, 0) {
                    Ok(job) => {
                        let spec: JobSpec = serde_json::from_value(job.spec).unwrap();
                        prop_assert!(limits::check_job(&spec).is_ok());
                    }
                    Err(ApiError::Validation(fields)) => prop_assert!(!fields.is_empty()),
                    Err(other) => prop_assert!(false, "not a validation error: {other:?}"),
                }
            }
        }
    }
}
