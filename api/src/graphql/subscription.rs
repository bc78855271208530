//! Subscriptions (served over the websocket at `/graphql/ws`): job events by project or by
//! job, and cluster capacity/health changes.
//!
//! Each stream reads the process's change feed ([`crate::notify::Notifier`]), drops what
//! its filter does not want, reloads the changed row and authorizes it for this subscriber:
//! a project's events are checked against the subscriber's role in that project on every
//! event, so a revoked membership ends the stream with NOT_FOUND and another tenant's events
//! are never sent. Cluster status is platform infrastructure, not tenant data: any signed-in
//! user may watch it (like the capacity the portal shows).
//!
//! Missed notifications (a subscriber more than the feed's capacity behind, or the listener
//! reconnecting) are reported as one error item with code CONFLICT and the stream goes on;
//! the client re-reads what it shows (`job(id) { events }`) to catch up.

use async_graphql::futures_util::Stream;
use async_graphql::{Context, Json, SimpleObject, Subscription, ID};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio::sync::broadcast::error::RecvError;

use super::types::JobEventObj;
use super::{authorize, caller, parse_id, pool};
use crate::db;
use crate::domain::Role;
use crate::error::{ApiError, ApiResult};
use crate::notify::{self, Change, Notifier};

/// A cluster's observed state, sent when its capacity, health or cordon changes.
#[derive(SimpleObject)]
pub struct ClusterStatus {
    pub id: String,
    pub display_name: Option<String>,
    /// `unknown`, `healthy`, `degraded` or `unreachable`.
    pub health: String,
    pub cordoned: bool,
    pub last_heartbeat: Option<DateTime<Utc>>,
    /// The agent's last capacity summary (grus-protocol CapacitySummary); `null`: none yet.
    pub capacity: Option<Json<serde_json::Value>>,
}

impl From<db::Cluster> for ClusterStatus {
    fn from(c: db::Cluster) -> Self {
        ClusterStatus {
            id: c.id,
            display_name: c.display_name,
            health: c.health,
            cordoned: c.cordoned,
            last_heartbeat: c.last_heartbeat,
            capacity: c.capacity.map(Json),
        }
    }
}

fn notifier(ctx: &Context<'_>) -> ApiResult<Notifier> {
    ctx.data::<Notifier>().cloned().map_err(|e| ApiError::internal(&e.message))
}

fn missed(n: Option<u64>) -> ApiError {
    let what = n.map_or_else(|| "some notifications".to_owned(), |n| format!("{n} notifications"));
    ApiError::Conflict(format!("this subscription missed {what}; re-read to catch up"))
}

/// The events of `project_id`, or of one of its jobs, for the subscriber `user_id`.
fn job_event_stream(
    pool: PgPool,
    feed: Notifier,
    user_id: i64,
    project_id: i64,
    job_id: Option<i64>,
) -> impl Stream<Item = ApiResult<JobEventObj>> {
    let mut rx = feed.subscribe();
    async_stream::stream! {
        loop {
            match rx.recv().await {
                Ok(Change::JobEvent { id, job_id: j, project_id: p })
                    if p == project_id && job_id.is_none_or(|want| want == j) =>
                {
                    // Re-checked per event: a membership revoked mid-stream ends the stream.
                    match db::role_in_project(&pool, user_id, project_id).await {
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            yield Err(ApiError::NotFound("project"));
                            break;
                        }
                        Err(e) => {
                            yield Err(e.into());
                            continue;
                        }
                    }
                    match notify::job_event(&pool, id).await {
                        Ok(event) => yield Ok(JobEventObj::from(event)),
                        Err(e) => yield Err(e.into()),
                    }
                }
                Ok(Change::Missed) => yield Err(missed(None)),
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => yield Err(missed(Some(n))),
                Err(RecvError::Closed) => break,
            }
        }
    }
}

/// Subscriptions of the core areas; other areas add their own roots to [`super::Subscription`].
#[derive(Default)]
pub struct CoreSubscription;

#[Subscription]
impl CoreSubscription {
    /// Every job event of one project as it is recorded (viewer role or above).
    async fn project_job_events(
        &self,
        ctx: &Context<'_>,
        project_id: ID,
    ) -> Result<impl Stream<Item = ApiResult<JobEventObj>>, ApiError> {
        let user_id = caller(ctx)?.user.id;
        let project_id = parse_id(&project_id, "project")?;
        authorize(ctx, project_id, Role::Viewer).await?;
        Ok(job_event_stream(pool(ctx)?.clone(), notifier(ctx)?, user_id, project_id, None))
    }

    /// The events of one job as they are recorded (viewer role or above in its project).
    async fn job_events(
        &self,
        ctx: &Context<'_>,
        job_id: ID,
    ) -> Result<impl Stream<Item = ApiResult<JobEventObj>>, ApiError> {
        let user_id = caller(ctx)?.user.id;
        let job_id = parse_id(&job_id, "job")?;
        let job = db::get_job(pool(ctx)?, job_id).await?;
        // No role in the job's project: the job does not exist for this caller.
        authorize(ctx, job.project_id, Role::Viewer).await.map_err(|e| match e {
            ApiError::NotFound(_) => ApiError::NotFound("job"),
            other => other,
        })?;
        Ok(job_event_stream(pool(ctx)?.clone(), notifier(ctx)?, user_id, job.project_id, Some(job_id)))
    }

    /// Status of every cluster (or of `clusterId`) each time its capacity, health or cordon
    /// changes. Any signed-in user.
    async fn cluster_updates(
        &self,
        ctx: &Context<'_>,
        cluster_id: Option<String>,
    ) -> Result<impl Stream<Item = ApiResult<ClusterStatus>>, ApiError> {
        caller(ctx)?;
        let pool = pool(ctx)?.clone();
        if let Some(id) = &cluster_id {
            db::get_cluster(&pool, id).await?;
        }
        let mut rx = notifier(ctx)?.subscribe();
        Ok(async_stream::stream! {
            loop {
                match rx.recv().await {
                    Ok(Change::Cluster { id }) if cluster_id.as_ref().is_none_or(|want| *want == id) => {
                        match db::get_cluster(&pool, &id).await {
                            Ok(c) => yield Ok(ClusterStatus::from(c)),
                            Err(e) => yield Err(e.into()),
                        }
                    }
                    Ok(Change::Missed) => yield Err(missed(None)),
                    Ok(_) => {}
                    Err(RecvError::Lagged(n)) => yield Err(missed(Some(n))),
                    Err(RecvError::Closed) => break,
                }
            }
        })
    }
}
