//! Applies a read of agent events inside one transaction with a fixed number of statements per
//! run of `JobState` events, instead of about ten per event: ingestion of one event at a time
//! was the end-to-end bottleneck (a 1,000-node cluster reporting 250 jobs/s fell thousands of
//! entries behind).
//!
//! A run's jobs, tasks and replicas are read (and locked) once; `domain::reports::decide`
//! judges each report in stream order against that state as the reports before it left it
//! ([`Book`]), exactly as one transaction per event would have read it; the changes are then
//! written set-based ([`Writes::flush`]). A report whose effect the set-based writes do not
//! cover (a stale epoch owing a Cancel, a placement after its deadline, a job given back or
//! preempted, a replica running again after it stopped, an event recorded before) is applied
//! the one-at-a-time way (`db::ingest::apply_job_report`) after everything before it is
//! written, and its job is read again afterwards. Other kinds of events (Capacity, Snapshot,
//! ...) are applied one at a time in their place. The equivalence with one transaction per
//! event is tested (`api/tests/api/ingest.rs`).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use grus_protocol::codec::Envelope;
use grus_protocol::event::Event;
use grus_protocol::keys;
use grus_protocol::wire::{DeviceRef, ReplicaExit};
use serde_json::Value;
use sqlx::PgConnection;

use super::{apply_in, ms_to_time, IngestError};
use crate::db::ingest::{self as store, JobReport, Outcome, StaleCancel};
use crate::db::ingest_batch::{self as sql, Close, NewEvent, NewInterval, ReplicaKey, ReplicaStep};
use crate::domain::reports::{
    decide, job_closes_ledger, ledger_effect, requeue_after, Decision, DispatchAnswer, JobView, LedgerEffect, Level,
    Report,
};
use crate::domain::{JobState, UnitState};

/// Applies `events` (decoded envelopes with their stream entry ids) in the caller's transaction;
/// returns each one's outcome. Cancels owed for stale epochs are added to `cancels`.
pub(super) async fn apply_events(
    tx: &mut PgConnection,
    cluster: &str,
    events: &[(&Envelope<Event>, &str)],
    cancels: &mut Vec<StaleCancel>,
) -> Result<Vec<Outcome>, IngestError> {
    let mut outcomes = Vec::with_capacity(events.len());
    let mut i = 0;
    while i < events.len() {
        let run = events[i..]
            .iter()
            .take_while(|(env, _)| matches!(env.message, Event::JobState { checkpoint: None, endpoint: None, .. }))
            .count();
        if run == 0 {
            let (env, entry_id) = events[i];
            outcomes.push(apply_in(tx, cluster, env, entry_id, cancels).await?);
            i += 1;
        } else {
            outcomes.extend(apply_job_states(tx, cluster, &events[i..i + run], cancels).await?);
            i += run;
        }
    }
    Ok(outcomes)
}

/// One `JobState` event, parsed into the report ingestion's rules judge.
struct Parsed<'a> {
    job: i64,
    report: Report,
    node: Option<&'a str>,
    devices: &'a [DeviceRef],
    at: DateTime<Utc>,
    reason: Option<&'a str>,
    exit: Option<ReplicaExit>,
    message_id: &'a str,
}

impl Parsed<'_> {
    fn as_job_report(&self) -> JobReport<'_> {
        JobReport {
            report: self.report.clone(),
            job: self.job as u64,
            node: self.node,
            devices: self.devices,
            at: self.at,
            reason: self.reason,
            exit: self.exit,
            message_id: Some(self.message_id),
        }
    }

    fn replica_key(&self) -> Option<ReplicaKey> {
        match &self.report.level {
            Level::Replica { task, index } => Some((self.job, task.clone(), *index as i32)),
            _ => None,
        }
    }
}

