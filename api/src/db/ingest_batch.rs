//! The set-based statements of batched ingestion (`ingest::batch`): what a run of agent
//! `JobState` events reads (every job, task and replica it names, locked, in one statement
//! each) and writes (events, state changes, dispatch answers, usage intervals: one statement
//! per kind, whatever the number of events), inside the caller's transaction.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use grus_protocol::wire::{DeviceRef, ReplicaExit, ResourcesSpec};
use serde_json::Value;
use sqlx::PgConnection;

use super::DbResult;
use crate::domain::reports::{replica_gpu_milli, JobView};
use crate::domain::{JobState, UnitState};

/// Makes the transaction's statements probe indexes row by row. Plans are generic
/// (`db::connect`) and cached per connection, made from the statistics of the moment: planned
/// while the tables were small (a new database, before autovacuum analyzed them), these
/// statements hash-joined whole `jobs`, `tasks` and `job_events` scans into every batch, which
/// cost more than the whole batch saved. A batch names a few hundred rows at most, so an index
/// nested loop is always the right plan. Transaction-local; statements of a batch are planned
/// only inside one.
pub async fn prefer_index_probes(conn: &mut PgConnection) -> DbResult<()> {
    sqlx::query(
        "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
                set_config('enable_mergejoin', 'off', true)",
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records the messages as seen; returns the ids that were new (the others are redeliveries).
pub async fn claim_messages(
    conn: &mut PgConnection,
    cluster: &str,
    ids: &[&str],
    kinds: &[&str],
) -> DbResult<HashSet<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "INSERT INTO ingested_messages (cluster_id, message_id, kind, outcome)
         SELECT $1, u.m, u.k, 'applied' FROM UNNEST($2::text[], $3::text[]) AS u(m, k)
         ON CONFLICT (cluster_id, message_id) DO NOTHING RETURNING message_id",
    )
    .bind(cluster)
    .bind(ids)
    .bind(kinds)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// Sets the recorded outcome (`stale`, `ignored`) of claimed messages.
pub async fn finish_messages(conn: &mut PgConnection, cluster: &str, ids: &[&str], outcomes: &[&str]) -> DbResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE ingested_messages m SET outcome = u.o FROM UNNEST($2::text[], $3::text[]) AS u(id, o)
         WHERE m.cluster_id = $1 AND m.message_id = u.id",
    )
    .bind(cluster)
    .bind(ids)
    .bind(outcomes)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The message ids among `ids` that already have a job event (a redelivery whose
/// `ingested_messages` record was pruned).
pub async fn recorded_message_ids(conn: &mut PgConnection, ids: &[&str]) -> DbResult<HashSet<String>> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT message_id FROM job_events WHERE message_id = ANY($1)")
        .bind(ids)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// The jobs' rows as ingestion's rules see them, locked for the rest of the transaction, in
/// id order (so two batches lock shared jobs in the same order).
pub async fn job_views(conn: &mut PgConnection, ids: &[i64]) -> DbResult<HashMap<i64, JobView>> {
    type Row = (i64, String, i64, Option<String>, bool, Option<DateTime<Utc>>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT j.id, j.state, j.epoch, j.cluster_id, COALESCE(d.outcome = 'pending', false), d.answer_by
         FROM jobs j LEFT JOIN dispatches d ON d.job_id = j.id AND d.epoch = j.epoch
         WHERE j.id = ANY($1) ORDER BY j.id FOR UPDATE OF j",
    )
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|(id, state, epoch, cluster_id, dispatch_pending, answer_by)| {
            let answer_by_ms = answer_by.map(|t| t.timestamp_millis());
            Ok((id, JobView { state: state.parse()?, epoch, cluster_id, dispatch_pending, answer_by_ms }))
        })
        .collect()
}

