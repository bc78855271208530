//! Inference services in the API: `applyService` (create, or update: a changed container spec
//! is a new revision, rolled out by the allocator's service step), `scaleService`,
//! `setServiceLoad` (the request rate autoscaling reads: the sim's synthetic load, or an
//! adapter's report), `deleteService`, and the `services` / `service` reads.
//!
//! A service's replica is validated as a job would be (`job_input::validate`, one task named
//! `server` of one replica): the same field rules, reported under the service's own field
//! names.

use async_graphql::{ComplexObject, Context, Enum, InputObject, Interface, Object, SimpleObject, ID};
use chrono::{DateTime, Utc};
use grus_protocol::wire::{ReadinessSpec, ServiceReplicaSpec};

use super::job_input::{self, JobInput, KeyValueInput, Resolved, ResourcesInput, TaskInput};
use super::types::{JobObj, WorkloadTypeName};
use super::workloads::{self, WorkloadCostObj, WorkloadEventObj};
use super::{authorize, caller, pool};
use crate::db::services::{self as store, Applied, ReplicaTemplate, Service, ServiceSettings};
use crate::db::{self, DbError};
use crate::domain::service::{
    self as rules, Autoscaling, ReplicaSet, ReplicaView, Rollout, ScalingMetric, ServiceState, MAX_SERVICE_REPLICAS,
};
use crate::domain::{JobState, Role};
use crate::error::{ApiError, ApiResult, FieldError};

/// The task name of every replica's one task.
pub const SERVER_TASK: &str = "server";

// `domain::service::ScalingMetric` in the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "ScalingMetric", remote = "crate::domain::service::ScalingMetric")]
pub enum ScalingMetricName {
    /// The mean GPU busy percentage of its running replicas, from the profiler; the target
    /// is a percentage.
    GpuUtilization,
    /// Requests per second reported for the service (by its replicas or a metrics adapter;
    /// the sim's synthetic load); the target is requests per second per replica.
    RequestRate,
}

// `domain::service::ServiceState` in the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "ServiceState", remote = "crate::domain::service::ServiceState")]
pub enum ServiceStateName {
    /// Its desired count of replicas of the current revision is ready.
    Ready,
    /// At or above its minimum, on its way to the desired count or rolling out a revision.
    Progressing,
    /// Fewer ready replicas than its minimum.
    Degraded,
    /// Deleted: its replicas are stopped.
    Deleted,
}

/// An HTTP readiness check of a replica.
#[derive(InputObject, Clone, Debug)]
pub struct ReadinessInput {
    /// Path of a GET that answers 2xx/3xx once the replica takes requests.
    pub path: String,
    #[graphql(default)]
    pub initial_delay_seconds: i32,
    #[graphql(default = 10)]
    pub period_seconds: i32,
}

/// Autoscaling on a measured signal.
#[derive(InputObject, Clone, Debug)]
pub struct AutoscalingInput {
    pub metric: ScalingMetricName,
    /// Per replica: a GPU busy percentage (1-100) or requests per second.
    pub target: f64,
    /// A lower count is taken only after it has been asked for this long (humantime; default 5m).
    #[graphql(default_with = "\"5m\".to_owned()")]
    pub scale_down_delay: String,
}

/// How a new revision replaces the old replicas.
#[derive(InputObject, Clone, Debug)]
pub struct RolloutInput {
    #[graphql(default = 1)]
    pub max_surge: i32,
    #[graphql(default)]
    pub max_unavailable: i32,
}

/// A service as applied: created when its name is new in the project, else updated.
#[derive(InputObject, Clone, Debug)]
pub struct ServiceInput {
    /// A DNS label, unique among the project's live services.
    pub name: String,
    /// Project slug.
    pub project: String,
    /// Queue name; the project's `default` queue when absent.
    pub queue: Option<String>,
    /// Priority class name of its replicas: low, normal (default), high, critical.
    pub priority: Option<String>,
    /// At least this many replicas run; they are never preempted (within the queue's guarantee).
    #[graphql(default = 1)]
    pub min_replicas: i32,
    /// At most this many; default: `minReplicas` (at least 1).
    pub max_replicas: Option<i32>,
    /// The count to run now (without autoscaling, the count it keeps). Default: the current
    /// count, or `minReplicas` (at least 1) for a new service.
    pub replicas: Option<i32>,
    pub image: String,
    #[graphql(default)]
    pub command: Vec<String>,
    #[graphql(default)]
    pub env: Vec<KeyValueInput>,
    /// What one replica gets.
    pub resources: ResourcesInput,
    /// The port a replica serves on.
    pub port: i32,
    pub readiness: Option<ReadinessInput>,
    pub autoscaling: Option<AutoscalingInput>,
    pub rollout: Option<RolloutInput>,
    #[graphql(default)]
    pub labels: Vec<KeyValueInput>,
    #[graphql(default)]
    pub cluster_selector: Vec<KeyValueInput>,
    #[graphql(default)]
    pub pools: Vec<String>,
}

