//! The agent loop: applies commands to the book, runs the scheduling cycle over the jobs
//! dispatched here, drives the backend, and reports every transition.
//!
//! One task owns all state; commands arrive over a channel from the reader task. A batch of
//! commands is acknowledged only after the book that records their effect is on disk
//! (invariant 1: Redis may lose nothing the agent still needs). Every job command is fenced
//! by its epoch (invariant 2), and every effect on the backend is idempotent, so replaying
//! pending entries after a crash starts nothing twice.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use grus_protocol::codec::{decode, encode, Decoded, Envelope};
use grus_protocol::wire::{
    CapacitySummary, DeviceRef, GpuMetrics, JobSnapshot, JobSpec, NodeInfo, ReplicaSnapshot, State,
};
use grus_protocol::{Command, Event};
use grus_scheduler::cluster::{DeviceShare, NodeId, ReplicaAllocation};
use grus_scheduler::cycle::{
    schedule, Decision, InFlightEviction, PlacedReplica, RunningJob, SchedulerConfig, SchedulerInput,
};
use grus_scheduler::job::JobId;
use tokio::sync::mpsc;

use crate::backend::{Backend, BackendEvent, GangInfo, ObservedReplica, ReplicaKey, ReplicaLaunch, ReplicaPhase};
use crate::book::{Book, Effect, Eviction, JobRecord, ReplicaId, Transition};
use crate::clock::Clock;
use crate::convert;
use crate::transport::{Inbound, Incoming, Publisher};

/// How the agent behaves; every field has a flag in `main.rs`.
#[derive(Clone, Debug)]
pub struct AgentSettings {
    pub cluster: String,
    pub state_dir: PathBuf,
    /// Capacity is sent at least this often.
    pub capacity_every: Duration,
    /// ... and on change, but not more often than this.
    pub capacity_debounce: Duration,
    pub heartbeat_every: Duration,
    pub heartbeat_ttl: Duration,
    pub metrics_every: Duration,
    pub tick: Duration,
    /// A job that cannot be placed here for this long is rejected so the allocator can send
    /// it elsewhere.
    pub place_deadline: Duration,
    /// Grace given to replicas stopped by Cancel.
    pub cancel_grace: Duration,
    pub version: String,
}

