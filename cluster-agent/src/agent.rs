//! The agent loop: the imperative shell around the book's pure core (`book`). It hands the
//! core commands, backend observations, the time and the scheduling cycle's decisions, and
//! carries out the [`Step`]s it returns: emits the events, saves the book, drives the backend
//! and acknowledges. It changes no job's state itself.
//!
//! One task owns all state; commands arrive over a channel from the reader task. A batch of
//! commands is acknowledged only after the book that records their effect is on disk
//! (invariant 1: Redis may lose nothing the agent still needs). Every job command is fenced
//! by its epoch (invariant 2), and every effect on the backend is idempotent, so replaying
//! pending entries after a crash starts nothing twice. Placements are in the saved book
//! before the backend launches anything.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use grus_protocol::codec::{decode, encode, Decoded, Envelope};
use grus_protocol::keys;
use grus_protocol::wire::{CapacitySummary, GpuMetrics, NodeInfo, State};
use grus_protocol::Event;
use grus_scheduler::cluster::{NodeId, ReplicaAllocation};
use grus_scheduler::cycle::{schedule, CapacityHold, PlacedReplica, SchedulerConfig, SchedulerInput};
use grus_scheduler::pool::NodePools;
use tokio::sync::mpsc;

use crate::backend::{self, Backend, BackendEvent, ReplicaKey, ReplicaLaunch, ServedPort};
use crate::book::commands::{apply_message, Applied, CommandRules};
use crate::book::cycle::Placed;
use crate::book::{Book, BookStore, Effect, Step, Transition};
use crate::clock::Clock;
use crate::convert;
use crate::heartbeat::{LoopProgress, ServedControlPlane};
use crate::kept_logs::{self, KeptLogs};
use crate::transport::{Inbound, Incoming, Publisher};
use grus_protocol::logs::{LogQuery, LogReply, LogSource};

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
    /// The loop's progress, which the heartbeat thread (`crate::heartbeat`) watches.
    pub progress: LoopProgress,
    /// The control plane the book serves, which the heartbeat reports.
    pub serves: ServedControlPlane,
    /// The operator's pin (`--control-plane`): a book of another control plane is dropped.
    pub control_plane: Option<String>,
    pub metrics_every: Duration,
    /// How often the replicas' resource use goes with a Metrics event: a reading per running
    /// replica is a row to ingest, and on Kubernetes two kubelet reads per node.
    pub usage_every: Duration,
    pub tick: Duration,
    /// Commands that ask for a cycle get one at once, unless one ran less than this ago: then
    /// it runs this long after that one, for every command in between (a cycle rebuilds the
    /// cluster from every job held, so one per small batch under a steady stream of dispatches
    /// was most of the agent's work).
    pub min_cycle_gap: Duration,
    /// A job that cannot be placed here for this long is rejected so the allocator can send
    /// it elsewhere.
    pub place_deadline: Duration,
    /// Grace given to replicas stopped by Cancel.
    pub cancel_grace: Duration,
    /// The node pools, by label selector (`--node-pool`); each node's is reported in Inventory.
    pub node_pools: NodePools,
    /// Each queue's past usage is rolled forward this often, when history counts in fair share
    /// (`SchedulerConfig::fair_share`).
    pub history_every: Duration,
    /// The last lines of a replica that ended are kept this long (`kept_logs`).
    pub keep_logs_for: Duration,
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
            progress: LoopProgress::default(),
            serves: ServedControlPlane::default(),
            control_plane: None,
            metrics_every: Duration::from_secs(5),
            usage_every: Duration::from_secs(15),
            tick: Duration::from_millis(100),
            min_cycle_gap: Duration::from_millis(10),
            place_deadline: Duration::from_secs(300),
            cancel_grace: Duration::from_secs(30),
            node_pools: NodePools::default(),
            history_every: Duration::from_secs(15),
            keep_logs_for: Duration::from_secs(3600),
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
    store: BookStore,
    publisher: Publisher,
    clock: Arc<dyn Clock>,
    scheduler: SchedulerConfig,
    metrics: Option<MetricsSource>,
    nodes: Vec<NodeInfo>,
    /// The scheduler's cluster of `nodes`, nothing allocated (none if they do not form one).
    empty_cluster: Option<EmptyCluster>,
    live: Vec<GpuMetrics>,
    /// Message ids are `<cluster>-<boot>-<seq>`: unique across restarts without persistence.
    boot: i64,
    seq: u64,
    outbox: Vec<Outgoing>,
    needs_cycle: bool,
    book_dirty: bool,
    last_capacity: Option<(CapacitySummary, Instant)>,
    /// Something that may change the capacity summary happened since it was last computed.
    capacity_changed: bool,
    last_metrics: Option<Instant>,
    last_usage: Option<Instant>,
    last_history: Option<Instant>,
    /// The last lines of replicas that ended.
    kept_logs: KeptLogs,
    /// Counters for the benchmark and the logs.
    pub stats: AgentStats,
}

