//! Scheduling in the API: `dryRunJob` (where a job would run now, and why not elsewhere,
//! without storing anything), `setJobPriority`, and the output types `WhyPending` and
//! `Dispatch` that `Job.whyPending` and `Job.dispatches` return.
//!
//! The decisions are the allocator loop's own: admission's pure `decide` on the queue's
//! current usage, and `choose_cluster` on cluster views built exactly as a round builds them
//! (with the loop's default heartbeat and reservation settings).

use async_graphql::{Context, Object, SimpleObject, ID};
use chrono::Utc;
use grus_protocol::wire::JobSpec;

use super::job_input::{self, JobInput, Resolved};
use super::job_status::WhyPendingObj;
use super::types::JobObj;
use super::{caller, own_job_or_project_admin, pool};
use crate::admission::{self, Verdict};
use crate::allocator::{choose_cluster, Choice, PendingJob};
use crate::db::dispatch as store;
use crate::db::{self, Cause};
use crate::dispatcher::{views, DispatcherConfig};
use crate::domain::PriorityClass;
use crate::error::{ApiError, ApiResult};

/// Scheduling writes (and the dry run, which writes nothing but takes a job like submitJob).
#[derive(Default)]
pub struct SchedulingMutation;

/// Which quota would refuse the job.
#[derive(SimpleObject)]
pub struct QuotaShortfall {
    pub queue: String,
    pub resource: String,
    pub used: i64,
    pub demand: i64,
    pub limit: i64,
}

/// Result of `dryRunJob`.
#[derive(SimpleObject)]
pub struct DryRunResult {
    /// Admission would accept the job now.
    pub admitted: bool,
    /// It would be admitted above the queue's guarantee (preemptible).
    pub borrowed: bool,
    /// Set when admission would refuse it.
    pub quota_exceeded: Option<QuotaShortfall>,
    /// The cluster the allocator would choose now (null when none can take it).
    pub cluster: Option<String>,
    /// Set when no cluster can take it: the reason per cluster and stage.
    pub why_pending: Option<WhyPendingObj>,
}

#[Object]
impl SchedulingMutation {
    /// Member. Validates like submitJob and answers whether admission would accept the job
    /// and which cluster the allocator would choose now; stores nothing.
    async fn dry_run_job(&self, ctx: &Context<'_>, input: JobInput) -> ApiResult<DryRunResult> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let queue = job_input::target_queue(ctx, &input).await?;
        let at = Resolved {
            project_id: queue.project_id,
            queue_id: queue.id,
            queue_name: &queue.name,
            service: queue.class_of_service(),
            submitted_by: user.id,
            submitted_by_subject: &user.subject,
        };
        let now = Utc::now();
        let new = job_input::validate(&input, &at, now.timestamp_millis())?;
        job_input::check_tenant_rights(pool, queue.project_id, &new.priority_class, "priority").await?;
        job_input::check_fits_fleet(ctx, &new).await?;

        let quotas = db::quotas(pool, queue.id).await?;
        let usage: admission::Amounts = db::queue_usage(pool, queue.id).await?.into_iter().collect();
        let want = admission::job_demand(&new, &admission::quota_scopes(&quotas));
        let reserve = queue.interactive_reserve_milli;
        let (admitted, borrowed, quota_exceeded) =
            match admission::decide_in_queue(&quotas, &usage, &want, queue.can_borrow, reserve) {
                Verdict::Admit { borrowed } => (true, borrowed, None),
                Verdict::Exceeded { resource, used, demand, limit } => {
                    (false, false, Some(QuotaShortfall { queue: queue.name.clone(), resource, used, demand, limit }))
                }
            };

        let spec: JobSpec = serde_json::from_value(new.spec.clone()).map_err(|e| ApiError::internal(&e))?;
        let job =
            PendingJob { cluster_selector: spec.node_selector.clone(), spec, attempts: vec![], epoch: 0, borrowed };
        let cfg = DispatcherConfig::default();
        let clusters = db::list_clusters(pool).await?;
        let open = store::open_dispatches(pool).await?;
        let cluster_views: Vec<_> = clusters
            .iter()
            .map(|c| views::cluster_view(c, &open, now, cfg.heartbeat_stale, cfg.reservation_ttl))
            .collect();
        let (cluster, why_pending) = match choose_cluster(&job, &cluster_views, now) {
            Choice::Cluster { cluster, .. } => (Some(cluster), None),
            Choice::NoCluster { skipped } => (None, Some(WhyPendingObj::from_json(views::why_json(&skipped)))),
        };
        Ok(DryRunResult { admitted, borrowed, quota_exceeded, cluster, why_pending })
    }

    /// Member for their own jobs; project admin for any job of the project. `priority` is a
    /// class name (low, normal, high, critical); the next allocator round orders by it and the
    /// next dispatch carries it. Recorded as an event on the job.
    async fn set_job_priority(&self, ctx: &Context<'_>, id: ID, priority: String) -> ApiResult<JobObj> {
        let pool = pool(ctx)?;
        let job = own_job_or_project_admin(ctx, &id).await?;
        let Some(class) = PriorityClass::parse(&priority) else {
            return Err(ApiError::field("priority", format!("one of {}", PriorityClass::names())));
        };
        job_input::check_tenant_rights(pool, job.project_id, class.as_str(), "priority").await?;
        let value = class.value();
        let actor = caller(ctx)?.actor();
        let cause = format!("priority changed from {} to {class} ({value})", job.priority_class);
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        store::set_priority(&mut tx, job.id, value, class.as_str(), Cause { cause: &cause, actor: &actor }).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_job(pool, job.id).await?.into())
    }
}