/// What `applyService` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
pub enum ServiceApplied {
    /// A new service.
    Created,
    /// The replica spec changed: a new revision, rolled out within the rollout's bounds.
    NewRevision,
    /// Only the bounds, autoscaling or rollout changed (or nothing).
    Updated,
}

impl From<Applied> for ServiceApplied {
    fn from(a: Applied) -> ServiceApplied {
        match a {
            Applied::Created => ServiceApplied::Created,
            Applied::NewRevision => ServiceApplied::NewRevision,
            Applied::Updated => ServiceApplied::Updated,
        }
    }
}

#[derive(SimpleObject)]
pub struct ApplyServicePayload {
    pub service: ServiceObj,
    pub applied: ServiceApplied,
}

/// The job a service's replica is: one task of one replica, validated as any job.
fn replica_job_input(input: &ServiceInput) -> JobInput {
    JobInput {
        name: input.name.clone(),
        project: input.project.clone(),
        queue: input.queue.clone(),
        priority: input.priority.clone(),
        preemptible: false,
        gang: None,
        elastic: None,
        policies: vec![],
        max_runtime: None,
        checkpoint: None,
        workspace: None,
        labels: input.labels.clone(),
        cluster_selector: input.cluster_selector.clone(),
        pools: input.pools.clone(),
        tasks: vec![TaskInput {
            name: SERVER_TASK.to_owned(),
            replicas: 1,
            image: input.image.clone(),
            command: input.command.clone(),
            env: input.env.clone(),
            resources: input.resources.clone(),
            topology: None,
        }],
    }
}

/// A job field's name as the service input names it (`tasks.0.image` is `image`).
fn service_field(job_field: String) -> String {
    job_field.strip_prefix("tasks.0.").map(str::to_owned).unwrap_or(job_field)
}

fn replica_count(v: i32) -> Option<u32> {
    u32::try_from(v).ok().filter(|v| *v <= MAX_SERVICE_REPLICAS)
}

