//! One job's record in the book and its lifecycle rules, all pure: each method changes the
//! record and returns the transitions to report and the effects to carry out.
//!
//! Intent (the dispatched spec and epoch, evictions and cancellations asked for) is kept
//! apart from observation (replica phases reported by the backend). [`JobRecord::observe`]
//! folds one replica observation into the record, applying the job's policies (DESIGN.md:
//! TaskSucceeded(main) -> CompleteJob, RestartJob { max }, ...).

use std::collections::BTreeMap;

use grus_protocol::wire::{
    DeviceRef, JobSnapshot, JobSpec, PolicyAction, PolicyTrigger, ReplicaExit, ReplicaSnapshot, State, Termination,
    CHECKPOINT_ENV,
};
use serde::{Deserialize, Serialize};

use super::checkpoints::CheckpointRound;
use crate::backend::{GangInfo, ReplicaKey, ReplicaLaunch, ReplicaPhase};

/// A replica of a job: its task's name and its index in the task.
pub type ReplicaId = (String, u32);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaRecord {
    pub state: State,
    pub node: String,
    pub devices: Vec<DeviceRef>,
    /// When it was launched, ms since the Unix epoch.
    pub launched_at_ms: i64,
}

impl ReplicaRecord {
    /// Holds capacity on its node (placed or running, not ended).
    pub fn holds_capacity(&self) -> bool {
        !self.state.is_terminal()
    }
}

/// An eviction asked for (by the api, or by the local scheduler for a preemptor).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Eviction {
    /// The replicas are stopped at this time, ms since the Unix epoch.
    pub deadline_ms: i64,
    pub decided_at_ms: i64,
    /// The job that needs the room, for local preemption.
    pub preemptor: Option<u64>,
    /// The deadline passed and the replicas were told to stop.
    #[serde(default)]
    pub stopped: bool,
}

/// A shrink asked for by the local scheduler: these replicas of an elastic job are given
/// back to make room for `preemptor`; the job runs on with the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shrink {
    pub replicas: Vec<ReplicaId>,
    /// The replicas are stopped at this time, ms since the Unix epoch.
    pub deadline_ms: i64,
    pub decided_at_ms: i64,
    pub preemptor: u64,
    /// The deadline passed and the replicas were told to stop.
    #[serde(default)]
    pub stopped: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub spec: JobSpec,
    pub epoch: u64,
    /// Job-level state: Dispatched (waiting to be placed here), Scheduled, Running,
    /// Preempting, or an end state.
    pub state: State,
    #[serde(with = "replica_map")]
    pub replicas: BTreeMap<ReplicaId, ReplicaRecord>,
    pub task_states: BTreeMap<String, State>,
    pub restarts: u32,
    pub received_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub eviction: Option<Eviction>,
    /// Why it is not placed yet, as last reported.
    pub unplaced_reason: Option<String>,
    /// Local preemptor: never chosen as a victim while it waits.
    pub privileged: bool,
    /// The dispatch's answer deadline, ms since the Unix epoch (`Command::Dispatch`).
    #[serde(default)]
    pub answer_by_ms: Option<i64>,
    /// The control plane holds the job's placement as in time: its `Scheduled` report was
    /// appended to the event stream before the answer deadline (`book::claims`). Until then
    /// nothing of the job is launched: the control plane may have given the dispatch away.
    /// Records of older books, and dispatches without a deadline, are claimed.
    #[serde(default = "claimed_by_default")]
    pub claimed: bool,
    /// Replicas being given back (an elastic job shrunk for a local preemptor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<Shrink>,
    /// The checkpoint asked for before the pending eviction or shrink stops replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointRound>,
    /// Why replicas stopped on the book's own request end: `DeadlineExceeded` once the job ran
    /// past its max runtime; otherwise they are `Stopped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_cause: Option<Termination>,
}

fn claimed_by_default() -> bool {
    true
}

