//! Inference services (migration 0027): the service rows with their settings, revisions (the
//! replica template of each), the scaling history, the reported load, and the replicas (jobs
//! with `service_id`). The rules are `domain::service`; the dispatcher's service step and the
//! GraphQL mutations call these.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgExecutor};

use crate::db::jobs::{NewJob, NewTask};
use crate::db::{transition_job, Cause, DbError, DbResult};
use crate::domain::service::{Autoscaling, ReplicaView, Rollout, ScalingMetric, CRASH_LOOP_WINDOW_S};
use crate::domain::JobState;

/// A service as stored.
#[derive(Clone, Debug, FromRow)]
pub struct Service {
    pub id: i64,
    pub project_id: i64,
    pub queue_id: i64,
    pub name: String,
    pub owner_id: i64,
    pub revision: i32,
    pub min_replicas: i32,
    pub max_replicas: i32,
    pub desired_replicas: i32,
    pub scaling_metric: Option<String>,
    pub scaling_target: Option<f64>,
    pub scale_down_delay_s: i32,
    pub max_surge: i32,
    pub max_unavailable: i32,
    pub load_rps: Option<f64>,
    pub load_at: Option<DateTime<Utc>>,
    pub condition: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub deleted_at: Option<DateTime<Utc>>,
}

impl Service {
    pub fn autoscaling(&self) -> Option<Autoscaling> {
        let metric = ScalingMetric::parse(self.scaling_metric.as_deref()?)?;
        Some(Autoscaling {
            metric,
            target: self.scaling_target?,
            scale_down_delay: chrono::Duration::seconds(i64::from(self.scale_down_delay_s)),
        })
    }

    pub fn rollout(&self) -> Rollout {
        Rollout { max_surge: to_u32(self.max_surge), max_unavailable: to_u32(self.max_unavailable) }
    }
}

/// A stored count (never negative: the schema's CHECKs) as the rules take it.
pub fn to_u32(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// What a replica is created from: the validated job of the revision (its `spec` without the
/// submission time, which each replica gets when it is started).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaTemplate {
    pub priority: i32,
    pub priority_class: String,
    pub spec: Value,
    pub pools: Vec<String>,
}

impl ReplicaTemplate {
    /// The template of a validated job: what tells revisions apart (who applied it and when
    /// does not).
    pub fn of(job: &NewJob) -> ReplicaTemplate {
        let mut spec = job.spec.clone();
        if let Some(o) = spec.as_object_mut() {
            o.remove("submitted_at_ms");
            o.remove("submitted_by");
        }
        ReplicaTemplate {
            priority: job.priority,
            priority_class: job.priority_class.clone(),
            spec,
            pools: job.pools.clone(),
        }
    }

    /// One replica to admit: the template at `now`, not preemptible when `protected`.
    pub fn replica(
        &self,
        service: &Service,
        owner_subject: &str,
        protected: bool,
        now_ms: i64,
    ) -> Result<NewJob, DbError> {
        let mut spec = self.spec.clone();
        let o = spec.as_object_mut().ok_or_else(|| DbError::validation("a service template is an object"))?;
        o.insert("submitted_at_ms".into(), now_ms.into());
        o.insert("submitted_by".into(), owner_subject.into());
        o.insert("preemptible".into(), (!protected).into());
        if let Some(replica) = o.get_mut("service").and_then(Value::as_object_mut) {
            replica.insert("revision".into(), service.revision.into());
        }
        let tasks: Vec<grus_protocol::wire::TaskSpec> =
            serde_json::from_value(o.get("tasks").cloned().unwrap_or_default())
                .map_err(|e| DbError::validation(format!("a service template's tasks do not read: {e}")))?;
        let tasks = tasks
            .into_iter()
            .map(|t| {
                let spec = serde_json::to_value(&t).map_err(|e| DbError::validation(e.to_string()))?;
                Ok(NewTask { name: t.name, replicas: t.replicas, resources: t.resources, spec })
            })
            .collect::<DbResult<Vec<_>>>()?;
        Ok(NewJob {
            project_id: service.project_id,
            queue_id: service.queue_id,
            name: service.name.clone(),
            priority: self.priority,
            priority_class: self.priority_class.clone(),
            preemptible: !protected,
            spec,
            tasks,
            pools: self.pools.clone(),
            submitted_by: service.owner_id,
        })
    }
}

