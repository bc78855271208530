//! The storage shell of event ingestion: loads what `domain::reports` decides on, and writes its
//! plan. The message functions run inside the caller's transaction (`&mut PgConnection`), the
//! one that also records the message in `ingested_messages`, so an agent message is applied
//! entirely or not at all, and exactly once.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use grus_protocol::wire::{CapacitySummary, DeviceRef, GpuMetrics, JobSnapshot, NodeInfo, ReplicaExit, ReplicaUsage};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgExecutor, PgPool};

use super::ingest_batch;
use super::jobs::{self, Cause, EventOrigin, ReplicaReport};
use super::{DbError, DbResult};
use crate::domain::reports::{
    self as reports, absent_from_snapshot, decide, job_closes_ledger, ledger_effect, on_cluster_lost, requeue_after,
    steps_to_pending, Decision, DispatchAnswer, JobView, LedgerEffect, Level, LossAction, Report, RunningReplica,
};
use crate::domain::{JobState, UnitState};

/// How a message ended up, as recorded in `ingested_messages` (and counted in metrics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    /// Fenced off by a newer epoch (or another cluster holds the job).
    Stale,
    /// Valid but nothing to change (unknown job, a change the state machine refuses).
    Ignored,
    /// Already recorded: a redelivery.
    Duplicate,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Stale => "stale",
            Outcome::Ignored => "ignored",
            Outcome::Duplicate => "duplicate",
        }
    }

    /// The outcome of a message made of several reports (a Snapshot): applied if any applied.
    fn merge(self, other: Outcome) -> Outcome {
        use Outcome::*;
        match (self, other) {
            (Applied, _) | (_, Applied) => Applied,
            (Stale, _) | (_, Stale) => Stale,
            _ => Ignored,
        }
    }
}

/// A `Cancel` the caller must send (before committing) to the reporting cluster: the job is
/// still live there under a fenced-off epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleCancel {
    pub job: u64,
    pub epoch: u64,
}