/// The service's settings and readiness from the input, or every field at fault.
pub fn validate_settings(
    input: &ServiceInput,
    queue_id: i64,
) -> Result<(ServiceSettings, Option<ReadinessSpec>, u16), Vec<FieldError>> {
    let mut errs = Vec::new();
    let mut err = |field: &str, message: String| errs.push(FieldError { field: field.into(), message });
    let bound = format!("0 to {MAX_SERVICE_REPLICAS}");
    let min = replica_count(input.min_replicas);
    if min.is_none() {
        err("minReplicas", format!("must be {bound}"));
    }
    let max = match input.max_replicas {
        None => Some(min.unwrap_or(1).max(1)),
        Some(m) => replica_count(m).filter(|m| *m >= 1),
    };
    match (min, max) {
        (_, None) => err("maxReplicas", format!("must be 1 to {MAX_SERVICE_REPLICAS}")),
        (Some(min), Some(max)) if min > max => {
            err("maxReplicas", format!("must be at least minReplicas ({min}), is {max}"));
        }
        _ => {}
    }
    let replicas = input.replicas.map(|r| (r, replica_count(r)));
    if let (Some((_, count)), Some(min), Some(max)) = (replicas, min, max) {
        if count.is_none_or(|c| c < min || c > max) {
            err("replicas", format!("must be within minReplicas and maxReplicas ({min} to {max})"));
        }
    }
    let port = u16::try_from(input.port).ok().filter(|p| *p > 0);
    if port.is_none() {
        err("port", "a port from 1 to 65535".into());
    }
    let readiness = input.readiness.as_ref().and_then(|r| {
        if !r.path.starts_with('/') {
            err("readiness.path", "a path starting with /".into());
        }
        let delay = u32::try_from(r.initial_delay_seconds).ok().filter(|d| *d <= 3600);
        if delay.is_none() {
            err("readiness.initialDelaySeconds", "0 to 3600".into());
        }
        let period = u32::try_from(r.period_seconds).ok().filter(|p| (1..=300).contains(p));
        if period.is_none() {
            err("readiness.periodSeconds", "1 to 300".into());
        }
        Some(ReadinessSpec { path: r.path.clone(), initial_delay_s: delay?, period_s: period? })
    });
    let autoscaling = input.autoscaling.as_ref().and_then(|a| {
        let metric: ScalingMetric = a.metric.into();
        let top = if metric == ScalingMetric::GpuUtilization { 100.0 } else { 1e9 };
        if !(a.target.is_finite() && a.target > 0.0 && a.target <= top) {
            let what =
                if metric == ScalingMetric::GpuUtilization { "a percentage above 0, at most 100" } else { "above 0" };
            err("autoscaling.target", what.into());
        }
        let delay = humantime::parse_duration(&a.scale_down_delay).ok().filter(|d| d.as_secs() <= 24 * 3600);
        if delay.is_none() {
            err("autoscaling.scaleDownDelay", "a duration up to 24h, such as 30s or 5m".into());
        }
        Some(Autoscaling {
            metric,
            target: a.target,
            scale_down_delay: chrono::Duration::seconds(i64::try_from(delay?.as_secs()).ok()?),
        })
    });
    let rollout = match &input.rollout {
        None => Some(Rollout::default()),
        Some(r) => {
            let surge = replica_count(r.max_surge);
            let unavailable = replica_count(r.max_unavailable);
            if surge.is_none() {
                err("rollout.maxSurge", format!("must be {bound}"));
            }
            if unavailable.is_none() {
                err("rollout.maxUnavailable", format!("must be {bound}"));
            }
            if surge == Some(0) && unavailable == Some(0) {
                err("rollout", "maxSurge and maxUnavailable cannot both be 0: the roll could not move".into());
            }
            Some(Rollout { max_surge: surge.unwrap_or(0), max_unavailable: unavailable.unwrap_or(0) })
        }
    };
    if !errs.is_empty() {
        return Err(errs);
    }
    let (Some(min_replicas), Some(max_replicas), Some(port), Some(rollout)) = (min, max, port, rollout) else {
        return Err(vec![FieldError { field: "minReplicas".into(), message: "invalid".into() }]);
    };
    let settings = ServiceSettings {
        queue_id,
        min_replicas,
        max_replicas,
        replicas: replicas.and_then(|(_, c)| c),
        autoscaling,
        rollout,
    };
    Ok((settings, readiness, port))
}

fn not_found_as_service(e: ApiError) -> ApiError {
    match e {
        ApiError::NotFound(_) => ApiError::NotFound("service"),
        other => other,
    }
}

/// The live service `name` of the project `slug`, if the caller holds `min` there.
async fn service_by_name(ctx: &Context<'_>, project: &str, name: &str, min: Role) -> ApiResult<(Service, Role)> {
    let pool = pool(ctx)?;
    let project = db::get_project_by_slug(pool, project).await.map_err(|_| ApiError::NotFound("service"))?;
    let (_, role) = authorize(ctx, project.id, min).await.map_err(not_found_as_service)?;
    let service = store::by_name(pool, project.id, name).await?.ok_or(ApiError::NotFound("service"))?;
    Ok((service, role))
}

/// The service, if the caller owns it or administers its project.
async fn own_service(ctx: &Context<'_>, project: &str, name: &str) -> ApiResult<Service> {
    let (service, role) = service_by_name(ctx, project, name, Role::Member).await?;
    if role < Role::ProjectAdmin && service.owner_id != caller(ctx)?.user.id {
        return Err(ApiError::Forbidden);
    }
    Ok(service)
}

#[derive(Default)]
pub struct ServiceQuery;

