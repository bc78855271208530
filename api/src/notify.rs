//! The change feed behind GraphQL subscriptions, fanned out to every subscriber of the process
//! through a tokio broadcast channel. Two sources, both reading PostgreSQL, so a change written
//! through any api replica, or by the ingester, reaches subscribers on every replica:
//!
//! - Job events, by tailing `job_events` (migration 0007). Each event row carries the id of
//!   the transaction that wrote it (`xid`); every [`TAIL_INTERVAL`] the feed reads the events
//!   of transactions below the oldest one still running (all of them ended, so none can add
//!   more), from where it stopped last time. Each committed event is read exactly once, a
//!   rolled-back one never, and a lost connection loses nothing: the cursor is in the
//!   process. Not `NOTIFY`: a notifying transaction holds a cluster-wide lock through its
//!   commit's WAL flush, which serialized every submission. The price: a transaction that
//!   stays open (anywhere on the PostgreSQL server: transaction ids are server-wide) holds
//!   back delivery of the events committed after it began, until it ends.
//! - Cluster changes, by `LISTEN grus_clusters` (a trigger notifies when a cluster's capacity,
//!   health or cordon changes: rare, so the lock does not matter).
//!
//! Payloads are ids only: subscribers reload the row and authorize it themselves.
//!
//! Loss is reported, never hidden: a subscriber that falls more than the channel's capacity
//! behind, or a listener that lost its connection (cluster notifications sent meanwhile are
//! gone), yields [`Change::Missed`] / a lag error to subscribers, which can then re-read what
//! they show. The listener reconnects with a capped backoff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::{PgExecutor, PgPool};
use tokio::sync::{broadcast, watch};

use crate::db::{DbError, DbResult, JobEvent};

pub const CLUSTERS_CHANNEL: &str = "grus_clusters";

/// How often the feed reads newly ended transactions' job events: the added latency of a
/// job-event subscription.
pub const TAIL_INTERVAL: Duration = Duration::from_millis(100);

/// Notifications a slow subscriber may fall behind before it is told it missed some.
pub const DEFAULT_CAPACITY: usize = 4096;

/// One change, as read from PostgreSQL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A job event row was recorded.
    JobEvent { id: i64, job_id: i64, project_id: i64 },
    /// A cluster's capacity, health or cordon changed.
    Cluster { id: String },
    /// The cluster listener reconnected: cluster notifications sent while it was away are lost.
    Missed,
}

/// Decodes one notification; `None` for a channel or payload this version does not know
/// (logged by the caller, never fatal).
pub fn parse(channel: &str, payload: &str) -> Option<Change> {
    match channel {
        CLUSTERS_CHANNEL if !payload.is_empty() => Some(Change::Cluster { id: payload.to_owned() }),
        _ => None,
    }
}

/// A poke for this process' allocator loop: whoever admits a job on this replica pokes it, so
/// the leader plans at once instead of at its next periodic round (changes made on other
/// replicas reach it through the change feed). Pokes while a round runs fold into one.
#[derive(Clone, Debug, Default)]
pub struct AllocatorWake(Arc<tokio::sync::Notify>);

impl AllocatorWake {
    pub fn poke(&self) {
        self.0.notify_one();
    }

    /// Resolves at the next poke, or at once when one came since the last wait.
    pub async fn poked(&self) {
        self.0.notified().await;
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
    tailing: watch::Sender<bool>,
    started: AtomicBool,
}

impl Notifier {
    pub fn new(pool: PgPool) -> Notifier {
        Notifier::with_capacity(pool, DEFAULT_CAPACITY)
    }

    pub fn with_capacity(pool: PgPool, capacity: usize) -> Notifier {
        let (tx, _) = broadcast::channel(capacity.max(1));
        let (listening, _) = watch::channel(false);
        let (tailing, _) = watch::channel(false);
        Notifier { inner: Arc::new(Inner { pool, tx, listening, tailing, started: AtomicBool::new(false) }) }
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
        tokio::spawn(tail(pool.clone(), tx.clone(), self.inner.tailing.clone()));
        tokio::spawn(listen(pool, tx, listening));
    }

    /// A receiver of every change from now on (starting the listener if needed).
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        let rx = self.inner.tx.subscribe();
        self.start();
        rx
    }