/// Parses a `JobState` event; `None` for one that names no valid unit or job (ignored, as the
/// one-at-a-time path ignores it).
fn parse<'a>(cluster: &str, env: &'a Envelope<Event>, entry_id: &str) -> Option<Parsed<'a>> {
    let Event::JobState { job, task, replica, state, node, devices, at, epoch, reason, exit, .. } = &env.message else {
        return None;
    };
    let level = match (task, replica) {
        (Some(t), Some(r)) => {
            i32::try_from(*r).ok()?;
            Level::Replica { task: t.clone(), index: *r }
        }
        (Some(t), None) => Level::Task(t.clone()),
        (None, None) => Level::Job,
        (None, Some(_)) => return None,
    };
    let sent_at = ms_to_time(env.ts).unwrap_or_else(Utc::now);
    Some(Parsed {
        job: i64::try_from(*job).ok()?,
        report: Report {
            cluster: cluster.to_owned(),
            epoch: i64::try_from(*epoch).ok()?,
            level,
            state: *state,
            appended_ms: keys::stream_id_parts(entry_id).map(|(ms, _)| ms),
        },
        node: node.as_deref(),
        devices,
        at: ms_to_time(*at).unwrap_or(sent_at),
        reason: reason.as_deref(),
        exit: *exit,
        message_id: &env.id,
    })
}

/// The run's jobs, tasks and replicas as the reports applied so far left them.
#[derive(Default)]
struct Book {
    jobs: HashMap<i64, JobView>,
    tasks: HashMap<(i64, String), (i64, UnitState)>,
    replicas: HashMap<ReplicaKey, (i64, i64, UnitState)>,
    /// Jobs absent from the database.
    missing: HashSet<i64>,
    /// Jobs closed by a job-level end in this run: later replica ends of theirs close nothing.
    closed: HashSet<i64>,
}

impl Book {
    /// Reads (and locks) the jobs the reports name, their tasks and the replicas they name.
    /// Only for jobs the book does not hold: it would overwrite what the run changed.
    async fn load(&mut self, tx: &mut PgConnection, reports: &[&Parsed<'_>]) -> Result<(), IngestError> {
        let mut jobs: Vec<i64> = reports.iter().map(|r| r.job).collect();
        jobs.sort_unstable();
        jobs.dedup();
        let views = sql::job_views(tx, &jobs).await?;
        let found: Vec<i64> = views.keys().copied().collect();
        self.missing.extend(jobs.iter().filter(|j| !views.contains_key(j)));
        self.jobs.extend(views);
        self.tasks.extend(sql::task_states(tx, &found).await?);
        let mut keys: Vec<ReplicaKey> =
            reports.iter().filter(|r| self.jobs.contains_key(&r.job)).filter_map(|r| r.replica_key()).collect();
        keys.sort_unstable();
        keys.dedup();
        if !keys.is_empty() {
            self.replicas.extend(sql::replica_states(tx, &keys).await?);
        }
        Ok(())
    }

    /// Forgets what is known of `job` (applied the one-at-a-time way: read it again).
    fn forget(&mut self, job: i64) {
        self.jobs.remove(&job);
        self.missing.remove(&job);
        self.tasks.retain(|k, _| k.0 != job);
        self.replicas.retain(|k, _| k.0 != job);
    }
}

/// What a run will write, in the order the statements must run.
#[derive(Default)]
struct Writes {
    events: Vec<NewEvent>,
    acknowledged: Vec<(i64, i64)>,
    /// Each unit's k-th step of the run goes into the k-th wave: one UPDATE per wave, so each
    /// row moves one step per statement, as the state-change triggers require.
    job_waves: Vec<Vec<(i64, JobState)>>,
    task_waves: Vec<Vec<(i64, UnitState)>>,
    replica_waves: Vec<Vec<ReplicaStep>>,
    steps: HashMap<(u8, i64), usize>,
    opens: Vec<Opening>,
    replica_closes: Vec<Close>,
    job_closes: Vec<Close>,
    /// Per replica: the ledger effects so far (an open after a close must wait for the close).
    ledger: HashMap<i64, LedgerEffect>,
}

/// A replica that started running: its interval, once its resources and model are known.
struct Opening {
    job_id: i64,
    task_id: i64,
    replica_id: i64,
    node: Option<String>,
    first_device: Option<i64>,
    devices: Vec<DeviceRef>,
    at: DateTime<Utc>,
}

impl Writes {
    fn wave<T>(waves: &mut Vec<Vec<T>>, steps: &mut HashMap<(u8, i64), usize>, key: (u8, i64), item: T) {
        let k = steps.entry(key).or_insert(0);
        if waves.len() <= *k {
            waves.push(Vec::new());
        }
        waves[*k].push(item);
        *k += 1;
    }

    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.acknowledged.is_empty()
    }