/// The scheduler's cluster of the backend's inventory with nothing allocated, and its node ids
/// by name: built when the inventory changes, cloned by each cycle (building it per cycle was a
/// tenth of the agent's CPU at 1,000 nodes).
struct EmptyCluster {
    cluster: grus_scheduler::cluster::Cluster,
    ids: HashMap<String, NodeId>,
}

impl EmptyCluster {
    fn of(nodes: &[NodeInfo]) -> Option<EmptyCluster> {
        match convert::cluster_of(nodes) {
            Ok(cluster) => {
                let ids = cluster.nodes().iter().map(|n| (n.name.clone(), n.id)).collect();
                Some(EmptyCluster { cluster, ids })
            }
            Err(e) => {
                tracing::error!(error = %e, "the backend's inventory does not form a valid cluster");
                None
            }
        }
    }
}

/// An event emitted and not yet published, with its encoding.
struct Outgoing {
    event: Envelope<Event>,
    payload: String,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct AgentStats {
    pub commands: u64,
    /// Commands of another control plane, dead-lettered.
    pub refused: u64,
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
        let (mut book, store) = BookStore::open(&settings.state_dir).context("load the agent book")?;
        if let Some(incarnation) = &settings.control_plane {
            // Before the outbox is read: nothing of the old life goes to the new control plane.
            book.repin(incarnation);
        }
        settings.serves.set(book.control_plane.clone());
        let nodes =
            convert::with_pools(backend.nodes().await.context("read nodes from the backend")?, &settings.node_pools);
        let boot = clock.now_ms();
        // Events saved with the book and perhaps never published: they go out first.
        let outbox = std::mem::take(&mut book.unpublished)
            .into_iter()
            .filter_map(|payload| match decode::<Event>(payload.as_bytes(), &settings.cluster) {
                Ok(Decoded::Known(event)) => Some(Outgoing { event, payload }),
                other => {
                    tracing::warn!(?other, "dropping an unreadable event saved with the book");
                    None
                }
            })
            .collect();
        let keep_ms = i64::try_from(settings.keep_logs_for.as_millis()).unwrap_or(i64::MAX);
        let mut agent = Agent {
            settings,
            backend,
            book,
            store,
            publisher,
            clock,
            scheduler,
            metrics,
            empty_cluster: EmptyCluster::of(&nodes),
            nodes,
            live: Vec::new(),
            boot,
            seq: 0,
            outbox,
            needs_cycle: true,
            book_dirty: false,
            last_capacity: None,
            capacity_changed: true,
            last_metrics: None,
            last_usage: None,
            last_history: None,
            kept_logs: KeptLogs::new(keep_ms),
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
        self.settings.progress.tick();
        let mut tick = tokio::time::interval(self.settings.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_cycle = tokio::time::Instant::now();
        loop {
            // A dispatch (or a cancel) is acted on now, not at the next tick: the job's time to
            // running waits for no poll. Commands arriving within `min_cycle_gap` of a cycle share
            // the next one.
            let cycle_due = last_cycle + self.settings.min_cycle_gap;
            tokio::select! {
                msg = inbound.recv() => match msg {
                    Some(Inbound::Commands(batch)) => self.apply_commands(batch).await?,
                    Some(Inbound::Resync) => {
                        tracing::warn!("Redis lost the command stream; sending a full snapshot");
                        self.announce();
                    }
                    None => break,
                },
                _ = tokio::time::sleep_until(cycle_due), if self.needs_cycle => {
                    self.on_tick().await?;
                    last_cycle = tokio::time::Instant::now();
                    tick.reset();
                }
                _ = tick.tick() => {
                    self.on_tick().await?;
                    last_cycle = tokio::time::Instant::now();
                }
            }
            self.flush().await?;
            self.settings.progress.tick();
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
        let envelope = Envelope::new(id, &self.settings.cluster, self.now(), event);
        let event = envelope.with_control_plane(self.book.control_plane.as_deref());
        // Encoded once: published from this, and saved with the book until published.
        let payload = encode(&event);
        self.outbox.push(Outgoing { event, payload });
    }

    /// Transitions decided at `at` (a tick's, a command's time): stamped with it, not with the
    /// time of emitting, so deadlines measured from one transition hold between the stamps too
    /// (a job's max runtime counts from the `running` stamp).
    fn emit_transitions(&mut self, job: u64, epoch: u64, transitions: Vec<Transition>, at: i64) {
        for t in transitions {
            // A job that serves a port says where, once it runs.
            let endpoint = match (&t.task, t.state) {
                (None, State::Running) => self.book.jobs.get(&job).and_then(|rec| {
                    ServedPort::of(&rec.spec).and_then(|p| self.backend.endpoint(&rec.spec.project, job, p))
                }),
                _ => None,
            };
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
                checkpoint: t.checkpoint,
                endpoint,
                exit: t.exit,
            });
        }
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        if self.outbox.is_empty() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.outbox);
        self.stats.events += events.len() as u64;
        let ids = match self.publisher.publish(events.iter().map(|e| e.payload.as_str())).await {
            Ok(ids) => ids,
            Err(e) => {
                // Keep them: the next flush retries, in order.
                tracing::warn!(error = %e, n = events.len(), "could not publish events; will retry");
                self.outbox = events.into_iter().chain(std::mem::take(&mut self.outbox)).collect();
                return Ok(());
            }
        };
        // A placement's job-level `Scheduled` report is its claim: the time Redis appended it
        // decides whether its replicas launch or the job is given back (`book::claims`).
        let now = self.now();
        let mut settled = Vec::new();
        for (event, id) in events.iter().zip(&ids) {
            if let Event::JobState { job, task: None, replica: None, state: State::Scheduled, epoch, .. } =
                &event.event.message
            {
                if let Some((appended_ms, _)) = keys::stream_id_parts(id) {
                    settled.extend(self.book.settle_claim(*job, *epoch, appended_ms, now));
                }
            }
        }
        if !settled.is_empty() {
            self.book_dirty = true;
            Box::pin(self.carry_out(settled)).await?;
        }
        Ok(())
    }

