//! The pure decisions of ingestion: given what PostgreSQL holds about a job (its state, epoch,
//! cluster and whether its dispatch is still unanswered) and one agent report, what to write.
//!
//! No I/O here: `db::ingest` loads the view, calls these functions and carries out the plan in
//! one transaction. The rules, in order:
//! 1. Fencing (invariant 2): a report under an older epoch, from a cluster the job is not
//!    dispatched to, or about a job no cluster holds (its dispatch was rejected or timed out, or
//!    it was requeued after preemption: [`JobState::awaits_dispatch`]) changes nothing. If it
//!    says the job is still live there, that cluster gets a `Cancel` for the stale epoch.
//! 2. A job placed after its dispatch's answer deadline (the job-level `Scheduled` report, by
//!    its stream entry's time, Redis's clock) is given up as timed out; the agent, which reads
//!    the same time off the entry it appended, has not started it ([`Decision::Late`]).
//! 3. The first report of the current epoch answers the dispatch: `Rejected` rejects it, any
//!    other state acknowledges it. An agent that accepted a job (a `Pending` report) may still
//!    reject it later (not placed within its deadline): that rejects the acknowledged dispatch
//!    too, so the allocator counts the cluster as one that failed the job.
//! 4. The state moves only along the state machines of `super::job_state`; a report the machine does
//!    not allow (a late duplicate, a job cancelled meanwhile) is recorded as ignored.
//! 5. A replica entering `running` opens a usage-ledger interval; leaving it closes the open
//!    one. A job ending (or preempted) closes every interval of its replicas still open.

use std::collections::{BTreeMap, BTreeSet};

use grus_protocol::wire::{DeviceRef, GpuMetrics, State};

use super::{JobState, UnitState};

/// What the database holds about the job a report is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobView {
    pub state: JobState,
    pub epoch: i64,
    pub cluster_id: Option<String>,
    /// The current epoch's dispatch is still `pending` (no answer from the agent yet).
    pub dispatch_pending: bool,
    /// The current epoch's answer deadline, ms since the Unix epoch (`None`: a dispatch
    /// recorded before deadlines were).
    pub answer_by_ms: Option<i64>,
}

/// Which unit a report is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Job,
    Task(String),
    Replica { task: String, index: u32 },
}

/// One agent report about a job (a `JobState` event, or one line of a `Snapshot`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub cluster: String,
    pub epoch: i64,
    pub level: Level,
    pub state: State,
    /// When Redis appended the event that carries the report (its stream entry id's time, ms);
    /// `None` for the lines of a Snapshot, which answer no dispatch (see [`decide`]).
    pub appended_ms: Option<i64>,
}

/// The agent's answer to the current dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispatchAnswer {
    Acknowledged,
    Rejected,
}

/// What the usage ledger must do for a replica's change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerEffect {
    None,
    Open,
    Close { by_preemption: bool },
}

/// The decision for one report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Fenced off: nothing is written. `cancel`: the report says the job is live in a cluster
    /// that no longer holds it; send `Cancel { job, epoch: report.epoch }` there.
    Stale {
        cancel: bool,
    },
    /// Nothing to change (the state machine refuses it, or the state is already that).
    Ignore {
        why: &'static str,
    },
    /// The agent placed the job after the dispatch's answer deadline: the dispatch times out
    /// (the job goes back to waiting, a Cancel is owed), exactly as if no answer had come. The
    /// agent reads the same verdict off its report's stream entry id and launches nothing.
    Late,
    Apply(Plan),
}

/// Effects of an accepted report; the shell applies them in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub answer: Option<DispatchAnswer>,
    /// The job's new state (job-level reports only).
    pub job_to: Option<JobState>,
    /// The task's or replica's new state.
    pub unit_to: Option<UnitState>,
}

/// Wire states in which a job (or replica) still occupies a cluster.
pub fn is_live(state: State) -> bool {
    matches!(state, State::Pending | State::Placed | State::Scheduled | State::Running | State::Preempting)
}