    /// Writes everything, then starts over empty.
    async fn flush(&mut self, tx: &mut PgConnection, cluster: &str) -> Result<(), IngestError> {
        if self.is_empty() {
            return Ok(());
        }
        let w = std::mem::take(self);
        sql::insert_events(tx, &w.events).await?;
        sql::acknowledge_dispatches(tx, &w.acknowledged).await?;
        for wave in &w.job_waves {
            sql::set_job_states(tx, wave).await?;
        }
        for wave in &w.task_waves {
            sql::set_task_states(tx, wave).await?;
        }
        for wave in &w.replica_waves {
            sql::set_replica_states(tx, wave).await?;
        }
        if !w.opens.is_empty() {
            let tasks: Vec<i64> = w.opens.iter().map(|o| o.task_id).collect();
            let resources = sql::task_resources(tx, &tasks).await?;
            let placed: Vec<(usize, (String, i64))> =
                w.opens.iter().enumerate().filter_map(|(i, o)| Some((i, (o.node.clone()?, o.first_device?)))).collect();
            let devices: Vec<(String, i64)> = placed.iter().map(|p| p.1.clone()).collect();
            let models = sql::inventory_models(tx, cluster, &devices).await?;
            let mut inventory: HashMap<usize, String> = HashMap::new();
            for ((i, _), m) in placed.iter().zip(models) {
                if let Some(m) = m {
                    inventory.insert(*i, m);
                }
            }
            let intervals: Vec<NewInterval> = w
                .opens
                .iter()
                .enumerate()
                .filter_map(|(i, o)| {
                    let r = resources.get(&o.task_id).cloned().unwrap_or_default();
                    sql::new_interval((o.job_id, o.task_id, o.replica_id), &o.devices, &r, inventory.remove(&i), o.at)
                })
                .collect();
            sql::open_intervals(tx, cluster, &intervals).await?;
        }
        sql::close_intervals(tx, "replica_id", &w.replica_closes).await?;
        sql::close_intervals(tx, "job_id", &w.job_closes).await?;
        Ok(())
    }
}

/// What one report comes to in a run.
enum Judged {
    Done(Outcome),
    /// Applied the one-at-a-time way.
    Alone,
}