/// JSON object keys must be strings: the replica map is stored as a list of pairs.
mod replica_map {
    use super::{BTreeMap, ReplicaId, ReplicaRecord};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(map: &BTreeMap<ReplicaId, ReplicaRecord>, s: S) -> Result<S::Ok, S::Error> {
        map.iter().collect::<Vec<_>>().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<ReplicaId, ReplicaRecord>, D::Error> {
        Ok(Vec::<(ReplicaId, ReplicaRecord)>::deserialize(d)?.into_iter().collect())
    }
}

/// One transition to report as a JobState event.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub task: Option<String>,
    pub replica: Option<u32>,
    pub state: State,
    pub node: Option<String>,
    pub devices: Vec<DeviceRef>,
    pub reason: Option<String>,
    /// A job-level report of a checkpoint written: its reference (`book::checkpoints`).
    pub checkpoint: Option<String>,
    /// How a replica ended, with its terminal state.
    pub exit: Option<ReplicaExit>,
}

impl Transition {
    pub fn job(state: State, reason: Option<String>) -> Transition {
        Transition {
            task: None,
            replica: None,
            state,
            node: None,
            devices: Vec::new(),
            reason,
            checkpoint: None,
            exit: None,
        }
    }
}

/// Something the agent must do for a job after a transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Stop these replicas (grace in ms).
    Stop { replicas: Vec<ReplicaId>, grace_ms: u64 },
    /// Ask these replicas to write a checkpoint (the job declares `checkpoint`).
    Checkpoint { replicas: Vec<ReplicaId> },
    /// Launch this placed replica where the book placed it: once its job's placement is
    /// claimed (`claims`), after a restart that found it unlaunched, or again by a restart policy.
    Relaunch { replica: ReplicaId },
}

impl JobRecord {
    pub fn new(spec: JobSpec, epoch: u64, now_ms: i64) -> JobRecord {
        JobRecord {
            spec,
            epoch,
            state: State::Dispatched,
            replicas: BTreeMap::new(),
            task_states: BTreeMap::new(),
            restarts: 0,
            received_at_ms: now_ms,
            started_at_ms: None,
            eviction: None,
            unplaced_reason: None,
            privileged: false,
            answer_by_ms: None,
            claimed: true,
            shrink: None,
            checkpoint: None,
            stop_cause: None,
        }
    }

    /// The dispatch must be answered by `answer_by_ms`: the job's placement waits for its claim.
    pub fn answer_by(mut self, answer_by_ms: Option<i64>) -> JobRecord {
        self.answer_by_ms = answer_by_ms;
        self.claimed = answer_by_ms.is_none();
        self
    }

    pub fn is_pending(&self) -> bool {
        self.state == State::Dispatched
    }

    pub fn is_finished(&self) -> bool {
        self.state.is_terminal() || self.state == State::Preempted
    }

    /// Replicas required before the job counts as running (the gang).
    pub fn gang_size(&self) -> u32 {
        let total: u32 = self.spec.tasks.iter().map(|t| t.replicas).sum();
        match (&self.spec.elastic, &self.spec.gang) {
            (Some(e), _) => e.min,
            (None, Some(g)) if g.min_members > 0 => g.min_members.min(total),
            _ => total,
        }
    }

    pub fn live_replicas(&self) -> Vec<ReplicaId> {
        self.replicas.iter().filter(|(_, r)| !r.state.is_terminal()).map(|(k, _)| k.clone()).collect()
    }

    /// Records replicas just launched on a placement.
    pub fn placed(&mut self, id: ReplicaId, node: String, devices: Vec<DeviceRef>, now_ms: i64) -> Vec<Transition> {
        let t = Transition {
            task: Some(id.0.clone()),
            replica: Some(id.1),
            state: State::Placed,
            node: Some(node.clone()),
            devices: devices.clone(),
            reason: None,
            checkpoint: None,
            exit: None,
        };
        self.stop_cause = None;
        self.replicas.insert(id, ReplicaRecord { state: State::Placed, node, devices, launched_at_ms: now_ms });
        let mut out = vec![t];
        if self.state == State::Dispatched {
            self.state = State::Scheduled;
            self.unplaced_reason = None;
            out.push(Transition::job(State::Scheduled, None));
        }
        out
    }

