//! `Job.gpuHistory`: a job's GPU utilization and memory over a time range, from the buckets of
//! `db::metric_history`.

use async_graphql::{Context, SimpleObject};
use chrono::{DateTime, Duration, Utc};

use super::pool;
use crate::db::metric_history;
use crate::error::{ApiError, ApiResult};

/// One interval of a job's GPU metrics: over every sample of the devices its running replicas
/// held in `[at, at + resolution)`.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "MetricPoint")]
pub struct MetricPointObj {
    pub at: DateTime<Utc>,
    pub samples: i32,
    pub busy_pct_avg: f64,
    pub busy_pct_max: f64,
    pub memory_used_mib_avg: f64,
    pub memory_used_mib_max: i64,
}

/// A job's GPU metrics over a range.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "GpuHistory")]
pub struct GpuHistoryObj {
    /// The width of each point: 10 s for ranges within the last day of up to 2,000 points,
    /// else 60 s (kept 30 days).
    pub resolution_seconds: i32,
    /// Oldest first; intervals without samples are absent.
    pub points: Vec<MetricPointObj>,
}

/// The job's history in `[since, until)`: `until` defaults to now, `since` to an hour before it.
pub async fn gpu_history(
    ctx: &Context<'_>,
    job_id: i64,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
) -> ApiResult<GpuHistoryObj> {
    let now = Utc::now();
    let until = until.unwrap_or(now);
    let since = since.unwrap_or(until - Duration::hours(1));
    if since >= until {
        return Err(ApiError::field("since", "must be before until"));
    }
    let resolution = metric_history::resolution_for(since, until, now);
    let points = metric_history::range(pool(ctx)?, job_id, resolution, since, until).await?;
    Ok(GpuHistoryObj {
        resolution_seconds: resolution,
        points: points
            .into_iter()
            .map(|p| MetricPointObj {
                at: p.bucket,
                samples: p.samples,
                busy_pct_avg: p.busy_pct_avg,
                busy_pct_max: f64::from(p.busy_pct_max),
                memory_used_mib_avg: p.memory_used_mib_avg,
                memory_used_mib_max: p.memory_used_mib_max,
            })
            .collect(),
    })
}
