//! The job fields answered from run time history: `Job.predictedRuntime` and
//! `Job.estimatedStart` (`crate::runtime`).

use std::sync::Arc;

use async_graphql::{Context, SimpleObject};
use chrono::{DateTime, Utc};
use grus_protocol::wire::JobSpec;

use crate::error::{ApiError, ApiResult};
use crate::runtime::RuntimeHistory;

/// How long a job is expected to run, from the jobs like it that finished.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "RuntimePrediction")]
pub struct RuntimePredictionObj {
    /// The median run time of the similar jobs, seconds (at most the job's maximum runtime).
    pub p50_seconds: i64,
    /// The 90th percentile, seconds: what backfill trusts when the job gives no maximum.
    pub p90_seconds: i64,
    /// How many finished jobs it was made from.
    pub samples: i32,
    /// Which jobs: "same name and shape", "same name", "same image and shape", "same user
    /// and shape", "same shape", "same project" or "all finished jobs".
    pub basis: String,
}

/// When a waiting job is expected to start.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "StartEstimate")]
pub struct StartEstimateObj {
    /// The earliest time it is expected to start: when the GPUs it needs are expected free,
    /// counting the predicted ends of running work and of the jobs served before it. Quotas,
    /// fair share between queues and fragmentation are not modelled, so it may start later.
    pub at: DateTime<Utc>,
    /// Jobs the allocator serves before it, fleet-wide.
    pub jobs_ahead: i32,
}

fn history<'a>(ctx: &'a Context<'_>) -> ApiResult<&'a Arc<RuntimeHistory>> {
    ctx.data::<Arc<RuntimeHistory>>().map_err(|e| ApiError::internal(&e))
}

/// The job's predicted run time; `None` when nothing like it has finished.
pub async fn predicted_runtime(ctx: &Context<'_>, spec: &serde_json::Value) -> ApiResult<Option<RuntimePredictionObj>> {
    let Ok(spec) = serde_json::from_value::<JobSpec>(spec.clone()) else { return Ok(None) };
    Ok(history(ctx)?.predict(&spec).await?.map(|p| RuntimePredictionObj {
        p50_seconds: p.p50_s as i64,
        p90_seconds: p.p90_s as i64,
        samples: i32::try_from(p.samples).unwrap_or(i32::MAX),
        basis: p.basis.describe().to_owned(),
    }))
}

/// When the waiting job `job_id` is expected to start.
pub async fn estimated_start(ctx: &Context<'_>, job_id: i64) -> ApiResult<Option<StartEstimateObj>> {
    Ok(history(ctx)?
        .estimate_start(job_id)
        .await?
        .map(|e| StartEstimateObj { at: e.at, jobs_ahead: i32::try_from(e.jobs_ahead).unwrap_or(i32::MAX) }))
}