    /// Folds one observation of a replica into the record.
    pub fn observe(&mut self, id: &ReplicaId, phase: &ReplicaPhase, now_ms: i64) -> (Vec<Transition>, Vec<Effect>) {
        let Some(rec) = self.replicas.get_mut(id) else { return (Vec::new(), Vec::new()) };
        let new_state = match phase {
            ReplicaPhase::Placed => State::Placed,
            ReplicaPhase::Running => State::Running,
            ReplicaPhase::Succeeded => State::Succeeded,
            ReplicaPhase::Failed { .. } => State::Failed,
            ReplicaPhase::Stopped => State::Evicted,
        };
        if rec.state == new_state || rec.state.is_terminal() {
            return (Vec::new(), Vec::new());
        }
        rec.state = new_state;
        let reason = match phase {
            ReplicaPhase::Failed { reason, .. } => Some(reason.clone()),
            ReplicaPhase::Stopped => self
                .shrink
                .as_ref()
                .filter(|s| s.replicas.contains(id))
                .map(|s| format!("given back: the elastic job shrank to make room for job {}", s.preemptor)),
            _ => None,
        };
        let mut out = vec![Transition {
            task: Some(id.0.clone()),
            replica: Some(id.1),
            state: new_state,
            node: Some(rec.node.clone()),
            devices: rec.devices.clone(),
            reason: reason.clone(),
            checkpoint: None,
            exit: match phase {
                ReplicaPhase::Succeeded => Some(ReplicaExit::COMPLETED),
                ReplicaPhase::Failed { exit, .. } => Some(*exit),
                ReplicaPhase::Stopped => Some(ReplicaExit::new(None, self.stop_cause.unwrap_or(Termination::Stopped))),
                ReplicaPhase::Placed | ReplicaPhase::Running => None,
            },
        }];
        let mut effects = Vec::new();
        // Only the observed replica's task can have changed (all of them, per observation,
        // made a job of thousands of tasks cost the agent minutes).
        self.update_task(&id.0, &mut out);
        if self.is_finished() || self.state == State::Preempting {
            self.finish_stopping(&mut out);
            return (out, effects);
        }
        match new_state {
            State::Running => {
                let running = self.replicas.values().filter(|r| r.state == State::Running).count() as u32;
                if self.state == State::Scheduled && running >= self.gang_size() {
                    self.state = State::Running;
                    self.started_at_ms.get_or_insert(now_ms);
                    out.push(Transition::job(State::Running, None));
                }
            }
            State::Failed => {
                let task_failed = self.task_states.get(&id.0) == Some(&State::Failed);
                let action = self.policy_for(|on| match on {
                    PolicyTrigger::ReplicaFailed => true,
                    PolicyTrigger::TaskFailed(t) => task_failed && *t == id.0,
                    _ => false,
                });
                let why =
                    format!("replica {}/{} failed{}", id.0, id.1, reason.map(|r| format!(": {r}")).unwrap_or_default());
                self.act(action.unwrap_or(PolicyAction::AbortJob), Some(id), why, &mut out, &mut effects);
            }
            State::Succeeded => {
                let task_done = self.task_states.get(&id.0) == Some(&State::Succeeded);
                let action =
                    self.policy_for(|on| matches!(on, PolicyTrigger::TaskSucceeded(t) if task_done && *t == id.0));
                if let Some(action) = action {
                    self.act(action, Some(id), format!("task {} succeeded", id.0), &mut out, &mut effects);
                } else if self.all_kept_replicas_succeeded() {
                    self.state = State::Succeeded;
                    out.push(Transition::job(State::Succeeded, None));
                }
            }
            _ => {}
        }
        (out, effects)
    }

    /// The job ran past its max runtime: its JobTimeout policy, or abort.
    pub fn timed_out(&mut self) -> (Vec<Transition>, Vec<Effect>) {
        let mut out = Vec::new();
        let mut effects = Vec::new();
        let action = self.policy_for(|on| *on == PolicyTrigger::JobTimeout).unwrap_or(PolicyAction::AbortJob);
        self.stop_cause = Some(Termination::DeadlineExceeded);
        self.act(action, None, "max runtime exceeded".into(), &mut out, &mut effects);
        (out, effects)
    }