/// Records the message as seen. `false`: it already was (a redelivery; change nothing).
pub async fn claim_message(conn: &mut PgConnection, cluster: &str, message_id: &str, kind: &str) -> DbResult<bool> {
    let done = sqlx::query(
        "INSERT INTO ingested_messages (cluster_id, message_id, kind, outcome) VALUES ($1, $2, $3, 'applied')
         ON CONFLICT (cluster_id, message_id) DO NOTHING",
    )
    .bind(cluster)
    .bind(message_id)
    .bind(kind)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets the recorded outcome of a claimed message.
pub async fn finish_message(
    conn: &mut PgConnection,
    cluster: &str,
    message_id: &str,
    outcome: Outcome,
) -> DbResult<()> {
    if matches!(outcome, Outcome::Duplicate | Outcome::Applied) {
        return Ok(());
    }
    sqlx::query("UPDATE ingested_messages SET outcome = $3 WHERE cluster_id = $1 AND message_id = $2")
        .bind(cluster)
        .bind(message_id)
        .bind(outcome.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Forgets idempotency records older than `keep`: by then the entries were acknowledged long
/// ago (or trimmed from the stream), so no redelivery can come.
pub async fn prune_ingested(db: impl PgExecutor<'_>, keep: std::time::Duration) -> DbResult<u64> {
    let cutoff = Utc::now() - chrono::Duration::from_std(keep).unwrap_or(chrono::Duration::days(7));
    let done = sqlx::query("DELETE FROM ingested_messages WHERE ingested_at < $1").bind(cutoff).execute(db).await?;
    Ok(done.rows_affected())
}

/// One job report with what it carries besides its state.
#[derive(Clone, Debug)]
pub struct JobReport<'a> {
    pub report: Report,
    pub job: u64,
    pub node: Option<&'a str>,
    pub devices: &'a [DeviceRef],
    pub at: DateTime<Utc>,
    pub reason: Option<&'a str>,
    /// How a replica ended, with its terminal state.
    pub exit: Option<ReplicaExit>,
    /// Set on the job_events row (one per message: only for `JobState` events).
    pub message_id: Option<&'a str>,
}

/// The actor of what a cluster's agent reports.
pub fn agent_actor(cluster: &str) -> String {
    format!("agent:{cluster}")
}

/// The cause a report's changes are recorded with: the agent's reason, else a default; cut to
/// the 2,000 characters the events' `cause` column holds.
pub fn report_cause(reason: Option<&str>) -> String {
    reason.filter(|s| !s.is_empty()).unwrap_or("reported by the agent").chars().take(2000).collect()
}

/// The job's row, locked for the rest of the transaction (reports about one job serialize).
async fn job_view(conn: &mut PgConnection, job_id: i64) -> DbResult<Option<JobView>> {
    /// State, epoch, cluster, whether the epoch's dispatch is unanswered, its answer deadline.
    type Row = (String, i64, Option<String>, bool, Option<DateTime<Utc>>);
    let row: Option<Row> = sqlx::query_as(
        "SELECT j.state, j.epoch, j.cluster_id, COALESCE(d.outcome = 'pending', false), d.answer_by
         FROM jobs j LEFT JOIN dispatches d ON d.job_id = j.id AND d.epoch = j.epoch
         WHERE j.id = $1 FOR UPDATE OF j",
    )
    .bind(job_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|(state, epoch, cluster_id, dispatch_pending, answer_by)| {
        let answer_by_ms = answer_by.map(|t| t.timestamp_millis());
        Ok(JobView { state: state.parse()?, epoch, cluster_id, dispatch_pending, answer_by_ms })
    })
    .transpose()
}

/// Where a job serves (a workspace's or a service replica's address), as the agent holding it
/// under `epoch` reported with its `running`; from another epoch, nothing.
pub async fn record_endpoint(conn: &mut PgConnection, job: u64, epoch: i64, endpoint: &str) -> DbResult<()> {
    let Ok(job_id) = i64::try_from(job) else { return Ok(()) };
    sqlx::query("UPDATE jobs SET endpoint = $3 WHERE id = $1 AND epoch = $2")
        .bind(job_id)
        .bind(epoch)
        .bind(endpoint)
        .execute(conn)
        .await?;
    Ok(())
}

/// Applies one report about a job. Returns the outcome and, for a live stale report, the
/// Cancel to send (once per job, epoch and cluster).
/// A checkpoint a job acknowledged before being stopped, as its agent reported it (a job-level
/// report carrying the reference): kept on the job (`checkpoint_ref`, and in the stored spec
/// for the next Dispatch) with an event. Fenced like any report: only from the cluster and
/// epoch that hold the job; a redelivery changes nothing.
pub async fn record_checkpoint(
    conn: &mut PgConnection,
    job: u64,
    reference: &str,
    origin: &EventOrigin<'_>,
) -> DbResult<Outcome> {
    let (Ok(job_id), Some(cluster), Some(epoch)) = (i64::try_from(job), origin.cluster_id, origin.epoch) else {
        return Ok(Outcome::Ignored);
    };
    let state: Option<String> = sqlx::query_scalar(
        "UPDATE jobs SET checkpoint_ref = $4, checkpoint_at = COALESCE($5, now()), updated_at = now(),
           spec = CASE WHEN spec ? 'checkpoint'
                       THEN jsonb_set(spec, '{checkpoint,resume_from}', to_jsonb($4::text)) ELSE spec END
         WHERE id = $1 AND cluster_id = $2 AND epoch = $3
         RETURNING state",
    )
    .bind(job_id)
    .bind(cluster)
    .bind(epoch)
    .bind(reference)
    .bind(origin.at)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(state) = state else { return Ok(Outcome::Ignored) };
    let cause = format!("checkpoint written: {reference}");
    let actor = agent_actor(cluster);
    jobs::note_job_event(conn, job_id, &state, Cause { cause: &cause, actor: &actor }, origin).await?;
    Ok(Outcome::Applied)
}

pub async fn apply_job_report(conn: &mut PgConnection, r: &JobReport<'_>) -> DbResult<(Outcome, Option<StaleCancel>)> {
    let Ok(job_id) = i64::try_from(r.job) else { return Ok((Outcome::Ignored, None)) };
    let Some(view) = job_view(conn, job_id).await? else {
        return Ok((Outcome::Ignored, None));
    };
    let cluster = r.report.cluster.as_str();
    // The unit the report is about: (task id, replica id, current state).
    let unit: Option<(i64, Option<i64>, UnitState)> = match &r.report.level {
        Level::Job => None,
        Level::Task(name) => {
            let row: Option<(i64, String)> =
                sqlx::query_as("SELECT id, state FROM tasks WHERE job_id = $1 AND name = $2")
                    .bind(job_id)
                    .bind(name)
                    .fetch_optional(&mut *conn)
                    .await?;
            row.map(|(id, s)| s.parse().map(|s| (id, None, s))).transpose()?
        }
        Level::Replica { task, index } => {
            let Ok(index) = i32::try_from(*index) else { return Ok((Outcome::Ignored, None)) };
            let key = (job_id, task.clone(), index);
            let found = crate::db::ingest_batch::replica_states(&mut *conn, std::slice::from_ref(&key)).await?;
            found.get(&key).map(|&(t, id, s)| (t, Some(id), s))
        }
    };
    let plan = match decide(&view, &r.report, unit.map(|u| u.2)) {
        Decision::Stale { cancel } => {
            let mut out = None;
            if cancel && r.report.epoch > 0 {
                let inserted = sqlx::query(
                    "INSERT INTO stale_cancels (job_id, epoch, cluster_id) VALUES ($1, $2, $3)
                     ON CONFLICT DO NOTHING",
                )
                .bind(job_id)
                .bind(r.report.epoch)
                .bind(cluster)
                .execute(&mut *conn)
                .await?;
                if inserted.rows_affected() == 1 {
                    out = Some(StaleCancel { job: r.job, epoch: r.report.epoch as u64 });
                }
            }
            return Ok((Outcome::Stale, out));
        }
        Decision::Ignore { why } => {
            tracing::debug!(job = r.job, cluster, state = ?r.report.state, why, "report changes nothing");
            return Ok((Outcome::Ignored, None));
        }
        Decision::Late => {
            let epoch = r.report.epoch;
            let cause = format!("dispatch to {cluster} (epoch {epoch}) timed out: placed after its answer deadline");
            let by = Cause { cause: &cause, actor: "system:ingest" };
            // The Cancel for the epoch is owed like any timed-out dispatch's (`owed_cancels`).
            if super::dispatch::time_out(conn, job_id, epoch, "placed after its answer deadline", by).await? {
                requeue_units(conn, job_id, by).await?;
            }
            return Ok((Outcome::Stale, None));
        }
        Decision::Apply(plan) => plan,
    };
    let actor = agent_actor(cluster);
    let cause = report_cause(r.reason);
    let by = Cause { cause: &cause, actor: &actor };
    let origin = EventOrigin {
        at: Some(r.at),
        cluster_id: Some(cluster),
        epoch: Some(r.report.epoch),
        message_id: r.message_id,
    };
    if let Some(answer) = plan.answer {
        let accepted = answer == DispatchAnswer::Acknowledged;
        super::dispatch::answer_dispatch(
            &mut *conn,
            job_id,
            r.report.epoch,
            accepted,
            (!accepted).then_some(cause.as_str()),
        )
        .await?;
    }
    if let Some(to) = plan.job_to {
        let moved = jobs::transition_job_from(conn, job_id, to, by, &origin).await?.is_some();
        if let Some(LedgerEffect::Close { by_preemption }) = job_closes_ledger(to) {
            close_intervals(conn, "job_id", job_id, r.at, by_preemption).await?;
        }
        if to == JobState::Rejected && moved {
            // Given back after placing (a placement that missed its deadline): its replicas wait again.
            requeue_units(conn, job_id, by).await?;
        }
        if let Some(next) = requeue_after(to).filter(|_| moved) {
            // A user asked for the eviction to suspend it: it waits for resumeJob instead.
            let (next, requeue) = if crate::db::suspend::suspension_requested(conn, job_id).await? {
                (JobState::Suspended, Cause { cause: "suspended", actor: "system:ingest" })
            } else {
                (next, Cause { cause: "requeued after preemption", actor: "system:ingest" })
            };
            jobs::transition_job(conn, job_id, next, requeue).await?;
            requeue_units(conn, job_id, requeue).await?;
        }
    }
    if let (Some(to), Some((task_id, replica, from))) = (plan.unit_to, unit) {
        match replica {
            None => {
                jobs::transition_task(conn, task_id, to, by).await?;
            }
            Some(replica_id) => {
                let devices = serde_json::to_value(r.devices).map_err(|_| DbError::validation("devices"))?;
                let report = ReplicaReport {
                    state: to,
                    node: r.node,
                    devices: (!r.devices.is_empty()).then_some(&devices),
                    exit: r.exit,
                };
                jobs::transition_replica(conn, replica_id, &report, by, &origin).await?;
                match ledger_effect(from, to) {
                    LedgerEffect::Open => open_interval(conn, cluster, job_id, task_id, replica_id, r).await?,
                    LedgerEffect::Close { by_preemption } => {
                        close_intervals(conn, "replica_id", replica_id, r.at, by_preemption).await?
                    }
                    LedgerEffect::None => {}
                }
            }
        }
    }
    Ok((Outcome::Applied, None))
}

/// Takes the tasks and replicas of a requeued job back to `pending`, each step with its
/// event, so the agent's reports of the next run apply (and open new ledger intervals).
async fn requeue_units(conn: &mut PgConnection, job_id: i64, by: Cause<'_>) -> DbResult<()> {
    let replicas: Vec<(i64, String)> = sqlx::query_as("SELECT id, state FROM replicas WHERE job_id = $1 ORDER BY id")
        .bind(job_id)
        .fetch_all(&mut *conn)
        .await?;
    for (id, state) in replicas {
        for step in steps_to_pending(state.parse()?) {
            let report = ReplicaReport { state: step, node: None, devices: None, exit: None };
            jobs::transition_replica(conn, id, &report, by, &EventOrigin::default()).await?;
        }
    }
    let tasks: Vec<(i64, String)> = sqlx::query_as("SELECT id, state FROM tasks WHERE job_id = $1 ORDER BY id")
        .bind(job_id)
        .fetch_all(&mut *conn)
        .await?;
    for (id, state) in tasks {
        for step in steps_to_pending(state.parse()?) {
            jobs::transition_task(conn, id, step, by).await?;
        }
    }
    Ok(())
}

/// Opens the replica's usage interval at the agent's time. At most one open interval per
/// replica, and the (replica, start) key makes a redelivered start a no-op.
async fn open_interval(
    conn: &mut PgConnection,
    cluster: &str,
    job_id: i64,
    task_id: i64,
    replica_id: i64,
    r: &JobReport<'_>,
) -> DbResult<()> {
    let resources = ingest_batch::task_resources(conn, &[task_id]).await?.remove(&task_id).unwrap_or_default();
    if reports::replica_gpu_milli(r.devices, resources.gpus, resources.gpu_milli) <= 0 {
        return Ok(()); // nothing billable: a CPU-only replica
    }
    let inventory = match (r.node, r.devices.first()) {
        (Some(node), Some(d)) => {
            ingest_batch::inventory_models(conn, cluster, &[(node.to_owned(), i64::from(d.index))])
                .await?
                .pop()
                .flatten()
        }
        _ => None,
    };
    let interval = ingest_batch::new_interval((job_id, task_id, replica_id), r.devices, &resources, inventory, r.at);
    ingest_batch::open_intervals(conn, cluster, interval.as_slice()).await
}

/// Ends the open intervals of one replica or of a whole job (`column`: `replica_id` or
/// `job_id`, never user input). An end before the start (clock skew between reports) is
/// clamped to the start.
async fn close_intervals(
    conn: &mut PgConnection,
    column: &'static str,
    id: i64,
    at: DateTime<Utc>,
    by_preemption: bool,
) -> DbResult<()> {
    sqlx::query(&format!(
        "UPDATE usage_ledger SET ended_at = GREATEST(started_at, $2), ended_by_preemption = $3
         WHERE {column} = $1 AND ended_at IS NULL"
    ))
    .bind(id)
    .bind(at)
    .bind(by_preemption)
    .execute(conn)
    .await?;
    Ok(())
}

/// Hello: the agent's version and capabilities.
pub async fn record_hello(conn: &mut PgConnection, cluster: &str, version: &str, caps: &[String]) -> DbResult<()> {
    // An agent says Hello when it starts: it may have lost its queue settings with its state.
    sqlx::query("UPDATE clusters SET agent_version = $2, agent_capabilities = $3, queues_sent = NULL, cordons_sent = NULL WHERE id = $1")
        .bind(cluster)
        .bind(version)
        .bind(caps)
        .execute(conn)
        .await?;
    Ok(())
}

/// Capacity: the latest summary and when the agent sent it. A summary older than the stored
/// one (an entry claimed late from a dead consumer) does not overwrite it.
pub async fn record_capacity(
    conn: &mut PgConnection,
    cluster: &str,
    summary: &CapacitySummary,
    sent_at: DateTime<Utc>,
) -> DbResult<()> {
    let value = serde_json::to_value(summary).map_err(|_| DbError::validation("capacity"))?;
    sqlx::query(
        "UPDATE clusters SET capacity = $2, capacity_at = $3
         WHERE id = $1 AND (capacity_at IS NULL OR capacity_at <= $3)",
    )
    .bind(cluster)
    .bind(value)
    .bind(sent_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Inventory: replaces the cluster's node list.
pub async fn record_inventory(conn: &mut PgConnection, cluster: &str, nodes: &[NodeInfo]) -> DbResult<()> {
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    sqlx::query("DELETE FROM cluster_nodes WHERE cluster_id = $1 AND NOT (name = ANY($2))")
        .bind(cluster)
        .bind(&names)
        .execute(&mut *conn)
        .await?;
    // One statement for the whole list (a node named twice keeps its last entry).
    let mut by_name: BTreeMap<&str, &NodeInfo> = BTreeMap::new();
    for n in nodes {
        by_name.insert(n.name.as_str(), n);
    }
    if !by_name.is_empty() {
        let nodes: Vec<&NodeInfo> = by_name.into_values().collect();
        let mut labels = Vec::with_capacity(nodes.len());
        let mut gpus = Vec::with_capacity(nodes.len());
        for n in &nodes {
            labels.push(serde_json::to_string(&n.labels).map_err(|_| DbError::validation("labels"))?);
            gpus.push(serde_json::to_string(&n.gpus).map_err(|_| DbError::validation("gpus"))?);
        }
        sqlx::query(
            "INSERT INTO cluster_nodes (cluster_id, name, labels, rack, cpu_milli, memory_mib, healthy, gpus, pool)
             SELECT $1, u.name, u.labels::jsonb, u.rack, u.cpu, u.memory, u.healthy, u.gpus::jsonb, u.pool
             FROM UNNEST($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bool[], $8::text[],
                         $9::text[])
               AS u(name, labels, rack, cpu, memory, healthy, gpus, pool)
             ON CONFLICT (cluster_id, name) DO UPDATE SET labels = EXCLUDED.labels, rack = EXCLUDED.rack,
               cpu_milli = EXCLUDED.cpu_milli, memory_mib = EXCLUDED.memory_mib, healthy = EXCLUDED.healthy,
               gpus = EXCLUDED.gpus, pool = EXCLUDED.pool, updated_at = now()",
        )
        .bind(cluster)
        .bind(nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>())
        .bind(&labels)
        .bind(nodes.iter().map(|n| n.rack.as_deref()).collect::<Vec<_>>())
        .bind(nodes.iter().map(|n| i64::try_from(n.cpu_milli).unwrap_or(i64::MAX)).collect::<Vec<_>>())
        .bind(nodes.iter().map(|n| i64::try_from(n.memory_mib).unwrap_or(i64::MAX)).collect::<Vec<_>>())
        .bind(nodes.iter().map(|n| n.healthy).collect::<Vec<_>>())
        .bind(&gpus)
        .bind(nodes.iter().map(|n| n.pool.as_deref()).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query("UPDATE clusters SET inventory_at = now() WHERE id = $1").bind(cluster).execute(&mut *conn).await?;
    Ok(())
}

/// Metrics: the latest reading per device and per replica, each job's utilization aggregates
/// and history, and the cluster's history. Returns how many jobs got GPU samples.
pub async fn record_metrics(
    conn: &mut PgConnection,
    cluster: &str,
    gpus: &[GpuMetrics],
    replicas: &[ReplicaUsage],
    at: DateTime<Utc>,
) -> DbResult<usize> {
    record_replica_usage(&mut *conn, cluster, replicas, at).await?;
    // One statement per table, not one per GPU: a cluster of 1,000 nodes sends 8,000 readings
    // every few seconds, and a statement each put ingestion behind for good (the job states
    // queued behind the Metrics never reached the api). A device read twice in one message
    // keeps its last reading (one row may be updated once per statement).
    // A device index beyond the column's range names no real GPU: skipped, not folded onto
    // another device's row.
    let mut latest: BTreeMap<(&str, u32), &GpuMetrics> = BTreeMap::new();
    for g in gpus.iter().filter(|g| g.busy_pct.is_finite() && i32::try_from(g.index).is_ok()) {
        latest.insert((g.node.as_str(), g.index), g);
    }
    if !latest.is_empty() {
        let readings: Vec<&GpuMetrics> = latest.into_values().collect();
        let sample = reports::cluster_sample(readings.iter().copied());
        crate::db::metric_history::record_cluster(&mut *conn, cluster, at, &sample).await?;
        sqlx::query(
            "INSERT INTO gpu_metrics (cluster_id, node, index, busy_pct, memory_used_mib, power_w, temperature_c, at)
             SELECT $1, u.node, u.index, u.busy, u.memory, u.power, u.temperature, $8
             FROM UNNEST($2::text[], $3::int[], $4::real[], $5::bigint[], $6::real[], $7::real[])
               AS u(node, index, busy, memory, power, temperature)
             ON CONFLICT (cluster_id, node, index) DO UPDATE SET busy_pct = EXCLUDED.busy_pct,
               memory_used_mib = EXCLUDED.memory_used_mib, power_w = EXCLUDED.power_w,
               temperature_c = EXCLUDED.temperature_c, at = EXCLUDED.at
             WHERE gpu_metrics.at <= EXCLUDED.at",
        )
        .bind(cluster)
        .bind(readings.iter().map(|g| g.node.as_str()).collect::<Vec<_>>())
        .bind(readings.iter().map(|g| g.index as i32).collect::<Vec<_>>())
        .bind(readings.iter().map(|g| g.busy_pct.clamp(0.0, 100.0)).collect::<Vec<_>>())
        .bind(readings.iter().map(|g| i64::try_from(g.memory_used_mib).unwrap_or(i64::MAX)).collect::<Vec<_>>())
        .bind(readings.iter().map(|g| g.power_w).collect::<Vec<_>>())
        .bind(readings.iter().map(|g| g.temperature_c).collect::<Vec<_>>())
        .bind(at)
        .execute(&mut *conn)
        .await?;
    }
    let rows: Vec<(i64, String, Option<Value>)> = sqlx::query_as(
        "SELECT job_id, node, devices FROM replicas
         WHERE cluster_id = $1 AND state = 'running' AND node IS NOT NULL",
    )
    .bind(cluster)
    .fetch_all(&mut *conn)
    .await?;
    let running: Vec<RunningReplica> = rows
        .into_iter()
        .map(|(job_id, node, devices)| {
            let devices: Vec<DeviceRef> = devices.and_then(|d| serde_json::from_value(d).ok()).unwrap_or_default();
            RunningReplica { job_id, node, devices: devices.into_iter().map(|d| d.index).collect() }
        })
        .collect();
    let per_job = reports::attribute_metrics(gpus, &running);
    if !per_job.is_empty() {
        let samples: Vec<(&i64, &reports::JobSample)> = per_job.iter().collect();
        sqlx::query(
            "INSERT INTO job_utilization (job_id, samples, busy_pct_sum, busy_pct_max, memory_used_mib_sum,
                                          memory_used_mib_max, last_busy_pct, last_memory_used_mib, last_active_at)
             SELECT j, n, bs, bm, ms, mm, lb, lm, CASE WHEN bm >= $9 THEN now() END
             FROM UNNEST($1::bigint[], $2::bigint[], $3::float8[], $4::real[], $5::float8[], $6::bigint[],
                         $7::real[], $8::bigint[]) AS u (j, n, bs, bm, ms, mm, lb, lm)
             ON CONFLICT (job_id) DO UPDATE SET
               last_active_at = COALESCE(EXCLUDED.last_active_at, job_utilization.last_active_at),
               samples = job_utilization.samples + EXCLUDED.samples,
               busy_pct_sum = job_utilization.busy_pct_sum + EXCLUDED.busy_pct_sum,
               busy_pct_max = GREATEST(job_utilization.busy_pct_max, EXCLUDED.busy_pct_max),
               memory_used_mib_sum = job_utilization.memory_used_mib_sum + EXCLUDED.memory_used_mib_sum,
               memory_used_mib_max = GREATEST(job_utilization.memory_used_mib_max, EXCLUDED.memory_used_mib_max),
               last_busy_pct = EXCLUDED.last_busy_pct, last_memory_used_mib = EXCLUDED.last_memory_used_mib,
               updated_at = now()",
        )
        .bind(samples.iter().map(|(id, _)| **id).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.samples).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.busy_sum).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.busy_max).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.memory_sum).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.memory_max).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.busy_mean()).collect::<Vec<_>>())
        .bind(samples.iter().map(|(_, s)| s.memory_mean()).collect::<Vec<_>>())
        .bind(crate::domain::ACTIVE_BUSY_PCT)
        .execute(&mut *conn)
        .await?;
        let history: Vec<(i64, &reports::JobSample)> = samples.iter().map(|(id, s)| (**id, *s)).collect();
        crate::db::metric_history::record(&mut *conn, at, &history).await?;
    }
    Ok(per_job.len())
}