/// A job-level wire state as the database's job state. `Pending` from an agent means it holds
/// the job but waits to (re)place it: the job is `dispatched` to it. `None`: states only the api
/// sets (`admitted`), which an agent never reports.
pub fn job_state_of(state: State) -> Option<JobState> {
    Some(match state {
        State::Pending | State::Dispatched => JobState::Dispatched,
        State::Admitted => return None,
        State::Rejected => JobState::Rejected,
        State::Placed | State::Scheduled => JobState::Scheduled,
        State::Running => JobState::Running,
        State::Preempting => JobState::Preempting,
        State::Preempted | State::Evicted => JobState::Preempted,
        State::Succeeded => JobState::Succeeded,
        State::Failed => JobState::Failed,
        State::Cancelled => JobState::Cancelled,
    })
}

/// A task- or replica-level wire state as a unit state. `Preempted` replicas are evicted;
/// a rejected unit failed. `None`: job-only states, and `preempting` (still running).
pub fn unit_state_of(state: State) -> Option<UnitState> {
    Some(match state {
        State::Pending => UnitState::Pending,
        State::Placed | State::Scheduled => UnitState::Placed,
        State::Running => UnitState::Running,
        State::Succeeded => UnitState::Succeeded,
        State::Failed | State::Rejected => UnitState::Failed,
        State::Evicted | State::Preempted => UnitState::Evicted,
        State::Cancelled => UnitState::Cancelled,
        // A replica in its grace period still runs (and is still charged).
        State::Preempting | State::Admitted | State::Dispatched => return None,
    })
}

/// Decides what one report does to a job whose stored view is `job`. `unit_state` is the
/// current state of the task or replica the report is about (`None` for job-level reports, or
/// when the job has no such unit).
pub fn decide(job: &JobView, report: &Report, unit_state: Option<UnitState>) -> Decision {
    let current_holder = job.cluster_id.as_deref() == Some(report.cluster.as_str());
    if report.epoch < job.epoch || !current_holder || job.state.awaits_dispatch() {
        return Decision::Stale { cancel: is_live(report.state) };
    }
    if report.epoch > job.epoch {
        // The api hands out epochs; a newer one is a bogus or misrouted report.
        return Decision::Ignore { why: "epoch newer than any dispatch" };
    }
    // Only the placement itself is judged: a report that the job runs proves the agent's
    // placement beat the deadline (it launches nothing before), whatever order replicas of
    // the api ingest the entries in; a Snapshot line answers no dispatch.
    let places = report.level == Level::Job && matches!(report.state, State::Scheduled | State::Placed);
    let late = report.appended_ms.zip(job.answer_by_ms).is_some_and(|(at, by)| at >= by);
    if job.state == JobState::Dispatched && places && late {
        return Decision::Late;
    }
    let rejects = report.state == State::Rejected && report.level == Level::Job;
    let answer = if rejects && (job.dispatch_pending || job.state.can_become(JobState::Rejected)) {
        Some(DispatchAnswer::Rejected)
    } else {
        job.dispatch_pending.then_some(DispatchAnswer::Acknowledged)
    };
    let (job_to, unit_to) = match &report.level {
        Level::Job => {
            let to = job_state_of(report.state).filter(|to| job.state.can_become(*to));
            (to, None)
        }
        Level::Task(_) | Level::Replica { .. } => {
            // A job that ended brings no unit back to life: a report read after the end (a
            // Snapshot taken before it, ingested by another replica after it) would otherwise
            // open a usage interval nothing closes.
            let ended = job.state.is_terminal();
            let to = match (unit_state_of(report.state), unit_state) {
                (Some(to), Some(from)) if from.can_become(to) && !(ended && to.is_live()) => Some(to),
                _ => None,
            };
            (None, to)
        }
    };
    if answer.is_none() && job_to.is_none() && unit_to.is_none() {
        return Decision::Ignore { why: "no change the state machine allows" };
    }
    Decision::Apply(Plan { answer, job_to, unit_to })
}

