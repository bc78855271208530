//! Pure conversions between stored rows and the allocator's model: cluster views (health,
//! cordon, capacity, reservations), waiting jobs with their attempt history, running jobs for
//! reclaim, and the structured whyPending value. No I/O, so each rule is unit-tested.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use grus_protocol::wire::{CapacitySummary, JobSpec};
use serde_json::{json, Value};

use crate::allocator::{
    why_pending, Attempt, AttemptOutcome, ClusterView, ElasticJob, GpuTake, PendingJob, Reservation, RunningJob,
    SkipReason,
};
use crate::db::clusters::Cluster;
use crate::db::dispatch::{
    reservation_from_json, ElasticRow, FailedAttempt, HoldRow, OpenDispatch, RunningRow, WaitingJob,
};
use crate::domain::Health;
use grus_scheduler::resources::MILLI_PER_GPU;

/// How old a heartbeat may be before the cluster counts as unhealthy.
pub const DEFAULT_HEARTBEAT_STALE_S: i64 = crate::domain::HEARTBEAT_STALE_S;

/// Adds the holds in force to their clusters' views (a hold on a cluster no view has, or
/// whose reservation does not decode, holds nothing).
pub fn attach_holds(views: &mut [ClusterView], holds: &[HoldRow]) {
    for h in holds {
        let (Some(view), Ok(job), Some((gpus, cpu_milli, memory_mib))) = (
            views.iter_mut().find(|v| v.id == h.cluster_id),
            u64::try_from(h.job_id),
            reservation_from_json(&h.reservation),
        ) else {
            continue;
        };
        view.holds.push(Reservation { job, gpus, cpu_milli, memory_mib, expires_at: h.expires_at });
    }
}

/// One cluster row as the allocator sees it at `now`: healthy only when the agent reported
/// healthy within `stale`; a capacity that is missing or does not decode counts as empty
/// (nothing fits: errs towards "does not fit"). `open` are the unanswered dispatches; those
/// younger than `ttl` become reservations.
pub fn cluster_view(
    c: &Cluster,
    open: &[OpenDispatch],
    now: DateTime<Utc>,
    stale: Duration,
    ttl: Duration,
) -> ClusterView {
    let healthy = c.health == Health::Healthy.as_str() && c.last_heartbeat.is_some_and(|t| now - t <= stale);
    let capacity =
        c.capacity.as_ref().and_then(|v| serde_json::from_value::<CapacitySummary>(v.clone()).ok()).unwrap_or_default();
    let labels: BTreeMap<String, String> = c
        .labels
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned()))).collect())
        .unwrap_or_default();
    let reservations = open
        .iter()
        .filter(|d| d.cluster_id == c.id)
        .filter_map(|d| {
            let (gpus, cpu_milli, memory_mib) = reservation_from_json(d.reservation.as_ref()?)?;
            Some(Reservation {
                job: u64::try_from(d.job_id).ok()?,
                gpus,
                cpu_milli,
                memory_mib,
                expires_at: d.dispatched_at + ttl,
            })
        })
        .filter(|r| r.is_active(now))
        .collect();
    ClusterView { id: c.id.clone(), healthy, cordoned: c.cordoned, labels, capacity, reservations, holds: Vec::new() }
}

/// A waiting job as the allocator's [`PendingJob`]: the stored spec with the row's id,
/// priority (setJobPriority changes the row) and submission time; attempts from the
/// dispatches table. `None` when the stored spec is not a wire JobSpec.
pub fn pending_job(j: &WaitingJob, attempts: &[FailedAttempt]) -> Option<PendingJob> {
    let mut spec: JobSpec = j.spec.decode().ok()?;
    spec.id = u64::try_from(j.id).ok()?;
    spec.priority = j.priority;
    spec.submitted_at_ms = j.submitted_at.timestamp_millis();
    let attempts = attempts
        .iter()
        .filter(|a| a.job_id == j.id)
        .map(|a| Attempt {
            cluster: a.cluster_id.clone(),
            epoch: u64::try_from(a.epoch).unwrap_or(0),
            outcome: if a.outcome == "timed_out" {
                AttemptOutcome::TimedOut
            } else {
                AttemptOutcome::Rejected { reason: a.reason.clone().unwrap_or_else(|| "rejected".into()) }
            },
        })
        .collect();
    Some(PendingJob {
        cluster_selector: spec.node_selector.clone(),
        spec,
        attempts,
        epoch: u64::try_from(j.epoch).unwrap_or(0),
        borrowed: j.borrowed,
    })
}

