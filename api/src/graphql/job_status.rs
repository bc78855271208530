//! What a job's page shows besides its own row: why it waits (`WhyPending`, one reason per
//! cluster), its dispatches with their epochs, and its GPU utilization. Output types only; the
//! `Job` object (`types`) and `dryRunJob` (`scheduling`) return them.

use async_graphql::{Context, SimpleObject, ID};
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::pool;
use crate::db::dispatch::{self as store, DispatchRecord};
use crate::db::ingest::job_utilization as load_utilization;
use crate::error::ApiResult;

/// One cluster that was not chosen, and at which stage it was ruled out.
#[derive(SimpleObject, Clone, Debug, PartialEq)]
pub struct PendingReason {
    pub cluster: String,
    /// `health`, `selector`, `history`, `gpu_model`, `capacity`, `topology` or `reservation`.
    pub stage: String,
    pub reason: String,
}

/// Why a job waits: one reason per cluster, plus the whole as one sentence.
#[derive(SimpleObject, Clone, Debug, PartialEq)]
#[graphql(name = "WhyPending")]
pub struct WhyPendingObj {
    pub summary: String,
    pub reasons: Vec<PendingReason>,
}

impl WhyPendingObj {
    /// Reads the stored `jobs.why_pending`; a value in another shape keeps its text as summary.
    pub fn from_json(v: Value) -> WhyPendingObj {
        let reasons = v
            .get("reasons")
            .and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| {
                        Some(PendingReason {
                            cluster: r.get("cluster")?.as_str()?.to_owned(),
                            stage: r.get("stage")?.as_str()?.to_owned(),
                            reason: r.get("reason")?.as_str()?.to_owned(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let summary = match v.get("summary").and_then(Value::as_str) {
            Some(s) => s.to_owned(),
            None => match &v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        };
        WhyPendingObj { summary, reasons }
    }
}

/// One dispatch of a job to a cluster (its fencing epoch and how it ended).
#[derive(SimpleObject)]
#[graphql(name = "Dispatch")]
pub struct DispatchObj {
    pub id: ID,
    pub epoch: i64,
    pub cluster_id: String,
    pub dispatched_at: DateTime<Utc>,
    /// The command reached the cluster's stream (null: not yet confirmed; it is re-sent).
    pub sent_at: Option<DateTime<Utc>>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    /// `pending`, `acknowledged`, `rejected`, `timed_out` or `superseded`.
    pub outcome: String,
    pub reason: Option<String>,
}

impl From<DispatchRecord> for DispatchObj {
    fn from(d: DispatchRecord) -> Self {
        DispatchObj {
            id: ID(d.id.to_string()),
            epoch: d.epoch,
            cluster_id: d.cluster_id,
            dispatched_at: d.dispatched_at,
            sent_at: d.sent_at,
            acknowledged_at: d.acknowledged_at,
            outcome: d.outcome,
            reason: d.reason,
        }
    }
}

/// The dispatch history of a job (the caller is authorized by the resolver).
pub(crate) async fn dispatches(ctx: &Context<'_>, job_id: i64) -> ApiResult<Vec<DispatchObj>> {
    Ok(store::dispatch_history(pool(ctx)?, job_id).await?.into_iter().map(DispatchObj::from).collect())
}

/// A job's GPU utilization over the samples of the devices its running replicas held, and its
/// replicas' CPU and memory over their resource readings.
#[derive(SimpleObject)]
#[graphql(name = "JobUtilization")]
pub struct JobUtilizationObj {
    pub samples: i64,
    pub avg_busy_pct: f64,
    pub max_busy_pct: f64,
    pub avg_memory_used_mib: f64,
    pub max_memory_used_mib: i64,
    /// Mean over the job's devices in the latest Metrics.
    pub last_busy_pct: Option<f64>,
    pub last_memory_used_mib: Option<i64>,
    pub updated_at: DateTime<Utc>,
    /// Resource readings of its replicas (each one their total at one Metrics message).
    pub usage_samples: i64,
    /// Its replicas' total CPU, in cores, mean and peak over the readings (null without one).
    pub avg_cpu_cores: Option<f64>,
    pub max_cpu_cores: Option<f64>,
    /// Its replicas' total working-set memory, mean and peak (null without a reading).
    pub avg_memory_mib: Option<f64>,
    pub max_memory_mib: Option<i64>,
}

/// `Job.utilization` (the caller is authorized on the job's project by the Job resolver).
pub(crate) async fn job_utilization(ctx: &Context<'_>, job_id: i64) -> ApiResult<Option<JobUtilizationObj>> {
    let Some(u) = load_utilization(pool(ctx)?, job_id).await? else { return Ok(None) };
    let n = u.samples.max(1) as f64;
    Ok(Some(JobUtilizationObj {
        samples: u.samples,
        avg_busy_pct: u.busy_pct_sum / n,
        max_busy_pct: f64::from(u.busy_pct_max),
        avg_memory_used_mib: u.memory_used_mib_sum / n,
        max_memory_used_mib: u.memory_used_mib_max,
        last_busy_pct: u.last_busy_pct.map(f64::from),
        last_memory_used_mib: u.last_memory_used_mib,
        updated_at: u.updated_at,
        usage_samples: u.usage_samples,
        avg_cpu_cores: (u.usage_samples > 0).then(|| u.cpu_milli_sum / u.usage_samples as f64 / 1000.0),
        max_cpu_cores: (u.usage_samples > 0).then(|| u.cpu_milli_max as f64 / 1000.0),
        avg_memory_mib: (u.usage_samples > 0).then(|| u.memory_mib_sum / u.usage_samples as f64),
        max_memory_mib: (u.usage_samples > 0).then_some(u.memory_mib_max),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn why_pending_reads_the_structured_value_and_tolerates_others() {
        let v = json!({ "summary": "a: x", "reasons": [{ "cluster": "a", "stage": "health", "reason": "x" }] });
        let w = WhyPendingObj::from_json(v);
        assert_eq!(w.summary, "a: x");
        assert_eq!(w.reasons, vec![PendingReason { cluster: "a".into(), stage: "health".into(), reason: "x".into() }]);
        assert_eq!(WhyPendingObj::from_json(json!("queue at limit")).summary, "queue at limit");
        assert!(WhyPendingObj::from_json(json!({ "other": 1 })).reasons.is_empty());
    }
}