/// Judges `r` against `book` and adds its writes; the book moves on as the writes will.
fn judge(book: &mut Book, writes: &mut Writes, r: &Parsed<'_>, recorded: &HashSet<String>) -> Judged {
    let Some(view) = book.jobs.get(&r.job) else { return Judged::Done(Outcome::Ignored) };
    if recorded.contains(r.message_id) {
        return Judged::Alone;
    }
    let unit = match &r.report.level {
        Level::Job => None,
        Level::Task(name) => book.tasks.get(&(r.job, name.clone())).map(|&(id, s)| (id, None, s)),
        Level::Replica { .. } => {
            r.replica_key().and_then(|k| book.replicas.get(&k)).map(|&(task, id, s)| (task, Some(id), s))
        }
    };
    let plan = match decide(view, &r.report, unit.map(|u| u.2)) {
        Decision::Stale { cancel } if !(cancel && r.report.epoch > 0) => return Judged::Done(Outcome::Stale),
        Decision::Ignore { .. } => return Judged::Done(Outcome::Ignored),
        Decision::Stale { .. } | Decision::Late => return Judged::Alone,
        Decision::Apply(plan) => plan,
    };
    if plan.answer == Some(DispatchAnswer::Rejected)
        || plan.job_to.is_some_and(|to| to == JobState::Rejected || requeue_after(to).is_some())
    {
        return Judged::Alone;
    }
    let ledger = match (plan.unit_to, unit) {
        (Some(to), Some((_, Some(replica), from))) => {
            let effect = ledger_effect(from, to);
            // Opens run before closes in a flush: a replica that stopped in this run and runs
            // again must have its stop written first.
            let after_close = writes.ledger.get(&replica).is_some_and(|e| matches!(e, LedgerEffect::Close { .. }));
            if effect == LedgerEffect::Open && after_close {
                return Judged::Alone;
            }
            Some((replica, effect))
        }
        _ => None,
    };

    let cluster = r.report.cluster.as_str();
    let actor = store::agent_actor(cluster);
    let cause = store::report_cause(r.reason);
    let epoch = r.report.epoch;
    let view = book.jobs.get_mut(&r.job).expect("judged above");
    if plan.answer == Some(DispatchAnswer::Acknowledged) {
        writes.acknowledged.push((r.job, epoch));
        view.dispatch_pending = false;
    }
    if let Some(to) = plan.job_to {
        writes.events.push(NewEvent {
            job_id: r.job,
            task_id: None,
            replica_id: None,
            from: view.state.as_str().to_owned(),
            to: to.as_str().to_owned(),
            cause: cause.clone(),
            actor: actor.clone(),
            at: Some(r.at),
            cluster_id: Some(cluster.to_owned()),
            epoch: Some(epoch),
            message_id: Some(r.message_id.to_owned()),
        });
        Writes::wave(&mut writes.job_waves, &mut writes.steps, (0, r.job), (r.job, to));
        view.state = to;
        if let Some(LedgerEffect::Close { by_preemption }) = job_closes_ledger(to) {
            writes.job_closes.push(Close { id: r.job, at: r.at, by_preemption });
            book.closed.insert(r.job);
        }
    }
    if let (Some(to), Some((task_id, replica, from))) = (plan.unit_to, unit) {
        let mut event = NewEvent {
            job_id: r.job,
            task_id: Some(task_id),
            replica_id: replica,
            from: from.as_str().to_owned(),
            to: to.as_str().to_owned(),
            cause,
            actor,
            at: None,
            cluster_id: None,
            epoch: None,
            message_id: None,
        };
        match replica {
            None => {
                Writes::wave(&mut writes.task_waves, &mut writes.steps, (1, task_id), (task_id, to));
                if let Level::Task(name) = &r.report.level {
                    book.tasks.insert((r.job, name.clone()), (task_id, to));
                }
            }
            Some(replica_id) => {
                event.at = Some(r.at);
                event.cluster_id = Some(cluster.to_owned());
                event.epoch = Some(epoch);
                event.message_id = Some(r.message_id.to_owned());
                let devices = (!r.devices.is_empty()).then(|| devices_json(r.devices));
                let step = ReplicaStep {
                    id: replica_id,
                    state: to,
                    node: r.node.map(str::to_owned),
                    devices,
                    cluster_id: cluster.to_owned(),
                    epoch,
                    exit: r.exit,
                };
                Writes::wave(&mut writes.replica_waves, &mut writes.steps, (2, replica_id), step);
                if let Some(k) = r.replica_key() {
                    book.replicas.insert(k, (task_id, replica_id, to));
                }
                match ledger.map(|l| l.1) {
                    Some(LedgerEffect::Open) => {
                        writes.opens.push(Opening {
                            job_id: r.job,
                            task_id,
                            replica_id,
                            node: r.node.map(str::to_owned),
                            first_device: r.devices.first().map(|d| i64::from(d.index)),
                            devices: r.devices.to_vec(),
                            at: r.at,
                        });
                        writes.ledger.insert(replica_id, LedgerEffect::Open);
                    }
                    Some(close @ LedgerEffect::Close { by_preemption }) => {
                        // After the job's own end nothing of it is open any more.
                        if !book.closed.contains(&r.job) {
                            writes.replica_closes.push(Close { id: replica_id, at: r.at, by_preemption });
                        }
                        writes.ledger.insert(replica_id, close);
                    }
                    _ => {}
                }
            }
        }
        writes.events.push(event);
    }
    Judged::Done(Outcome::Applied)
}

fn devices_json(devices: &[DeviceRef]) -> Value {
    serde_json::to_value(devices).unwrap_or(Value::Null)
}

