//! Event ingestion: the api's side of every cluster's `grus:{c}:evt` stream, and the cluster
//! health monitor ([`health`]).
//!
//! One [`Ingester`] per api replica is one consumer of its control plane's group
//! (`keys::api_group`) on every registered
//! cluster's event stream (streams of newly registered clusters are picked up periodically).
//! Each entry is decoded; a malformed one goes to `grus:{c}:dlq` with the reason and is
//! acknowledged, an unknown kind (newer agent) is logged and acknowledged, and a known one is
//! applied in ONE PostgreSQL transaction that also records its message id
//! (`ingested_messages`), so a redelivery changes nothing. XACK happens only after COMMIT: a
//! crash in between redelivers the entry, which is then a no-op. Entries left pending by a
//! dead consumer are taken over with XAUTOCLAIM at start and periodically.
//!
//! The decisions are in `domain::reports` (pure); the SQL in `db::ingest`.

mod batch;
pub mod health;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use grus_protocol::codec::{decode, Decoded, Envelope};
use grus_protocol::command::Command;
use grus_protocol::connection::manager_config;
use grus_protocol::event::Event;
use grus_protocol::keys::{self, DLQ_REASON_FIELD, DLQ_SOURCE_ID_FIELD, PAYLOAD_FIELD};
use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamReadOptions, StreamReadReply};
use redis::{AsyncCommands, RedisError};
use sqlx::PgPool;

use crate::commands::CommandPublisher;
use crate::db::ingest::{self as store, JobReport, Outcome, StaleCancel};
use crate::db::{DbError, EventOrigin};
use crate::domain::reports::{Level, Report};
use crate::metrics::{self, MetricFamily};
use prometheus::{Gauge, IntCounter, IntCounterVec};

/// Settings of the ingestion loop (from `grus-api serve` flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IngestConfig {
    /// This replica's consumer name in its control plane's group (unique per replica: hostname-pid).
    pub consumer: String,
    /// How long one XREADGROUP waits for new entries.
    pub block: Duration,
    /// Entries per read.
    pub batch: usize,
    /// Pending entries idle this long belong to a dead consumer and are claimed.
    pub claim_idle: Duration,
    /// How often to look for such entries, and for newly registered clusters.
    pub claim_every: Duration,
}

impl IngestConfig {
    pub fn new(consumer: impl Into<String>) -> IngestConfig {
        IngestConfig {
            consumer: consumer.into(),
            block: Duration::from_secs(2),
            batch: 256,
            claim_idle: Duration::from_secs(60),
            claim_every: Duration::from_secs(15),
        }
    }
}

/// The default consumer name: `<hostname>-<pid>` (the pod name under Kubernetes).
pub fn default_consumer_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "grus-api".to_owned());
    format!("{host}-{}", std::process::id())
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("redis: {0}")]
    Redis(#[from] RedisError),
    #[error("database: {0}")]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for IngestError {
    fn from(e: sqlx::Error) -> Self {
        IngestError::Db(e.into())
    }
}

/// How far behind ingestion is, from a message's send time: `None` for a time no clock of an
/// agent could give (before the Unix epoch, or a day away), which must not move the gauge
/// (the fuzzer's `i64::MIN` made it read 292 million years).
fn ingest_lag_ms(now_ms: i64, sent_ms: i64) -> Option<i64> {
    const DAY_MS: i64 = 86_400_000;
    (sent_ms > 0 && (now_ms - DAY_MS..=now_ms + DAY_MS).contains(&sent_ms)).then(|| (now_ms - sent_ms).max(0))
}

/// Counters of the ingestion loop and the health monitor, rendered on /metrics.
#[derive(Debug)]
pub struct IngestMetrics {
    events: IntCounterVec,
    pub applied: IntCounter,
    pub stale: IntCounter,
    pub ignored: IntCounter,
    pub duplicate: IntCounter,
    pub dead_lettered: IntCounter,
    pub unknown_kind: IntCounter,
    /// Events of agents serving another control plane (skipped).
    pub foreign: IntCounter,
    /// Apply attempts that failed and were left pending for a retry.
    pub failed: IntCounter,
    pub stale_cancels: IntCounter,
    /// Age of the last applied event when it was applied (agent `ts` to now), seconds.
    pub lag_seconds: Gauge,
    pub clusters_lost: IntCounter,
    /// Reads applied as one transaction, and those that fell back to one entry at a time.
    pub batches: IntCounter,
    pub batch_fallbacks: IntCounter,
}