/// Replica usage: the latest reading of each replica that runs here now (a reading of a
/// replica that ended, moved or never ran here is dropped, as is one older than the stored
/// one), and each job's totals into its aggregates and history.
async fn record_replica_usage(
    conn: &mut PgConnection,
    cluster: &str,
    replicas: &[ReplicaUsage],
    at: DateTime<Utc>,
) -> DbResult<()> {
    if replicas.is_empty() {
        return Ok(());
    }
    let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let column = |f: fn(&ReplicaUsage) -> u64| replicas.iter().map(|r| clamp(f(r))).collect::<Vec<i64>>();
    let accepted: Vec<(i64, i64, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "INSERT INTO replica_usage AS ru (replica_id, cpu_milli, memory_mib, disk_read_bps, disk_write_bps,
                                          net_rx_bps, net_tx_bps, at)
         SELECT DISTINCT ON (r.id) r.id, u.cpu, u.mem, u.dr, u.dw, u.rx, u.tx, $11
         FROM UNNEST($2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
                     $9::bigint[], $10::bigint[]) AS u (j, task, idx, cpu, mem, dr, dw, rx, tx)
         JOIN tasks t ON t.job_id = u.j AND t.name = u.task
         JOIN replicas r ON r.task_id = t.id AND r.index = u.idx
         WHERE r.cluster_id = $1 AND r.state = 'running'
         ORDER BY r.id
         ON CONFLICT (replica_id) DO UPDATE SET cpu_milli = EXCLUDED.cpu_milli, memory_mib = EXCLUDED.memory_mib,
           disk_read_bps = EXCLUDED.disk_read_bps, disk_write_bps = EXCLUDED.disk_write_bps,
           net_rx_bps = EXCLUDED.net_rx_bps, net_tx_bps = EXCLUDED.net_tx_bps, at = EXCLUDED.at
         WHERE ru.at <= EXCLUDED.at
         RETURNING (SELECT job_id FROM replicas WHERE id = ru.replica_id), cpu_milli, memory_mib, disk_read_bps,
                   disk_write_bps, net_rx_bps, net_tx_bps",
    )
    .bind(cluster)
    .bind(replicas.iter().map(|r| clamp(r.job)).collect::<Vec<_>>())
    .bind(replicas.iter().map(|r| r.task.as_str()).collect::<Vec<_>>())
    .bind(replicas.iter().map(|r| i64::from(r.replica)).collect::<Vec<_>>())
    .bind(column(|r| r.cpu_milli))
    .bind(column(|r| r.memory_mib))
    .bind(column(|r| r.disk_read_bps))
    .bind(column(|r| r.disk_write_bps))
    .bind(column(|r| r.net_rx_bps))
    .bind(column(|r| r.net_tx_bps))
    .bind(at)
    .fetch_all(&mut *conn)
    .await?;
    let readings: Vec<(i64, reports::JobUsage)> = accepted
        .into_iter()
        .map(|(job, cpu_milli, memory_mib, disk_read_bps, disk_write_bps, net_rx_bps, net_tx_bps)| {
            (job, reports::JobUsage { cpu_milli, memory_mib, disk_read_bps, disk_write_bps, net_rx_bps, net_tx_bps })
        })
        .collect();
    let totals: Vec<(i64, reports::JobUsage)> = reports::total_usage(&readings).into_iter().collect();
    if totals.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO job_utilization (job_id, usage_samples, cpu_milli_sum, cpu_milli_max, memory_mib_sum, memory_mib_max)
         SELECT j, 1, cpu, cpu, mem, mem FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[]) AS u (j, cpu, mem)
         ON CONFLICT (job_id) DO UPDATE SET
           usage_samples = job_utilization.usage_samples + 1,
           cpu_milli_sum = job_utilization.cpu_milli_sum + EXCLUDED.cpu_milli_sum,
           cpu_milli_max = GREATEST(job_utilization.cpu_milli_max, EXCLUDED.cpu_milli_max),
           memory_mib_sum = job_utilization.memory_mib_sum + EXCLUDED.memory_mib_sum,
           memory_mib_max = GREATEST(job_utilization.memory_mib_max, EXCLUDED.memory_mib_max)",
    )
    .bind(totals.iter().map(|(j, _)| *j).collect::<Vec<_>>())
    .bind(totals.iter().map(|(_, u)| u.cpu_milli).collect::<Vec<_>>())
    .bind(totals.iter().map(|(_, u)| u.memory_mib).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await?;
    crate::db::metric_history::record_usage(&mut *conn, at, &totals).await
}