/// A running job for reclaim. Borrowed work is preemptible whatever the job said (it was
/// admitted on that condition). Without a stored reservation it holds nothing reclaim can
/// count, so it is never chosen.
pub fn running_job(r: &RunningRow) -> Option<RunningJob> {
    let (gpus, cpu_milli, memory_mib) = reservation_from_json(r.reservation.as_ref()?)?;
    Some(RunningJob {
        id: u64::try_from(r.id).ok()?,
        project: r.project.clone(),
        queue: r.queue.clone(),
        cluster: r.cluster_id.clone(),
        epoch: u64::try_from(r.epoch).ok()?,
        priority: r.priority,
        borrowed: r.borrowed,
        preemptible: r.preemptible || r.borrowed,
        privileged: false,
        started_at: r.started_at,
        min_runtime_s: r.min_runtime_s.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
        gpus,
        cpu_milli,
        memory_mib,
    })
}

/// A running elastic job's spare replicas (those above its minimum), as the room they would
/// give back, of the model its dispatch reserved. Which replicas the agent gives back is its
/// choice, so the count is conservative: the replicas it keeps are taken from the nodes with
/// the most, and each node's spare replicas become one node entry (a gang member needs them
/// on one node). `None` when the row does not say what a replica holds.
pub fn elastic_job(r: &ElasticRow) -> Option<ElasticJob> {
    let res: grus_protocol::wire::ResourcesSpec = serde_json::from_value(r.resources.clone()).ok()?;
    let (gpus, _, _) = reservation_from_json(r.reservation.as_ref()?)?;
    let keep = usize::try_from(r.elastic_min).ok()?;
    let spare = r.live_nodes.len().checked_sub(keep).filter(|n| *n > 0)?;
    let mut per_node: BTreeMap<&str, u32> = BTreeMap::new();
    for node in &r.live_nodes {
        *per_node.entry(node.as_str()).or_default() += 1;
    }
    let mut counts: Vec<u32> = per_node.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let mut kept = keep as u32;
    for c in counts.iter_mut() {
        let k = kept.min(*c);
        *c -= k;
        kept -= k;
    }
    counts.retain(|c| *c > 0);
    let model = gpus.first().map(|t| t.model.clone());
    let take = match (res.gpus, res.gpu_milli.unwrap_or(MILLI_PER_GPU), model) {
        (0, _, _) => Vec::new(),
        (_, _, None) => return None,
        (_, _, Some(model)) if res.mig_profile.is_some() => {
            vec![GpuTake { model, mig: vec![res.mig_profile.clone()?; spare], ..GpuTake::default() }]
        }
        (1, milli, Some(model)) if milli < MILLI_PER_GPU => {
            vec![GpuTake { model, shares: vec![milli; spare], ..GpuTake::default() }]
        }
        (n, _, Some(model)) => {
            vec![GpuTake { model, per_node: counts.iter().map(|c| c * n).collect(), ..GpuTake::default() }]
        }
    };
    Some(ElasticJob {
        id: u64::try_from(r.id).ok()?,
        project: r.project.clone(),
        queue: r.queue.clone(),
        cluster: r.cluster_id.clone(),
        priority: r.priority,
        preemptible: r.preemptible,
        borrowed: r.borrowed,
        started_at: r.started_at,
        min_runtime_s: r.min_runtime_s.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
        spare: take,
        spare_cpu_milli: res.cpu_milli.saturating_mul(spare as u64),
        spare_memory_mib: res.memory_mib.saturating_mul(spare as u64),
    })
}

