//! The fleet's run time history, kept from PostgreSQL: every job that succeeded in the last
//! [`LOOKBACK_DAYS`] days, its run time from its first `running` to its end, folded into a
//! [`RuntimePredictor`] in the order the jobs ended. Read incrementally (the jobs that ended
//! since the last read, by the `jobs_succeeded_idx` index of migration 0032) at most every
//! [`REFRESH`], when a prediction is asked. One per process part: the GraphQL schema and the
//! dispatcher each hold one.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use grus_protocol::wire::JobSpec;
use grus_scheduler::predict::{Prediction, RuntimePredictor};
use sqlx::PgPool;
use tokio::sync::Mutex;

use super::features::{gpu_milli, run_features};
use super::start::{expected_starts, Holding, Waiting};
use crate::db::DbResult;
use crate::domain::JobState;

/// How old a finished job may be and still count.
pub const LOOKBACK_DAYS: i64 = 30;
/// How stale the history may be when a prediction is asked.
pub const REFRESH: Duration = Duration::from_secs(10);
/// Jobs read per statement.
const PAGE: i64 = 5_000;
/// The most jobs ahead of a waiting job an estimate simulates.
const MAX_LINE: i64 = 20_000;

#[derive(Default)]
struct Loaded {
    predictor: RuntimePredictor,
    /// The last job read: (its end, its id).
    cursor: Option<(DateTime<Utc>, i64)>,
    read_at: Option<Instant>,
}

/// See the module doc.
pub struct RuntimeHistory {
    pool: PgPool,
    loaded: Mutex<Loaded>,
}

/// When a waiting job is expected to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartEstimate {
    pub at: DateTime<Utc>,
    /// Jobs the allocator serves before it, fleet-wide.
    pub jobs_ahead: usize,
}

type FinishedRow = (i64, DateTime<Utc>, Option<DateTime<Utc>>, sqlx::types::Json<JobSpec>);

impl RuntimeHistory {
    pub fn new(pool: PgPool) -> RuntimeHistory {
        RuntimeHistory { pool, loaded: Mutex::new(Loaded::default()) }
    }