/// The settings an apply writes.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceSettings {
    pub queue_id: i64,
    pub min_replicas: u32,
    pub max_replicas: u32,
    /// The count to run now; absent: the current one (or the minimum for a new service),
    /// within the bounds.
    pub replicas: Option<u32>,
    pub autoscaling: Option<Autoscaling>,
    pub rollout: Rollout,
}

/// What an apply did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    Created,
    /// The replica template changed: a new revision, rolled out by the service step.
    NewRevision,
    /// Only settings (bounds, autoscaling, rollout) changed, or nothing.
    Updated,
}

const COLUMNS: &str = "id, project_id, queue_id, name, owner_id, revision, min_replicas, max_replicas, desired_replicas,
     scaling_metric, scaling_target, scale_down_delay_s, max_surge, max_unavailable, load_rps, load_at, condition, created_at,
     updated_at, deleted_at";

fn i32_of(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// Creates the service `name` of the project, or updates the live one: a changed template is
/// a new revision. Run in a transaction.
pub async fn apply(
    conn: &mut PgConnection,
    project_id: i64,
    name: &str,
    owner_id: i64,
    settings: &ServiceSettings,
    template: &ReplicaTemplate,
) -> DbResult<(Service, Applied)> {
    let template_json = serde_json::to_value(template).map_err(|e| DbError::validation(e.to_string()))?;
    let existing: Option<Service> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM services WHERE project_id = $1 AND name = $2 AND deleted_at IS NULL FOR UPDATE"
    ))
    .bind(project_id)
    .bind(name)
    .fetch_optional(&mut *conn)
    .await?;
    let (min, max) = (settings.min_replicas, settings.max_replicas);
    let (metric, target, delay_s) = match &settings.autoscaling {
        Some(a) => (Some(a.metric.as_str()), Some(a.target), a.scale_down_delay.num_seconds()),
        None => (None, None, 300),
    };
    let delay_s = i32::try_from(delay_s).unwrap_or(i32::MAX);
    let Some(old) = existing else {
        let desired = settings.replicas.unwrap_or(min.max(1).min(max)).clamp(min, max);
        let service: Service = sqlx::query_as(&format!(
            "INSERT INTO services (project_id, queue_id, name, owner_id, min_replicas, max_replicas, desired_replicas,
                                   scaling_metric, scaling_target, scale_down_delay_s, max_surge, max_unavailable)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING {COLUMNS}"
        ))
        .bind(project_id)
        .bind(settings.queue_id)
        .bind(name)
        .bind(owner_id)
        .bind(i32_of(min))
        .bind(i32_of(max))
        .bind(i32_of(desired))
        .bind(metric)
        .bind(target)
        .bind(delay_s)
        .bind(i32_of(settings.rollout.max_surge))
        .bind(i32_of(settings.rollout.max_unavailable))
        .fetch_one(&mut *conn)
        .await?;
        insert_revision(conn, service.id, 1, &template_json, owner_id).await?;
        note_scaling(conn, service.id, 0, desired, None, "created").await?;
        return Ok((service, Applied::Created));
    };
    let (current,): (Value,) =
        sqlx::query_as("SELECT template FROM service_revisions WHERE service_id = $1 AND revision = $2")
            .bind(old.id)
            .bind(old.revision)
            .fetch_one(&mut *conn)
            .await?;
    let changed = current != template_json;
    let revision = if changed { old.revision + 1 } else { old.revision };
    if changed {
        insert_revision(conn, old.id, revision, &template_json, owner_id).await?;
    }
    let from = to_u32(old.desired_replicas);
    let desired = settings.replicas.unwrap_or(from).clamp(min, max);
    let service: Service = sqlx::query_as(&format!(
        "UPDATE services SET queue_id = $2, revision = $3, min_replicas = $4, max_replicas = $5, desired_replicas = $6,
                scaling_metric = $7, scaling_target = $8, scale_down_delay_s = $9, max_surge = $10,
                max_unavailable = $11, updated_at = now()
         WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(old.id)
    .bind(settings.queue_id)
    .bind(revision)
    .bind(i32_of(min))
    .bind(i32_of(max))
    .bind(i32_of(desired))
    .bind(metric)
    .bind(target)
    .bind(delay_s)
    .bind(i32_of(settings.rollout.max_surge))
    .bind(i32_of(settings.rollout.max_unavailable))
    .fetch_one(&mut *conn)
    .await?;
    if desired != from {
        note_scaling(conn, service.id, from, desired, None, "applied").await?;
    }
    Ok((service, if changed { Applied::NewRevision } else { Applied::Updated }))
}

async fn insert_revision(
    conn: &mut PgConnection,
    service_id: i64,
    revision: i32,
    template: &Value,
    by: i64,
) -> DbResult<()> {
    sqlx::query("INSERT INTO service_revisions (service_id, revision, template, created_by) VALUES ($1, $2, $3, $4)")
        .bind(service_id)
        .bind(revision)
        .bind(template)
        .bind(by)
        .execute(conn)
        .await?;
    Ok(())
}

async fn note_scaling(
    conn: &mut PgConnection,
    service_id: i64,
    from: u32,
    to: u32,
    signal: Option<f64>,
    reason: &str,
) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO service_scaling_events (service_id, from_replicas, to_replicas, signal, reason)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(service_id)
    .bind(i32_of(from))
    .bind(i32_of(to))
    .bind(signal)
    .bind(reason)
    .execute(conn)
    .await?;
    Ok(())
}