/// Applies a run of `JobState` events.
async fn apply_job_states(
    tx: &mut PgConnection,
    cluster: &str,
    events: &[(&Envelope<Event>, &str)],
    cancels: &mut Vec<StaleCancel>,
) -> Result<Vec<Outcome>, IngestError> {
    // Claim every message; a second entry with the id of an earlier one is a copy.
    let ids: Vec<&str> = events.iter().map(|(env, _)| env.id.as_str()).collect();
    let kinds: Vec<&str> = events.iter().map(|(env, _)| env.message.kind()).collect();
    let claimed = sql::claim_messages(tx, cluster, &ids, &kinds).await?;
    let mut first = HashSet::new();
    let fresh: Vec<bool> = ids.iter().map(|id| claimed.contains(*id) && first.insert(*id)).collect();

    let parsed: Vec<Option<Parsed<'_>>> = events
        .iter()
        .zip(&fresh)
        .map(|((env, entry_id), fresh)| fresh.then(|| parse(cluster, env, entry_id)).flatten())
        .collect();
    let reports: Vec<&Parsed<'_>> = parsed.iter().flatten().collect();
    let message_ids: Vec<&str> = reports.iter().map(|r| r.message_id).collect();
    let recorded = sql::recorded_message_ids(tx, &message_ids).await?;
    let mut book = Book::default();
    book.load(tx, &reports).await?;

    let mut writes = Writes::default();
    let mut outcomes = Vec::with_capacity(events.len());
    for (i, (p, fresh)) in parsed.iter().zip(&fresh).enumerate() {
        let Some(r) = p else {
            outcomes.push(if *fresh { Outcome::Ignored } else { Outcome::Duplicate });
            continue;
        };
        match judge(&mut book, &mut writes, r, &recorded) {
            Judged::Done(o) => outcomes.push(o),
            Judged::Alone => {
                writes.flush(tx, cluster).await?;
                let (o, c) = store::apply_job_report(tx, &r.as_job_report()).await?;
                cancels.extend(c);
                outcomes.push(o);
                // Read the job again as that left it, with what the rest of the run names.
                book.forget(r.job);
                let rest: Vec<&Parsed<'_>> = parsed[i + 1..].iter().flatten().filter(|q| q.job == r.job).collect();
                if !rest.is_empty() {
                    book.load(tx, &rest).await?;
                }
            }
        }
    }
    writes.flush(tx, cluster).await?;

    let (done, results): (Vec<&str>, Vec<&str>) = ids
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| matches!(o, Outcome::Stale | Outcome::Ignored))
        .map(|(id, o)| (*id, o.as_str()))
        .unzip();
    sql::finish_messages(tx, cluster, &done, &results).await?;
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::State;

    use super::*;

    #[test]
    fn each_unit_moves_one_step_per_wave() {
        let mut w = Writes::default();
        Writes::wave(&mut w.job_waves, &mut w.steps, (0, 7), (7, JobState::Scheduled));
        Writes::wave(&mut w.job_waves, &mut w.steps, (0, 8), (8, JobState::Scheduled));
        Writes::wave(&mut w.job_waves, &mut w.steps, (0, 7), (7, JobState::Running));
        Writes::wave(&mut w.task_waves, &mut w.steps, (1, 7), (7, UnitState::Placed));
        assert_eq!(
            w.job_waves,
            vec![vec![(7, JobState::Scheduled), (8, JobState::Scheduled)], vec![(7, JobState::Running)]]
        );
        assert_eq!(w.task_waves, vec![vec![(7, UnitState::Placed)]], "a task's steps count apart from its job's");
    }

    #[test]
    fn a_state_event_that_names_a_replica_without_its_task_is_not_parsed() {
        let env = Envelope::new(
            "m1",
            "c",
            1,
            Event::JobState {
                job: 1,
                task: None,
                replica: Some(0),
                state: State::Running,
                node: None,
                devices: vec![],
                at: 1,
                epoch: 1,
                reason: None,
                checkpoint: None,
                endpoint: None,
                exit: None,
            },
        );
        assert!(parse("c", &env, "1-0").is_none());
    }
}