    /// The history, read again if it is older than [`REFRESH`].
    async fn current(&self) -> DbResult<tokio::sync::MutexGuard<'_, Loaded>> {
        let mut loaded = self.loaded.lock().await;
        if loaded.read_at.is_some_and(|t| t.elapsed() < REFRESH) {
            return Ok(loaded);
        }
        loop {
            let (after_at, after_id) = loaded.cursor.unwrap_or((Utc::now() - chrono::Duration::days(LOOKBACK_DAYS), 0));
            let rows: Vec<FinishedRow> = sqlx::query_as(
                "SELECT j.id, j.updated_at,
                        (SELECT min(e.at) FROM job_events e
                          WHERE e.job_id = j.id AND e.task_id IS NULL AND e.to_state = 'running'),
                        j.spec
                   FROM jobs j
                  WHERE j.state = 'succeeded' AND (j.updated_at, j.id) > ($1, $2)
                  ORDER BY j.updated_at, j.id
                  LIMIT $3",
            )
            .bind(after_at)
            .bind(after_id)
            .bind(PAGE)
            .fetch_all(&self.pool)
            .await?;
            let full = rows.len() as i64 == PAGE;
            for (id, ended, started, spec) in rows {
                loaded.cursor = Some((ended, id));
                if let Some(started) = started.filter(|s| *s <= ended) {
                    let runtime = (ended - started).num_seconds().max(1) as u64;
                    loaded.predictor.observe(&run_features(&spec.0), runtime);
                }
            }
            if !full {
                break;
            }
        }
        loaded.read_at = Some(Instant::now());
        Ok(loaded)
    }

    /// How long a job like `spec` runs, from its history; bounded by its maximum runtime (a
    /// user-given maximum wins). `None`: nothing like it finished yet.
    pub async fn predict(&self, spec: &JobSpec) -> DbResult<Option<Prediction>> {
        let loaded = self.current().await?;
        Ok(loaded.predictor.predict(&run_features(spec)).map(|p| p.bounded_by(spec.max_runtime_s)))
    }

    /// Predictions for several jobs under one read of the history.
    pub async fn predict_all<'a>(
        &self,
        specs: impl IntoIterator<Item = &'a JobSpec>,
    ) -> DbResult<Vec<Option<Prediction>>> {
        let loaded = self.current().await?;
        Ok(specs
            .into_iter()
            .map(|s| loaded.predictor.predict(&run_features(s)).map(|p| p.bounded_by(s.max_runtime_s)))
            .collect())
    }

    /// When waiting job `job_id` is expected to start (`start::expected_starts` over the GPUs
    /// of the healthy, uncordoned clusters, the work running there and the fleet's line up to
    /// the job, in the allocator's order). `None` when it does not wait, or no estimate can be
    /// made (it is larger than the fleet, or waits behind work of unknown end).
    pub async fn estimate_start(&self, job_id: i64) -> DbResult<Option<StartEstimate>> {
        let waiting_states: Vec<&str> =
            JobState::ALL.into_iter().filter(|s| s.waits_to_start()).map(|s| s.as_str()).collect();
        let line: Vec<(i64, sqlx::types::Json<JobSpec>)> = sqlx::query_as(
            "SELECT o.id, o.spec FROM jobs o, jobs j
              WHERE j.id = $1 AND j.state = ANY($2) AND o.state = ANY($2)
                AND (-o.priority, o.workload_type <> 'workspace', o.submitted_at, o.id)
                 <= (-j.priority, j.workload_type <> 'workspace', j.submitted_at, j.id)
              ORDER BY -o.priority, o.workload_type <> 'workspace', o.submitted_at, o.id
              LIMIT $3",
        )
        .bind(job_id)
        .bind(&waiting_states)
        .bind(MAX_LINE)
        .fetch_all(&self.pool)
        .await?;
        if line.last().is_none_or(|(id, _)| *id != job_id) {
            return Ok(None);
        }
        let started: Vec<&str> =
            [JobState::Running, JobState::Preempting, JobState::Unknown].into_iter().map(|s| s.as_str()).collect();
        let running: Vec<(Option<DateTime<Utc>>, sqlx::types::Json<JobSpec>)> = sqlx::query_as(
            "SELECT (SELECT max(e.at) FROM job_events e
                      WHERE e.job_id = j.id AND e.task_id IS NULL AND e.to_state = 'running'),
                    j.spec
               FROM jobs j WHERE j.state = ANY($1)",
        )
        .bind(&started)
        .fetch_all(&self.pool)
        .await?;
        let capacity_milli = crate::db::fair_share::fleet_capacity_milli(&self.pool).await?;
        let now = Utc::now();
        let loaded = self.current().await?;
        let runtime = |spec: &JobSpec| {
            loaded
                .predictor
                .predict(&run_features(spec))
                .map(|p| p.bounded_by(spec.max_runtime_s).p50_s)
                .or(spec.max_runtime_s)
        };
        let holding: Vec<Holding> = running
            .iter()
            .map(|(since, spec)| Holding {
                gpu_milli: gpu_milli(spec),
                ends_at: runtime(spec).map(|r| since.unwrap_or(now).timestamp().saturating_add(r as i64)),
            })
            .collect();
        let waiting: Vec<Waiting> =
            line.iter().map(|(_, spec)| Waiting { gpu_milli: gpu_milli(spec), runtime_s: runtime(spec) }).collect();
        drop(loaded);
        let starts = expected_starts(now.timestamp(), capacity_milli, &holding, &waiting);
        Ok(starts
            .last()
            .copied()
            .flatten()
            .and_then(|at| DateTime::from_timestamp(at, 0))
            .map(|at| StartEstimate { at: at.max(now), jobs_ahead: line.len() - 1 }))
    }
}