/// Snapshot: every job the agent lists is reconciled like a job report (and each replica like
/// a replica report): stale ones get their Cancel, current ones catch up (an `unknown` job the
/// agent reports running is running again). Jobs the database places there that the agent
/// does not list are resolved by [`absent_from_snapshot`].
pub async fn reconcile_snapshot(
    conn: &mut PgConnection,
    cluster: &str,
    jobs: &[JobSnapshot],
    at: DateTime<Utc>,
) -> DbResult<(Outcome, Vec<StaleCancel>)> {
    let mut outcome = Outcome::Ignored;
    let mut cancels = Vec::new();
    let mut listed = BTreeSet::new();
    for j in jobs {
        listed.insert(j.job);
        let Ok(epoch) = i64::try_from(j.epoch) else { continue };
        let job_level = JobReport {
            report: Report { cluster: cluster.to_owned(), epoch, level: Level::Job, state: j.state, appended_ms: None },
            job: j.job,
            node: None,
            devices: &[],
            at,
            reason: Some("agent snapshot"),
            exit: None,
            message_id: None,
        };
        let (o, c) = apply_job_report(conn, &job_level).await?;
        outcome = outcome.merge(o);
        cancels.extend(c);
        if o == Outcome::Stale {
            continue;
        }
        for r in &j.replicas {
            let rep = JobReport {
                report: Report {
                    cluster: cluster.to_owned(),
                    epoch,
                    level: Level::Replica { task: r.task.clone(), index: r.replica },
                    state: r.state,
                    appended_ms: None,
                },
                job: j.job,
                node: r.node.as_deref(),
                devices: &r.devices,
                at,
                reason: Some("agent snapshot"),
                exit: None,
                message_id: None,
            };
            let (o, c) = apply_job_report(conn, &rep).await?;
            outcome = outcome.merge(o);
            cancels.extend(c);
        }
    }
    let held: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, state FROM jobs
         WHERE cluster_id = $1 AND state IN ('scheduled', 'running', 'preempting', 'unknown') ORDER BY id",
    )
    .bind(cluster)
    .fetch_all(&mut *conn)
    .await?;
    let actor = agent_actor(cluster);
    let by = Cause { cause: "the cluster's snapshot does not list the job: it no longer runs there", actor: &actor };
    for (id, state) in held {
        if u64::try_from(id).is_ok_and(|id| listed.contains(&id)) {
            continue;
        }
        let state: JobState = state.parse()?;
        if let Some(to) = absent_from_snapshot(state) {
            let origin = EventOrigin { at: Some(at), cluster_id: Some(cluster), ..Default::default() };
            jobs::transition_job_from(conn, id, to, by, &origin).await?;
            if let Some(LedgerEffect::Close { by_preemption }) = job_closes_ledger(to) {
                close_intervals(conn, "job_id", id, at, by_preemption).await?;
            }
            outcome = Outcome::Applied;
        }
    }
    Ok((outcome, cancels))
}