    /// Cancel: stop everything, end as Cancelled.
    pub fn cancel(&mut self, grace_ms: u64) -> (Vec<Transition>, Vec<Effect>) {
        if self.is_finished() {
            return (Vec::new(), Vec::new());
        }
        let live = self.live_replicas();
        self.state = State::Cancelled;
        self.eviction = None;
        let out = vec![Transition::job(State::Cancelled, Some("cancelled".into()))];
        let effects = if live.is_empty() { Vec::new() } else { vec![Effect::Stop { replicas: live, grace_ms }] };
        (out, effects)
    }

    /// The eviction deadline passed: stop all replicas; the job ends Preempted when they are gone.
    pub fn evict_now(&mut self) -> (Vec<Transition>, Vec<Effect>) {
        let live = self.live_replicas();
        if let Some(e) = &mut self.eviction {
            e.stopped = true;
        }
        let mut out = Vec::new();
        if live.is_empty() {
            self.state = State::Preempted;
            out.push(Transition::job(State::Preempted, None));
            return (out, Vec::new());
        }
        (out, vec![Effect::Stop { replicas: live, grace_ms: 0 }])
    }

    /// Every replica it did not give back (a shrink) succeeded, at least its gang.
    fn all_kept_replicas_succeeded(&self) -> bool {
        let kept = self.replicas.values().filter(|r| r.state != State::Evicted);
        let (mut count, mut succeeded) = (0u32, 0u32);
        for r in kept {
            count += 1;
            succeeded += u32::from(r.state == State::Succeeded);
        }
        count >= self.gang_size() && succeeded == count
    }

    /// A shrink begins: `replicas` (live ones of this job) are given back to `preemptor` once
    /// `grace_s` from `now_ms` has passed ([`JobRecord::shrink_now`]); the job keeps running
    /// on the rest. Replaces a shrink in flight, and an eviction in flight (its transitions
    /// are returned).
    pub fn begin_shrink(
        &mut self,
        replicas: Vec<ReplicaId>,
        now_ms: i64,
        grace_s: u64,
        preemptor: u64,
    ) -> Vec<Transition> {
        let transitions = self.cancel_eviction();
        let already: Vec<ReplicaId> = match &self.shrink {
            Some(s) if s.stopped => s.replicas.clone(),
            _ => Vec::new(),
        };
        let mut replicas: Vec<ReplicaId> = replicas.into_iter().filter(|r| !already.contains(r)).collect();
        replicas.extend(already);
        self.checkpoint = None;
        self.shrink = Some(Shrink {
            replicas,
            deadline_ms: now_ms + grace_s as i64 * 1000,
            decided_at_ms: now_ms,
            preemptor,
            stopped: false,
        });
        transitions
    }

    /// The shrink's grace ran out: its live replicas are stopped.
    pub fn shrink_now(&mut self) -> Vec<Effect> {
        let Some(shrink) = &mut self.shrink else { return Vec::new() };
        shrink.stopped = true;
        let live: Vec<ReplicaId> = shrink
            .replicas
            .iter()
            .filter(|id| self.replicas.get(*id).is_some_and(|r| !r.state.is_terminal()))
            .cloned()
            .collect();
        if live.is_empty() {
            return Vec::new();
        }
        vec![Effect::Stop { replicas: live, grace_ms: 0 }]
    }

    /// Whether no replica the shrink gives back is live any more.
    pub fn shrink_done(&self) -> bool {
        self.shrink
            .as_ref()
            .is_some_and(|s| s.replicas.iter().all(|id| self.replicas.get(id).is_none_or(|r| r.state.is_terminal())))
    }

    /// The control plane's Evict of a job not yet placed: it ends preempted at once.
    pub fn preempt_before_start(&mut self) -> Vec<Transition> {
        self.state = State::Preempted;
        vec![Transition::job(State::Preempted, Some("evicted before it started".into()))]
    }

    /// An eviction begins: the job is `preempting` until `grace_s` from `now_ms`, when its
    /// replicas are stopped ([`JobRecord::evict_now`]). `preemptor`: the local job that needs
    /// the room (`None` when the control plane evicts).
    pub fn begin_eviction(
        &mut self,
        now_ms: i64,
        grace_s: u64,
        preemptor: Option<u64>,
        why: String,
    ) -> Vec<Transition> {
        self.state = State::Preempting;
        self.checkpoint = None;
        self.eviction = Some(Eviction {
            deadline_ms: now_ms + grace_s as i64 * 1000,
            decided_at_ms: now_ms,
            preemptor,
            stopped: false,
        });
        vec![Transition::job(State::Preempting, Some(why))]
    }