/// The ledger's reaction to a replica moving `from -> to`.
pub fn ledger_effect(from: UnitState, to: UnitState) -> LedgerEffect {
    match (from == UnitState::Running, to == UnitState::Running) {
        (false, true) => LedgerEffect::Open,
        (true, false) => LedgerEffect::Close { by_preemption: to == UnitState::Evicted },
        _ => LedgerEffect::None,
    }
}

/// Whether a job entering `to` ends every open usage interval of its replicas (the agent may
/// not report each replica when a whole job stops).
pub fn job_closes_ledger(to: JobState) -> Option<LedgerEffect> {
    match to {
        JobState::Succeeded | JobState::Failed | JobState::Cancelled => {
            Some(LedgerEffect::Close { by_preemption: false })
        }
        JobState::Preempted => Some(LedgerEffect::Close { by_preemption: true }),
        _ => None,
    }
}

/// The state a job moves on to by itself right after entering `to`: a preempted job is
/// requeued (DESIGN.md: Preempted -> Admitted), so the allocator dispatches it again under a
/// new epoch once capacity frees. Its admission (quota demand, borrowed) stands.
pub fn requeue_after(to: JobState) -> Option<JobState> {
    match to {
        JobState::Preempted => Some(JobState::Admitted),
        _ => None,
    }
}

/// The steps that take a task or replica of a requeued job back to `pending`, so its next run
/// is recorded (and metered) like the first: one still placed or running is evicted first;
/// one that ended for good (succeeded, cancelled) stays.
pub fn steps_to_pending(from: UnitState) -> Vec<UnitState> {
    match from {
        UnitState::Pending | UnitState::Succeeded | UnitState::Cancelled => Vec::new(),
        UnitState::Placed | UnitState::Failed | UnitState::Evicted => vec![UnitState::Pending],
        UnitState::Running => vec![UnitState::Evicted, UnitState::Pending],
    }
}

/// What the health monitor does to a job of a cluster lost past the loss timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossAction {
    /// Running (or placed) there: it may still run, so it is `unknown`, not re-dispatched.
    MarkUnknown,
    /// Nothing, also for a job still `dispatched` there: silence does not tell whether the
    /// agent placed it (a paused agent may place it the moment it wakes), so it is left to its
    /// answer deadline, which both sides judge by the same clock (the allocator's timeouts).
    Nothing,
}

pub fn on_cluster_lost(state: JobState) -> LossAction {
    match state {
        JobState::Scheduled | JobState::Running | JobState::Preempting => LossAction::MarkUnknown,
        _ => LossAction::Nothing,
    }
}

/// A job a returning agent's Snapshot does not list, although the database says it holds it
/// under the current epoch: the agent rebuilds its book from the backend after a restart, so
/// a job it does not list is not running there. Dispatched jobs are left alone (the Dispatch
/// may still be unread in the command stream; the allocator's dispatch timeout covers them);
/// jobs that were placed, running or unknown failed.
pub fn absent_from_snapshot(state: JobState) -> Option<JobState> {
    match state {
        JobState::Scheduled | JobState::Running | JobState::Preempting | JobState::Unknown => Some(JobState::Failed),
        _ => None,
    }
}

/// GPU milli a replica holds: the devices it reported, or (none reported) its task's request.
pub fn replica_gpu_milli(devices: &[DeviceRef], task_gpus: u32, task_gpu_milli: Option<u32>) -> i64 {
    if devices.is_empty() {
        i64::from(task_gpus) * i64::from(task_gpu_milli.unwrap_or(1000))
    } else {
        devices.iter().map(|d| i64::from(d.milli)).sum()
    }
}

/// A running replica's devices, for attributing GPU metrics to jobs.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningReplica {
    pub job_id: i64,
    pub node: String,
    pub devices: Vec<u32>,
}

/// One Metrics message's contribution to a job's utilization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSample {
    pub samples: i64,
    pub busy_sum: f64,
    pub busy_max: f32,
    pub memory_sum: f64,
    pub memory_max: i64,
}

impl JobSample {
    pub fn busy_mean(&self) -> f32 {
        if self.samples == 0 {
            0.0
        } else {
            (self.busy_sum / self.samples as f64) as f32
        }
    }