    /// Saves the book with the events not yet published: every event whose cause the saved
    /// book reflects is published at least once, even if the agent dies before the next flush.
    fn save_book(&mut self) -> anyhow::Result<()> {
        self.book.unpublished = self.outbox.iter().map(|e| e.payload.clone()).collect();
        self.store.save(&mut self.book)?;
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
            capabilities: std::iter::once(self.backend.name())
                .chain(grus_protocol::capability::ALL)
                .map(str::to_string)
                .collect(),
        });
        self.emit(Event::Inventory { nodes: self.nodes.clone() });
        let summary = self.capacity();
        self.emit(Event::Capacity { summary: summary.clone() });
        self.last_capacity = Some((summary, Instant::now()));
        let jobs = self.book.jobs.values().map(|j| j.snapshot()).collect();
        self.emit(Event::Snapshot { jobs, inventory: self.nodes.clone() });
    }

    /// Reconciles the book with what the backend runs (after a restart).
    async fn rebuild(&mut self) -> anyhow::Result<()> {
        let observed = self.backend.replicas().await?;
        let now = self.now();
        let mut seen = std::collections::BTreeSet::new();
        for obs in observed {
            let (held, steps) = self.book.reconcile_observed(&obs, now);
            if held {
                seen.insert(obs.key);
            }
            self.carry_out(steps).await?;
        }
        let steps = self.book.reconcile_missing(&seen, now);
        self.carry_out(steps).await?;
        self.save_book()?;
        Ok(())
    }

    /// Carries out the pure core's steps, in order.
    async fn carry_out(&mut self, steps: Vec<Step>) -> anyhow::Result<()> {
        for step in steps {
            match step {
                Step::Report { job, epoch, transitions, at } => self.emit_transitions(job, epoch, transitions, at),
                Step::Effects { job, effects } => self.apply_effects(job, effects).await?,
                Step::StopUnknown { replica } => self.backend.stop(&replica, Duration::ZERO).await?,
                Step::Announce => self.announce(),
                Step::ReadLogs { request, job, query } => self.answer_logs(&request, job, query).await,
            }
        }
        Ok(())
    }

    /// Answers a `ReadLogs`: what the backend has of the replica, else what was kept of it,
    /// on the request's key. Never fails the loop: a backend error is the reply's `error`.
    async fn answer_logs(&mut self, request: &str, job: u64, query: LogQuery) {
        let query = query.bounded();
        let now = self.now();
        let first_task = self.book.jobs.get(&job).and_then(|r| r.spec.tasks.first()).map(|t| t.name.clone());
        let task = query.task.clone().or(first_task).unwrap_or_default();
        let key = ReplicaKey { job, task, replica: query.replica.unwrap_or(0) };
        let mut reply = match self.backend.logs(&key, &query).await {
            Ok(reply) => reply,
            Err(e) => LogReply { error: Some(e.to_string()), ..backend::gone(&key) },
        };
        if reply.source == LogSource::Gone {
            if let Some(kept) = self.kept_logs.read(&key, &query, now) {
                reply = kept;
            }
        }
        // The book knows whether the replica may still write, which a pod log does not say: not
        // when the job is not held (any more) or has finished, nor when the replica ended.
        reply.ended |= match self.book.jobs.get(&job) {
            None => true,
            Some(record) if record.is_finished() => true,
            Some(record) => {
                record.replicas.get(&(key.task.clone(), key.replica)).is_some_and(|r| r.state.is_terminal())
            }
        };
        if let Err(e) = self.publisher.reply_logs(request, &reply).await {
            tracing::warn!(error = %e, job, request, "could not answer a log request");
        }
    }

    /// Keeps the last lines of a replica that just ended, before its backend forgets it.
    async fn keep_logs_of(&mut self, key: &ReplicaKey) {
        match self.backend.logs(key, &kept_logs::keep_query()).await {
            Ok(reply) if reply.source != LogSource::Gone => {
                self.kept_logs.keep(key.clone(), reply.lines, self.now());
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, replica = %key, "could not keep the lines of an ended replica"),
        }
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
                    let rules = CommandRules { cancel_grace_ms: self.settings.cancel_grace.as_millis() as u64 };
                    let now = self.now();
                    let from = env.control_plane.as_deref();
                    match apply_message(&mut self.book, &env.id, from, env.message, now, &rules) {
                        Some(Applied { refused: Some(reason), .. }) => {
                            tracing::error!(stream_id = incoming.stream_id, reason, "refusing a command");
                            self.stats.refused += 1;
                            if let Err(err) =
                                self.publisher.dead_letter(&incoming.stream_id, &incoming.raw, &reason).await
                            {
                                tracing::warn!(error = %err, "could not dead-letter; leaving the command pending");
                                continue;
                            }
                        }
                        Some(applied) => {
                            self.book_dirty = true;
                            self.needs_cycle |= applied.needs_cycle;
                            self.carry_out(applied.steps).await?;
                        }
                        None => {}
                    }
                }
            }
            acks.push(incoming.stream_id);
        }
        if self.book_dirty {
            self.save_book()?;
        }
        self.settings.serves.set(self.book.control_plane.clone());
        if let Err(e) = self.publisher.ack(&acks).await {
            // Unacknowledged entries come back after a restart; the seen ids make them no-ops.
            tracing::warn!(error = %e, n = acks.len(), "could not acknowledge commands");
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
                Effect::Checkpoint { replicas } => {
                    let Some(rec) = self.book.jobs.get(&job) else { continue };
                    let (epoch, how) = (rec.epoch, rec.spec.checkpoint.as_ref().and_then(|c| c.http.clone()));
                    for (task, replica) in replicas {
                        let key = ReplicaKey { job, task, replica };
                        // Not answering only costs the job its checkpoint: it is stopped at
                        // the deadline as any other.
                        if let Err(e) = self.backend.request_checkpoint(&key, epoch, how.as_ref()).await {
                            tracing::warn!(replica = %key, error = %e, "could not ask for a checkpoint");
                        }
                    }
                    continue;
                }
                Effect::Relaunch { replica } => {
                    let Some(rec) = self.book.jobs.get(&job) else { continue };
                    let Some(r) = rec.replicas.get(&replica) else { continue };
                    let launch = rec.launch(&replica, r.node.clone(), r.devices.clone());
                    if let Err(e) = self.backend.launch(&launch).await {
                        let steps = self.book.launch_failed(job, &replica, format!("relaunch failed: {e}"), self.now());
                        Box::pin(self.carry_out(steps)).await?;
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
                    self.nodes = convert::with_pools(self.backend.nodes().await?, &self.settings.node_pools);
                    self.empty_cluster = EmptyCluster::of(&self.nodes);
                    self.emit(Event::Inventory { nodes: self.nodes.clone() });
                    self.needs_cycle = true;
                }
                BackendEvent::Checkpointed { key, epoch, reference } => {
                    let steps = self.book.checkpointed(&key, epoch, reference, now);
                    self.book_dirty |= !steps.is_empty();
                    self.carry_out(steps).await?;
                }
                BackendEvent::Replica(obs) => {
                    if obs.phase.is_terminal() {
                        self.keep_logs_of(&obs.key).await;
                    }
                    let observed = self.book.observe(&obs, now);
                    if observed.changed {
                        self.book_dirty = true;
                        self.needs_cycle = true;
                    }
                    self.carry_out(observed.steps).await?;
                }
            }
        }
        let passed = self.book.deadlines(now, self.settings.place_deadline);
        self.book_dirty |= !passed.is_empty();
        self.carry_out(passed).await?;
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

    /// Drops jobs that ended and hold nothing any more, once kept long enough (their epoch
    /// stays, for fencing).
    async fn forget_finished(&mut self) -> anyhow::Result<()> {
        for id in self.book.finished_jobs(self.now()) {
            self.backend.forget_job(id).await?;
            self.book.forget(id);
            self.book_dirty = true;
        }
        Ok(())
    }

    fn periodic(&mut self, now: i64) {
        let due = |last: &Option<Instant>, every: Duration| last.is_none_or(|t| t.elapsed() >= every);
        if let Some(half_life_s) = self.scheduler.fair_share.half_life_s {
            if due(&self.last_history, self.settings.history_every) {
                self.roll_usage_history(now, half_life_s);
                self.last_history = Some(Instant::now());
            }
        }
        if due(&self.last_metrics, self.settings.metrics_every) {
            if let Some(source) = &self.metrics {
                self.live = source();
            }
            let replicas = if due(&self.last_usage, self.settings.usage_every) {
                self.last_usage = Some(Instant::now());
                self.backend.usage()
            } else {
                Vec::new()
            };
            if self.metrics.is_some() || !replicas.is_empty() {
                self.emit(Event::Metrics { gpus: self.live.clone(), replicas });
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

    /// Adds what each queue holds now to its decayed past usage.
    fn roll_usage_history(&mut self, now_ms: i64, half_life_s: u64) {
        let Ok(queues) = self.book.queue_map() else { return };
        let Some((cluster, placed)) = self.current_cluster() else { return };
        let mut holding: BTreeMap<String, grus_scheduler::queue::ResourceVector> = BTreeMap::new();
        for (job, replicas) in &placed {
            let Some(rec) = self.book.jobs.get(job) else { continue };
            let key = queues.key_of(queues.id(&rec.spec.project, &rec.spec.queue));
            let usage = grus_scheduler::queue::ResourceVector::of_allocations(
                &cluster,
                replicas.iter().map(|(_, p)| &p.allocation),
            );
            holding.entry(key.to_owned()).or_default().add(&usage);
        }
        self.book.roll_usage_history(&holding, (now_ms / 1000).max(0) as u64, half_life_s);
        self.book_dirty = true;
    }

    /// The scheduler's cluster with every live replica's allocation applied.
    fn current_cluster(&self) -> Option<(grus_scheduler::cluster::Cluster, Placed)> {
        let empty = self.empty_cluster.as_ref()?;
        let mut cluster = empty.cluster.clone();
        for m in &self.live {
            if let Some(&node) = empty.ids.get(m.node.as_str()) {
                if (m.index as usize) < cluster.node(node).gpus.len() {
                    let live = grus_scheduler::cluster::LiveUtilization {
                        busy_pct: m.busy_pct,
                        memory_used_mib: m.memory_used_mib,
                    };
                    cluster.set_live_utilization(node, m.index as u8, Some(live));
                }
            }
        }
        let mut placed = Placed::new();
        for (&id, rec) in &self.book.jobs {
            // Replicas come ordered by task: the task's index is looked up once per task.
            let mut task: Option<(&str, Option<usize>)> = None;
            for (replica, r) in rec.replicas.iter().filter(|(_, r)| r.holds_capacity()) {
                let name = &replica.0;
                let Some(&node) = empty.ids.get(r.node.as_str()) else { continue };
                let t = match task {
                    Some((current, t)) if current == name.as_str() => t,
                    _ => {
                        let t = rec.spec.tasks.iter().position(|t| t.name == *name);
                        task = Some((name.as_str(), t));
                        t
                    }
                };
                let Some(t) = t else { continue };
                let res = &rec.spec.tasks[t].resources;
                let alloc = ReplicaAllocation {
                    node,
                    cpu_milli: res.cpu_milli,
                    memory_mib: res.memory_mib,
                    devices: r.devices.iter().map(|d| crate::convert::device_share_of(d, res)).collect(),
                };
                // A failed node may hold less than we think; what cannot be applied is not counted.
                if cluster.allocate(&alloc).is_ok() {
                    placed.entry(id).or_default().push((replica.clone(), PlacedReplica { task: t, allocation: alloc }));
                }
            }
        }
        // After the running work is counted: a cordoned node keeps what runs there and takes
        // nothing new.
        for name in &self.book.cordoned_nodes {
            if let Some(&node) = empty.ids.get(name.as_str()) {
                cluster.set_node_health(node, false);
            }
        }
        Some((cluster, placed))
    }

    fn capacity(&self) -> CapacitySummary {
        let pending = self.book.pending_jobs() as u32;
        match self.current_cluster() {
            Some((cluster, placed)) => convert::capacity_of(&cluster, pending, &self.book.movable_gpus(&placed)),
            None => CapacitySummary { pending_jobs: pending, ..CapacitySummary::default() },
        }
    }

    async fn run_cycle(&mut self, now_ms: i64) -> anyhow::Result<()> {
        let Some((cluster, placed)) = self.current_cluster() else { return Ok(()) };
        let queues = self.book.queue_map()?;
        let jobs = self.book.cycle_jobs(&queues, &placed, now_ms);
        if jobs.is_idle() {
            return Ok(());
        }
        self.stats.cycles += 1;
        let node_ids = self.empty_cluster.as_ref().map(|e| &e.ids);
        // A held node that left the cluster is no longer held.
        let holds = jobs
            .holds
            .iter()
            .map(|(job, names)| CapacityHold {
                job: *job,
                nodes: names.iter().filter_map(|n| node_ids.and_then(|ids| ids.get(n.as_str())).copied()).collect(),
            })
            .collect();
        let past_usage = match self.scheduler.fair_share.half_life_s {
            Some(_) => self.book.past_usage(&queues),
            None => BTreeMap::new(),
        };
        let input = SchedulerInput {
            cluster,
            queues: queues.queues,
            running: jobs.running,
            pending: jobs.pending,
            evictions: jobs.evictions,
            holds,
            past_usage,
            recent_moves: jobs.recent_moves,
            now: (now_ms / 1000).max(0) as u64,
        };
        if let Err(e) = input.validate() {
            // The book and the cluster disagree: a bug here, not something a decision can mend.
            tracing::error!(error = %e, "skipping a scheduling cycle over an inconsistent snapshot");
            return Ok(());
        }
        let decisions = schedule(&input, &self.scheduler);
        let node_name = |n: NodeId| input.cluster.node(n).name.clone();
        let outcome = self.book.apply_decisions(decisions.decisions, &node_name, now_ms);
        self.book_dirty |= outcome.dirty;
        self.carry_out(outcome.steps).await?;
        if !outcome.launches.is_empty() || !outcome.claims.is_empty() {
            // Write ahead, once per cycle: the book (with the Placed events) is on disk before
            // the backend starts anything or the placements are claimed.
            self.save_book()?;
            self.launch_replicas(outcome.launches, now_ms).await?;
        }
        if !outcome.claims.is_empty() {
            // The claims go out now, and their replicas launch as soon as they are settled.
            self.flush().await?;
        }
        let waiting = self.book.note_unplaced(decisions.unplaced, now_ms);
        self.carry_out(waiting).await?;
        Ok(())
    }

    /// Launches placed replicas; the book that records them must be saved already.
    async fn launch_replicas(&mut self, launches: Vec<ReplicaLaunch>, now_ms: i64) -> anyhow::Result<()> {
        for launch in launches {
            let (job, id) = (launch.key.job, (launch.key.task.clone(), launch.key.replica));
            if let Err(e) = self.backend.launch(&launch).await {
                tracing::warn!(replica = %launch.key, error = %e, "launch failed");
                let steps = self.book.launch_failed(job, &id, format!("launch failed: {e}"), now_ms);
                self.carry_out(steps).await?;
                self.book_dirty = true;
            }
        }
        Ok(())
    }
}