    /// The preemptor no longer needs the room: back to running (or scheduled, when it never
    /// ran). Nothing happens unless an eviction is under way.
    pub fn cancel_eviction(&mut self) -> Vec<Transition> {
        if self.state != State::Preempting || self.eviction.is_none() {
            return Vec::new();
        }
        self.eviction = None;
        self.checkpoint = None;
        self.state = if self.started_at_ms.is_some() { State::Running } else { State::Scheduled };
        vec![Transition::job(self.state, Some("eviction no longer needed".into()))]
    }

    /// Not placed within `deadline` of its arrival: rejected, so the control plane sends it
    /// elsewhere.
    pub fn reject_unplaced(&mut self, deadline: std::time::Duration) -> Vec<Transition> {
        let why = self.unplaced_reason.clone().unwrap_or_else(|| "not placed in time".into());
        self.state = State::Rejected;
        vec![Transition::job(State::Rejected, Some(format!("not placed within {deadline:?}: {why}")))]
    }

    /// Gives the dispatch back without having launched anything: its placement (if any) is
    /// undone and the job is rejected, so the control plane sends it elsewhere (its answer
    /// deadline passed before the placement was claimed).
    pub fn give_back(&mut self, why: String) -> Vec<Transition> {
        self.replicas.retain(|_, r| r.state.is_terminal());
        self.state = State::Rejected;
        vec![Transition::job(State::Rejected, Some(why))]
    }

    /// Why it waits, as the scheduler says; a transition only when the reason changed.
    pub fn note_unplaced(&mut self, reason: String) -> Vec<Transition> {
        if !self.is_pending() || self.unplaced_reason.as_deref() == Some(reason.as_str()) {
            return Vec::new();
        }
        self.unplaced_reason = Some(reason.clone());
        vec![Transition::job(State::Pending, Some(reason))]
    }

    /// Places a replica of task `task` (an index into the spec's tasks) under the first free
    /// replica index of the task (ended replicas keep theirs): its id and transitions.
    pub fn place(
        &mut self,
        task: usize,
        node: String,
        devices: Vec<DeviceRef>,
        now_ms: i64,
    ) -> (ReplicaId, Vec<Transition>) {
        let name = self.spec.tasks[task].name.clone();
        // The first gap in the task's indices (they are in order).
        let mut index = 0;
        for (i, _) in self.task_replicas(&name) {
            if i != index {
                break;
            }
            index += 1;
        }
        let id = (name, index);
        let transitions = self.placed(id.clone(), node, devices, now_ms);
        (id, transitions)
    }

    /// What the backend needs to launch replica `id` of this job on `node`.
    pub fn launch(&self, id: &ReplicaId, node: String, devices: Vec<DeviceRef>) -> ReplicaLaunch {
        let spec: &JobSpec = &self.spec;
        let mut task = spec.tasks.iter().find(|t| t.name == id.0).cloned().expect("replica of a task of this job");
        if let Some(from) = spec.checkpoint.as_ref().and_then(|c| c.resume_from.clone()) {
            task.env.insert(CHECKPOINT_ENV.to_owned(), from);
        }
        let gang = (self.gang_size() > 1).then(|| GangInfo { min_members: self.gang_size() });
        ReplicaLaunch {
            key: ReplicaKey { job: spec.id, task: id.0.clone(), replica: id.1 },
            epoch: self.epoch,
            job_name: spec.name.clone(),
            project: spec.project.clone(),
            queue: spec.queue.clone(),
            task,
            node,
            devices,
            gang,
            labels: spec.labels.clone(),
            service: spec.service.clone(),
            workspace: spec.workspace,
        }
    }