#[Object]
impl ServiceQuery {
    /// The live services of the projects the caller can see (one project: `project`, a slug).
    async fn services(&self, ctx: &Context<'_>, project: Option<String>) -> ApiResult<Vec<ServiceObj>> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let visible: Vec<i64> = db::projects_for_user(pool, user.id)
            .await?
            .into_iter()
            .filter(|(p, _)| project.as_ref().is_none_or(|slug| &p.slug == slug))
            .map(|(p, _)| p.id)
            .collect();
        Ok(store::list(pool, Some(&visible)).await?.into_iter().map(ServiceObj).collect())
    }

    /// The work of a project the caller can see, of every type: its jobs and workspaces that
    /// have not ended (newest first) and its live services.
    async fn workloads(&self, ctx: &Context<'_>, project: String) -> ApiResult<Vec<Workload>> {
        let pool = pool(ctx)?;
        let p = db::get_project_by_slug(pool, &project).await.map_err(|_| ApiError::NotFound("project"))?;
        authorize(ctx, p.id, Role::Viewer).await?;
        let mut out: Vec<Workload> = Vec::new();
        for job in store::live_jobs_of_project(pool, p.id).await? {
            out.push(Workload::Job(db::get_job(pool, job).await?.into()));
        }
        out.extend(store::list(pool, Some(&[p.id])).await?.into_iter().map(|s| Workload::Service(ServiceObj(s))));
        Ok(out)
    }

    /// One live service by project slug and name.
    async fn service(&self, ctx: &Context<'_>, project: String, name: String) -> ApiResult<ServiceObj> {
        Ok(ServiceObj(service_by_name(ctx, &project, &name, Role::Viewer).await?.0))
    }
}

#[derive(Default)]
pub struct ServiceMutation;

#[Object]
impl ServiceMutation {
    /// Member: creates the service, or (its owner or a project admin) updates it. A changed
    /// container spec (image, command, env, resources, port, readiness, labels, placement) is a
    /// new revision, rolled out within `rollout`'s bounds.
    async fn apply_service(&self, ctx: &Context<'_>, input: ServiceInput) -> ApiResult<ApplyServicePayload> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let job_input = replica_job_input(&input);
        let queue = job_input::target_queue(ctx, &job_input).await?;
        let at = Resolved {
            project_id: queue.project_id,
            queue_id: queue.id,
            queue_name: &queue.name,
            service: queue.class_of_service(),
            submitted_by: user.id,
            submitted_by_subject: &user.subject,
        };
        let (validated, mut errs) = match job_input::validate(&job_input, &at, 0) {
            Ok(job) => (Some(job), vec![]),
            Err(ApiError::Validation(errs)) => (
                None,
                errs.into_iter().map(|e| FieldError { field: service_field(e.field), message: e.message }).collect(),
            ),
            Err(other) => return Err(other),
        };
        let settings = validate_settings(&input, queue.id);
        if let Err(more) = &settings {
            errs.extend(more.iter().cloned());
        }
        if !errs.is_empty() {
            return Err(ApiError::Validation(errs));
        }
        let (settings, readiness, port) = settings.map_err(ApiError::Validation)?;
        let Some(mut job) = validated else { return Err(ApiError::internal(&"validated without errors")) };
        job_input::check_tenant_rights(pool, queue.project_id, &job.priority_class, "priority").await?;
        let replica = ServiceReplicaSpec { name: input.name.clone(), revision: 0, port, readiness };
        if let Some(o) = job.spec.as_object_mut() {
            o.insert("service".into(), serde_json::to_value(&replica).map_err(|e| ApiError::internal(&e))?);
        }
        let template = ReplicaTemplate::of(&job);
        if let Some(existing) = store::by_name(pool, queue.project_id, &input.name).await? {
            let (_, role) = authorize(ctx, queue.project_id, Role::Member).await?;
            if role < Role::ProjectAdmin && existing.owner_id != user.id {
                return Err(ApiError::Forbidden);
            }
        }
        let mut tx = pool.begin().await.map_err(DbError::from)?;
        let (service, applied) =
            store::apply(&mut tx, queue.project_id, &input.name, user.id, &settings, &template).await?;
        tx.commit().await.map_err(DbError::from)?;
        Ok(ApplyServicePayload { service: ServiceObj(service), applied: applied.into() })
    }