/// Every task of the jobs, locked: (job, name) -> (task id, state).
pub async fn task_states(conn: &mut PgConnection, jobs: &[i64]) -> DbResult<HashMap<(i64, String), (i64, UnitState)>> {
    let rows: Vec<(i64, i64, String, String)> =
        sqlx::query_as("SELECT job_id, id, name, state FROM tasks WHERE job_id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(jobs)
            .fetch_all(&mut *conn)
            .await?;
    rows.into_iter().map(|(job, id, name, state)| Ok(((job, name), (id, state.parse()?)))).collect()
}

/// A replica named by (job, task name, index).
pub type ReplicaKey = (i64, String, i32);

/// The named replicas, locked: key -> (task id, replica id, state). Missing ones are absent,
/// except a replica an elastic job grew beyond its submitted count (below its maximum): its
/// row is made on first report ([`add_elastic_replicas`]).
pub async fn replica_states(
    conn: &mut PgConnection,
    keys: &[ReplicaKey],
) -> DbResult<HashMap<ReplicaKey, (i64, i64, UnitState)>> {
    let mut found = locked_replicas(conn, keys).await?;
    let missing: Vec<ReplicaKey> = keys.iter().filter(|k| !found.contains_key(*k)).cloned().collect();
    if !missing.is_empty() && add_elastic_replicas(conn, &missing).await? > 0 {
        found.extend(locked_replicas(conn, &missing).await?);
    }
    Ok(found)
}

async fn locked_replicas(
    conn: &mut PgConnection,
    keys: &[ReplicaKey],
) -> DbResult<HashMap<ReplicaKey, (i64, i64, UnitState)>> {
    let jobs: Vec<i64> = keys.iter().map(|k| k.0).collect();
    let tasks: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let indexes: Vec<i32> = keys.iter().map(|k| k.2).collect();
    let rows: Vec<(i64, String, i32, i64, i64, String)> = sqlx::query_as(
        "SELECT t.job_id, t.name, r.index, r.task_id, r.id, r.state
         FROM UNNEST($1::bigint[], $2::text[], $3::int[]) AS u(job_id, task, idx)
         JOIN tasks t ON t.job_id = u.job_id AND t.name = u.task
         JOIN replicas r ON r.task_id = t.id AND r.index = u.idx
         ORDER BY r.id FOR UPDATE OF r",
    )
    .bind(&jobs)
    .bind(&tasks)
    .bind(&indexes)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|(job, task, index, task_id, id, state)| Ok(((job, task, index), (task_id, id, state.parse()?))))
        .collect()
}