    pub fn memory_mean(&self) -> i64 {
        if self.samples == 0 {
            0
        } else {
            (self.memory_sum / self.samples as f64).round() as i64
        }
    }
}

/// Attributes device readings to the jobs whose running replicas hold those devices. A device
/// shared by several jobs (fractional GPUs) counts for each of them; a device no running
/// replica holds counts for none.
pub fn attribute_metrics(gpus: &[GpuMetrics], replicas: &[RunningReplica]) -> BTreeMap<i64, JobSample> {
    let mut holders: BTreeMap<(&str, u32), BTreeSet<i64>> = BTreeMap::new();
    for r in replicas {
        for d in &r.devices {
            holders.entry((r.node.as_str(), *d)).or_default().insert(r.job_id);
        }
    }
    let mut out: BTreeMap<i64, JobSample> = BTreeMap::new();
    for g in gpus {
        let busy = g.busy_pct.clamp(0.0, 100.0);
        if !busy.is_finite() {
            continue;
        }
        let memory = i64::try_from(g.memory_used_mib).unwrap_or(i64::MAX);
        for job in holders.get(&(g.node.as_str(), g.index)).into_iter().flatten() {
            let s = out.entry(*job).or_default();
            s.samples += 1;
            s.busy_sum += f64::from(busy);
            s.busy_max = s.busy_max.max(busy);
            s.memory_sum += memory as f64;
            s.memory_max = s.memory_max.max(memory);
        }
    }
    out
}

/// A job's resource use at one Metrics message: the sum over its running replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobUsage {
    pub cpu_milli: i64,
    pub memory_mib: i64,
    pub disk_read_bps: i64,
    pub disk_write_bps: i64,
    pub net_rx_bps: i64,
    pub net_tx_bps: i64,
}

impl JobUsage {
    /// Adds one replica's reading (saturating: a bogus counter cannot wrap a total).
    pub fn add(&mut self, r: &JobUsage) {
        self.cpu_milli = self.cpu_milli.saturating_add(r.cpu_milli);
        self.memory_mib = self.memory_mib.saturating_add(r.memory_mib);
        self.disk_read_bps = self.disk_read_bps.saturating_add(r.disk_read_bps);
        self.disk_write_bps = self.disk_write_bps.saturating_add(r.disk_write_bps);
        self.net_rx_bps = self.net_rx_bps.saturating_add(r.net_rx_bps);
        self.net_tx_bps = self.net_tx_bps.saturating_add(r.net_tx_bps);
    }
}

/// Each job's total over the replica readings `accepted` (job id, reading).
pub fn total_usage(accepted: &[(i64, JobUsage)]) -> BTreeMap<i64, JobUsage> {
    let mut out: BTreeMap<i64, JobUsage> = BTreeMap::new();
    for (job, reading) in accepted {
        out.entry(*job).or_default().add(reading);
    }
    out
}