    /// Its owner or a project admin: sets the replica bounds and, optionally, the count to run
    /// now (with autoscaling, the rule moves it again within the bounds).
    async fn scale_service(
        &self,
        ctx: &Context<'_>,
        project: String,
        name: String,
        replicas: Option<i32>,
        min_replicas: Option<i32>,
        max_replicas: Option<i32>,
    ) -> ApiResult<ServiceObj> {
        let service = own_service(ctx, &project, &name).await?;
        let count = |field: &str, v: Option<i32>, current: i32| -> ApiResult<u32> {
            let v = v.unwrap_or(current);
            replica_count(v).ok_or_else(|| ApiError::field(field, format!("must be 0 to {MAX_SERVICE_REPLICAS}")))
        };
        let min = count("minReplicas", min_replicas, service.min_replicas)?;
        let max = count("maxReplicas", max_replicas, service.max_replicas)?;
        if max < 1 || min > max {
            return Err(ApiError::field("maxReplicas", format!("must be at least 1 and at least minReplicas ({min})")));
        }
        let to = replicas.map(|r| count("replicas", Some(r), 0)).transpose()?;
        if to.is_some_and(|t| t < min || t > max) {
            return Err(ApiError::field(
                "replicas",
                format!("must be within minReplicas and maxReplicas ({min} to {max})"),
            ));
        }
        let actor = caller(ctx)?.actor();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(DbError::from)?;
        let service = store::set_bounds(&mut tx, &service, min, max, to, &format!("scaled by {actor}")).await?;
        tx.commit().await.map_err(DbError::from)?;
        Ok(ServiceObj(service))
    }

    /// Its owner or a project admin: the service's current request rate, which a
    /// `REQUEST_RATE` autoscaling rule reads (a metrics adapter's report, or a synthetic load
    /// in the sim); it stands until set again.
    async fn set_service_load(
        &self,
        ctx: &Context<'_>,
        project: String,
        name: String,
        requests_per_second: f64,
    ) -> ApiResult<ServiceObj> {
        if !(requests_per_second.is_finite() && (0.0..=1e9).contains(&requests_per_second)) {
            return Err(ApiError::field("requestsPerSecond", "a rate from 0 to 1e9"));
        }
        let service = own_service(ctx, &project, &name).await?;
        let pool = pool(ctx)?;
        store::set_load(pool, service.id, requests_per_second).await?;
        Ok(ServiceObj(store::get(pool, service.id).await?.ok_or(ApiError::NotFound("service"))?))
    }

    /// Its owner or a project admin: stops every replica; the name is free again.
    async fn delete_service(&self, ctx: &Context<'_>, project: String, name: String) -> ApiResult<ServiceObj> {
        let service = own_service(ctx, &project, &name).await?;
        let actor = caller(ctx)?.actor();
        let pool = pool(ctx)?;
        let cause = format!("service {} deleted by {actor}", service.name);
        let mut tx = pool.begin().await.map_err(DbError::from)?;
        store::delete(&mut tx, &service, db::Cause { cause: &cause, actor: &actor }).await?;
        tx.commit().await.map_err(DbError::from)?;
        Ok(ServiceObj(store::get(pool, service.id).await?.ok_or(ApiError::NotFound("service"))?))
    }
}

/// An inference service.
pub struct ServiceObj(pub Service);

/// What every kind of work shares: batch jobs and workspaces (`Job`, told apart by
/// `workloadType`) and inference services (`Service`).
// Clippy reads the repeated `ty = "String"` of the fields as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(Interface)]
#[graphql(
    field(name = "id", method = "workload_id", ty = "ID"),
    field(name = "name", method = "workload_name", ty = "String"),
    field(name = "workloadType", method = "workload_kind", ty = "WorkloadTypeName"),
    field(name = "projectSlug", method = "workload_project_slug", ty = "String"),
    field(name = "queueName", method = "workload_queue_name", ty = "String"),
    field(name = "ownerSubject", method = "workload_owner_subject", ty = "String"),
    field(
        name = "phase",
        method = "workload_phase",
        ty = "String",
        desc = "A job's state or a service's state, by name."
    ),
    field(name = "createdAt", method = "workload_created_at", ty = "DateTime<Utc>"),
    field(
        name = "timeline",
        method = "workload_timeline",
        ty = "Vec<WorkloadEventObj>",
        desc = "What happened to it, oldest first: the latest `limit` entries (default 100, up to 1000).",
        arg(name = "limit", ty = "i32", default = 100)
    ),
    field(
        name = "cost",
        method = "workload_cost",
        ty = "Option<WorkloadCostObj>",
        desc = "What its GPUs have cost until now, priced as `usage` prices them; null, with a CONFLICT error, while a GPU model it ran on has no price."
    )
)]
pub enum Workload {
    Job(JobObj),
    Service(ServiceObj),
}