/// The stored whyPending: `{ summary, reasons: [{ cluster, stage, reason }] }`, clusters in
/// id order. Deterministic (no timestamp), so an unchanged explanation is not rewritten.
pub fn why_json(skipped: &[(String, SkipReason)]) -> Value {
    json!({
        "summary": why_pending(skipped),
        "reasons": skipped
            .iter()
            .map(|(c, r)| json!({ "cluster": c, "stage": r.stage(), "reason": r.to_string() }))
            .collect::<Vec<_>>(),
    })
}

/// The whyPending of a job whose stored spec cannot be dispatched.
pub fn why_bad_spec() -> Value {
    json!({ "summary": "the stored job spec cannot be decoded; resubmit the job", "reasons": [] })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::jobs::RawJson;
    use grus_protocol::wire::ModelCapacity;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn row(health: &str, hb: Option<i64>) -> Cluster {
        let cap = CapacitySummary {
            models: vec![ModelCapacity { model: "A100".into(), total_gpus: 8, ..Default::default() }],
            ..Default::default()
        };
        Cluster {
            id: "c1".into(),
            display_name: None,
            labels: json!({ "region": "eu", "n": 3 }),
            health: health.into(),
            cordoned: false,
            draining: false,
            retired_at: None,
            last_heartbeat: hb.map(at),
            capacity: Some(serde_json::to_value(cap).unwrap()),
            created_at: at(0),
            control_plane_mismatch: false,
        }
    }

    fn open(job: i64, cluster: &str, at_s: i64) -> OpenDispatch {
        OpenDispatch {
            job_id: job,
            epoch: 1,
            cluster_id: cluster.into(),
            dispatched_at: at(at_s),
            answer_by: None,
            reservation: Some(crate::db::dispatch::reservation_json(&[], 1000, 10)),
        }
    }

    fn elastic_row(min: i64, nodes: &[&str], gpus: u32) -> ElasticRow {
        let take = GpuTake { model: "A100".into(), per_node: vec![gpus], ..GpuTake::default() };
        ElasticRow {
            id: 7,
            project: "p".into(),
            queue: "q".into(),
            cluster_id: "c1".into(),
            priority: 0,
            borrowed: false,
            preemptible: true,
            started_at: at(0),
            min_runtime_s: None,
            elastic_min: min,
            live_nodes: nodes.iter().map(|n| n.to_string()).collect(),
            resources: json!({ "gpus": gpus, "cpu_milli": 1000, "memory_mib": 10 }),
            reservation: Some(crate::db::dispatch::reservation_json(&[take], 1000, 10)),
        }
    }

    #[test]
    fn elastic_spare_room_is_counted_per_node_keeping_the_minimum_where_it_hurts_most() {
        // Five 2-GPU replicas: three on n1, two on n2; the agent keeps two of them. At worst it
        // keeps both on n1: one spare there, two on n2.
        let e = elastic_job(&elastic_row(2, &["n1", "n2", "n1", "n2", "n1"], 2)).expect("spare replicas");
        assert_eq!(e.spare, vec![GpuTake { model: "A100".into(), per_node: vec![2, 4], ..GpuTake::default() }]);
        assert_eq!((e.spare_cpu_milli, e.spare_memory_mib), (3000, 30));
        assert!(elastic_job(&elastic_row(2, &["n1", "n2"], 2)).is_none(), "at its minimum: nothing spare");
        let mut garbled = elastic_row(1, &["n1", "n2"], 1);
        garbled.reservation = None;
        assert!(elastic_job(&garbled).is_none());
    }

    #[test]
    fn health_needs_a_fresh_healthy_heartbeat() {
        let s = Duration::seconds(30);
        let t = Duration::seconds(60);
        assert!(cluster_view(&row("healthy", Some(100)), &[], at(120), s, t).healthy);
        assert!(!cluster_view(&row("healthy", Some(100)), &[], at(131), s, t).healthy);
        assert!(!cluster_view(&row("degraded", Some(100)), &[], at(100), s, t).healthy);
        assert!(!cluster_view(&row("unknown", None), &[], at(100), s, t).healthy);
        let v = cluster_view(&row("healthy", Some(100)), &[], at(100), s, t);
        assert_eq!(v.labels.get("region").map(String::as_str), Some("eu"));
        assert!(!v.labels.contains_key("n"), "non-string labels never match a selector");
        assert_eq!(v.capacity.models[0].model, "A100");
    }

    #[test]
    fn reservations_are_this_clusters_open_dispatches_within_the_ttl() {
        let d = [open(1, "c1", 100), open(2, "c1", 10), open(3, "c2", 100)];
        let v = cluster_view(&row("healthy", Some(100)), &d, at(100), Duration::seconds(30), Duration::seconds(60));
        assert_eq!(v.reservations.iter().map(|r| r.job).collect::<Vec<_>>(), vec![1]);
        assert_eq!(v.reservations[0].expires_at, at(160));
    }

    #[test]
    fn undecodable_capacity_is_empty() {
        let mut c = row("healthy", Some(100));
        c.capacity = Some(json!({ "models": "nope" }));
        let v = cluster_view(&c, &[], at(100), Duration::seconds(30), Duration::seconds(60));
        assert!(v.capacity.models.is_empty());
    }

    #[test]
    fn pending_job_takes_id_priority_and_history_from_the_rows() {
        let spec = json!({
            "id": 0, "name": "x", "project": "p", "queue": "default", "priority": 100,
            "tasks": [], "submitted_by": "dev:a", "submitted_at_ms": 0,
            "node_selector": { "region": "eu" }
        });
        let w = WaitingJob {
            id: 7,
            priority: 1000,
            submitted_at: at(5),
            spec: RawJson::from_value(&spec),
            epoch: 2,
            borrowed: true,
            why_pending: None,
            updated_at: at(5),
        };
        let attempts = [
            FailedAttempt {
                job_id: 7,
                cluster_id: "a".into(),
                epoch: 1,
                outcome: "rejected".into(),
                reason: Some("full".into()),
            },
            FailedAttempt { job_id: 7, cluster_id: "b".into(), epoch: 2, outcome: "timed_out".into(), reason: None },
            FailedAttempt { job_id: 8, cluster_id: "c".into(), epoch: 1, outcome: "rejected".into(), reason: None },
        ];
        let p = pending_job(&w, &attempts).unwrap();
        assert_eq!((p.spec.id, p.spec.priority, p.epoch, p.borrowed), (7, 1000, 2, true));
        assert_eq!(p.spec.submitted_at_ms, at(5).timestamp_millis());
        assert_eq!(p.cluster_selector.get("region").map(String::as_str), Some("eu"));
        assert_eq!(p.attempts.len(), 2);
        assert_eq!(p.attempts[0].outcome, AttemptOutcome::Rejected { reason: "full".into() });
        assert_eq!(p.attempts[1].outcome, AttemptOutcome::TimedOut);
        assert!(pending_job(&WaitingJob { spec: RawJson::from_value(&json!({ "name": "x" })), ..w }, &[]).is_none());
    }

    #[test]
    fn why_json_is_structured_per_cluster_and_stage() {
        let v = why_json(&[("a".into(), SkipReason::Unhealthy), ("b".into(), SkipReason::Reserved)]);
        assert_eq!(v["reasons"][0], json!({ "cluster": "a", "stage": "health", "reason": "agent heartbeat is stale" }));
        assert_eq!(v["reasons"][1]["stage"], "reservation");
        assert_eq!(v["summary"], "a: agent heartbeat is stale; b: free capacity is reserved for jobs being dispatched");
    }
}
