//! What the database says happened to a job: its events per level, its ledger intervals, and
//! checks shared by the scenarios.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// One event row.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Event {
    pub task_id: Option<i64>,
    pub replica_id: Option<i64>,
    pub to_state: String,
    pub cause: String,
    pub at: DateTime<Utc>,
    pub epoch: Option<i64>,
}

pub async fn events(pool: &PgPool, job: i64) -> Vec<Event> {
    sqlx::query_as(
        "SELECT task_id, replica_id, to_state, cause, at, epoch FROM job_events WHERE job_id = $1 ORDER BY id",
    )
    .bind(job)
    .fetch_all(pool)
    .await
    .expect("job events")
}

/// The job-level states in the order recorded.
pub fn job_states(events: &[Event]) -> Vec<String> {
    events.iter().filter(|e| e.task_id.is_none()).map(|e| e.to_state.clone()).collect()
}

/// Asserts that `states` pass through `order`, in that order (other states may come between).
pub fn assert_in_order(states: &[String], order: &[&str]) {
    let mut from = 0;
    for s in order {
        from += states[from..]
            .iter()
            .position(|x| x == s)
            .unwrap_or_else(|| panic!("{s} missing after {from}: {states:?}"));
    }
}

/// Each replica's states in the order recorded, keyed by replica id.
pub fn replica_states(events: &[Event]) -> BTreeMap<i64, Vec<String>> {
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for e in events {
        if let Some(r) = e.replica_id {
            out.entry(r).or_default().push(e.to_state.clone());
        }
    }
    out
}

/// One usage-ledger row.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Interval {
    pub job_id: i64,
    pub replica_id: i64,
    pub cluster_id: String,
    pub gpu_model: String,
    pub gpu_milli: i64,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub ended_by_preemption: bool,
}

pub async fn ledger(pool: &PgPool, job: Option<i64>) -> Vec<Interval> {
    sqlx::query_as(
        "SELECT job_id, replica_id, cluster_id, gpu_model, gpu_milli, started_at, ended_at, ended_by_preemption \
         FROM usage_ledger WHERE $1::bigint IS NULL OR job_id = $1 ORDER BY job_id, replica_id, started_at",
    )
    .bind(job)
    .fetch_all(pool)
    .await
    .expect("usage ledger")
}

/// Nothing lost, nothing run twice: every replica of the job ran exactly once (one `running`
/// event, one closed ledger interval whose bounds are the times of its `running` and
/// `succeeded` events) and the job's trail ends in `succeeded` without a failure on the way.
pub async fn assert_ran_once_and_succeeded(pool: &PgPool, job: i64, replica_count: usize) {
    let events = events(pool, job).await;
    let states = job_states(&events);
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "job trail: {states:?}");
    assert!(!states.iter().any(|s| s == "failed" || s == "unknown"), "job trail: {states:?}");
    let per_replica = replica_states(&events);
    assert_eq!(per_replica.len(), replica_count, "every replica has a trail: {per_replica:?}");
    for (replica, states) in &per_replica {
        assert_eq!(
            states.iter().filter(|s| *s == "running").count(),
            1,
            "replica {replica} ran exactly once: {states:?}"
        );
        assert_eq!(states.last().map(String::as_str), Some("succeeded"), "replica {replica}: {states:?}");
    }
    let ledger = ledger(pool, Some(job)).await;
    assert_eq!(ledger.len(), replica_count, "one ledger interval per replica: {ledger:?}");
    for iv in &ledger {
        let at = |state: &str| {
            events
                .iter()
                .find(|e| e.replica_id == Some(iv.replica_id) && e.to_state == state)
                .map(|e| e.at)
                .unwrap_or_else(|| panic!("replica {} has no {state} event", iv.replica_id))
        };
        assert_eq!(iv.started_at, at("running"), "interval starts when the replica ran: {iv:?}");
        assert_eq!(iv.ended_at, Some(at("succeeded")), "interval ends when the replica ended: {iv:?}");
    }
}
