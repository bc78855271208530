//! The cluster health monitor: reads each agent's heartbeat key (`grus:{c}:hb`, set with a
//! TTL by the agent) and keeps `clusters.health` and `last_heartbeat` current.
//!
//! Present key: healthy, seen now. Missing key: degraded until the cluster has been silent for
//! the loss timeout, then unreachable, and its jobs are handled as lost
//! (`db::ingest::handle_cluster_loss`: placed or running → unknown; jobs it has not placed are
//! left to their answer deadline, since a paused agent may place them the moment it wakes). When the agent comes back (restarted, it sends a Snapshot; paused or cut off,
//! the monitor asks for one with `Resync`), the ingester reconciles its Snapshot;
//! reports under epochs fenced off meanwhile get a Cancel. Every replica runs a monitor; the
//! writes are idempotent, so running several is harmless.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use grus_protocol::command::Command;
use grus_protocol::connection::manager_config;
use grus_protocol::keys;
use redis::aio::ConnectionManager;
use sqlx::PgPool;

use super::{IngestError, IngestMetrics};
use crate::commands::CommandPublisher;
use crate::db::ingest as store;
use crate::domain::{health, Health, Heartbeat};

/// How long `ingested_messages` rows are kept (far beyond any redelivery).
const IDEMPOTENCY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// Settings of the health monitor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthConfig {
    /// Silence after which a cluster is unreachable and its jobs are handled as lost.
    pub loss_timeout: Duration,
    /// How often heartbeats are checked.
    pub interval: Duration,
}

pub struct HealthMonitor {
    pool: PgPool,
    conn: ConnectionManager,
    commands: CommandPublisher,
    metrics: Arc<IngestMetrics>,
    config: HealthConfig,
    last_prune: Option<Instant>,
    /// This control plane's identity; a heartbeat naming another marks the cluster degraded.
    incarnation: String,
}

/// The control plane a heartbeat's value says its agent serves (agents that predate it, or
/// not pinned yet, name none).
fn served_control_plane(value: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(value).ok()?;
    v.get("control_plane")?.as_str().map(str::to_owned)
}

fn silent_ms(last_heartbeat: Option<chrono::DateTime<Utc>>, now: chrono::DateTime<Utc>) -> Option<i64> {
    last_heartbeat.map(|t| (now - t).num_milliseconds().max(0))
}

impl HealthMonitor {
    pub async fn connect(
        pool: PgPool,
        redis: &redis::Client,
        metrics: Arc<IngestMetrics>,
        config: HealthConfig,
    ) -> Result<HealthMonitor, IngestError> {
        let conn = ConnectionManager::new_with_config(redis.clone(), manager_config(Duration::from_secs(5))).await?;
        let incarnation = crate::db::control_plane::incarnation(&pool).await?;
        let commands = CommandPublisher::new(conn.clone()).stamped(&incarnation);
        Ok(HealthMonitor { pool, conn, commands, metrics, config, last_prune: None, incarnation })
    }

    /// One check of every cluster. Returns each cluster's health as decided now.
    pub async fn tick(&mut self) -> Result<Vec<(String, Health)>, IngestError> {
        let clusters = store::cluster_liveness(&self.pool).await?;
        if clusters.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for c in &clusters {
            pipe.get(keys::heartbeat_key(&c.id));
        }
        let beats: Vec<Option<String>> = pipe.query_async(&mut self.conn).await?;
        let now = Utc::now();
        let loss_ms = i64::try_from(self.config.loss_timeout.as_millis()).unwrap_or(i64::MAX);
        let mut out = Vec::with_capacity(clusters.len());
        for (c, beat) in clusters.iter().zip(beats) {
            let present = beat.is_some();
            let serves = beat.as_deref().and_then(served_control_plane);
            let heartbeat = match (&beat, &serves) {
                (None, _) => Heartbeat::Missing,
                (Some(_), Some(cp)) if *cp != self.incarnation => Heartbeat::Foreign,
                (Some(_), _) => Heartbeat::Ours,
            };
            if serves.is_some() && serves != c.agent_control_plane && heartbeat == Heartbeat::Foreign {
                tracing::error!(
                    cluster = c.id,
                    serves,
                    ours = self.incarnation,
                    "the cluster's agent serves another control plane and refuses our commands"
                );
            }
            let silent = silent_ms(c.last_heartbeat, now);
            let h = health(heartbeat, silent, loss_ms);
            if heartbeat == Heartbeat::Ours && c.health == Health::Unreachable.as_str() {
                // Back after the loss timeout: its running jobs are `unknown` and nothing may
                // change them for a long time. Its snapshot settles every one. Asked before the
                // health is stored, so a crash in between asks again on the next tick.
                let reason = "the cluster was unreachable past the loss timeout".to_owned();
                let id = format!("resync-{}-{}", c.id, now.timestamp_millis());
                self.commands.send(&c.id, &id, now.timestamp_millis(), Command::Resync { reason }).await?;
                tracing::info!(cluster = c.id, "cluster back after a loss; snapshot asked for");
            }
            if present {
                // With the control plane it serves, in one statement: a reader never sees the
                // mismatch with the health from before it.
                store::set_health(&self.pool, &c.id, h.as_str(), Some(now), serves.as_deref()).await?;
            } else if c.health != h.as_str() {
                store::set_health(&self.pool, &c.id, h.as_str(), None, None).await?;
            }
            if h == Health::Unreachable {
                if c.health != h.as_str() {
                    tracing::warn!(cluster = c.id, "cluster lost: no heartbeat for the loss timeout");
                    self.metrics.clusters_lost.inc();
                }
                // Every tick while unreachable: idempotent, and catches late dispatches there.
                let silent = Duration::from_millis(silent.unwrap_or(0).max(0) as u64);
                let done = store::handle_cluster_loss(&self.pool, &c.id, silent).await?;
                if done.unknown > 0 {
                    tracing::warn!(cluster = c.id, unknown = done.unknown, "lost cluster's jobs handled");
                }
            }
            out.push((c.id.clone(), h));
        }
        // Rotated tokens: their clusters' agents lose their Redis users.
        if let Err(e) = crate::agent_access::revoke_rotated(&self.pool, &mut self.conn).await {
            tracing::warn!(error = %e, "could not revoke rotated agents' Redis users");
        }
        if self.last_prune.is_none_or(|t| t.elapsed() >= Duration::from_secs(3600)) {
            store::prune_ingested(&self.pool, IDEMPOTENCY_RETENTION).await?;
            self.last_prune = Some(Instant::now());
        }
        Ok(out)
    }

    /// Ticks every `interval` until `shutdown` turns true.
    pub async fn run(mut self, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        tracing::info!(loss_timeout = ?self.config.loss_timeout, "cluster health monitor started");
        loop {
            if *shutdown.borrow() {
                break;
            }
            if let Err(e) = self.tick().await {
                tracing::warn!(error = %e, "cluster health check failed");
            }
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tokio::time::sleep(self.config.interval) => {}
            }
        }
        tracing::info!("cluster health monitor stopped");
    }
}