/// A cluster's device readings of one Metrics message as one sample per device (what its
/// history keeps: the mean and peak busy %, the mean and peak memory per device).
pub fn cluster_sample<'a>(readings: impl IntoIterator<Item = &'a GpuMetrics>) -> JobSample {
    let mut s = JobSample::default();
    for g in readings {
        let busy = g.busy_pct.clamp(0.0, 100.0);
        if !busy.is_finite() {
            continue;
        }
        let memory = i64::try_from(g.memory_used_mib).unwrap_or(i64::MAX);
        s.samples += 1;
        s.busy_sum += f64::from(busy);
        s.busy_max = s.busy_max.max(busy);
        s.memory_sum += memory as f64;
        s.memory_max = s.memory_max.max(memory);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_jobs_resource_use_is_the_saturating_sum_of_its_replicas() {
        let r = |cpu, rx| JobUsage { cpu_milli: cpu, memory_mib: 10, net_rx_bps: rx, ..JobUsage::default() };
        let totals = total_usage(&[(1, r(500, 7)), (2, r(100, 0)), (1, r(1500, i64::MAX))]);
        assert_eq!(
            totals[&1],
            JobUsage { cpu_milli: 2000, memory_mib: 20, net_rx_bps: i64::MAX, ..JobUsage::default() }
        );
        assert_eq!(totals[&2].cpu_milli, 100);
    }

    #[test]
    fn a_clusters_sample_is_one_per_device_and_skips_unreadable_ones() {
        let g = |busy: f32, mem| GpuMetrics {
            node: "n".into(),
            index: 0,
            busy_pct: busy,
            memory_used_mib: mem,
            power_w: None,
            temperature_c: None,
        };
        let s = cluster_sample(&[g(20.0, 100), g(f32::NAN, 5), g(140.0, 300)]);
        assert_eq!((s.samples, s.busy_sum, s.busy_max, s.memory_sum, s.memory_max), (2, 120.0, 100.0, 400.0, 300));
    }

    fn view(state: JobState, epoch: i64, pending: bool) -> JobView {
        JobView { state, epoch, cluster_id: Some("c1".into()), dispatch_pending: pending, answer_by_ms: None }
    }

    fn job_report(cluster: &str, epoch: i64, state: State) -> Report {
        Report { cluster: cluster.into(), epoch, level: Level::Job, state, appended_ms: None }
    }

    #[test]
    fn a_snapshot_read_after_the_jobs_end_brings_no_replica_back_to_life() {
        // GRUS_CHAOS_POSTGRES=1 with seed 1795638389297474225: a replica's usage interval stayed
        // open after its job ended, opened by a Snapshot line ingested after the job's end.
        let ended = view(JobState::Succeeded, 1, false);
        let line =
            |state| Report { level: Level::Replica { task: "main".into(), index: 0 }, ..job_report("c1", 1, state) };
        for from in [UnitState::Pending, UnitState::Placed] {
            assert!(matches!(decide(&ended, &line(State::Running), Some(from)), Decision::Ignore { .. }), "{from}");
            assert!(matches!(decide(&ended, &line(State::Placed), Some(from)), Decision::Ignore { .. }), "{from}");
        }
        let closed = decide(&ended, &line(State::Succeeded), Some(UnitState::Running));
        assert!(matches!(closed, Decision::Apply(Plan { unit_to: Some(UnitState::Succeeded), .. })), "{closed:?}");
        let live = decide(&view(JobState::Running, 1, false), &line(State::Running), Some(UnitState::Placed));
        assert!(matches!(live, Decision::Apply(Plan { unit_to: Some(UnitState::Running), .. })), "{live:?}");
    }

    #[test]
    fn a_job_given_away_while_its_agent_was_paused_is_not_placed_there_after_its_deadline() {
        // The chaos soak's seed 1795642560713114230: an agent paused with a dispatch in hand
        // placed it the moment it woke, after the control plane had timed the dispatch out.
        let job = JobView { answer_by_ms: Some(10_000), ..view(JobState::Dispatched, 1, true) };
        let at = |ms, state| Report { appended_ms: Some(ms), ..job_report("c1", 1, state) };
        assert_eq!(decide(&job, &at(10_000, State::Scheduled), None), Decision::Late);
        assert_eq!(decide(&job, &at(12_000, State::Placed), None), Decision::Late);
        let in_time = decide(&job, &at(9_999, State::Scheduled), None);
        assert!(matches!(in_time, Decision::Apply(Plan { job_to: Some(JobState::Scheduled), .. })), "{in_time:?}");
        // A report that it runs proves an earlier placement in time: it applies.
        assert!(matches!(decide(&job, &at(12_000, State::Running), None), Decision::Apply(_)));
        // Neither a Snapshot line nor a dispatch without a deadline is judged.
        assert!(matches!(decide(&job, &job_report("c1", 1, State::Scheduled), None), Decision::Apply(_)));
        let legacy = view(JobState::Dispatched, 1, true);
        assert!(matches!(decide(&legacy, &at(12_000, State::Scheduled), None), Decision::Apply(_)));
        // Nor a placement reported for a job already placed.
        let placed = JobView { answer_by_ms: Some(10_000), ..view(JobState::Scheduled, 1, false) };
        assert!(!matches!(decide(&placed, &at(12_000, State::Scheduled), None), Decision::Late));
    }

    #[test]
    fn stale_epoch_changes_nothing_and_cancels_only_live_reports() {
        let job = view(JobState::Running, 3, false);
        assert_eq!(decide(&job, &job_report("c1", 2, State::Running), None), Decision::Stale { cancel: true });
        assert_eq!(decide(&job, &job_report("c1", 2, State::Succeeded), None), Decision::Stale { cancel: false });
        // Same epoch number from another cluster: not the holder.
        assert_eq!(decide(&job, &job_report("c2", 3, State::Running), None), Decision::Stale { cancel: true });
    }

    #[test]
    fn a_cancel_answered_after_a_timed_out_dispatch_does_not_cancel_the_job() {
        // The dispatch timed out (or its cluster was lost): the job is `rejected` under the same
        // epoch and cluster, and a Cancel went there. The agent's answers to that Cancel, or any
        // late report of that dispatch, must leave the job waiting for its next dispatch.
        let job = view(JobState::Rejected, 4, false);
        for wire in [State::Cancelled, State::Failed, State::Succeeded, State::Rejected] {
            assert_eq!(decide(&job, &job_report("c1", 4, wire), None), Decision::Stale { cancel: false }, "{wire:?}");
        }
        assert_eq!(decide(&job, &job_report("c1", 4, State::Running), None), Decision::Stale { cancel: true });
        // Requeued after preemption: the old run's late reports do not touch the new wait.
        let requeued = view(JobState::Admitted, 4, false);
        assert_eq!(decide(&requeued, &job_report("c1", 4, State::Failed), None), Decision::Stale { cancel: false });
        let replica = Report {
            cluster: "c1".into(),
            epoch: 4,
            level: Level::Replica { task: "main".into(), index: 0 },
            state: State::Cancelled,
            appended_ms: None,
        };
        assert_eq!(decide(&requeued, &replica, Some(UnitState::Pending)), Decision::Stale { cancel: false });
    }

    #[test]
    fn first_report_answers_the_dispatch() {
        let job = view(JobState::Dispatched, 1, true);
        let d = decide(&job, &job_report("c1", 1, State::Scheduled), None);
        assert_eq!(
            d,
            Decision::Apply(Plan {
                answer: Some(DispatchAnswer::Acknowledged),
                job_to: Some(JobState::Scheduled),
                unit_to: None
            })
        );
        let d = decide(&job, &job_report("c1", 1, State::Rejected), None);
        assert_eq!(
            d,
            Decision::Apply(Plan {
                answer: Some(DispatchAnswer::Rejected),
                job_to: Some(JobState::Rejected),
                unit_to: None
            })
        );
        // A Pending from the agent: accepted, waiting; acknowledges without a state change.
        let d = decide(&job, &job_report("c1", 1, State::Pending), None);
        assert_eq!(
            d,
            Decision::Apply(Plan { answer: Some(DispatchAnswer::Acknowledged), job_to: None, unit_to: None })
        );
    }

    #[test]
    fn a_rejection_after_the_acknowledgement_rejects_the_dispatch() {
        // The agent accepted the job (Pending acknowledged the dispatch) but could not place it
        // within its deadline: the dispatch must end rejected, or the allocator would not know
        // this cluster failed the job.
        let job = view(JobState::Dispatched, 1, false);
        let d = decide(&job, &job_report("c1", 1, State::Rejected), None);
        assert_eq!(
            d,
            Decision::Apply(Plan {
                answer: Some(DispatchAnswer::Rejected),
                job_to: Some(JobState::Rejected),
                unit_to: None
            })
        );
        // A job already running there is not rejected (the machine does not allow it).
        let running = view(JobState::Running, 1, false);
        assert!(matches!(decide(&running, &job_report("c1", 1, State::Rejected), None), Decision::Ignore { .. }));
    }

    #[test]
    fn a_preempted_job_is_requeued_and_nothing_else_is() {
        assert_eq!(requeue_after(JobState::Preempted), Some(JobState::Admitted));
        assert!(JobState::Preempted.can_become(JobState::Admitted), "the machine allows the requeue");
        for s in [JobState::Succeeded, JobState::Failed, JobState::Cancelled, JobState::Rejected, JobState::Preempting]
        {
            assert_eq!(requeue_after(s), None, "{s}");
        }
    }

    #[test]
    fn units_of_a_requeued_job_go_back_to_pending_along_their_machine() {
        use UnitState::*;
        for from in [Pending, Placed, Running, Succeeded, Failed, Evicted, Cancelled] {
            let steps = steps_to_pending(from);
            let mut at = from;
            for s in &steps {
                assert!(at.can_become(*s), "{at} -> {s}");
                at = *s;
            }
            let done = matches!(from, Succeeded | Cancelled);
            assert_eq!(at == Pending, !done, "{from} ends at {at}");
        }
    }

    #[test]
    fn unknown_job_comes_back_when_reported_again() {
        let job = view(JobState::Unknown, 2, false);
        let d = decide(&job, &job_report("c1", 2, State::Running), None);
        assert_eq!(d, Decision::Apply(Plan { answer: None, job_to: Some(JobState::Running), unit_to: None }));
    }

    #[test]
    fn replica_reports_follow_the_unit_machine() {
        let job = view(JobState::Running, 1, false);
        let rep = Report {
            cluster: "c1".into(),
            epoch: 1,
            level: Level::Replica { task: "main".into(), index: 0 },
            state: State::Running,
            appended_ms: None,
        };
        assert_eq!(
            decide(&job, &rep, Some(UnitState::Placed)),
            Decision::Apply(Plan { answer: None, job_to: None, unit_to: Some(UnitState::Running) })
        );
        assert!(matches!(decide(&job, &rep, Some(UnitState::Running)), Decision::Ignore { .. }));
        assert!(matches!(decide(&job, &rep, None), Decision::Ignore { .. }));
    }

    #[test]
    fn ledger_opens_on_entering_running_and_closes_on_leaving() {
        assert_eq!(ledger_effect(UnitState::Placed, UnitState::Running), LedgerEffect::Open);
        assert_eq!(
            ledger_effect(UnitState::Running, UnitState::Succeeded),
            LedgerEffect::Close { by_preemption: false }
        );
        assert_eq!(ledger_effect(UnitState::Running, UnitState::Evicted), LedgerEffect::Close { by_preemption: true });
        assert_eq!(ledger_effect(UnitState::Pending, UnitState::Placed), LedgerEffect::None);
    }

    #[test]
    fn loss_parks_running_jobs_and_leaves_unplaced_ones_to_their_deadline() {
        assert_eq!(on_cluster_lost(JobState::Dispatched), LossAction::Nothing);
        assert_eq!(on_cluster_lost(JobState::Running), LossAction::MarkUnknown);
        assert_eq!(on_cluster_lost(JobState::Succeeded), LossAction::Nothing);
        for s in JobState::ALL {
            if on_cluster_lost(s) == LossAction::MarkUnknown {
                assert!(s.can_become(JobState::Unknown), "{s}");
            }
            if let Some(to) = absent_from_snapshot(s) {
                assert!(s.can_become(to), "{s}");
            }
        }
    }

    #[test]
    fn metrics_go_to_the_jobs_holding_the_device() {
        let m = |node: &str, index, busy, mem| GpuMetrics {
            node: node.into(),
            index,
            busy_pct: busy,
            memory_used_mib: mem,
            power_w: None,
            temperature_c: None,
        };
        let reps = vec![
            RunningReplica { job_id: 1, node: "n1".into(), devices: vec![0, 1] },
            RunningReplica { job_id: 2, node: "n1".into(), devices: vec![1] },
        ];
        let out = attribute_metrics(&[m("n1", 0, 50.0, 100), m("n1", 1, 90.0, 300), m("n2", 0, 10.0, 5)], &reps);
        assert_eq!(out[&1].samples, 2);
        assert_eq!(out[&1].busy_mean(), 70.0);
        assert_eq!(out[&1].busy_max, 90.0);
        assert_eq!(out[&1].memory_max, 300);
        assert_eq!(out[&2].samples, 1);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn gpu_milli_from_devices_or_request() {
        assert_eq!(replica_gpu_milli(&[DeviceRef::share(0, 250)], 1, Some(250)), 250);
        assert_eq!(replica_gpu_milli(&[], 8, None), 8000);
        assert_eq!(replica_gpu_milli(&[], 0, None), 0);
    }

    fn any_job_state() -> impl Strategy<Value = JobState> {
        proptest::sample::select(JobState::ALL.to_vec())
    }
    fn any_unit_state() -> impl Strategy<Value = UnitState> {
        proptest::sample::select(UnitState::ALL.to_vec())
    }
    fn any_wire() -> impl Strategy<Value = State> {
        proptest::sample::select(State::ALL.to_vec())
    }

    proptest! {
        /// Fencing: nothing from an older epoch is ever applied, whatever it says.
        #[test]
        fn older_epochs_never_apply(state in any_job_state(), epoch in 1i64..100, lag in 1i64..50, wire in any_wire(), pending: bool) {
            let job = view(state, epoch, pending);
            let d = decide(&job, &job_report("c1", epoch - lag, wire), None);
            prop_assert_eq!(d, Decision::Stale { cancel: is_live(wire) });
        }

        /// A job waiting for a cluster is never moved by a report, whatever it says.
        #[test]
        fn jobs_awaiting_dispatch_are_never_moved_by_reports(state in any_job_state(), wire in any_wire(), replica: bool, pending: bool) {
            prop_assume!(state.awaits_dispatch());
            let job = view(state, 5, pending);
            let level = if replica { Level::Replica { task: "t".into(), index: 0 } } else { Level::Job };
            let d = decide(&job, &Report { cluster: "c1".into(), epoch: 5, level, state: wire, appended_ms: None }, Some(UnitState::Running));
            prop_assert_eq!(d, Decision::Stale { cancel: is_live(wire) });
        }

        /// Every planned change is one the state machines allow, and a planned change is never
        /// a no-op.
        #[test]
        fn plans_respect_the_machines(state in any_job_state(), unit in proptest::option::of(any_unit_state()), wire in any_wire(), replica: bool, pending: bool) {
            let job = view(state, 5, pending);
            let level = if replica { Level::Replica { task: "t".into(), index: 0 } } else { Level::Job };
            if let Decision::Apply(plan) = decide(&job, &Report { cluster: "c1".into(), epoch: 5, level, state: wire, appended_ms: None }, unit) {
                if let Some(to) = plan.job_to { prop_assert!(state.can_become(to)); }
                if let Some(to) = plan.unit_to { prop_assert!(unit.is_some_and(|u| u.can_become(to))); }
                // An unanswered dispatch is always answered; an acknowledged one only by a later
                // job-level rejection the machine allows (placement deadline missed).
                let late_rejection = !pending && !replica && wire == State::Rejected && state.can_become(JobState::Rejected);
                prop_assert_eq!(plan.answer.is_some(), pending || late_rejection);
                if late_rejection { prop_assert_eq!(plan.answer, Some(DispatchAnswer::Rejected)); }
                prop_assert!(plan.answer.is_some() || plan.job_to.is_some() || plan.unit_to.is_some());
            }
        }

        /// Replaying the same report on the state it produced changes nothing more.
        #[test]
        fn applying_twice_is_a_no_op(state in any_job_state(), wire in any_wire()) {
            let job = view(state, 1, false);
            let rep = job_report("c1", 1, wire);
            if let Decision::Apply(Plan { job_to: Some(to), .. }) = decide(&job, &rep, None) {
                // Ignored, or (the job now waits for a cluster: a rejection) fenced off; a live
                // report would never have moved it there.
                let again = decide(&view(to, 1, false), &rep, None);
                prop_assert!(matches!(again, Decision::Ignore { .. } | Decision::Stale { cancel: false }), "{:?}", again);
            }
        }
    }
}