/// Sets the desired count (autoscaling) and records why; kept within the bounds as they are
/// now (a scale may have moved them since the service was read).
pub async fn set_desired(
    conn: &mut PgConnection,
    service: &Service,
    to: u32,
    signal: Option<f64>,
    reason: &str,
) -> DbResult<Service> {
    update_counts(conn, service, None, to, signal, reason).await
}

/// Sets the bounds and, optionally, the count (`scaleService`); the count is kept within them.
pub async fn set_bounds(
    conn: &mut PgConnection,
    service: &Service,
    min: u32,
    max: u32,
    replicas: Option<u32>,
    reason: &str,
) -> DbResult<Service> {
    let to = replicas.unwrap_or(to_u32(service.desired_replicas)).clamp(min, max);
    update_counts(conn, service, Some((min, max)), to, None, reason).await
}

/// Writes the counts (new bounds when given) and notes a change of the desired one.
async fn update_counts(
    conn: &mut PgConnection,
    service: &Service,
    bounds: Option<(u32, u32)>,
    to: u32,
    signal: Option<f64>,
    reason: &str,
) -> DbResult<Service> {
    let from = to_u32(service.desired_replicas);
    let updated: Service = sqlx::query_as(&format!(
        "UPDATE services SET min_replicas = COALESCE($2, min_replicas), max_replicas = COALESCE($3, max_replicas),
                desired_replicas = LEAST(GREATEST($4, COALESCE($2, min_replicas)), COALESCE($3, max_replicas)),
                updated_at = now()
         WHERE id = $1 AND deleted_at IS NULL RETURNING {COLUMNS}"
    ))
    .bind(service.id)
    .bind(bounds.map(|(min, _)| i32_of(min)))
    .bind(bounds.map(|(_, max)| i32_of(max)))
    .bind(i32_of(to))
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(DbError::NotFound("service"))?;
    let to = to_u32(updated.desired_replicas);
    if from != to {
        note_scaling(conn, service.id, from, to, signal, reason).await?;
    }
    Ok(updated)
}

/// Records the service's request rate now.
pub async fn set_load(db: impl PgExecutor<'_>, service_id: i64, rps: f64) -> DbResult<()> {
    sqlx::query("UPDATE services SET load_rps = $2, load_at = now() WHERE id = $1 AND deleted_at IS NULL")
        .bind(service_id)
        .bind(rps)
        .execute(db)
        .await?;
    Ok(())
}

