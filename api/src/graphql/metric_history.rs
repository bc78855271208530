//! Metrics over time and the latest per-replica use: `Job.metricHistory`,
//! `Cluster.metricHistory` (from the buckets of `db::metric_history`) and `Replica.usage`.

use async_graphql::{Context, SimpleObject};
use chrono::{DateTime, Duration, Utc};

use super::pool;
use crate::db::batch::ReplicaUsageRow;
use crate::db::metric_history::{self, Subject};
use crate::error::{ApiError, ApiResult};

/// One interval of metrics. GPU fields cover every sample of the devices (a job's: those its
/// running replicas held; a cluster's: all of them) in `[at, at + resolution)` and are null
/// when there was none; resource fields are a job's totals over its replicas, null when there
/// was no reading (and always for a cluster).
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "MetricPoint")]
pub struct MetricPointObj {
    pub at: DateTime<Utc>,
    /// GPU readings in the interval.
    pub samples: i32,
    pub busy_pct_avg: Option<f64>,
    pub busy_pct_max: Option<f64>,
    /// GPU memory used per device.
    pub memory_used_mib_avg: Option<f64>,
    pub memory_used_mib_max: Option<i64>,
    /// Resource readings in the interval.
    pub usage_samples: i32,
    /// CPU in use, in cores.
    pub cpu_cores_avg: Option<f64>,
    pub cpu_cores_max: Option<f64>,
    /// Working-set memory.
    pub memory_mib_avg: Option<f64>,
    pub memory_mib_max: Option<i64>,
    /// Bytes per second.
    pub disk_read_bps_avg: Option<f64>,
    pub disk_write_bps_avg: Option<f64>,
    pub net_rx_bps_avg: Option<f64>,
    pub net_tx_bps_avg: Option<f64>,
}

/// Metrics over a range.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "MetricHistory")]
pub struct MetricHistoryObj {
    /// The width of each point: 10 s for ranges within the last day of up to 2,000 points,
    /// else 60 s (kept 30 days).
    pub resolution_seconds: i32,
    /// Oldest first; intervals without samples are absent.
    pub points: Vec<MetricPointObj>,
}

/// A running replica's latest CPU, memory, disk and network use.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "ReplicaUsage")]
pub struct ReplicaUsageObj {
    pub cpu_cores: f64,
    pub memory_mib: i64,
    pub disk_read_bps: i64,
    pub disk_write_bps: i64,
    pub net_rx_bps: i64,
    pub net_tx_bps: i64,
    pub at: DateTime<Utc>,
}

impl From<ReplicaUsageRow> for ReplicaUsageObj {
    fn from(r: ReplicaUsageRow) -> Self {
        ReplicaUsageObj {
            cpu_cores: r.cpu_milli as f64 / 1000.0,
            memory_mib: r.memory_mib,
            disk_read_bps: r.disk_read_bps,
            disk_write_bps: r.disk_write_bps,
            net_rx_bps: r.net_rx_bps,
            net_tx_bps: r.net_tx_bps,
            at: r.at,
        }
    }
}

/// `subject`'s history in `[since, until)`: `until` defaults to now, `since` to an hour before
/// it. The caller is authorized by the resolver.
pub async fn history(
    ctx: &Context<'_>,
    subject: Subject<'_>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
) -> ApiResult<MetricHistoryObj> {
    let now = Utc::now();
    let until = until.unwrap_or(now);
    let since = since.unwrap_or(until - Duration::hours(1));
    if since >= until {
        return Err(ApiError::field("since", "must be before until"));
    }
    let resolution = metric_history::resolution_for(since, until, now);
    let points = metric_history::range(pool(ctx)?, subject, resolution, since, until).await?;
    let cores = |milli: f64| milli / 1000.0;
    Ok(MetricHistoryObj {
        resolution_seconds: resolution,
        points: points
            .into_iter()
            .map(|p| MetricPointObj {
                at: p.bucket,
                samples: p.samples,
                busy_pct_avg: p.busy_pct_avg,
                busy_pct_max: p.busy_pct_max.map(f64::from),
                memory_used_mib_avg: p.memory_used_mib_avg,
                memory_used_mib_max: p.memory_used_mib_max,
                usage_samples: p.usage_samples,
                cpu_cores_avg: p.cpu_milli_avg.map(cores),
                cpu_cores_max: p.cpu_milli_max.map(|m| cores(m as f64)),
                memory_mib_avg: p.memory_mib_avg,
                memory_mib_max: p.memory_mib_max,
                disk_read_bps_avg: p.disk_read_bps_avg,
                disk_write_bps_avg: p.disk_write_bps_avg,
                net_rx_bps_avg: p.net_rx_bps_avg,
                net_tx_bps_avg: p.net_tx_bps_avg,
            })
            .collect(),
    })
}
