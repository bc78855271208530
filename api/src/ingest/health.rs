//! The cluster health monitor: reads each agent's heartbeat key (`grus:{c}:hb`, set with a
//! TTL by the agent) and keeps `clusters.health` and `last_heartbeat` current.
//!
//! Present key: healthy, seen now. Missing key: degraded until the cluster has been silent for
//! the loss timeout, then unreachable, and its jobs are handled as lost
//! (`db::ingest::handle_cluster_loss`: not yet running → rejected for re-dispatch, running →
//! unknown). When the agent comes back it sends a Snapshot, which the ingester reconciles;
//! reports under epochs fenced off meanwhile get a Cancel. Every replica runs a monitor; the
//! writes are idempotent, so running several is harmless.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use grus_protocol::keys;
use redis::aio::ConnectionManager;
use sqlx::PgPool;

use super::{IngestError, IngestMetrics};
use crate::db::ingest as store;
use crate::domain::{health, Health};

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
    metrics: Arc<IngestMetrics>,
    config: HealthConfig,
    last_prune: Option<Instant>,
}

impl HealthMonitor {
    pub async fn connect(
        pool: PgPool,
        redis: &redis::Client,
        metrics: Arc<IngestMetrics>,
        config: HealthConfig,
    ) -> Result<HealthMonitor, IngestError> {
        let conn = ConnectionManager::new(redis.clone()).await?;
        Ok(HealthMonitor { pool, conn, metrics, config, last_prune: None })
    }

    /// One check of every cluster. Returns each cluster's health as decided now.
    pub async fn tick(&mut self) -> Result<Vec<(String, Health)>, IngestError> {
        let clusters = store::cluster_liveness(&self.pool).await?;
        if clusters.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for c in &clusters {
            pipe.exists(keys::heartbeat_key(&c.id));
        }
        let present: Vec<bool> = pipe.query_async(&mut self.conn).await?;
        let now = Utc::now();
        let loss_ms = i64::try_from(self.config.loss_timeout.as_millis()).unwrap_or(i64::MAX);
        let mut out = Vec::with_capacity(clusters.len());
        for (c, present) in clusters.iter().zip(present) {
            let silent_ms = c.last_heartbeat.map(|t| (now - t).num_milliseconds().max(0));
            let h = health(present, silent_ms, loss_ms);
            if present {
                store::set_health(&self.pool, &c.id, h.as_str(), Some(now)).await?;
            } else if c.health != h.as_str() {
                store::set_health(&self.pool, &c.id, h.as_str(), None).await?;
            }
            if h == Health::Unreachable {
                if c.health != h.as_str() {
                    tracing::warn!(cluster = c.id, "cluster lost: no heartbeat for the loss timeout");
                    self.metrics.clusters_lost.fetch_add(1, Ordering::Relaxed);
                }
                // Every tick while unreachable: idempotent, and catches late dispatches there.
                let silent = Duration::from_millis(silent_ms.unwrap_or(0).max(0) as u64);
                let done = store::handle_cluster_loss(&self.pool, &c.id, silent).await?;
                if done.rejected + done.unknown > 0 {
                    tracing::warn!(
                        cluster = c.id,
                        rejected = done.rejected,
                        unknown = done.unknown,
                        "lost cluster's jobs handled"
                    );
                }
            }
            out.push((c.id.clone(), h));
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