/// The live service `name` of the project.
pub async fn by_name(db: impl PgExecutor<'_>, project_id: i64, name: &str) -> DbResult<Option<Service>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM services WHERE project_id = $1 AND name = $2 AND deleted_at IS NULL"
    ))
    .bind(project_id)
    .bind(name)
    .fetch_optional(db)
    .await?)
}

pub async fn get(db: impl PgExecutor<'_>, id: i64) -> DbResult<Option<Service>> {
    Ok(sqlx::query_as(&format!("SELECT {COLUMNS} FROM services WHERE id = $1")).bind(id).fetch_optional(db).await?)
}

/// The live services of these projects (all projects: `None`), by project and name.
pub async fn list(db: impl PgExecutor<'_>, projects: Option<&[i64]>) -> DbResult<Vec<Service>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM services WHERE deleted_at IS NULL AND ($1::bigint[] IS NULL OR project_id = ANY($1))
         ORDER BY project_id, name"
    ))
    .bind(projects)
    .fetch_all(db)
    .await?)
}

/// The template of a revision.
pub async fn template(db: impl PgExecutor<'_>, service_id: i64, revision: i32) -> DbResult<ReplicaTemplate> {
    let (t,): (Value,) =
        sqlx::query_as("SELECT template FROM service_revisions WHERE service_id = $1 AND revision = $2")
            .bind(service_id)
            .bind(revision)
            .fetch_one(db)
            .await?;
    serde_json::from_value(t).map_err(|e| DbError::validation(format!("a stored service template does not read: {e}")))
}

/// A revision as listed.
#[derive(Clone, Debug, FromRow)]
pub struct Revision {
    pub revision: i32,
    pub template: Value,
    pub created_by: i64,
    pub created_at: DateTime<Utc>,
}

pub async fn revisions(db: impl PgExecutor<'_>, service_id: i64) -> DbResult<Vec<Revision>> {
    Ok(sqlx::query_as(
        "SELECT revision, template, created_by, created_at FROM service_revisions WHERE service_id = $1
         ORDER BY revision DESC",
    )
    .bind(service_id)
    .fetch_all(db)
    .await?)
}

/// One change of the desired count.
#[derive(Clone, Debug, FromRow)]
pub struct ScalingEvent {
    pub at: DateTime<Utc>,
    pub from_replicas: i32,
    pub to_replicas: i32,
    pub signal: Option<f64>,
    pub reason: String,
}

/// The latest `limit` changes, newest first.
pub async fn scaling_events(db: impl PgExecutor<'_>, service_id: i64, limit: i64) -> DbResult<Vec<ScalingEvent>> {
    Ok(sqlx::query_as(
        "SELECT at, from_replicas, to_replicas, signal, reason FROM service_scaling_events WHERE service_id = $1
         ORDER BY at DESC, id DESC LIMIT $2",
    )
    .bind(service_id)
    .bind(limit)
    .fetch_all(db)
    .await?)
}

/// A replica as the service step sees it.
#[derive(Clone, Debug, FromRow)]
pub struct ReplicaJob {
    pub job_id: i64,
    pub revision: i32,
    pub state: String,
    pub preemptible: bool,
    pub borrowed: bool,
}

impl ReplicaJob {
    pub fn state(&self) -> Option<JobState> {
        JobState::parse(&self.state)
    }

    /// The replica as the rules see it: ready when running; protected when neither
    /// preemptible nor borrowed (borrowed work is reclaimable whatever it says).
    pub fn view(&self) -> ReplicaView {
        ReplicaView {
            job_id: self.job_id,
            revision: to_u32(self.revision),
            ready: self.state() == Some(JobState::Running),
            protected: !self.preemptible && !self.borrowed,
        }
    }
}

/// The service's replicas that have not ended.
pub async fn live_replicas(db: impl PgExecutor<'_>, service_id: i64) -> DbResult<Vec<ReplicaJob>> {
    Ok(sqlx::query_as(
        "SELECT id AS job_id, service_revision AS revision, state, preemptible, borrowed FROM jobs
         WHERE service_id = $1 AND state NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY id",
    )
    .bind(service_id)
    .fetch_all(db)
    .await?)
}