impl Default for IngestMetrics {
    fn default() -> Self {
        let (events, [applied, stale, ignored, duplicate, dead_lettered, unknown_kind, foreign, failed]) =
            metrics::outcome_counters(
                "grus_ingest_events_total",
                "Agent events by outcome.",
                ["applied", "stale", "ignored", "duplicate", "dead_lettered", "unknown_kind", "foreign", "failed"],
            );
        IngestMetrics {
            events,
            applied,
            stale,
            ignored,
            duplicate,
            dead_lettered,
            unknown_kind,
            foreign,
            failed,
            stale_cancels: metrics::counter(
                "grus_ingest_stale_cancels_total",
                "Cancels sent to clusters still running a fenced-off epoch.",
            ),
            lag_seconds: metrics::float_gauge(
                "grus_ingest_event_lag_seconds",
                "Age of the last applied event (agent send time to apply).",
            ),
            clusters_lost: metrics::counter(
                "grus_cluster_losses_total",
                "Clusters found silent past the loss timeout.",
            ),
            batches: metrics::counter(
                "grus_ingest_batches_total",
                "Reads of several events applied in one transaction.",
            ),
            batch_fallbacks: metrics::counter(
                "grus_ingest_batch_fallbacks_total",
                "Batches that failed and were applied one event at a time.",
            ),
        }
    }
}

impl IngestMetrics {
    fn count(&self, outcome: Outcome) {
        match outcome {
            Outcome::Applied => &self.applied,
            Outcome::Stale => &self.stale,
            Outcome::Ignored => &self.ignored,
            Outcome::Duplicate => &self.duplicate,
        }
        .inc();
    }

    /// Records the age of an event just applied.
    fn lag(&self, lag_ms: i64) {
        self.lag_seconds.set(lag_ms as f64 / 1000.0);
    }
}

impl MetricFamily for IngestMetrics {
    fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            metrics::boxed(&self.events),
            metrics::boxed(&self.lag_seconds),
            metrics::boxed(&self.stale_cancels),
            metrics::boxed(&self.batches),
            metrics::boxed(&self.batch_fallbacks),
            metrics::boxed(&self.clusters_lost),
        ]
    }
}

/// What happened to one stream entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryOutcome {
    Applied(Outcome),
    DeadLettered(String),
    UnknownKind(String),
    /// From an agent serving another control plane: acknowledged, not applied.
    Foreign,
}

/// One consumer of the control plane's group over every registered cluster's event stream.
pub struct Ingester {
    pool: PgPool,
    conn: ConnectionManager,
    commands: CommandPublisher,
    metrics: Arc<IngestMetrics>,
    config: IngestConfig,
    /// Cluster id -> still draining this consumer's pending entries (read from id `0`).
    streams: BTreeMap<String, bool>,
    last_maintenance: Option<Instant>,
    /// Entry id -> failed applications that were not transient (see [`MAX_ATTEMPTS`]).
    failed_attempts: BTreeMap<String, u32>,
    /// This control plane's incarnation: events of agents serving another are not applied.
    incarnation: String,
    /// The consumer group, `keys::api_group(incarnation)`.
    group: String,
}

/// Applications of one entry that may fail for a reason that is not transient before the
/// entry is dead-lettered.
pub const MAX_ATTEMPTS: u32 = 3;

/// A failure as the dead-letter stream records it: an internal error with its cause (the
/// stream is for operators; clients never see it).
fn describe(e: &DbError) -> String {
    match e {
        DbError::Internal(source) => format!("{e}: {source}"),
        _ => e.to_string(),
    }
}