/// Makes the rows of replicas that elastic jobs grew beyond their submitted replica count
/// (indexes below the job's elastic maximum; any other name stays unknown). Returns how many
/// rows were made.
pub async fn add_elastic_replicas(conn: &mut PgConnection, keys: &[ReplicaKey]) -> DbResult<u64> {
    let jobs: Vec<i64> = keys.iter().map(|k| k.0).collect();
    let tasks: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let indexes: Vec<i32> = keys.iter().map(|k| k.2).collect();
    let done = sqlx::query(
        "INSERT INTO replicas (job_id, task_id, index)
         SELECT t.job_id, t.id, u.idx
         FROM UNNEST($1::bigint[], $2::text[], $3::int[]) AS u(job_id, task, idx)
         JOIN tasks t ON t.job_id = u.job_id AND t.name = u.task
         JOIN jobs j ON j.id = u.job_id
         WHERE jsonb_typeof(j.spec->'elastic') = 'object' AND u.idx >= 0
           AND u.idx < (j.spec->'elastic'->>'max')::int
         ORDER BY t.id, u.idx
         ON CONFLICT (task_id, index) DO NOTHING",
    )
    .bind(&jobs)
    .bind(&tasks)
    .bind(&indexes)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

/// One `job_events` row to append.
#[derive(Clone, Debug)]
pub struct NewEvent {
    pub job_id: i64,
    pub task_id: Option<i64>,
    pub replica_id: Option<i64>,
    pub from: String,
    pub to: String,
    pub cause: String,
    pub actor: String,
    /// `None`: now.
    pub at: Option<DateTime<Utc>>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub message_id: Option<String>,
}

/// Appends the events in the given order (their ids follow it).
pub async fn insert_events(conn: &mut PgConnection, events: &[NewEvent]) -> DbResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let col = |f: fn(&NewEvent) -> Option<String>| events.iter().map(f).collect::<Vec<_>>();
    let jobs: Vec<i64> = events.iter().map(|e| e.job_id).collect();
    let tasks: Vec<Option<i64>> = events.iter().map(|e| e.task_id).collect();
    let replicas: Vec<Option<i64>> = events.iter().map(|e| e.replica_id).collect();
    let ats: Vec<Option<DateTime<Utc>>> = events.iter().map(|e| e.at).collect();
    let epochs: Vec<Option<i64>> = events.iter().map(|e| e.epoch).collect();
    sqlx::query(
        "INSERT INTO job_events (job_id, task_id, replica_id, from_state, to_state, cause, actor, at, cluster_id, epoch, message_id)
         SELECT u.job_id, u.task_id, u.replica_id, u.from_state, u.to_state, u.cause, u.actor, COALESCE(u.at, now()),
                u.cluster_id, u.epoch, u.message_id
         FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::timestamptz[], $9::text[], $10::bigint[], $11::text[])
              WITH ORDINALITY AS u(job_id, task_id, replica_id, from_state, to_state, cause, actor, at, cluster_id, epoch,
                                   message_id, ord)
         ORDER BY u.ord",
    )
    .bind(&jobs)
    .bind(&tasks)
    .bind(&replicas)
    .bind(col(|e| Some(e.from.clone())))
    .bind(col(|e| Some(e.to.clone())))
    .bind(col(|e| Some(e.cause.clone())))
    .bind(col(|e| Some(e.actor.clone())))
    .bind(&ats)
    .bind(col(|e| e.cluster_id.clone()))
    .bind(&epochs)
    .bind(col(|e| e.message_id.clone()))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Moves jobs to new states (each at most once per call: one step of each job's chain, whose
/// event is already appended). Leaving `pending` clears whyPending, as one transition does.
pub async fn set_job_states(conn: &mut PgConnection, steps: &[(i64, JobState)]) -> DbResult<()> {
    let ids: Vec<i64> = steps.iter().map(|s| s.0).collect();
    let states: Vec<&str> = steps.iter().map(|s| s.1.as_str()).collect();
    sqlx::query(
        "UPDATE jobs j SET state = u.state, updated_at = now(),
           why_pending = CASE WHEN u.state = 'pending' THEN j.why_pending ELSE NULL END
         FROM UNNEST($1::bigint[], $2::text[]) AS u(id, state) WHERE j.id = u.id",
    )
    .bind(&ids)
    .bind(&states)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Moves tasks to new states (one step each per call, events already appended).
pub async fn set_task_states(conn: &mut PgConnection, steps: &[(i64, UnitState)]) -> DbResult<()> {
    let ids: Vec<i64> = steps.iter().map(|s| s.0).collect();
    let states: Vec<&str> = steps.iter().map(|s| s.1.as_str()).collect();
    sqlx::query(
        "UPDATE tasks t SET state = u.state FROM UNNEST($1::bigint[], $2::text[]) AS u(id, state) WHERE t.id = u.id",
    )
    .bind(&ids)
    .bind(&states)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One replica's reported step: its state and what the agent observed with it.
#[derive(Clone, Debug)]
pub struct ReplicaStep {
    pub id: i64,
    pub state: UnitState,
    pub node: Option<String>,
    pub devices: Option<Value>,
    pub cluster_id: String,
    pub epoch: i64,
    pub exit: Option<ReplicaExit>,
}

/// Moves replicas to new states with their observations (one step each per call).
pub async fn set_replica_states(conn: &mut PgConnection, steps: &[ReplicaStep]) -> DbResult<()> {
    let ids: Vec<i64> = steps.iter().map(|s| s.id).collect();
    let states: Vec<&str> = steps.iter().map(|s| s.state.as_str()).collect();
    let nodes: Vec<Option<&str>> = steps.iter().map(|s| s.node.as_deref()).collect();
    let devices: Vec<Option<Value>> = steps.iter().map(|s| s.devices.clone()).collect();
    let clusters: Vec<&str> = steps.iter().map(|s| s.cluster_id.as_str()).collect();
    let epochs: Vec<i64> = steps.iter().map(|s| s.epoch).collect();
    let exit_codes: Vec<Option<i32>> = steps.iter().map(|s| s.exit.and_then(|e| e.code)).collect();
    let terminations: Vec<Option<&str>> = steps.iter().map(|s| s.exit.map(|e| e.termination.as_str())).collect();
    sqlx::query(
        "UPDATE replicas r SET state = u.state, node = u.node, devices = u.devices,
           cluster_id = COALESCE(u.cluster_id, r.cluster_id), epoch = COALESCE(u.epoch, r.epoch),
           exit_code = u.exit_code, termination = u.termination, updated_at = now()
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::bigint[], $7::int[], $8::text[])
              AS u(id, state, node, devices, cluster_id, epoch, exit_code, termination)
         WHERE r.id = u.id",
    )
    .bind(&ids)
    .bind(&states)
    .bind(&nodes)
    .bind(&devices)
    .bind(&clusters)
    .bind(&epochs)
    .bind(&exit_codes)
    .bind(&terminations)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records the agent's acknowledgement of the jobs' current dispatches, (job, epoch) each.
pub async fn acknowledge_dispatches(conn: &mut PgConnection, dispatches: &[(i64, i64)]) -> DbResult<()> {
    if dispatches.is_empty() {
        return Ok(());
    }
    let jobs: Vec<i64> = dispatches.iter().map(|d| d.0).collect();
    let epochs: Vec<i64> = dispatches.iter().map(|d| d.1).collect();
    sqlx::query(
        "UPDATE dispatches d SET outcome = 'acknowledged', acknowledged_at = COALESCE(d.acknowledged_at, now()), reason = NULL
         FROM UNNEST($1::bigint[], $2::bigint[]) AS u(job_id, epoch)
         WHERE d.job_id = u.job_id AND d.epoch = u.epoch AND d.outcome = 'pending'
           AND d.epoch = (SELECT epoch FROM jobs WHERE id = u.job_id)",
    )
    .bind(&jobs)
    .bind(&epochs)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The tasks' resources (the default for a spec without them).
pub async fn task_resources(conn: &mut PgConnection, tasks: &[i64]) -> DbResult<HashMap<i64, ResourcesSpec>> {
    let rows: Vec<(i64, Option<Value>)> = sqlx::query_as("SELECT id, spec->'resources' FROM tasks WHERE id = ANY($1)")
        .bind(tasks)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, r)| (id, r.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()))
        .collect())
}

/// The inventory's GPU model of each (node, device index) of `cluster`, in the given order
/// (`None` where the inventory does not say).
pub async fn inventory_models(
    conn: &mut PgConnection,
    cluster: &str,
    devices: &[(String, i64)],
) -> DbResult<Vec<Option<String>>> {
    let nodes: Vec<&str> = devices.iter().map(|d| d.0.as_str()).collect();
    let indexes: Vec<i64> = devices.iter().map(|d| d.1).collect();
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT DISTINCT ON (u.ord) u.ord, g->>'model'
         FROM UNNEST($2::text[], $3::bigint[]) WITH ORDINALITY AS u(node, idx, ord)
         JOIN cluster_nodes n ON n.cluster_id = $1 AND n.name = u.node
         CROSS JOIN LATERAL jsonb_array_elements(n.gpus) g
         WHERE (g->>'index')::bigint = u.idx AND g->>'model' IS NOT NULL
         ORDER BY u.ord",
    )
    .bind(cluster)
    .bind(&nodes)
    .bind(&indexes)
    .fetch_all(&mut *conn)
    .await?;
    let mut out = vec![None; devices.len()];
    for (ord, model) in rows {
        if let Some(slot) = usize::try_from(ord - 1).ok().and_then(|i| out.get_mut(i)) {
            *slot = Some(model);
        }
    }
    Ok(out)
}