/// Health as observed by the monitor; `seen_at`: a heartbeat was present at that time;
/// `serves`: the control plane that heartbeat names (kept when `None`).
pub async fn set_health(
    db: impl PgExecutor<'_>,
    cluster: &str,
    health: &str,
    seen_at: Option<DateTime<Utc>>,
    serves: Option<&str>,
) -> DbResult<()> {
    sqlx::query(
        "UPDATE clusters SET health = $2,
           last_heartbeat = CASE WHEN $3::timestamptz IS NULL THEN last_heartbeat
                                 ELSE GREATEST(last_heartbeat, $3) END,
           agent_control_plane = COALESCE($4, agent_control_plane)
         WHERE id = $1",
    )
    .bind(cluster)
    .bind(health)
    .bind(seen_at)
    .bind(serves)
    .execute(db)
    .await?;
    Ok(())
}

/// What a cluster loss did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossReport {
    pub unknown: usize,
}

/// A cluster silent past the loss timeout: its placed and running jobs become `unknown` (see
/// [`on_cluster_lost`]; jobs it has not placed are left to their answer deadline). One transaction
/// per job, so a long list does not hold every lock at once; idempotent (a second call finds
/// nothing left to change).
pub async fn handle_cluster_loss(
    pool: &PgPool,
    cluster: &str,
    silent_for: std::time::Duration,
) -> DbResult<LossReport> {
    let ids: Vec<(i64,)> = sqlx::query_as(
        "SELECT id FROM jobs WHERE cluster_id = $1 AND state IN ('scheduled', 'running', 'preempting')
         ORDER BY id",
    )
    .bind(cluster)
    .fetch_all(pool)
    .await?;
    let mut out = LossReport::default();
    let cause = format!("cluster {cluster} silent for {}s (loss timeout)", silent_for.as_secs());
    let by = Cause { cause: &cause, actor: "system:health" };
    for (id,) in ids {
        let mut tx = pool.begin().await?;
        // Re-read under the lock: the job may have moved since the list was taken.
        let row: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT state, cluster_id FROM jobs WHERE id = $1 FOR UPDATE")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((state, Some(c))) = row else { continue };
        if c != cluster {
            continue;
        }
        match on_cluster_lost(state.parse()?) {
            LossAction::MarkUnknown => {
                jobs::transition_job(&mut tx, id, JobState::Unknown, by).await?;
                out.unknown += 1;
            }
            LossAction::Nothing => {}
        }
        tx.commit().await?;
    }
    Ok(out)
}