fn ms_to_time(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

impl Ingester {
    pub async fn connect(
        pool: PgPool,
        redis: &redis::Client,
        metrics: Arc<IngestMetrics>,
        config: IngestConfig,
    ) -> Result<Ingester, IngestError> {
        // A blocking read holds its connection up to `block`; the timeout only has to exceed it.
        let conn =
            ConnectionManager::new_with_config(redis.clone(), manager_config(config.block + Duration::from_secs(10)))
                .await?;
        let incarnation = crate::db::control_plane::incarnation(&pool).await?;
        let commands = CommandPublisher::connect(redis).await?.stamped(&incarnation);
        Ok(Ingester {
            pool,
            conn,
            commands,
            metrics,
            config,
            streams: BTreeMap::new(),
            last_maintenance: None,
            failed_attempts: BTreeMap::new(),
            group: keys::api_group(&incarnation),
            incarnation,
        })
    }

    /// The clusters whose streams this consumer reads.
    pub fn clusters(&self) -> impl Iterator<Item = &str> {
        self.streams.keys().map(String::as_str)
    }

    /// Creates the group on every registered cluster's stream not read yet. The group starts
    /// at `0`: events an agent sent before its cluster was picked up are not lost.
    pub async fn refresh_clusters(&mut self) -> Result<usize, IngestError> {
        let mut added = 0;
        for id in store::cluster_ids(&self.pool).await? {
            if self.streams.contains_key(&id) {
                continue;
            }
            self.ensure_group(&id).await?;
            self.streams.insert(id, true);
            added += 1;
        }
        Ok(added)
    }

    async fn ensure_group(&mut self, cluster: &str) -> Result<(), IngestError> {
        let created: Result<(), RedisError> =
            self.conn.xgroup_create_mkstream(keys::event_stream(cluster), &self.group, "0").await;
        match created {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// One round: maintenance when due (new clusters, claiming from dead consumers), this
    /// consumer's pending entries, then new entries (blocking up to `block`). Returns how many
    /// entries were handled. On error the unhandled entries stay pending and are read again.
    pub async fn step(&mut self) -> Result<usize, IngestError> {
        let mut handled = 0;
        if self.last_maintenance.is_none_or(|t| t.elapsed() >= self.config.claim_every) {
            self.refresh_clusters().await?;
            handled += self.claim_abandoned().await?;
            self.last_maintenance = Some(Instant::now());
        }
        if self.streams.is_empty() {
            tokio::time::sleep(self.config.block).await;
            return Ok(handled);
        }
        let draining: Vec<String> = self.streams.iter().filter(|(_, d)| **d).map(|(c, _)| c.clone()).collect();
        if !draining.is_empty() {
            let reply = self.read(&draining, "0", None).await?;
            let mut got: BTreeMap<String, usize> = BTreeMap::new();
            for (cluster, entries) in reply {
                *got.entry(cluster.clone()).or_default() += entries.len();
                handled += self.handle_all(&cluster, entries).await?;
            }
            for c in draining {
                if got.get(&c).copied().unwrap_or(0) == 0 {
                    self.streams.insert(c, false);
                }
            }
            return Ok(handled);
        }
        let all: Vec<String> = self.streams.keys().cloned().collect();
        let reply = self.read(&all, ">", Some(self.config.block)).await?;
        for (cluster, entries) in reply {
            handled += self.handle_all(&cluster, entries).await?;
        }
        Ok(handled)
    }

    /// Handles entries in stream order; stops at the first failure (leaving it and the rest
    /// pending, and the stream marked for draining). Several entries that all decode to events
    /// of this control plane are applied in one transaction ([`Ingester::apply_batch`]); if that
    /// fails for any reason, they are handled one by one, each in its own transaction, so one
    /// bad entry is dead-lettered or retried alone.
    async fn handle_all(&mut self, cluster: &str, entries: Vec<StreamId>) -> Result<usize, IngestError> {
        if entries.len() > 1 {
            match self.apply_batch(cluster, &entries).await {
                Ok(Some(n)) => return Ok(n),
                Ok(None) => {}
                Err(e) => {
                    self.metrics.batch_fallbacks.inc();
                    tracing::debug!(cluster, error = %e, n = entries.len(), "batch not applied; entries one by one");
                }
            }
        }
        let mut n = 0;
        for entry in entries {
            match self.handle(cluster, &entry).await {
                Ok(_) => n += 1,
                Err(e) => {
                    self.metrics.failed.inc();
                    self.streams.insert(cluster.to_owned(), true);
                    return Err(e);
                }
            }
        }
        Ok(n)
    }

    /// Applies every entry in ONE transaction (each still recorded in `ingested_messages`, so
    /// a redelivery stays a no-op) and acknowledges them with one XACK after COMMIT: a commit,
    /// its WAL flush and an XACK per batch instead of per event, and runs of `JobState` events
    /// written set-based ([`batch`]). `None` (nothing done) when an
    /// entry is not a plain event of this control plane: dead letters, unknown kinds and
    /// foreign events take the one-by-one path. An error leaves everything pending (the
    /// transaction rolls back; Cancels already sent are re-sent under the same ids).
    async fn apply_batch(&mut self, cluster: &str, entries: &[StreamId]) -> Result<Option<usize>, IngestError> {
        let mut events = Vec::with_capacity(entries.len());
        for entry in entries {
            match self.classify(cluster, entry) {
                Classified::Ours(env, _) => events.push((env, entry.id.as_str())),
                _ => return Ok(None),
            }
        }
        let mut tx = self.pool.begin().await?;
        crate::db::ingest_batch::prefer_index_probes(&mut tx).await?;
        let mut cancels = Vec::new();
        let decoded: Vec<(&Envelope<Event>, &str)> = events.iter().map(|(env, id)| (&**env, *id)).collect();
        let outcomes = batch::apply_events(&mut tx, cluster, &decoded, &mut cancels).await?;
        self.send_cancels(cluster, &cancels).await?;
        tx.commit().await?;
        let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        let _: i64 = self.conn.xack(keys::event_stream(cluster), &self.group, &ids).await?;
        let now = Utc::now().timestamp_millis();
        for ((env, entry_id), outcome) in events.iter().zip(outcomes) {
            self.metrics.count(outcome);
            if let Some(lag) = ingest_lag_ms(now, env.ts) {
                self.metrics.lag(lag);
            }
            self.failed_attempts.remove(*entry_id);
        }
        self.metrics.batches.inc();
        Ok(Some(entries.len()))
    }

    async fn read(
        &mut self,
        clusters: &[String],
        id: &str,
        block: Option<Duration>,
    ) -> Result<Vec<(String, Vec<StreamId>)>, IngestError> {
        let streams: Vec<String> = clusters.iter().map(|c| keys::event_stream(c)).collect();
        let ids: Vec<&str> = vec![id; streams.len()];
        let mut opts = StreamReadOptions::default().group(&self.group, &self.config.consumer).count(self.config.batch);
        if let Some(b) = block {
            opts = opts.block(b.as_millis() as usize);
        }
        let reply: Result<Option<StreamReadReply>, RedisError> = self.conn.xread_options(&streams, &ids, &opts).await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) if e.code() == Some("NOGROUP") => {
                // Redis restarted empty or a stream was deleted: recreate and start over.
                tracing::warn!("an event stream or its group is gone; recreating");
                for c in clusters {
                    self.ensure_group(c).await?;
                }
                return Ok(Vec::new());
            }
            Err(e) => return Err(e.into()),
        };
        let by_key: BTreeMap<String, &String> = clusters.iter().map(|c| (keys::event_stream(c), c)).collect();
        Ok(reply
            .map(|r| r.keys)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|k| by_key.get(&k.key).map(|c| ((*c).clone(), k.ids)))
            .collect())
    }

    /// Takes over entries another consumer left pending longer than `claim_idle` (it died
    /// between read and XACK) and handles them.
    pub async fn claim_abandoned(&mut self) -> Result<usize, IngestError> {
        let mut handled = 0;
        let clusters: Vec<String> = self.streams.keys().cloned().collect();
        let idle = self.config.claim_idle.as_millis() as usize;
        for cluster in clusters {
            let stream = keys::event_stream(&cluster);
            let mut start = "0-0".to_owned();
            // Bounded: one batch per stream per round is enough to make progress.
            for _ in 0..8 {
                let opts = StreamAutoClaimOptions::default().count(self.config.batch);
                let reply: Result<StreamAutoClaimReply, RedisError> =
                    self.conn.xautoclaim_options(&stream, &self.group, &self.config.consumer, idle, &start, opts).await;
                let reply = match reply {
                    Ok(r) => r,
                    Err(e) if e.code() == Some("NOGROUP") => {
                        self.ensure_group(&cluster).await?;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                };
                if !reply.claimed.is_empty() {
                    tracing::info!(cluster, n = reply.claimed.len(), "claimed events a dead consumer left pending");
                }
                handled += self.handle_all(&cluster, reply.claimed).await?;
                if reply.next_stream_id == "0-0" {
                    break;
                }
                start = reply.next_stream_id;
            }
        }
        Ok(handled)
    }

    /// Decodes one entry and tells what to do with it.
    fn classify(&self, cluster: &str, entry: &StreamId) -> Classified {
        let raw: Vec<u8> = match entry.map.get(PAYLOAD_FIELD) {
            Some(v) => redis::from_redis_value(v).unwrap_or_default(),
            None => Vec::new(),
        };
        if raw.is_empty() {
            return Classified::DeadLetter(raw, format!("stream entry has no `{PAYLOAD_FIELD}` field"));
        }
        match decode::<Event>(&raw, cluster) {
            Err(e) => Classified::DeadLetter(raw, e.to_string()),
            Ok(Decoded::UnknownKind { id, kind }) => Classified::UnknownKind { id, kind },
            // Sent by an agent serving another control plane (a replaced database, or
            // another deployment on this Redis): its jobs are not ours, whatever their ids.
            Ok(Decoded::Known(env)) if env.control_plane.as_ref().is_some_and(|cp| *cp != self.incarnation) => {
                Classified::Foreign { id: env.id, serves: env.control_plane }
            }
            Ok(Decoded::Known(env)) => Classified::Ours(Box::new(env), raw),
        }
    }

    /// Handles one entry and acknowledges it, unless applying it failed.
    async fn handle(&mut self, cluster: &str, entry: &StreamId) -> Result<EntryOutcome, IngestError> {
        let outcome = match self.classify(cluster, entry) {
            Classified::DeadLetter(raw, reason) => self.dead_letter(cluster, entry, &raw, &reason).await?,
            Classified::UnknownKind { id, kind } => {
                tracing::info!(cluster, id, kind, "event of a kind this version does not know; skipped");
                self.metrics.unknown_kind.inc();
                EntryOutcome::UnknownKind(kind)
            }
            Classified::Foreign { id, serves } => {
                tracing::warn!(cluster, id, serves = ?serves, "event of another control plane; skipped");
                self.metrics.foreign.inc();
                EntryOutcome::Foreign
            }
            Classified::Ours(env, raw) => match self.apply(cluster, &env, &entry.id).await {
                Ok(o) => {
                    self.metrics.count(o);
                    if let Some(lag) = ingest_lag_ms(Utc::now().timestamp_millis(), env.ts) {
                        self.metrics.lag(lag);
                    }
                    EntryOutcome::Applied(o)
                }
                // The database refused the message itself (a value breaks a rule): retrying
                // cannot help, so it is dead-lettered like a malformed one.
                Err(IngestError::Db(e @ (DbError::Validation { .. } | DbError::Conflict { .. }))) => {
                    self.dead_letter(cluster, entry, &raw, &format!("refused by the database: {e}")).await?
                }
                // Not transient and not the database's verdict on a value: retried a few
                // times (it may be a passing fault after all), then dead-lettered, so one
                // message can never stop a stream.
                Err(IngestError::Db(e)) if !e.is_transient() => {
                    let attempts = self.failed_attempts.entry(entry.id.clone()).or_insert(0);
                    *attempts += 1;
                    if *attempts < MAX_ATTEMPTS {
                        return Err(IngestError::Db(e));
                    }
                    let reason = format!("failed {MAX_ATTEMPTS} times: {}", describe(&e));
                    self.dead_letter(cluster, entry, &raw, &reason).await?
                }
                Err(e) => return Err(e),
            },
        };
        let _: i64 = self.conn.xack(keys::event_stream(cluster), &self.group, &[&entry.id]).await?;
        self.failed_attempts.remove(&entry.id);
        Ok(outcome)
    }

    async fn dead_letter(
        &mut self,
        cluster: &str,
        entry: &StreamId,
        raw: &[u8],
        reason: &str,
    ) -> Result<EntryOutcome, IngestError> {
        tracing::warn!(cluster, entry = entry.id, reason, "event dead-lettered");
        let _: String = self
            .conn
            .xadd(
                keys::dead_letter_stream(cluster),
                "*",
                &[
                    (PAYLOAD_FIELD, raw),
                    (DLQ_REASON_FIELD, reason.as_bytes()),
                    (DLQ_SOURCE_ID_FIELD, entry.id.as_bytes()),
                ],
            )
            .await?;
        self.metrics.dead_lettered.inc();
        Ok(EntryOutcome::DeadLettered(reason.to_owned()))
    }

    /// Applies one decoded event, read from stream entry `entry_id`, in one transaction;
    /// Cancels for stale epochs are sent before COMMIT (a crash after sending re-sends the same
    /// message id, which the agent ignores).
    async fn apply(&mut self, cluster: &str, env: &Envelope<Event>, entry_id: &str) -> Result<Outcome, IngestError> {
        let mut tx = self.pool.begin().await?;
        let mut cancels = Vec::new();
        let outcome = apply_in(&mut tx, cluster, env, entry_id, &mut cancels).await?;
        self.send_cancels(cluster, &cancels).await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn send_cancels(&mut self, cluster: &str, cancels: &[StaleCancel]) -> Result<(), IngestError> {
        for c in cancels {
            let id = format!("stale-cancel-{}-{}", c.job, c.epoch);
            let cmd = Command::Cancel { job: c.job, epoch: c.epoch };
            self.commands.send(cluster, &id, Utc::now().timestamp_millis(), cmd).await?;
            self.metrics.stale_cancels.inc();
            tracing::info!(cluster, job = c.job, epoch = c.epoch, "job reported under a fenced-off epoch; cancel sent");
        }
        Ok(())
    }

    /// Runs until `shutdown` turns true. Errors are logged and retried after a pause; a step
    /// interrupted by shutdown rolls its transaction back and leaves its entries pending.
    pub async fn run(mut self, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        tracing::info!(consumer = self.config.consumer, "event ingestion started");
        let mut backoff = Duration::from_millis(200);
        loop {
            if *shutdown.borrow() {
                break;
            }
            tokio::select! {
                _ = shutdown.changed() => break,
                r = self.step() => match r {
                    Ok(_) => backoff = Duration::from_millis(200),
                    Err(e) => {
                        tracing::warn!(error = %e, "event ingestion failed; retrying");
                        tokio::select! {
                            _ = shutdown.changed() => break,
                            _ = tokio::time::sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(Duration::from_secs(10));
                    }
                },
            }
        }
        tracing::info!("event ingestion stopped");
    }
}

/// Applies one decoded event inside the caller's transaction: records its message id, then its
/// effect. Cancels owed for stale epochs are added to `cancels`, for the caller to send before
/// it commits.
async fn apply_in(
    tx: &mut sqlx::PgConnection,
    cluster: &str,
    env: &Envelope<Event>,
    entry_id: &str,
    cancels: &mut Vec<StaleCancel>,
) -> Result<Outcome, IngestError> {
    if !store::claim_message(&mut *tx, cluster, &env.id, env.message.kind()).await? {
        // Nothing was written: the caller's transaction is as it was.
        return Ok(Outcome::Duplicate);
    }
    let sent_at = ms_to_time(env.ts).unwrap_or_else(Utc::now);
    let outcome = match &env.message {
        Event::Hello { version, capabilities } => {
            store::record_hello(&mut *tx, cluster, version, capabilities).await?;
            Outcome::Applied
        }
        Event::Inventory { nodes } => {
            store::record_inventory(&mut *tx, cluster, nodes).await?;
            Outcome::Applied
        }
        Event::Capacity { summary } => {
            store::record_capacity(&mut *tx, cluster, summary, sent_at).await?;
            Outcome::Applied
        }
        Event::Metrics { gpus, replicas } => {
            store::record_metrics(&mut *tx, cluster, gpus, replicas, sent_at).await?;
            Outcome::Applied
        }
        Event::JobState { job, task: None, replica: None, epoch, at, checkpoint: Some(reference), .. } => {
            let origin = EventOrigin {
                at: ms_to_time(*at),
                cluster_id: Some(cluster),
                epoch: i64::try_from(*epoch).ok(),
                message_id: Some(&env.id),
            };
            store::record_checkpoint(&mut *tx, *job, reference, &origin).await?
        }
        Event::JobState { job, task, replica, state, node, devices, at, epoch, reason, endpoint, exit, .. } => {
            let level = match (task, replica) {
                (Some(t), Some(r)) => Some(Level::Replica { task: t.clone(), index: *r }),
                (Some(t), None) => Some(Level::Task(t.clone())),
                (None, None) => Some(Level::Job),
                (None, Some(_)) => None,
            };
            match (level, i64::try_from(*epoch)) {
                (Some(level), Ok(epoch)) => {
                    let report = JobReport {
                        report: Report {
                            cluster: cluster.to_owned(),
                            epoch,
                            level,
                            state: *state,
                            appended_ms: keys::stream_id_parts(entry_id).map(|(ms, _)| ms),
                        },
                        job: *job,
                        node: node.as_deref(),
                        devices,
                        at: ms_to_time(*at).unwrap_or(sent_at),
                        reason: reason.as_deref(),
                        exit: *exit,
                        message_id: Some(&env.id),
                    };
                    let (o, c) = store::apply_job_report(&mut *tx, &report).await?;
                    cancels.extend(c);
                    // Where it serves, reported with its running under the current epoch.
                    if let (Some(endpoint), None, None) = (endpoint, task, replica) {
                        store::record_endpoint(&mut *tx, *job, epoch, endpoint).await?;
                    }
                    o
                }
                _ => Outcome::Ignored,
            }
        }
        Event::Snapshot { jobs, inventory } => {
            if !inventory.is_empty() {
                store::record_inventory(&mut *tx, cluster, inventory).await?;
            }
            let (o, c) = store::reconcile_snapshot(&mut *tx, cluster, jobs, sent_at).await?;
            cancels.extend(c);
            if inventory.is_empty() {
                o
            } else {
                Outcome::Applied
            }
        }
    };
    store::finish_message(&mut *tx, cluster, &env.id, outcome).await?;
    Ok(outcome)
}

/// What one stream entry is, once decoded.
enum Classified {
    /// Malformed: the raw payload and why.
    DeadLetter(Vec<u8>, String),
    /// A kind this version does not know (a newer agent).
    UnknownKind { id: String, kind: String },
    /// From an agent serving another control plane.
    Foreign { id: String, serves: Option<String> },
    /// An event to apply (and its raw payload, should the database refuse it).
    Ours(Box<Envelope<Event>>, Vec<u8>),
}

#[cfg(test)]
mod tests {
    use super::ingest_lag_ms;

    #[test]
    fn ingestion_lag_ignores_send_times_no_agent_clock_could_give() {
        let now = 1_800_000_000_000;
        assert_eq!(ingest_lag_ms(now, now - 1_500), Some(1_500));
        assert_eq!(ingest_lag_ms(now, now + 200), Some(0), "an agent's clock a little ahead");
        for hostile in [i64::MIN, -1, 0, now - 2 * 86_400_000, now + 2 * 86_400_000, i64::MAX] {
            assert_eq!(ingest_lag_ms(now, hostile), None, "{hostile}");
        }
    }
}