/// A usage interval to open for a replica that started running.
#[derive(Clone, Debug)]
pub struct NewInterval {
    pub job_id: i64,
    pub task_id: i64,
    pub replica_id: i64,
    pub model: String,
    pub milli: i64,
    pub at: DateTime<Utc>,
}

/// The interval a replica that started running opens, (job, task, replica) ids given: `None`
/// when nothing is billable (a CPU-only replica). It is billed under the inventory's model of
/// its first device, else the task's first allowed model.
pub fn new_interval(
    (job_id, task_id, replica_id): (i64, i64, i64),
    devices: &[DeviceRef],
    resources: &ResourcesSpec,
    inventory_model: Option<String>,
    at: DateTime<Utc>,
) -> Option<NewInterval> {
    let milli = replica_gpu_milli(devices, resources.gpus, resources.gpu_milli);
    let model =
        inventory_model.or_else(|| resources.gpu_models.first().cloned()).unwrap_or_else(|| "unknown".to_owned());
    (milli > 0).then_some(NewInterval { job_id, task_id, replica_id, model, milli, at })
}

/// Opens the intervals (at most one open per replica; a redelivered start is a no-op).
pub async fn open_intervals(conn: &mut PgConnection, cluster: &str, intervals: &[NewInterval]) -> DbResult<()> {
    if intervals.is_empty() {
        return Ok(());
    }
    let jobs: Vec<i64> = intervals.iter().map(|i| i.job_id).collect();
    let tasks: Vec<i64> = intervals.iter().map(|i| i.task_id).collect();
    let replicas: Vec<i64> = intervals.iter().map(|i| i.replica_id).collect();
    let models: Vec<&str> = intervals.iter().map(|i| i.model.as_str()).collect();
    let millis: Vec<i64> = intervals.iter().map(|i| i.milli).collect();
    let ats: Vec<DateTime<Utc>> = intervals.iter().map(|i| i.at).collect();
    sqlx::query(
        "INSERT INTO usage_ledger (project_id, queue_id, cluster_id, gpu_model, gpu_milli, started_at,
                                   job_id, task_id, replica_id, user_id)
         SELECT j.project_id, j.queue_id, $1, u.model, u.milli, u.at, j.id, u.task_id, u.replica_id, j.submitted_by
         FROM UNNEST($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::bigint[], $7::timestamptz[])
              AS u(job_id, task_id, replica_id, model, milli, at)
         JOIN jobs j ON j.id = u.job_id
         WHERE NOT EXISTS (SELECT 1 FROM usage_ledger l WHERE l.replica_id = u.replica_id AND l.ended_at IS NULL)
         ON CONFLICT (replica_id, started_at) DO NOTHING",
    )
    .bind(cluster)
    .bind(&jobs)
    .bind(&tasks)
    .bind(&replicas)
    .bind(&models)
    .bind(&millis)
    .bind(&ats)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One close of open intervals: of a replica or of a whole job (by `column`).
#[derive(Clone, Copy, Debug)]
pub struct Close {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub by_preemption: bool,
}

/// Ends the open intervals of the replicas (`column` = `replica_id`) or jobs (`job_id`) named,
/// each at most once per call; an end before the start is clamped to the start.
pub async fn close_intervals(conn: &mut PgConnection, column: &'static str, closes: &[Close]) -> DbResult<()> {
    if closes.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = closes.iter().map(|c| c.id).collect();
    let ats: Vec<DateTime<Utc>> = closes.iter().map(|c| c.at).collect();
    let pre: Vec<bool> = closes.iter().map(|c| c.by_preemption).collect();
    sqlx::query(&format!(
        "UPDATE usage_ledger l SET ended_at = GREATEST(l.started_at, u.at), ended_by_preemption = u.pre
         FROM UNNEST($1::bigint[], $2::timestamptz[], $3::bool[]) AS u(id, at, pre)
         WHERE l.{column} = u.id AND l.ended_at IS NULL"
    ))
    .bind(&ids)
    .bind(&ats)
    .bind(&pre)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