/// A cluster as the health monitor needs it.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct ClusterLiveness {
    pub id: String,
    pub health: String,
    pub last_heartbeat: Option<DateTime<Utc>>,
    pub agent_control_plane: Option<String>,
}

/// The clusters not retired: a retired cluster's silence is no loss.
pub async fn cluster_liveness(db: impl PgExecutor<'_>) -> DbResult<Vec<ClusterLiveness>> {
    Ok(sqlx::query_as(
        "SELECT id, health, last_heartbeat, agent_control_plane FROM clusters WHERE retired_at IS NULL ORDER BY id",
    )
    .fetch_all(db)
    .await?)
}

/// Every registered cluster id not retired (the ingestion loop reads their event streams; a
/// retired cluster held no work when it was retired).
pub async fn cluster_ids(db: impl PgExecutor<'_>) -> DbResult<Vec<String>> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT id FROM clusters WHERE retired_at IS NULL ORDER BY id").fetch_all(db).await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// What the agent said about itself, and when its observations last arrived.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct AgentInfo {
    pub agent_version: Option<String>,
    pub agent_capabilities: Vec<String>,
    pub capacity_at: Option<DateTime<Utc>>,
    pub inventory_at: Option<DateTime<Utc>>,
    pub agent_control_plane: Option<String>,
}

