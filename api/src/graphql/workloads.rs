//! What the `Workload` interface (`services::Workload`) answers the same way for jobs and
//! services: a timeline of what happened to it, and its cost so far (the ledger intervals of
//! its jobs, priced as `usage` prices them).

use async_graphql::SimpleObject;
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;

use super::billing::{blocking, load_book};
use crate::billing::{self, Period};
use crate::db::billing::{self as store, LedgerFilter};
use crate::db::services::{Revision, ScalingEvent, Service};
use crate::db::JobEvent;
use crate::error::ApiResult;

/// One entry of a workload's timeline.
#[derive(Clone, Debug, PartialEq, SimpleObject)]
#[graphql(name = "WorkloadEvent")]
pub struct WorkloadEventObj {
    pub at: DateTime<Utc>,
    /// A job's state it entered (`running`, ...), or what happened to a service (`created`,
    /// `revision`, `scaled`, `deleted`).
    pub kind: String,
    pub message: String,
    /// Who did it, when a person or a component is recorded.
    pub actor: Option<String>,
}

/// What a workload has cost so far.
#[derive(Clone, Debug, PartialEq, SimpleObject)]
#[graphql(name = "WorkloadCost")]
pub struct WorkloadCostObj {
    pub currency: String,
    /// Exact decimal strings (nine fractional digits), as `usage` gives them.
    pub gpu_hours: String,
    pub list_cost: String,
    /// What is billed.
    pub effective_cost: String,
    /// Approximate copies, for display.
    pub gpu_hours_value: f64,
    pub effective_cost_value: f64,
    pub as_of: DateTime<Utc>,
}

/// The largest timeline answered at once.
const MAX_TIMELINE: i32 = 1000;

/// The latest `limit` entries of `events` (any order), oldest first.
pub fn latest(mut events: Vec<WorkloadEventObj>, limit: i32) -> Vec<WorkloadEventObj> {
    events.sort_by_key(|e| e.at);
    let keep = usize::try_from(limit.clamp(1, MAX_TIMELINE)).unwrap_or(1);
    let skip = events.len().saturating_sub(keep);
    events.split_off(skip)
}

/// A job's events as timeline entries.
pub fn job_timeline(events: &[JobEvent]) -> Vec<WorkloadEventObj> {
    events
        .iter()
        .map(|e| WorkloadEventObj {
            at: e.at,
            kind: e.to_state.clone(),
            message: match (&e.from_state, e.replica_id.is_some()) {
                (Some(from), true) => format!("a replica {from} → {}: {}", e.to_state, e.cause),
                (Some(from), false) => format!("{from} → {}: {}", e.to_state, e.cause),
                (None, _) => e.cause.clone(),
            },
            actor: Some(e.actor.clone()),
        })
        .collect()
}

/// A service's creation, revisions, scaling and deletion as timeline entries.
pub fn service_timeline(
    service: &Service,
    owner: &str,
    revisions: &[Revision],
    scaling: &[ScalingEvent],
) -> Vec<WorkloadEventObj> {
    let mut out = vec![WorkloadEventObj {
        at: service.created_at,
        kind: "created".into(),
        message: format!("created with {}..{} replicas", service.min_replicas, service.max_replicas),
        actor: Some(owner.to_owned()),
    }];
    out.extend(revisions.iter().map(|r| WorkloadEventObj {
        at: r.created_at,
        kind: "revision".into(),
        message: format!("revision {}", r.revision),
        actor: None,
    }));
    out.extend(scaling.iter().map(|e| WorkloadEventObj {
        at: e.at,
        kind: "scaled".into(),
        message: format!("{} → {} replicas: {}", e.from_replicas, e.to_replicas, e.reason),
        actor: None,
    }));
    if let Some(at) = service.deleted_at {
        out.push(WorkloadEventObj { at, kind: "deleted".into(), message: "deleted".into(), actor: None });
    }
    out
}

/// The cost of `jobs` until now: every ledger interval of theirs (a running replica's up to
/// now).
pub async fn cost_of_jobs(pool: &PgPool, jobs: Vec<i64>) -> ApiResult<WorkloadCostObj> {
    let now = Utc::now();
    // From the epoch: the job filter bounds what is read, and a period is only a clip. Past
    // `now` by a millisecond so that an interval that starts now is inside.
    let period = Period { start: DateTime::UNIX_EPOCH, end: now + Duration::milliseconds(1) };
    let (book, currency) = load_book(pool).await?;
    let filter = LedgerFilter { job_ids: Some(jobs), ..LedgerFilter::default() };
    let intervals = store::ledger_intervals(pool, period, now, &filter).await?;
    let rows = blocking(move || billing::group_usage(&intervals, &book, &[], period)).await?;
    let (gpu_hours, list, contracted) =
        rows.first().map_or((billing::Nanos(0), billing::Nanos(0), billing::Nanos(0)), |r| {
            (r.gpu_hours, r.list_cost, r.contracted_cost)
        });
    Ok(WorkloadCostObj {
        currency,
        gpu_hours: gpu_hours.to_string(),
        list_cost: list.to_string(),
        effective_cost: contracted.to_string(),
        gpu_hours_value: gpu_hours.to_f64(),
        effective_cost_value: contracted.to_f64(),
        as_of: now,
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + s, 0).unwrap()
    }

    fn event(s: i64, kind: &str) -> WorkloadEventObj {
        WorkloadEventObj { at: at(s), kind: kind.into(), message: String::new(), actor: None }
    }

    #[test]
    fn the_timeline_keeps_the_latest_entries_oldest_first() {
        let events = vec![event(3, "c"), event(1, "a"), event(2, "b")];
        let kinds = |v: Vec<WorkloadEventObj>| v.into_iter().map(|e| e.kind).collect::<Vec<_>>();
        assert_eq!(kinds(latest(events.clone(), 100)), ["a", "b", "c"]);
        assert_eq!(kinds(latest(events.clone(), 2)), ["b", "c"]);
        assert_eq!(kinds(latest(events, 0)), ["c"], "at least one");
    }

    #[test]
    fn a_service_timeline_names_creation_revisions_scaling_and_deletion() {
        let service = Service {
            id: 1,
            project_id: 1,
            queue_id: 1,
            name: "chat".into(),
            owner_id: 1,
            revision: 2,
            min_replicas: 1,
            max_replicas: 4,
            desired_replicas: 2,
            scaling_metric: None,
            scaling_target: None,
            scale_down_delay_s: 60,
            max_surge: 1,
            max_unavailable: 0,
            load_rps: None,
            load_at: None,
            condition: None,
            created_at: at(0),
            updated_at: at(9),
            deleted_at: Some(at(9)),
        };
        let revisions = [Revision { revision: 2, template: serde_json::json!({}), created_by: 1, created_at: at(5) }];
        let scaling =
            [ScalingEvent { at: at(3), from_replicas: 1, to_replicas: 2, signal: Some(30.0), reason: "load".into() }];
        let timeline = latest(service_timeline(&service, "dev:alice", &revisions, &scaling), 100);
        let summary: Vec<(&str, &str)> = timeline.iter().map(|e| (e.kind.as_str(), e.message.as_str())).collect();
        assert_eq!(
            summary,
            [
                ("created", "created with 1..4 replicas"),
                ("scaled", "1 → 2 replicas: load"),
                ("revision", "revision 2"),
                ("deleted", "deleted")
            ]
        );
        assert_eq!(timeline[0].actor.as_deref(), Some("dev:alice"));
    }
}