/// Its autoscaling rule.
#[derive(SimpleObject)]
pub struct AutoscalingObj {
    pub metric: ScalingMetricName,
    pub target: f64,
    pub scale_down_delay_seconds: i64,
}

/// Its running replicas' GPU utilization.
#[derive(SimpleObject)]
#[graphql(name = "ServiceUtilization")]
pub struct ServiceUtilizationObj {
    /// Their mean GPU busy percentage.
    pub busy_pct: f64,
    /// How many replicas were measured.
    pub replicas: i32,
}

/// One change of the desired replica count.
#[derive(SimpleObject)]
pub struct ScalingEventObj {
    pub at: DateTime<Utc>,
    pub from_replicas: i32,
    pub to_replicas: i32,
    /// What autoscaling measured (requests per second or GPU busy %); absent for a manual scale.
    pub signal: Option<f64>,
    pub reason: String,
}

/// One revision of the replica spec.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct ServiceRevisionObj {
    pub revision: i32,
    pub created_at: DateTime<Utc>,
    #[graphql(skip)]
    pub template: serde_json::Value,
}

#[ComplexObject]
impl ServiceRevisionObj {
    /// The image its replicas run.
    async fn image(&self) -> Option<String> {
        self.template.pointer("/spec/tasks/0/image").and_then(|v| v.as_str()).map(str::to_owned)
    }
}

/// How many live replicas run in one cluster.
#[derive(SimpleObject)]
pub struct ClusterReplicasObj {
    /// The cluster's id; absent: not placed yet.
    pub cluster_id: Option<String>,
    pub replicas: i32,
    pub ready: i32,
    /// The service's address there, as its running replicas reported it.
    pub endpoint: Option<String>,
}

impl ServiceObj {
    async fn live(&self, ctx: &Context<'_>) -> ApiResult<Vec<db::Job>> {
        let pool = pool(ctx)?;
        let mut jobs = Vec::new();
        for r in store::live_replicas(pool, self.0.id).await? {
            jobs.push(db::get_job(pool, r.job_id).await?);
        }
        Ok(jobs)
    }
}

