//! The change feed behind GraphQL subscriptions: one PostgreSQL `LISTEN` per process, fanned
//! out to every subscriber through a tokio broadcast channel.
//!
//! Triggers (migration 0005) `NOTIFY grus_job_events` with `{id, job_id, project_id}` for
//! every recorded job event and `grus_clusters` with the cluster id when a cluster's capacity,
//! health or cordon changes. Because PostgreSQL delivers to every listening session, a change
//! written through any api replica, or by the ingester, reaches subscribers on every replica.
//! Payloads are ids only: subscribers reload the row and authorize it themselves.
//!
//! Loss is reported, never hidden: a subscriber that falls more than the channel's capacity
//! behind, or a listener that lost its connection (notifications sent meanwhile are gone),
//! yields [`Change::Missed`] / a lag error to subscribers, which can then re-read what they
//! show. The listener reconnects with a capped backoff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use sqlx::postgres::PgListener;
use sqlx::{PgExecutor, PgPool};
use tokio::sync::{broadcast, watch};

use crate::db::{DbError, DbResult, JobEvent};

pub const JOB_EVENTS_CHANNEL: &str = "grus_job_events";
pub const CLUSTERS_CHANNEL: &str = "grus_clusters";

/// Notifications a slow subscriber may fall behind before it is told it missed some.
pub const DEFAULT_CAPACITY: usize = 4096;

/// One change, as announced by PostgreSQL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A job event row was recorded.
    JobEvent { id: i64, job_id: i64, project_id: i64 },
    /// A cluster's capacity, health or cordon changed.
    Cluster { id: String },
    /// The listener reconnected: notifications sent while it was away are lost.
    Missed,
}

#[derive(Deserialize)]
struct JobEventPayload {
    id: i64,
    job_id: i64,
    project_id: i64,
}

/// Decodes one notification; `None` for a channel or payload this version does not know
/// (logged by the caller, never fatal).
pub fn parse(channel: &str, payload: &str) -> Option<Change> {
    match channel {
        JOB_EVENTS_CHANNEL => {
            let p: JobEventPayload = serde_json::from_str(payload).ok()?;
            Some(Change::JobEvent { id: p.id, job_id: p.job_id, project_id: p.project_id })
        }
        CLUSTERS_CHANNEL if !payload.is_empty() => Some(Change::Cluster { id: payload.to_owned() }),
        _ => None,
    }
}

/// A cheap clonable handle on the process's change feed.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

struct Inner {
    pool: PgPool,
    tx: broadcast::Sender<Change>,
    listening: watch::Sender<bool>,
    started: AtomicBool,
}

impl Notifier {
    pub fn new(pool: PgPool) -> Notifier {
        Notifier::with_capacity(pool, DEFAULT_CAPACITY)
    }

    pub fn with_capacity(pool: PgPool, capacity: usize) -> Notifier {
        let (tx, _) = broadcast::channel(capacity.max(1));
        let (listening, _) = watch::channel(false);
        Notifier { inner: Arc::new(Inner { pool, tx, listening, started: AtomicBool::new(false) }) }
    }

    /// Starts the listener task unless it runs already. Called by `serve` at start-up, and
    /// by the first subscriber otherwise. Needs a tokio runtime.
    pub fn start(&self) {
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let pool = self.inner.pool.clone();
        let tx = self.inner.tx.clone();
        let listening = self.inner.listening.clone();
        tokio::spawn(listen(pool, tx, listening));
    }

    /// A receiver of every change from now on (starting the listener if needed).
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        let rx = self.inner.tx.subscribe();
        self.start();
        rx
    }

    /// Whether the `LISTEN` is active now.
    pub fn is_listening(&self) -> bool {
        *self.inner.listening.borrow()
    }

    /// Waits until the `LISTEN` is active (changes committed from then on are seen).
    pub async fn listening(&self) {
        let mut rx = self.inner.listening.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|l| *l).await;
    }

    /// Live subscribers (receivers of the broadcast channel).
    pub fn subscriber_count(&self) -> usize {
        self.inner.tx.receiver_count()
    }
}

/// The listener loop: connect, LISTEN, forward; on a lost connection announce
/// [`Change::Missed`] and reconnect with a backoff capped at 30 s. Ends when the pool closes.
async fn listen(pool: PgPool, tx: broadcast::Sender<Change>, listening: watch::Sender<bool>) {
    let mut backoff = Duration::from_millis(250);
    let mut connected_before = false;
    loop {
        let mut listener = match connect(&pool).await {
            Ok(l) => l,
            Err(sqlx::Error::PoolClosed) => return,
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "change feed: cannot LISTEN");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
                continue;
            }
        };
        if connected_before {
            // Whatever was notified between the loss and this LISTEN is gone.
            let _ = tx.send(Change::Missed);
        }
        connected_before = true;
        backoff = Duration::from_millis(250);
        listening.send_replace(true);
        tracing::debug!("change feed: listening");
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => match parse(n.channel(), n.payload()) {
                    // No receivers is not an error: nobody subscribed right now.
                    Some(change) => {
                        let _ = tx.send(change);
                    }
                    None => tracing::warn!(channel = n.channel(), "change feed: unknown notification"),
                },
                // The connection was lost and re-established: notifications may be lost.
                Ok(None) => {
                    tracing::warn!("change feed: connection lost; reconnected");
                    let _ = tx.send(Change::Missed);
                }
                Err(sqlx::Error::PoolClosed) => {
                    listening.send_replace(false);
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "change feed: listener failed");
                    break;
                }
            }
        }
        listening.send_replace(false);
        tokio::time::sleep(backoff).await;
    }
}

async fn connect(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen_all([JOB_EVENTS_CHANNEL, CLUSTERS_CHANNEL]).await?;
    Ok(listener)
}

/// One job event row by id (what a subscriber loads after a notification).
pub async fn job_event(db: impl PgExecutor<'_>, id: i64) -> DbResult<JobEvent> {
    sqlx::query_as("SELECT * FROM job_events WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("event"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_notifications() {
        assert_eq!(
            parse(JOB_EVENTS_CHANNEL, r#"{"id": 7, "job_id": 3, "project_id": 2}"#),
            Some(Change::JobEvent { id: 7, job_id: 3, project_id: 2 })
        );
        assert_eq!(parse(CLUSTERS_CHANNEL, "c-1"), Some(Change::Cluster { id: "c-1".into() }));
        assert_eq!(parse(CLUSTERS_CHANNEL, ""), None);
        assert_eq!(parse(JOB_EVENTS_CHANNEL, r#"{"id": 7}"#), None);
        assert_eq!(parse(JOB_EVENTS_CHANNEL, "not json"), None);
        assert_eq!(parse("other", "x"), None);
    }
}