impl AgentSettings {
    pub fn new(cluster: &str, state_dir: PathBuf) -> AgentSettings {
        AgentSettings {
            cluster: cluster.to_string(),
            state_dir,
            capacity_every: Duration::from_secs(5),
            capacity_debounce: Duration::from_millis(500),
            heartbeat_every: Duration::from_secs(5),
            heartbeat_ttl: Duration::from_secs(15),
            metrics_every: Duration::from_secs(5),
            tick: Duration::from_millis(100),
            place_deadline: Duration::from_secs(300),
            cancel_grace: Duration::from_secs(30),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Where GPU readings come from (the profiler, or the simulator).
pub type MetricsSource = Box<dyn Fn() -> Vec<GpuMetrics> + Send>;

pub struct Agent<B: Backend> {
    settings: AgentSettings,
    backend: B,
    book: Book,
    publisher: Publisher,
    clock: Arc<dyn Clock>,
    scheduler: SchedulerConfig,
    metrics: Option<MetricsSource>,
    nodes: Vec<NodeInfo>,
    live: Vec<GpuMetrics>,
    /// Message ids are `<cluster>-<boot>-<seq>`: unique across restarts without persistence.
    boot: i64,
    seq: u64,
    outbox: Vec<Envelope<Event>>,
    needs_cycle: bool,
    book_dirty: bool,
    last_capacity: Option<(CapacitySummary, Instant)>,
    /// Something that may change the capacity summary happened since it was last computed.
    capacity_changed: bool,
    last_heartbeat: Option<Instant>,
    last_metrics: Option<Instant>,
    /// Counters for the benchmark and the logs.
    pub stats: AgentStats,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct AgentStats {
    pub commands: u64,
    pub events: u64,
    pub cycles: u64,
}

impl<B: Backend> Agent<B> {
    pub async fn start(
        settings: AgentSettings,
        mut backend: B,
        publisher: Publisher,
        clock: Arc<dyn Clock>,
        scheduler: SchedulerConfig,
        metrics: Option<MetricsSource>,
    ) -> anyhow::Result<Agent<B>> {
        use anyhow::Context;
        let mut book = Book::load(&settings.state_dir).context("load the agent book")?;
        let nodes = backend.nodes().await.context("read nodes from the backend")?;
        let boot = clock.now_ms();
        // Events saved with the book and perhaps never published: they go out first.
        let outbox = std::mem::take(&mut book.unpublished)
            .iter()
            .filter_map(|raw| match decode::<Event>(raw.as_bytes(), &settings.cluster) {
                Ok(Decoded::Known(env)) => Some(env),
                other => {
                    tracing::warn!(?other, "dropping an unreadable event saved with the book");
                    None
                }
            })
            .collect();
        let mut agent = Agent {
            settings,
            backend,
            book,
            publisher,
            clock,
            scheduler,
            metrics,
            nodes,
            live: Vec::new(),
            boot,
            seq: 0,
            outbox,
            needs_cycle: true,
            book_dirty: false,
            last_capacity: None,
            capacity_changed: true,
            last_heartbeat: None,
            last_metrics: None,
            stats: AgentStats::default(),
        };
        agent.rebuild().await?;
        agent.announce();
        agent.flush().await?;
        Ok(agent)
    }

    pub fn book(&self) -> &Book {
        &self.book
    }

    /// Runs until the inbound channel closes.
    pub async fn run(mut self, mut inbound: mpsc::Receiver<Inbound>) -> anyhow::Result<()> {
        let mut tick = tokio::time::interval(self.settings.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                msg = inbound.recv() => match msg {
                    Some(Inbound::Commands(batch)) => self.apply_commands(batch).await?,
                    Some(Inbound::Resync) => {
                        tracing::warn!("Redis lost the command stream; sending a full snapshot");
                        self.announce();
                    }
                    None => break,
                },
                _ = tick.tick() => {
                    self.on_tick().await?;
                    if let Err(e) = self.heartbeat().await {
                        tracing::warn!(error = %e, "heartbeat failed");
                    }
                }
            }
            self.flush().await?;
        }
        self.save_book()?;
        Ok(())
    }

    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    fn emit(&mut self, event: Event) {
        self.seq += 1;
        let id = format!("{}-{}-{}", self.settings.cluster, self.boot, self.seq);
        self.outbox.push(Envelope::new(id, &self.settings.cluster, self.now(), event));
    }

    fn emit_transitions(&mut self, job: u64, epoch: u64, transitions: Vec<Transition>) {
        let at = self.now();
        self.emit_transitions_at(job, epoch, transitions, at);
    }

    /// Transitions decided at `at` (a tick's time): stamped with it, not with the time of
    /// emitting, so deadlines measured from one transition hold between the stamps too (a
    /// job's max runtime counts from the `running` stamp).
    fn emit_transitions_at(&mut self, job: u64, epoch: u64, transitions: Vec<Transition>, at: i64) {
        for t in transitions {
            self.emit(Event::JobState {
                job,
                task: t.task,
                replica: t.replica,
                state: t.state,
                node: t.node,
                devices: t.devices,
                at,
                epoch,
                reason: t.reason,
            });
        }
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        if self.outbox.is_empty() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.outbox);
        self.stats.events += events.len() as u64;
        if let Err(e) = self.publisher.publish(&events).await {
            // Keep them: the next flush retries, in order.
            tracing::warn!(error = %e, n = events.len(), "could not publish events; will retry");
            self.outbox = events.into_iter().chain(std::mem::take(&mut self.outbox)).collect();
        }
        Ok(())
    }

    /// Saves the book with the events not yet published: every event whose cause the saved
    /// book reflects is published at least once, even if the agent dies before the next flush.
    fn save_book(&mut self) -> anyhow::Result<()> {
        self.book.unpublished = self.outbox.iter().map(encode).collect();
        self.book.save(&self.settings.state_dir)?;
        self.book.unpublished = Vec::new();
        tracing::debug!(jobs = self.book.jobs.len(), "saved the book");
        self.book_dirty = false;
        Ok(())
    }

    /// Hello, Inventory, Capacity and a Snapshot of every job: what the api needs to rebuild
    /// its view of this cluster (after our start, or after Redis lost everything).
    fn announce(&mut self) {
        self.emit(Event::Hello {
            version: self.settings.version.clone(),
            capabilities: vec![self.backend.name().to_string(), "gpu-milli".into(), "gang".into(), "elastic".into()],
        });
        self.emit(Event::Inventory { nodes: self.nodes.clone() });
        let summary = self.capacity();
        self.emit(Event::Capacity { summary: summary.clone() });
        self.last_capacity = Some((summary, Instant::now()));
        let jobs = self.book.jobs.values().map(snapshot_of).collect();
        self.emit(Event::Snapshot { jobs, inventory: self.nodes.clone() });
    }

    /// Reconciles the book with what the backend runs (after a restart).
    async fn rebuild(&mut self) -> anyhow::Result<()> {
        let observed = self.backend.replicas().await?;
        let now = self.now();
        let mut seen = std::collections::BTreeSet::new();
        for obs in observed {
            let id: ReplicaId = (obs.key.task.clone(), obs.key.replica);
            // The book's own: a live job's replica, or one an ended job is still stopping (its
            // grace runs on; stopping or failing it now would misreport how it ended).
            let known = self.book.jobs.get(&obs.key.job).is_some_and(|j| {
                j.epoch == obs.epoch && (!j.is_finished() || j.replicas.get(&id).is_some_and(|r| r.holds_capacity()))
            });
            if !known {
                if !obs.phase.is_terminal() {
                    tracing::info!(replica = %obs.key, epoch = obs.epoch, "stopping a replica the book does not hold");
                    self.backend.stop(&obs.key, Duration::ZERO).await?;
                }
                continue;
            }
            seen.insert(obs.key.clone());
            let job = self.book.jobs.get_mut(&obs.key.job).expect("checked above");
            // Launched before the crash but not yet in the saved book: adopt it, never launch twice.
            let mut ts = Vec::new();
            if !job.replicas.contains_key(&id) {
                ts = job.placed(id.clone(), obs.node.clone(), obs.devices.clone(), now);
            }
            let (more, effects) = job.observe(&id, &obs.phase, now);
            ts.extend(more);
            let epoch = job.epoch;
            self.emit_transitions_at(obs.key.job, epoch, ts, now);
            self.apply_effects(obs.key.job, effects).await?;
        }
        // Replicas the book placed but the backend does not have.
        let missing: Vec<(u64, ReplicaId, State)> = self
            .book
            .jobs
            .iter()
            .flat_map(|(&j, rec)| {
                rec.replicas.iter().filter(|(_, r)| r.holds_capacity()).map(move |(id, r)| (j, id.clone(), r.state))
            })
            .filter(|(j, id, _)| !seen.contains(&ReplicaKey { job: *j, task: id.0.clone(), replica: id.1 }))
            .collect();
        for (job, id, state) in missing {
            if state == State::Placed {
                // Launched just before the crash, perhaps never reached the backend: launch again.
                self.apply_effects(job, vec![Effect::Relaunch { replica: id }]).await?;
            } else {
                let rec = self.book.jobs.get_mut(&job).expect("listed above");
                let phase = ReplicaPhase::Failed { reason: "lost while the agent was down".into() };
                let (ts, effects) = rec.observe(&id, &phase, now);
                let epoch = rec.epoch;
                self.emit_transitions(job, epoch, ts);
                self.apply_effects(job, effects).await?;
            }
        }
        self.save_book()?;
        Ok(())
    }

    async fn apply_commands(&mut self, batch: Vec<Incoming>) -> anyhow::Result<()> {
        let mut acks = Vec::with_capacity(batch.len());
        for incoming in batch {
            self.stats.commands += 1;
            match incoming.decoded {
                Err(e) => {
                    tracing::warn!(stream_id = incoming.stream_id, reason = %e, "dead-lettering an undecodable command");
                    if let Err(err) =
                        self.publisher.dead_letter(&incoming.stream_id, &incoming.raw, &e.to_string()).await
                    {
                        // Not acknowledged either: it is read again after a restart.
                        tracing::warn!(error = %err, "could not dead-letter; leaving the command pending");
                        continue;
                    }
                }
                Ok(Decoded::UnknownKind { id, kind }) => {
                    tracing::info!(id, kind, "acknowledging a command of a kind this agent does not know");
                }
                Ok(Decoded::Known(env)) => {
                    if !self.book.seen_before(&env.id) {
                        self.apply_command(env.message).await?;
                        self.book_dirty = true;
                    }
                }
            }
            acks.push(incoming.stream_id);
        }
        if self.book_dirty {
            self.save_book()?;
        }
        if let Err(e) = self.publisher.ack(&acks).await {
            // Unacknowledged entries come back after a restart; the seen ids make them no-ops.
            tracing::warn!(error = %e, n = acks.len(), "could not acknowledge commands");
        }
        Ok(())
    }

    async fn apply_command(&mut self, command: Command) -> anyhow::Result<()> {
        let now = self.now();
        if let Some((job, epoch)) = command.job_epoch() {
            if self.book.is_stale(job, epoch) {
                tracing::info!(job, epoch, kind = command.kind(), "refusing a command with a stale epoch");
                if matches!(command, Command::Dispatch { .. }) {
                    let reason = format!("stale epoch {epoch}; this cluster holds epoch {}", self.book.epochs[&job]);
                    self.emit_transitions(job, epoch, vec![Transition::job(State::Rejected, Some(reason))]);
                }
                return Ok(());
            }
            self.book.epochs.insert(job, epoch);
        }
        match command {
            Command::Dispatch { job, epoch } => {
                let id = job.id;
                if let Some(old) = self.book.jobs.get_mut(&id) {
                    if old.epoch == epoch {
                        return Ok(());
                    }
                    // Re-dispatched here with a newer epoch: what ran under the old one stops.
                    let (_, effects) = old.cancel(0);
                    self.apply_effects(id, effects).await?;
                    self.book.jobs.remove(&id);
                }
                if let Err(e) = convert::job_of(&job, grus_scheduler::job::QueueId(0)) {
                    self.emit_transitions(
                        id,
                        epoch,
                        vec![Transition::job(State::Rejected, Some(format!("invalid job: {e}")))],
                    );
                    return Ok(());
                }
                self.book.jobs.insert(id, JobRecord::new(*job, epoch, now));
                self.needs_cycle = true;
            }
            Command::Cancel { job, epoch } => match self.book.jobs.get_mut(&job) {
                Some(rec) => {
                    let (ts, effects) = rec.cancel(self.settings.cancel_grace.as_millis() as u64);
                    self.emit_transitions(job, epoch, ts);
                    self.apply_effects(job, effects).await?;
                    self.needs_cycle = true;
                }
                None => self.emit_transitions(
                    job,
                    epoch,
                    vec![Transition::job(State::Cancelled, Some("not running here".into()))],
                ),
            },
            Command::Evict { job, grace_s, epoch } => {
                if let Some(rec) = self.book.jobs.get_mut(&job) {
                    if rec.is_pending() {
                        rec.state = State::Preempted;
                        self.emit_transitions(
                            job,
                            epoch,
                            vec![Transition::job(State::Preempted, Some("evicted before it started".into()))],
                        );
                    } else if !rec.is_finished() && rec.state != State::Preempting {
                        rec.state = State::Preempting;
                        rec.eviction = Some(Eviction {
                            deadline_ms: now + grace_s as i64 * 1000,
                            decided_at_ms: now,
                            preemptor: None,
                            stopped: false,
                        });
                        self.emit_transitions(
                            job,
                            epoch,
                            vec![Transition::job(
                                State::Preempting,
                                Some(format!("evicted by the control plane; grace {grace_s}s")),
                            )],
                        );
                    }
                }
            }
            Command::SetQueues { weights, quotas } => {
                if let Err(e) = convert::queues_of(&weights, &quotas) {
                    tracing::warn!(error = %e, "ignoring SetQueues that does not form valid queues");
                } else {
                    self.book.queue_weights = weights;
                    self.book.queue_quotas = quotas;
                    self.needs_cycle = true;
                }
            }
        }
        Ok(())
    }

    async fn apply_effects(&mut self, job: u64, effects: Vec<Effect>) -> anyhow::Result<()> {
        for effect in effects {
            match effect {
                Effect::Stop { replicas, grace_ms } => {
                    for (task, replica) in replicas {
                        let key = ReplicaKey { job, task, replica };
                        self.backend.stop(&key, Duration::from_millis(grace_ms)).await?;
                    }
                }
                Effect::Relaunch { replica } => {
                    let Some(rec) = self.book.jobs.get(&job) else { continue };
                    let Some(r) = rec.replicas.get(&replica) else { continue };
                    let launch = launch_of(rec, &replica, r.node.clone(), r.devices.clone());
                    if let Err(e) = self.backend.launch(&launch).await {
                        let rec = self.book.jobs.get_mut(&job).expect("read above");
                        let phase = ReplicaPhase::Failed { reason: format!("relaunch failed: {e}") };
                        let (ts, more) = rec.observe(&replica, &phase, self.clock.now_ms());
                        let epoch = rec.epoch;
                        self.emit_transitions(job, epoch, ts);
                        Box::pin(self.apply_effects(job, more)).await?;
                    }
                }
            }
            self.needs_cycle = true;
        }
        Ok(())
    }

    async fn on_tick(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        for change in self.backend.changes().await? {
            match change {
                BackendEvent::NodesChanged => {
                    self.nodes = self.backend.nodes().await?;
                    self.emit(Event::Inventory { nodes: self.nodes.clone() });
                    self.needs_cycle = true;
                }
                BackendEvent::Replica(obs) => self.observe(obs, now).await?,
            }
        }
        self.check_deadlines(now).await?;
        // Whatever can change the capacity summary (placements, replicas ending, commands,
        // nodes) sets one of these.
        self.capacity_changed |= self.needs_cycle || self.book_dirty;
        if self.needs_cycle {
            self.needs_cycle = false;
            self.run_cycle(now).await?;
        }
        self.forget_finished().await?;
        self.periodic(now);
        if self.book_dirty {
            self.save_book()?;
        }
        Ok(())
    }

    async fn observe(&mut self, obs: ObservedReplica, now: i64) -> anyhow::Result<()> {
        let id: ReplicaId = (obs.key.task.clone(), obs.key.replica);
        match self.book.jobs.get_mut(&obs.key.job) {
            Some(rec) if rec.epoch == obs.epoch => {
                let (ts, effects) = rec.observe(&id, &obs.phase, now);
                let epoch = rec.epoch;
                if !ts.is_empty() {
                    self.book_dirty = true;
                    self.needs_cycle = true;
                }
                self.emit_transitions_at(obs.key.job, epoch, ts, now);
                self.apply_effects(obs.key.job, effects).await?;
            }
            _ if !obs.phase.is_terminal() => {
                tracing::info!(replica = %obs.key, epoch = obs.epoch, "stopping a replica of an unknown job or stale epoch");
                self.backend.stop(&obs.key, Duration::ZERO).await?;
            }
            _ => {}
        }
        Ok(())
    }

    async fn check_deadlines(&mut self, now: i64) -> anyhow::Result<()> {
        let ids: Vec<u64> = self.book.jobs.keys().copied().collect();
        for id in ids {
            let rec = self.book.jobs.get_mut(&id).expect("listed");
            let epoch = rec.epoch;
            let (ts, effects) = if rec.eviction.as_ref().is_some_and(|e| e.deadline_ms <= now && !e.stopped) {
                rec.evict_now()
            } else if rec.state == State::Running
                && rec.spec.max_runtime_s.zip(rec.started_at_ms).is_some_and(|(max, t)| now - t >= max as i64 * 1000)
            {
                rec.timed_out()
            } else if rec.is_pending()
                && now - rec.received_at_ms >= self.settings.place_deadline.as_millis() as i64
                && !rec.privileged
            {
                let why = rec.unplaced_reason.clone().unwrap_or_else(|| "not placed in time".into());
                rec.state = State::Rejected;
                (
                    vec![Transition::job(
                        State::Rejected,
                        Some(format!("not placed within {:?}: {why}", self.settings.place_deadline)),
                    )],
                    Vec::new(),
                )
            } else {
                continue;
            };
            self.book_dirty = true;
            self.emit_transitions_at(id, epoch, ts, now);
            self.apply_effects(id, effects).await?;
        }
        Ok(())
    }

    /// Drops jobs that ended and hold nothing any more (their epoch stays, for fencing).
    async fn forget_finished(&mut self) -> anyhow::Result<()> {
        let done: Vec<u64> = self
            .book
            .jobs
            .iter()
            .filter(|(_, j)| {
                (j.is_finished() || j.state == State::Rejected) && j.replicas.values().all(|r| !r.holds_capacity())
            })
            .map(|(&id, _)| id)
            .collect();
        for id in done {
            self.backend.forget_job(id).await?;
            self.book.jobs.remove(&id);
            self.book_dirty = true;
        }
        Ok(())
    }

    fn periodic(&mut self, _now: i64) {
        let due = |last: &Option<Instant>, every: Duration| last.is_none_or(|t| t.elapsed() >= every);
        if due(&self.last_metrics, self.settings.metrics_every) {
            if let Some(source) = &self.metrics {
                self.live = source();
                let gpus = self.live.clone();
                self.emit(Event::Metrics { gpus });
            }
            self.last_metrics = Some(Instant::now());
        }
        // Building the summary walks every node and allocation: only when one is due.
        let (due, may_send) = match &self.last_capacity {
            None => (true, true),
            Some((_, at)) => (
                at.elapsed() >= self.settings.capacity_every,
                self.capacity_changed && at.elapsed() >= self.settings.capacity_debounce,
            ),
        };
        if !due && !may_send {
            return;
        }
        let summary = self.capacity();
        self.capacity_changed = false;
        let send = due || self.last_capacity.as_ref().is_none_or(|(last, _)| *last != summary);
        if send {
            self.emit(Event::Capacity { summary: summary.clone() });
            self.last_capacity = Some((summary, Instant::now()));
        }
    }

    /// Sets the heartbeat key when due; its TTL is three periods, so one slow tick is harmless.
    async fn heartbeat(&mut self) -> anyhow::Result<()> {
        if self.last_heartbeat.is_none_or(|t| t.elapsed() >= self.settings.heartbeat_every) {
            let value = serde_json::json!({ "ts": self.now(), "version": self.settings.version, "boot": self.boot })
                .to_string();
            self.publisher.heartbeat(&value, self.settings.heartbeat_ttl).await?;
            self.last_heartbeat = Some(Instant::now());
        }
        Ok(())
    }

    /// The scheduler's cluster with every live replica's allocation applied.
    fn current_cluster(&self) -> Option<(grus_scheduler::cluster::Cluster, BTreeMap<u64, Vec<PlacedReplica>>)> {
        let mut cluster = match convert::cluster_of(&self.nodes) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "the backend's inventory does not form a valid cluster");
                return None;
            }
        };
        let by_name: BTreeMap<String, NodeId> = cluster.nodes().iter().map(|n| (n.name.clone(), n.id)).collect();
        for m in &self.live {
            if let Some(&node) = by_name.get(m.node.as_str()) {
                if (m.index as usize) < cluster.node(node).gpus.len() {
                    let live = grus_scheduler::cluster::LiveUtilization {
                        busy_pct: m.busy_pct,
                        memory_used_mib: m.memory_used_mib,
                    };
                    cluster.set_live_utilization(node, m.index as u8, Some(live));
                }
            }
        }
        let mut placed: BTreeMap<u64, Vec<PlacedReplica>> = BTreeMap::new();
        for (&id, rec) in &self.book.jobs {
            for ((task, _), r) in rec.replicas.iter().filter(|(_, r)| r.holds_capacity()) {
                let Some(&node) = by_name.get(r.node.as_str()) else { continue };
                let Some(t) = rec.spec.tasks.iter().position(|t| t.name == *task) else { continue };
                let res = &rec.spec.tasks[t].resources;
                let alloc = ReplicaAllocation {
                    node,
                    cpu_milli: res.cpu_milli,
                    memory_mib: res.memory_mib,
                    devices: r
                        .devices
                        .iter()
                        .map(|d| DeviceShare {
                            gpu: d.index as u8,
                            milli: d.milli,
                            memory_mib: res.gpu_memory_mib.unwrap_or(0),
                        })
                        .collect(),
                };
                // A failed node may hold less than we think; what cannot be applied is not counted.
                if cluster.allocate(&alloc).is_ok() {
                    placed.entry(id).or_default().push(PlacedReplica { task: t, allocation: alloc });
                }
            }
        }
        Some((cluster, placed))
    }

    fn capacity(&self) -> CapacitySummary {
        let pending = self.book.jobs.values().filter(|j| j.is_pending()).count() as u32;
        match self.current_cluster() {
            Some((cluster, _)) => convert::capacity_of(&cluster, pending),
            None => CapacitySummary { pending_jobs: pending, ..CapacitySummary::default() },
        }
    }

    async fn run_cycle(&mut self, now_ms: i64) -> anyhow::Result<()> {
        let Some((cluster, placed)) = self.current_cluster() else { return Ok(()) };
        let queues = convert::queues_of(&self.book.queue_weights, &self.book.queue_quotas)?;
        let now_s = (now_ms / 1000).max(0) as u64;
        let mut running = Vec::new();
        let mut pending = Vec::new();
        let mut evictions = Vec::new();
        for (&id, rec) in &self.book.jobs {
            let Ok(job) = convert::job_of(&rec.spec, queues.id(&rec.spec.queue)) else { continue };
            if rec.is_pending() {
                pending.push(job);
            } else if let Some(replicas) = placed.get(&id) {
                running.push(RunningJob {
                    job,
                    replicas: replicas.clone(),
                    started_at: (rec.started_at_ms.unwrap_or(rec.received_at_ms) / 1000) as u64,
                    privileged: rec.privileged,
                });
            }
        }
        // Preemptions in flight; the victim may have left already.
        self.book.evictions.retain(|_, (preemptor, _)| self.book.jobs.get(preemptor).is_some_and(|p| p.is_pending()));
        for (&victim, &(preemptor, since_ms)) in &self.book.evictions {
            evictions.push(InFlightEviction {
                victim: JobId(victim),
                preemptor: JobId(preemptor),
                since: (since_ms / 1000).max(0) as u64,
                victim_left: self.book.jobs.get(&victim).is_none_or(|v| v.live_replicas().is_empty()),
            });
        }
        if pending.is_empty() && evictions.is_empty() {
            return Ok(());
        }
        self.stats.cycles += 1;
        let input = SchedulerInput {
            cluster,
            queues: queues.queues,
            running,
            pending,
            evictions,
            past_usage: BTreeMap::new(),
            now: now_s,
        };
        if let Err(e) = input.validate() {
            // The book and the cluster disagree: a bug here, not something a decision can mend.
            tracing::error!(error = %e, "skipping a scheduling cycle over an inconsistent snapshot");
            return Ok(());
        }
        let decisions = schedule(&input, &self.scheduler);
        let node_name = |n: NodeId| input.cluster.node(n).name.clone();
        let mut launches = Vec::new();
        for d in decisions.decisions {
            match d {
                Decision::Start { job, replicas, .. } | Decision::Grow { job, replicas } => {
                    launches.extend(self.place_replicas(job.0, replicas, &node_name, now_ms));
                }
                Decision::Evict { job, preemptor, grace_s } => {
                    if let Some(rec) = self.book.jobs.get_mut(&job.0) {
                        rec.state = State::Preempting;
                        rec.eviction = Some(Eviction {
                            deadline_ms: now_ms + grace_s as i64 * 1000,
                            decided_at_ms: now_ms,
                            preemptor: Some(preemptor.0),
                            stopped: false,
                        });
                        let epoch = rec.epoch;
                        let why = format!("preempted for job {}; grace {grace_s}s", preemptor.0);
                        self.emit_transitions(job.0, epoch, vec![Transition::job(State::Preempting, Some(why))]);
                    }
                    if let Some(p) = self.book.jobs.get_mut(&preemptor.0) {
                        p.privileged = true;
                    }
                    self.book.evictions.insert(job.0, (preemptor.0, now_ms));
                    self.book_dirty = true;
                }
                Decision::CancelEviction { job, .. } => {
                    self.book.evictions.remove(&job.0);
                    if let Some(rec) = self.book.jobs.get_mut(&job.0) {
                        if rec.state == State::Preempting && rec.eviction.is_some() {
                            rec.eviction = None;
                            rec.state = if rec.started_at_ms.is_some() { State::Running } else { State::Scheduled };
                            let (epoch, state) = (rec.epoch, rec.state);
                            self.emit_transitions(
                                job.0,
                                epoch,
                                vec![Transition::job(state, Some("eviction no longer needed".into()))],
                            );
                            self.book_dirty = true;
                        }
                    }
                }
            }
        }
        if !launches.is_empty() {
            // Write ahead, once per cycle: the book (with the Placed events) is on disk before
            // the backend starts anything.
            self.save_book()?;
            self.launch_replicas(launches, now_ms).await?;
        }
        for (job, why) in decisions.unplaced {
            let text = why.to_string();
            if let Some(rec) = self.book.jobs.get_mut(&job.0) {
                if rec.is_pending() && rec.unplaced_reason.as_deref() != Some(text.as_str()) {
                    rec.unplaced_reason = Some(text.clone());
                    let epoch = rec.epoch;
                    self.emit_transitions(job.0, epoch, vec![Transition::job(State::Pending, Some(text))]);
                }
            }
        }
        Ok(())
    }

    /// Records the placement of a job's replicas in the book and emits their Placed events;
    /// returns what to launch once the book is saved.
    fn place_replicas(
        &mut self,
        job: u64,
        replicas: Vec<PlacedReplica>,
        node_name: &impl Fn(NodeId) -> String,
        now_ms: i64,
    ) -> Vec<ReplicaLaunch> {
        // A preemptor that starts, or a requeued victim that starts again, ends the preemption.
        self.book.evictions.retain(|&victim, (preemptor, _)| *preemptor != job && victim != job);
        let Some(rec) = self.book.jobs.get_mut(&job) else { return Vec::new() };
        rec.privileged = false;
        let mut launches = Vec::new();
        let mut transitions = Vec::new();
        for p in replicas {
            let task = rec.spec.tasks[p.task].name.clone();
            let index = (0..).find(|i| !rec.replicas.contains_key(&(task.clone(), *i))).expect("unbounded");
            let devices: Vec<DeviceRef> =
                p.allocation.devices.iter().map(|d| DeviceRef { index: d.gpu as u32, milli: d.milli }).collect();
            let node = node_name(p.allocation.node);
            transitions.extend(rec.placed((task.clone(), index), node.clone(), devices.clone(), now_ms));
            launches.push(launch_of(rec, &(task, index), node, devices));
        }
        let epoch = rec.epoch;
        self.emit_transitions(job, epoch, transitions);
        launches
    }

    /// Launches placed replicas; the book that records them must be saved already.
    async fn launch_replicas(&mut self, launches: Vec<ReplicaLaunch>, now_ms: i64) -> anyhow::Result<()> {
        for launch in launches {
            let (job, id) = (launch.key.job, (launch.key.task.clone(), launch.key.replica));
            if let Err(e) = self.backend.launch(&launch).await {
                tracing::warn!(replica = %launch.key, error = %e, "launch failed");
                let Some(rec) = self.book.jobs.get_mut(&job) else { continue };
                let (ts, effects) =
                    rec.observe(&id, &ReplicaPhase::Failed { reason: format!("launch failed: {e}") }, now_ms);
                let epoch = rec.epoch;
                self.emit_transitions(job, epoch, ts);
                self.apply_effects(job, effects).await?;
                self.book_dirty = true;
            }
        }
        Ok(())
    }
}

fn launch_of(rec: &JobRecord, id: &ReplicaId, node: String, devices: Vec<DeviceRef>) -> ReplicaLaunch {
    let spec: &JobSpec = &rec.spec;
    let task = spec.tasks.iter().find(|t| t.name == id.0).cloned().expect("replica of a task of this job");
    let gang = (rec.gang_size() > 1).then(|| GangInfo { min_members: rec.gang_size() });
    ReplicaLaunch {
        key: ReplicaKey { job: spec.id, task: id.0.clone(), replica: id.1 },
        epoch: rec.epoch,
        job_name: spec.name.clone(),
        project: spec.project.clone(),
        queue: spec.queue.clone(),
        task,
        node,
        devices,
        gang,
        labels: spec.labels.clone(),
    }
}

fn snapshot_of(rec: &JobRecord) -> JobSnapshot {
    JobSnapshot {
        job: rec.spec.id,
        epoch: rec.epoch,
        state: rec.state,
        replicas: rec
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