pub async fn agent_info(db: impl PgExecutor<'_>, cluster: &str) -> DbResult<AgentInfo> {
    sqlx::query_as(
        "SELECT agent_version, agent_capabilities, capacity_at, inventory_at, agent_control_plane
         FROM clusters WHERE id = $1",
    )
    .bind(cluster)
    .fetch_optional(db)
    .await?
    .ok_or(DbError::NotFound("cluster"))
}

/// A node as the last Inventory listed it.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct NodeRow {
    pub name: String,
    pub labels: Value,
    pub rack: Option<String>,
    pub pool: Option<String>,
    pub cpu_milli: i64,
    pub memory_mib: i64,
    pub healthy: bool,
    /// grus-protocol `GpuInfo` list.
    pub gpus: Value,
    pub updated_at: DateTime<Utc>,
}

pub async fn cluster_nodes(db: impl PgExecutor<'_>, cluster: &str) -> DbResult<Vec<NodeRow>> {
    Ok(sqlx::query_as(
        "SELECT name, labels, rack, pool, cpu_milli, memory_mib, healthy, gpus, updated_at FROM cluster_nodes
         WHERE cluster_id = $1 ORDER BY name",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?)
}

/// The distinct node shapes of every registered cluster (pool, CPU, memory and each GPU's model
/// and MIG mode; names, indexes and UUIDs dropped, so a fleet of identical nodes is a few rows).
pub async fn fleet_node_shapes(db: impl PgExecutor<'_>) -> DbResult<Vec<NodeInfo>> {
    let rows: Vec<(Option<String>, i64, i64, Option<Value>)> = sqlx::query_as(
        "SELECT DISTINCT n.pool, n.cpu_milli, n.memory_mib,
                (SELECT jsonb_agg(jsonb_build_object('index', 0, 'model', g->>'model', 'memory_mib', 0, 'healthy', true,
                                                     'mig', COALESCE((g->>'mig')::boolean, false))
                                  ORDER BY g->>'model', COALESCE((g->>'mig')::boolean, false))
                 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.gpus) = 'array' THEN n.gpus ELSE '[]' END) g)
         FROM cluster_nodes n",
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(pool, cpu, memory, gpus)| NodeInfo {
            name: String::new(),
            labels: BTreeMap::new(),
            rack: None,
            pool,
            cpu_milli: u64::try_from(cpu).unwrap_or(0),
            memory_mib: u64::try_from(memory).unwrap_or(0),
            healthy: true,
            gpus: gpus.and_then(|g| serde_json::from_value(g).ok()).unwrap_or_default(),
        })
        .collect())
}