    /// The job as a Snapshot event lists it. A placement not claimed yet is not reported: only
    /// the claim answers the dispatch.
    pub fn snapshot(&self) -> JobSnapshot {
        if !self.claimed && self.state != State::Rejected && !self.is_finished() {
            return JobSnapshot {
                job: self.spec.id,
                epoch: self.epoch,
                state: State::Dispatched,
                replicas: Vec::new(),
            };
        }
        JobSnapshot {
            job: self.spec.id,
            epoch: self.epoch,
            state: self.state,
            replicas: self
                .replicas
                .iter()
                .map(|((task, replica), r)| ReplicaSnapshot {
                    task: task.clone(),
                    replica: *replica,
                    state: r.state,
                    node: Some(r.node.clone()),
                    devices: r.devices.clone(),
                })
                .collect(),
        }
    }

    /// Once stopping has begun (cancel, eviction, an end policy), the job's final state is
    /// reported when the last replica is gone.
    fn finish_stopping(&mut self, out: &mut Vec<Transition>) {
        if self.state == State::Preempting
            && self.eviction.as_ref().is_none_or(|e| e.stopped)
            && self.live_replicas().is_empty()
        {
            self.state = State::Preempted;
            out.push(Transition::job(State::Preempted, None));
        }
    }

    fn policy_for(&self, matches: impl Fn(&PolicyTrigger) -> bool) -> Option<PolicyAction> {
        self.spec.policies.iter().find(|p| matches(&p.on)).map(|p| p.action.clone())
    }

    fn act(
        &mut self,
        action: PolicyAction,
        failed: Option<&ReplicaId>,
        why: String,
        out: &mut Vec<Transition>,
        effects: &mut Vec<Effect>,
    ) {
        let stop_rest = |me: &JobRecord, effects: &mut Vec<Effect>| {
            let live = me.live_replicas();
            if !live.is_empty() {
                effects.push(Effect::Stop { replicas: live, grace_ms: 0 });
            }
        };
        match action {
            PolicyAction::CompleteJob => {
                stop_rest(self, effects);
                self.state = State::Succeeded;
                out.push(Transition::job(State::Succeeded, Some(why)));
            }
            PolicyAction::AbortJob => {
                stop_rest(self, effects);
                self.state = State::Failed;
                out.push(Transition::job(State::Failed, Some(why)));
            }
            PolicyAction::RestartJob { max } if self.restarts < max => {
                stop_rest(self, effects);
                self.restarts += 1;
                self.replicas.clear();
                self.task_states.clear();
                self.state = State::Dispatched;
                out.push(Transition::job(State::Pending, Some(format!("{why}; restart {} of {max}", self.restarts))));
            }
            PolicyAction::RestartJob { max } => {
                stop_rest(self, effects);
                self.state = State::Failed;
                out.push(Transition::job(State::Failed, Some(format!("{why}; {max} restarts used"))));
            }
            PolicyAction::RestartTask => match failed {
                Some(id) => {
                    if let Some(r) = self.replicas.get_mut(id) {
                        r.state = State::Placed;
                    }
                    self.task_states.remove(&id.0);
                    effects.push(Effect::Relaunch { replica: id.clone() });
                }
                None => {
                    stop_rest(self, effects);
                    self.state = State::Failed;
                    out.push(Transition::job(State::Failed, Some(why)));
                }
            },
        }
    }