/// Replicas of the revision that failed within the crash-loop window.
pub async fn recent_failures(db: impl PgExecutor<'_>, service_id: i64, revision: i32) -> DbResult<usize> {
    let (n,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM jobs WHERE service_id = $1 AND service_revision = $2 AND state = 'failed'
           AND updated_at > now() - make_interval(secs => $3)",
    )
    .bind(service_id)
    .bind(revision)
    .bind(CRASH_LOOP_WINDOW_S as f64)
    .fetch_one(db)
    .await?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Marks an admitted job as a replica of the service's revision.
pub async fn attach_replica(conn: &mut PgConnection, job_id: i64, service_id: i64, revision: i32) -> DbResult<()> {
    sqlx::query("UPDATE jobs SET service_id = $2, service_revision = $3 WHERE id = $1")
        .bind(job_id)
        .bind(service_id)
        .bind(revision)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes the service: its live replicas are cancelled, the row stays (billing, history).
pub async fn delete(conn: &mut PgConnection, service: &Service, by: Cause<'_>) -> DbResult<()> {
    sqlx::query("UPDATE services SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL")
        .bind(service.id)
        .execute(&mut *conn)
        .await?;
    for r in live_replicas(&mut *conn, service.id).await? {
        transition_job(conn, r.job_id, JobState::Cancelled, by).await?;
    }
    Ok(())
}

/// The mean of the running replicas' latest GPU busy percentage (samples from the last
/// minute), and how many replicas it is over.
pub async fn replica_utilization(db: impl PgExecutor<'_>, service_id: i64) -> DbResult<(f64, u32)> {
    let (mean, n): (Option<f64>, i64) = sqlx::query_as(
        "SELECT avg(u.last_busy_pct)::float8, count(u.last_busy_pct) FROM jobs j
         JOIN job_utilization u ON u.job_id = j.id
         WHERE j.service_id = $1 AND j.state = 'running' AND u.updated_at > now() - interval '60 seconds'",
    )
    .bind(service_id)
    .fetch_one(db)
    .await?;
    Ok((mean.unwrap_or(0.0), u32::try_from(n).unwrap_or(0)))
}

/// Sets (or clears) why the service is short of replicas.
pub async fn set_condition(db: impl PgExecutor<'_>, service_id: i64, condition: Option<&str>) -> DbResult<()> {
    sqlx::query("UPDATE services SET condition = $2 WHERE id = $1")
        .bind(service_id)
        .bind(condition)
        .execute(db)
        .await?;
    Ok(())
}

/// The ids of every job that was ever a replica of the service (its cost counts them all).
pub async fn replica_job_ids(db: impl PgExecutor<'_>, service_id: i64) -> DbResult<Vec<i64>> {
    Ok(sqlx::query_scalar("SELECT id FROM jobs WHERE service_id = $1 ORDER BY id")
        .bind(service_id)
        .fetch_all(db)
        .await?)
}

/// The ids of a project's jobs that have not ended, newest first (at most 500).
pub async fn live_jobs_of_project(db: impl PgExecutor<'_>, project_id: i64) -> DbResult<Vec<i64>> {
    let rows: Vec<(i64,)> = sqlx::query_as(
        "SELECT id FROM jobs WHERE project_id = $1 AND state NOT IN ('succeeded', 'failed', 'cancelled')
         ORDER BY id DESC LIMIT 500",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Where a running job serves (`jobs.endpoint`), if it reported it.
pub async fn running_endpoint(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Option<String>> {
    let row: Option<(Option<String>,)> =
        sqlx::query_as("SELECT endpoint FROM jobs WHERE id = $1 AND state = 'running'")
            .bind(job_id)
            .fetch_optional(db)
            .await?;
    Ok(row.and_then(|(e,)| e))
}

/// The addresses the service's running replicas reported, per cluster.
pub async fn endpoints_by_cluster(db: impl PgExecutor<'_>, service_id: i64) -> DbResult<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT DISTINCT cluster_id, endpoint FROM jobs
         WHERE service_id = $1 AND state = 'running' AND cluster_id IS NOT NULL AND endpoint IS NOT NULL
         ORDER BY 1, 2",
    )
    .bind(service_id)
    .fetch_all(db)
    .await?)
}