/// What the `Workload` interface calls (one method per field, see `JobObj`'s).
impl ServiceObj {
    pub(crate) async fn workload_id(&self, _: &Context<'_>) -> async_graphql::Result<ID> {
        Ok(ID(self.0.id.to_string()))
    }
    pub(crate) async fn workload_name(&self, _: &Context<'_>) -> async_graphql::Result<String> {
        Ok(self.0.name.clone())
    }
    pub(crate) async fn workload_kind(&self, _: &Context<'_>) -> async_graphql::Result<WorkloadTypeName> {
        Ok(WorkloadTypeName::Inference)
    }
    pub(crate) async fn workload_project_slug(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(db::get_project(pool(ctx)?, self.0.project_id).await.map_err(ApiError::from)?.slug)
    }
    pub(crate) async fn workload_queue_name(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(db::get_queue(pool(ctx)?, self.0.queue_id).await.map_err(ApiError::from)?.name)
    }
    pub(crate) async fn workload_owner_subject(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(db::get_user(pool(ctx)?, self.0.owner_id).await.map_err(ApiError::from)?.subject)
    }
    pub(crate) async fn workload_phase(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(self.service_state(ctx).await?.api_name())
    }
    pub(crate) async fn workload_created_at(&self, _: &Context<'_>) -> async_graphql::Result<DateTime<Utc>> {
        Ok(self.0.created_at)
    }
    pub(crate) async fn workload_timeline(
        &self,
        ctx: &Context<'_>,
        limit: i32,
    ) -> async_graphql::Result<Vec<WorkloadEventObj>> {
        let pool = pool(ctx)?;
        let owner = self.workload_owner_subject(ctx).await?;
        let revisions = store::revisions(pool, self.0.id).await.map_err(ApiError::from)?;
        let scaling =
            store::scaling_events(pool, self.0.id, i64::from(limit.clamp(1, 1000))).await.map_err(ApiError::from)?;
        Ok(workloads::latest(workloads::service_timeline(&self.0, &owner, &revisions, &scaling), limit))
    }
    pub(crate) async fn workload_cost(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<WorkloadCostObj>> {
        let pool = pool(ctx)?;
        let jobs = store::replica_job_ids(pool, self.0.id).await.map_err(ApiError::from)?;
        Ok(Some(workloads::cost_of_jobs(pool, jobs).await?))
    }

    async fn service_state(&self, ctx: &Context<'_>) -> ApiResult<ServiceState> {
        if self.0.deleted_at.is_some() {
            return Ok(ServiceState::Deleted);
        }
        let replicas: Vec<ReplicaView> =
            store::live_replicas(pool(ctx)?, self.0.id).await?.iter().map(store::ReplicaJob::view).collect();
        Ok(rules::service_state(&ReplicaSet {
            revision: store::to_u32(self.0.revision),
            desired: store::to_u32(self.0.desired_replicas),
            min: store::to_u32(self.0.min_replicas),
            rollout: self.0.rollout(),
            replicas: &replicas,
            hold_starts: false,
        }))
    }
}

#[Object(name = "Service")]
impl ServiceObj {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// Always `INFERENCE` (the `Workload` interface's).
    async fn workload_type(&self) -> WorkloadTypeName {
        WorkloadTypeName::Inference
    }
    /// The `Workload` interface's name of `project`.
    async fn project_slug(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_project_slug(ctx).await
    }
    /// The `Workload` interface's name of `queue`.
    async fn queue_name(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_queue_name(ctx).await
    }
    /// The `Workload` interface's name of `owner`.
    async fn owner_subject(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_owner_subject(ctx).await
    }
    /// Its state as a name (`READY`, ...): the `Workload` interface's phase.
    async fn phase(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_phase(ctx).await
    }
    /// The project's slug.
    async fn project(&self, ctx: &Context<'_>) -> ApiResult<String> {
        Ok(db::get_project(pool(ctx)?, self.0.project_id).await?.slug)
    }
    /// The queue's name.
    async fn queue(&self, ctx: &Context<'_>) -> ApiResult<String> {
        Ok(db::get_queue(pool(ctx)?, self.0.queue_id).await?.name)
    }
    /// Who created it (subject).
    async fn owner(&self, ctx: &Context<'_>) -> ApiResult<String> {
        Ok(db::get_user(pool(ctx)?, self.0.owner_id).await?.subject)
    }
    async fn state(&self, ctx: &Context<'_>) -> ApiResult<ServiceStateName> {
        Ok(self.service_state(ctx).await?.into())
    }
    /// Why it is short of replicas, when known (a full quota).
    async fn condition(&self) -> Option<&str> {
        self.0.condition.as_deref()
    }
    /// The revision new replicas run.
    async fn revision(&self) -> i32 {
        self.0.revision
    }
    async fn min_replicas(&self) -> i32 {
        self.0.min_replicas
    }
    async fn max_replicas(&self) -> i32 {
        self.0.max_replicas
    }
    /// The count it runs at now.
    async fn desired_replicas(&self) -> i32 {
        self.0.desired_replicas
    }
    /// Live replicas that serve (running).
    async fn ready_replicas(&self, ctx: &Context<'_>) -> ApiResult<i32> {
        let live = store::live_replicas(pool(ctx)?, self.0.id).await?;
        Ok(live.iter().filter(|r| r.state() == Some(JobState::Running)).count() as i32)
    }
    /// The mean GPU busy percentage of its running replicas, from the profiler's samples of
    /// the last minute (what a GPU_UTILIZATION rule scales on); null while none is measured.
    async fn gpu_utilization(&self, ctx: &Context<'_>) -> ApiResult<Option<ServiceUtilizationObj>> {
        let (mean, replicas) = store::replica_utilization(pool(ctx)?, self.0.id).await?;
        Ok((replicas > 0).then_some(ServiceUtilizationObj { busy_pct: mean, replicas: replicas as i32 }))
    }
    /// The port a replica serves on, and its readiness path.
    async fn port(&self, ctx: &Context<'_>) -> ApiResult<i32> {
        let t = store::template(pool(ctx)?, self.0.id, self.0.revision).await?;
        Ok(t.spec.pointer("/service/port").and_then(|v| v.as_i64()).unwrap_or(0) as i32)
    }
    async fn readiness_path(&self, ctx: &Context<'_>) -> ApiResult<Option<String>> {
        let t = store::template(pool(ctx)?, self.0.id, self.0.revision).await?;
        Ok(t.spec.pointer("/service/readiness/path").and_then(|v| v.as_str()).map(str::to_owned))
    }
    /// The image of the current revision.
    async fn image(&self, ctx: &Context<'_>) -> ApiResult<Option<String>> {
        let t = store::template(pool(ctx)?, self.0.id, self.0.revision).await?;
        Ok(t.spec.pointer("/tasks/0/image").and_then(|v| v.as_str()).map(str::to_owned))
    }
    async fn autoscaling(&self) -> Option<AutoscalingObj> {
        self.0.autoscaling().map(|a| AutoscalingObj {
            metric: a.metric.into(),
            target: a.target,
            scale_down_delay_seconds: a.scale_down_delay.num_seconds(),
        })
    }
    async fn max_surge(&self) -> i32 {
        self.0.max_surge
    }
    async fn max_unavailable(&self) -> i32 {
        self.0.max_unavailable
    }
    /// The request rate last set or reported (requests per second), and when.
    async fn requests_per_second(&self) -> Option<f64> {
        self.0.load_rps
    }
    async fn load_reported_at(&self) -> Option<DateTime<Utc>> {
        self.0.load_at
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
    /// Its live replicas (jobs of one replica each), oldest first.
    async fn replicas(&self, ctx: &Context<'_>) -> ApiResult<Vec<JobObj>> {
        Ok(self.live(ctx).await?.into_iter().map(JobObj::from).collect())
    }
    /// Live replicas per cluster (a service may be split over several).
    async fn replicas_by_cluster(&self, ctx: &Context<'_>) -> ApiResult<Vec<ClusterReplicasObj>> {
        let mut by: std::collections::BTreeMap<Option<String>, (i32, i32)> = Default::default();
        for job in self.live(ctx).await? {
            let entry = by.entry(job.cluster_id.clone()).or_default();
            entry.0 += 1;
            if job.state == JobState::Running {
                entry.1 += 1;
            }
        }
        let endpoints = store::endpoints_by_cluster(pool(ctx)?, self.0.id).await?;
        Ok(by
            .into_iter()
            .map(|(cluster_id, (replicas, ready))| {
                let endpoint = endpoints.iter().find(|(c, _)| Some(c) == cluster_id.as_ref()).map(|(_, e)| e.clone());
                ClusterReplicasObj { cluster_id, replicas, ready, endpoint }
            })
            .collect())
    }
    /// Changes of the desired count, newest first (at most `limit`, default 50, up to 500).
    async fn scaling_history(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 50)] limit: i32,
    ) -> ApiResult<Vec<ScalingEventObj>> {
        let limit = i64::from(limit.clamp(1, 500));
        Ok(store::scaling_events(pool(ctx)?, self.0.id, limit)
            .await?
            .into_iter()
            .map(|e| ScalingEventObj {
                at: e.at,
                from_replicas: e.from_replicas,
                to_replicas: e.to_replicas,
                signal: e.signal,
                reason: e.reason,
            })
            .collect())
    }
    /// The `Workload` interface's timeline: creation, revisions, scaling and deletion, the
    /// latest `limit` (default 100, up to 1000), oldest first.
    async fn timeline(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] limit: i32,
    ) -> async_graphql::Result<Vec<WorkloadEventObj>> {
        self.workload_timeline(ctx, limit).await
    }

    /// What its replicas' GPUs have cost since it was created, every replica it ever ran
    /// (the `Workload` interface's).
    async fn cost(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<WorkloadCostObj>> {
        self.workload_cost(ctx).await
    }

    /// Its revisions, newest first.
    async fn revisions(&self, ctx: &Context<'_>) -> ApiResult<Vec<ServiceRevisionObj>> {
        Ok(store::revisions(pool(ctx)?, self.0.id)
            .await?
            .into_iter()
            .map(|r| ServiceRevisionObj { revision: r.revision, created_at: r.created_at, template: r.template })
            .collect())
    }
}