/// The latest reading of one device.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct GpuMetricRow {
    pub node: String,
    pub index: i32,
    pub busy_pct: f32,
    pub memory_used_mib: i64,
    pub power_w: Option<f32>,
    pub temperature_c: Option<f32>,
    pub at: DateTime<Utc>,
}

pub async fn gpu_metrics(db: impl PgExecutor<'_>, cluster: &str) -> DbResult<Vec<GpuMetricRow>> {
    Ok(sqlx::query_as(
        "SELECT node, index, busy_pct, memory_used_mib, power_w, temperature_c, at FROM gpu_metrics
         WHERE cluster_id = $1",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?)
}

/// GPU milli held per (node, device index) by the cluster's placed and running replicas, as
/// the agents reported them.
pub async fn allocated_milli(
    db: impl PgExecutor<'_>,
    cluster: &str,
) -> DbResult<std::collections::BTreeMap<(String, u32), u32>> {
    let rows: Vec<(String, Option<Value>)> = sqlx::query_as(
        "SELECT node, devices FROM replicas
         WHERE cluster_id = $1 AND state IN ('placed', 'running') AND node IS NOT NULL",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?;
    let mut out = std::collections::BTreeMap::new();
    for (node, devices) in rows {
        let devices: Vec<DeviceRef> = devices.and_then(|d| serde_json::from_value(d).ok()).unwrap_or_default();
        for d in devices {
            let slot: &mut u32 = out.entry((node.clone(), d.index)).or_default();
            *slot = slot.saturating_add(d.milli);
        }
    }
    Ok(out)
}

/// A job's GPU utilization aggregates (from Metrics of the devices its running replicas held).
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct UtilizationRow {
    pub samples: i64,
    pub busy_pct_sum: f64,
    pub busy_pct_max: f32,
    pub memory_used_mib_sum: f64,
    pub memory_used_mib_max: i64,
    pub last_busy_pct: Option<f32>,
    pub last_memory_used_mib: Option<i64>,
    pub updated_at: DateTime<Utc>,
    pub usage_samples: i64,
    pub cpu_milli_sum: f64,
    pub cpu_milli_max: i64,
    pub memory_mib_sum: f64,
    pub memory_mib_max: i64,
}

pub async fn job_utilization(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Option<UtilizationRow>> {
    Ok(sqlx::query_as(
        "SELECT samples, busy_pct_sum, busy_pct_max, memory_used_mib_sum, memory_used_mib_max, last_busy_pct,
                last_memory_used_mib, updated_at, usage_samples, cpu_milli_sum, cpu_milli_max, memory_mib_sum,
                memory_mib_max
         FROM job_utilization WHERE job_id = $1",
    )
    .bind(job_id)
    .fetch_optional(db)
    .await?)
}

/// Sets a cluster's display name (registration).
pub async fn set_display_name(db: impl PgExecutor<'_>, cluster: &str, name: Option<&str>) -> DbResult<()> {
    sqlx::query("UPDATE clusters SET display_name = $2 WHERE id = $1").bind(cluster).bind(name).execute(db).await?;
    Ok(())
}

/// Replaces a cluster's agent token hash: the old token stops working at once.
pub async fn rotate_agent_token(db: impl PgExecutor<'_>, cluster: &str, hash: &[u8; 32]) -> DbResult<()> {
    let done = sqlx::query("UPDATE clusters SET agent_token_hash = $2, agent_token_rotated_at = now() WHERE id = $1 AND retired_at IS NULL")
        .bind(cluster)
        .bind(&hash[..])
        .execute(db)
        .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound("cluster"));
    }
    Ok(())
}