    /// Whether both sources are active now.
    pub fn is_listening(&self) -> bool {
        *self.inner.listening.borrow() && *self.inner.tailing.borrow()
    }

    /// Waits until both sources are active (changes committed from then on are seen).
    pub async fn listening(&self) {
        // The senders live in `self`, so the channels cannot close while we wait.
        let _ = self.inner.tailing.subscribe().wait_for(|t| *t).await;
        let _ = self.inner.listening.subscribe().wait_for(|l| *l).await;
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
    listener.listen(CLUSTERS_CHANNEL).await?;
    Ok(listener)
}

/// The job-event tail: from the transactions running when it starts, every [`TAIL_INTERVAL`],
/// the events of transactions that ended since. Ends when the pool closes.
async fn tail(pool: PgPool, tx: broadcast::Sender<Change>, tailing: watch::Sender<bool>) {
    let mut cursor = TailCursor::default();
    loop {
        match read_ended(&pool, &cursor).await {
            Ok((next, changes)) => {
                for change in changes {
                    // No receivers is not an error: nobody subscribed right now.
                    let _ = tx.send(change);
                }
                cursor = next;
                tailing.send_replace(true);
            }
            Err(DbError::Internal(sqlx::Error::PoolClosed)) => {
                tailing.send_replace(false);
                return;
            }
            // The cursor stays: the next read picks up whatever this one missed.
            Err(e) => tracing::warn!(error = %e, "change feed: cannot read job events"),
        }
        tokio::time::sleep(TAIL_INTERVAL).await;
    }
}

/// Where the tail stands (`xid8` and `pg_snapshot` as text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TailCursor {
    /// Every transaction below this id was read; `None` before the first read.
    from: Option<String>,
    /// The snapshot taken at the first read, while transactions above `from` that had
    /// already committed then must not be read: they happened before the feed started.
    /// Dropped once `from` passes its upper bound.
    started: Option<String>,
}

/// The job events written by transactions in `[cursor.from, oldest running)`, in id order, and
/// the cursor after them. Every transaction in that range has ended, and a transaction not yet
/// given an id will get one above it. The first read only places the cursor.
async fn read_ended(pool: &PgPool, cursor: &TailCursor) -> DbResult<(TailCursor, Vec<Change>)> {
    // (oldest running xid, the snapshot, whether `started` is passed, event id, job id,
    // project id); the ids are NULL when nothing ended.
    type Row = (String, String, bool, Option<i64>, Option<i64>, Option<i64>);
    let rows: Vec<Row> = sqlx::query_as(
        "WITH s AS (SELECT pg_current_snapshot() AS snap)
         SELECT pg_snapshot_xmin(s.snap)::text, s.snap::text,
                $2::pg_snapshot IS NULL OR pg_snapshot_xmin(s.snap) >= pg_snapshot_xmax($2::pg_snapshot),
                e.id, e.job_id, j.project_id
         FROM s LEFT JOIN (job_events e JOIN jobs j ON j.id = e.job_id)
           ON $1::xid8 IS NOT NULL AND e.xid >= $1::xid8 AND e.xid < pg_snapshot_xmin(s.snap)
              AND ($2::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(e.xid, $2::pg_snapshot))
         ORDER BY e.id",
    )
    .bind(cursor.from.as_deref())
    .bind(cursor.started.as_deref())
    .fetch_all(pool)
    .await?;
    let Some((upto, snapshot, started_passed, ..)) = rows.first().cloned() else {
        return Err(DbError::Internal(sqlx::Error::RowNotFound));
    };
    let next = match &cursor.from {
        None => TailCursor { from: Some(upto), started: Some(snapshot) },
        Some(_) => TailCursor { from: Some(upto), started: if started_passed { None } else { cursor.started.clone() } },
    };
    let changes = rows
        .into_iter()
        .filter_map(|(.., id, job_id, project_id)| {
            Some(Change::JobEvent { id: id?, job_id: job_id?, project_id: project_id? })
        })
        .collect();
    Ok((next, changes))
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
        assert_eq!(parse(CLUSTERS_CHANNEL, "c-1"), Some(Change::Cluster { id: "c-1".into() }));
        assert_eq!(parse(CLUSTERS_CHANNEL, ""), None);
        assert_eq!(parse("grus_job_events", r#"{"id": 7}"#), None);
        assert_eq!(parse("other", "x"), None);
    }
}
