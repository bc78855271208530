//! Groups concurrent submissions into admission batches ([`super::admit_batch`]).
//!
//! A submission's transaction costs the database far more than its rows: the statements'
//! start-up, the queue lock, the commit's WAL flush. Admitting the submissions that arrive
//! together in one transaction spreads that cost over all of them (BENCHMARKS.md "Control plane
//! API": 905 one-job transactions/s against 3,900 jobs/s in batches of eight, same statements).
//!
//! Queues are split over shards by id, each shard with one worker that admits, in arrival
//! order, whatever submissions are waiting when it is free, up to `max_batch`. A lone submission
//! does not wait for company: batches form only while the worker is busy, so an idle server
//! admits as fast as before and a loaded one in ever larger batches. Two workers never lock the
//! same queue, so batches never wait for each other; within a queue, submissions are decided in
//! arrival order exactly as if one after another.
//!
//! A submission whose client goes away is still admitted once it is queued (as a request whose
//! client disconnects after the commit).

use std::sync::Arc;

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

use super::{admit_batch, Admission, Submission};
use crate::db::{Cause, DbError, DbResult, NewJob};
use crate::metrics::{self, MetricFamily};
use crate::notify::AllocatorWake;
use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec};

/// How submissions are batched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatcherConfig {
    /// Shards of queues, each admitted by one worker (one database connection at a time).
    pub shards: usize,
    /// Most submissions in one transaction.
    pub max_batch: usize,
}

impl Default for BatcherConfig {
    fn default() -> Self {
        BatcherConfig { shards: 2, max_batch: 64 }
    }
}

/// Submissions waiting in one shard, beyond which senders wait (back-pressure on requests).
const SHARD_BACKLOG: usize = 4096;

/// Hands submissions to the shard workers. Cloning shares the workers; they stop when the last
/// clone is dropped and their queued submissions are answered.
#[derive(Clone, Debug)]
pub struct AdmissionBatcher {
    shards: Vec<mpsc::Sender<Queued>>,
}

/// Admission outcomes and batch sizes, for `/metrics`.
#[derive(Debug)]
pub struct AdmissionMetrics {
    outcomes: IntCounterVec,
    admitted: IntCounter,
    borrowed: IntCounter,
    quota_exceeded: IntCounter,
    budget_exceeded: IntCounter,
    failed: IntCounter,
    batches: IntCounter,
}

impl Default for AdmissionMetrics {
    fn default() -> Self {
        let (outcomes, [admitted, borrowed, quota_exceeded, budget_exceeded, failed]) = metrics::outcome_counters(
            "grus_admissions_total",
            "Submissions by admission outcome.",
            ["admitted", "borrowed", "quota_exceeded", "budget_exceeded", "failed"],
        );
        let batches = metrics::counter(
            "grus_admission_batches_total",
            "Admission transactions (submissions per batch: grus_admissions_total / this).",
        );
        AdmissionMetrics { outcomes, admitted, borrowed, quota_exceeded, budget_exceeded, failed, batches }
    }
}

impl AdmissionMetrics {
    fn count(&self, outcome: &DbResult<Admission>) {
        let counter = match outcome {
            Ok(Admission::Admitted { borrowed: false, .. }) => &self.admitted,
            Ok(Admission::Admitted { borrowed: true, .. }) => &self.borrowed,
            Ok(Admission::QuotaExceeded { .. }) => &self.quota_exceeded,
            Ok(Admission::BudgetExceeded(_)) => &self.budget_exceeded,
            Err(_) => &self.failed,
        };
        counter.inc();
    }

    /// Admission transactions run so far.
    pub fn batches(&self) -> u64 {
        self.batches.get()
    }
}

impl MetricFamily for AdmissionMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![metrics::boxed(&self.outcomes), metrics::boxed(&self.batches)]
    }
}

#[derive(Debug)]
struct Queued {
    job: NewJob,
    cause: String,
    actor: String,
    reply: oneshot::Sender<DbResult<Admission>>,
}

impl AdmissionBatcher {
    /// Starts the workers on the current tokio runtime.
    pub fn start(pool: PgPool, config: BatcherConfig, metrics: Arc<AdmissionMetrics>) -> AdmissionBatcher {
        AdmissionBatcher::start_waking(pool, config, metrics, None)
    }

    /// Like [`AdmissionBatcher::start`]; a batch that admitted a job pokes `wake` (the
    /// allocator plans it at once).
    pub fn start_waking(
        pool: PgPool,
        config: BatcherConfig,
        metrics: Arc<AdmissionMetrics>,
        wake: Option<AllocatorWake>,
    ) -> AdmissionBatcher {
        let shards = (0..config.shards.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel(SHARD_BACKLOG);
                let worker =
                    Worker { pool: pool.clone(), max_batch: config.max_batch.max(1), metrics: metrics.clone() };
                tokio::spawn(worker.run(rx, wake.clone()));
                tx
            })
            .collect();
        AdmissionBatcher { shards }
    }

    /// Admits `job` in the next batch of its queue's shard; the outcome is the one
    /// [`super::admit`] would give.
    pub async fn admit(&self, job: NewJob, by: Cause<'_>) -> DbResult<Admission> {
        let shard = shard_of(job.queue_id, self.shards.len());
        let (reply, outcome) = oneshot::channel();
        let queued = Queued { job, cause: by.cause.to_owned(), actor: by.actor.to_owned(), reply };
        self.shards[shard].send(queued).await.map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

/// The shard of a queue: every submission to one queue goes through the same worker.
fn shard_of(queue_id: i64, shards: usize) -> usize {
    // `shards` is at least 1 and small; the remainder of a non-negative modulus fits.
    queue_id.rem_euclid(shards as i64) as usize
}

fn stopped() -> DbError {
    DbError::Internal(sqlx::Error::Protocol("the admission worker stopped".into()))
}

/// One shard's worker.
struct Worker {
    pool: PgPool,
    max_batch: usize,
    metrics: Arc<AdmissionMetrics>,
}

impl Worker {
    async fn run(self, mut inbox: mpsc::Receiver<Queued>, wake: Option<AllocatorWake>) {
        let Worker { pool, max_batch, metrics } = self;
        let mut batch: Vec<Queued> = Vec::with_capacity(max_batch);
        while let Some(first) = inbox.recv().await {
            batch.push(first);
            while batch.len() < max_batch {
                match inbox.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            let outcomes = {
                let submissions: Vec<Submission<'_>> = batch
                    .iter()
                    .map(|q| Submission { job: &q.job, by: Cause { cause: &q.cause, actor: &q.actor } })
                    .collect();
                admit_batch(&pool, &submissions).await
            };
            tracing::debug!(jobs = batch.len(), "admission batch");
            metrics.batches.inc();
            if let Some(wake) =
                wake.as_ref().filter(|_| outcomes.iter().any(|o| matches!(o, Ok(Admission::Admitted { .. }))))
            {
                wake.poke();
            }
            for (queued, outcome) in batch.drain(..).zip(outcomes) {
                metrics.count(&outcome);
                // The submitter may have gone away; its job is admitted all the same.
                let _ = queued.reply.send(outcome);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_queues_spread_over_every_shard() {
        let mut used = [0; 4];
        for queue in 1..=64 {
            used[shard_of(queue, 4)] += 1;
        }
        assert_eq!(used, [16; 4]);
        assert!(shard_of(-3, 4) < 4, "ids are never negative, but a bad one must not panic");
    }
}