    /// The replicas of task `name`, in index order.
    fn task_replicas<'a>(&'a self, name: &str) -> impl Iterator<Item = (u32, &'a ReplicaRecord)> + 'a {
        self.replicas.range((name.to_owned(), 0)..=(name.to_owned(), u32::MAX)).map(|((_, i), r)| (*i, r))
    }

    /// Derives task `name`'s state from its replicas and reports it if it changed.
    fn update_task(&mut self, name: &str, out: &mut Vec<Transition>) {
        let Some(task) = self.spec.tasks.iter().find(|t| t.name == name) else { return };
        let needed = task.replicas.min(self.gang_size().max(1));
        let (mut count, mut failed, mut succeeded, mut running, mut evicted) = (0u32, false, 0u32, false, 0u32);
        for (_, r) in self.task_replicas(name) {
            count += 1;
            failed |= r.state == State::Failed;
            running |= r.state == State::Running;
            succeeded += u32::from(r.state == State::Succeeded);
            evicted += u32::from(r.state == State::Evicted);
        }
        if count == 0 {
            return;
        }
        // Replicas evicted from a job that is not itself evicted were given back by a shrink:
        // the task is done when the rest are.
        let given_back = if matches!(self.state, State::Preempting | State::Preempted) { 0 } else { evicted };
        let kept = count - given_back;
        let state = if failed {
            State::Failed
        } else if kept > 0 && kept >= needed && succeeded == kept {
            State::Succeeded
        } else if running {
            State::Running
        } else if evicted == count {
            State::Evicted
        } else {
            State::Placed
        };
        if self.task_states.get(name) != Some(&state) {
            self.task_states.insert(name.to_owned(), state);
            out.push(Transition {
                task: Some(name.to_owned()),
                replica: None,
                state,
                node: None,
                devices: Vec::new(),
                reason: None,
                checkpoint: None,
                exit: None,
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use grus_protocol::wire::{GangSpec, PolicySpec, ResourcesSpec, TaskSpec};

    pub(crate) fn spec(tasks: &[(&str, u32)], policies: Vec<PolicySpec>) -> JobSpec {
        JobSpec {
            id: 7,
            name: "j".into(),
            project: "p".into(),
            queue: "q".into(),
            priority: 0,
            preemptible: true,
            may_preempt: true,
            tasks: tasks
                .iter()
                .map(|(n, r)| TaskSpec {
                    name: n.to_string(),
                    replicas: *r,
                    image: "i".into(),
                    command: vec![],
                    env: BTreeMap::new(),
                    resources: ResourcesSpec { gpus: 1, ..ResourcesSpec::default() },
                    topology: None,
                })
                .collect(),
            gang: None,
            elastic: None,
            policies,
            max_runtime_s: None,
            min_runtime_s: None,
            predicted_runtime_s: None,
            labels: BTreeMap::new(),
            node_selector: BTreeMap::new(),
            pools: Vec::new(),
            submitted_by: "u".into(),
            submitted_at_ms: 0,
            checkpoint: None,
            workspace: None,
            service: None,
        }
    }

    pub(crate) fn started(spec: JobSpec) -> JobRecord {
        let mut j = JobRecord::new(spec, 1, 0);
        let tasks: Vec<(String, u32)> = j.spec.tasks.iter().map(|t| (t.name.clone(), t.replicas)).collect();
        for (t, n) in tasks {
            for i in 0..n {
                j.placed((t.clone(), i), "n".into(), vec![], 0);
            }
        }
        for id in j.replicas.keys().cloned().collect::<Vec<_>>() {
            j.observe(&id, &ReplicaPhase::Running, 1);
        }
        j
    }

    fn job_states(ts: &[Transition]) -> Vec<State> {
        ts.iter().filter(|t| t.task.is_none()).map(|t| t.state).collect()
    }

    #[test]
    fn a_job_runs_when_its_gang_runs_and_succeeds_when_all_replicas_do() {
        let mut j = JobRecord::new(spec(&[("main", 2)], vec![]), 1, 0);
        let mut ts = j.placed(("main".into(), 0), "n".into(), vec![], 0);
        ts.extend(j.placed(("main".into(), 1), "n".into(), vec![], 0));
        assert_eq!(job_states(&ts), [State::Scheduled]);
        let (ts, _) = j.observe(&("main".into(), 0), &ReplicaPhase::Running, 1);
        assert!(job_states(&ts).is_empty(), "one of two is not the gang");
        let (ts, _) = j.observe(&("main".into(), 1), &ReplicaPhase::Running, 1);
        assert_eq!(job_states(&ts), [State::Running]);
        j.observe(&("main".into(), 0), &ReplicaPhase::Succeeded, 2);
        let (ts, _) = j.observe(&("main".into(), 1), &ReplicaPhase::Succeeded, 2);
        assert_eq!(job_states(&ts), [State::Succeeded]);
        assert!(ts
            .iter()
            .any(|t| t.task.as_deref() == Some("main") && t.replica.is_none() && t.state == State::Succeeded));
    }

    #[test]
    fn task_succeeded_main_completes_the_whole_job() {
        let policy = PolicySpec { on: PolicyTrigger::TaskSucceeded("main".into()), action: PolicyAction::CompleteJob };
        let mut j = started(spec(&[("main", 1), ("server", 2)], vec![policy]));
        let (ts, effects) = j.observe(&("main".into(), 0), &ReplicaPhase::Succeeded, 5);
        assert_eq!(job_states(&ts), [State::Succeeded]);
        assert_eq!(effects, [Effect::Stop { replicas: vec![("server".into(), 0), ("server".into(), 1)], grace_ms: 0 }]);
        let (ts, effects) = j.observe(&("server".into(), 0), &ReplicaPhase::Stopped, 6);
        assert!(job_states(&ts).is_empty() && effects.is_empty(), "an ended job stays ended");
    }

    #[test]
    fn a_failed_replica_aborts_the_job_by_default() {
        let mut j = started(spec(&[("main", 2)], vec![]));
        let (ts, effects) = j.observe(&("main".into(), 1), &ReplicaPhase::ended(Termination::OomKilled, "OOM"), 5);
        assert_eq!(job_states(&ts), [State::Failed]);
        assert!(ts.last().unwrap().reason.as_deref().unwrap().contains("OOM"));
        assert_eq!(effects, [Effect::Stop { replicas: vec![("main".into(), 0)], grace_ms: 0 }]);
        assert_eq!(ts[0].exit, Some(ReplicaExit::new(None, Termination::OomKilled)), "the replica says how it ended");
        let (ts, _) = j.observe(&("main".into(), 0), &ReplicaPhase::Stopped, 6);
        assert_eq!(ts[0].exit, Some(ReplicaExit::new(None, Termination::Stopped)));
        let mut k = started(spec(&[("main", 1)], vec![]));
        let (ts, _) = k.observe(&("main".into(), 0), &ReplicaPhase::Succeeded, 5);
        assert_eq!(ts[0].exit, Some(ReplicaExit::COMPLETED));
    }

    #[test]
    fn restart_job_requeues_until_its_budget_is_spent() {
        let policy = PolicySpec { on: PolicyTrigger::ReplicaFailed, action: PolicyAction::RestartJob { max: 1 } };
        let mut j = started(spec(&[("main", 1)], vec![policy]));
        let (ts, _) = j.observe(&("main".into(), 0), &ReplicaPhase::exited(1, "x"), 5);
        assert_eq!(job_states(&ts), [State::Pending]);
        assert!(j.is_pending() && j.replicas.is_empty() && j.restarts == 1);
        j.placed(("main".into(), 0), "n".into(), vec![], 6);
        let (ts, _) = j.observe(&("main".into(), 0), &ReplicaPhase::exited(1, "x"), 7);
        assert_eq!(job_states(&ts), [State::Failed]);
    }

    #[test]
    fn restart_task_relaunches_in_place() {
        let policy = PolicySpec { on: PolicyTrigger::TaskFailed("main".into()), action: PolicyAction::RestartTask };
        let mut j = started(spec(&[("main", 1)], vec![policy]));
        let (_, effects) = j.observe(&("main".into(), 0), &ReplicaPhase::exited(1, "x"), 5);
        assert_eq!(effects, [Effect::Relaunch { replica: ("main".into(), 0) }]);
        assert_eq!(j.state, State::Running);
    }

    #[test]
    fn eviction_ends_preempted_once_replicas_are_gone() {
        let mut j = started(spec(&[("main", 2)], vec![]));
        j.state = State::Preempting;
        let (_, effects) = j.evict_now();
        assert_eq!(effects.len(), 1);
        let (ts, _) = j.observe(&("main".into(), 0), &ReplicaPhase::Stopped, 5);
        assert!(job_states(&ts).is_empty());
        let (ts, _) = j.observe(&("main".into(), 1), &ReplicaPhase::Stopped, 5);
        assert_eq!(job_states(&ts), [State::Preempted]);
    }

    #[test]
    fn gang_min_members_decides_running() {
        let mut s = spec(&[("main", 3)], vec![]);
        s.gang = Some(GangSpec { min_members: 2 });
        let mut j = JobRecord::new(s, 1, 0);
        for i in 0..3 {
            j.placed(("main".into(), i), "n".into(), vec![], 0);
        }
        j.observe(&("main".into(), 0), &ReplicaPhase::Running, 1);
        let (ts, _) = j.observe(&("main".into(), 1), &ReplicaPhase::Running, 1);
        assert_eq!(job_states(&ts), [State::Running]);
    }
}
