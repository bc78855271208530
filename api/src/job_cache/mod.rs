//! The jobs list's in-process read model: the newest jobs of every project ([`JobWindow`]),
//! kept current from PostgreSQL's change source (`db::job_changes`), answering the top-level
//! `jobs` pages without the page's statement.
//!
//! Reads are consistent, as PostgreSQL's own would be: before a page is answered, the window
//! catches up with a read of changes that *began after the request arrived* (the pattern of
//! Kubernetes' consistent reads from its watch cache). So a page shows every change committed
//! before the request, whichever replica or loop made it. Concurrent requests share that read:
//! one runs at a time, and it serves every request that arrived before it began; under load a
//! request waits for at most the one in flight and the next. Each read costs one statement
//! that finds nothing when nothing changed.
//!
//! When the window cannot answer (not loaded yet, a failed read, a page reaching past what it
//! holds, a filter only PostgreSQL evaluates), the caller reads PostgreSQL as before. The
//! caller's roles are never taken from here: they are read with each request.

pub mod window;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::{watch, Notify};

use crate::db::job_changes::{self, ChangeCursor};
use crate::db::{DbError, VisibleJobFilter};
use crate::metrics::{self, MetricFamily};
use prometheus::{IntCounter, IntGauge};
pub use window::{CachedJob, JobWindow, Visible, WindowPage};

/// How many jobs the cache holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobCacheLimits {
    /// The newest jobs of each project (`--jobs-cache-per-project`).
    pub per_project: u32,
    /// Over all projects (`--jobs-cache-max-jobs`): about 1.2 KiB each (BENCHMARKS.md).
    pub max_jobs: u32,
}

impl Default for JobCacheLimits {
    fn default() -> Self {
        JobCacheLimits { per_project: 1000, max_jobs: 200_000 }
    }
}

/// How long a request waits for the window to catch up before it reads PostgreSQL itself.
const MAX_WAIT: Duration = Duration::from_secs(2);

/// After a failed read of changes, the pause before the next one.
const RETRY_AFTER: Duration = Duration::from_millis(200);

/// A cheap clonable handle on the process's jobs window.
#[derive(Clone)]
pub struct JobCache {
    inner: Arc<Inner>,
}

struct Inner {
    pool: PgPool,
    limits: JobCacheLimits,
    /// Without requests, a read of changes this often, so the first request after a quiet
    /// spell does not read a long backlog.
    idle_round: Option<Duration>,
    metrics: Arc<JobCacheMetrics>,
    window: RwLock<JobWindow>,
    /// Tickets handed to requests waiting for a read of changes.
    demand: AtomicU64,
    wake: Notify,
    /// The last read's outcome: every ticket up to `served` is answered; `ok` whether that
    /// read succeeded (and the window is loaded).
    served: watch::Sender<Served>,
    started: AtomicBool,
}

#[derive(Clone, Copy, Debug, Default)]
struct Served {
    through: u64,
    ok: bool,
}

impl JobCache {
    /// A window within `limits`, loaded when the cache starts.
    pub fn new(pool: PgPool, limits: JobCacheLimits) -> JobCache {
        JobCache::with(pool, limits, None, Arc::default())
    }

    /// Like [`JobCache::new`], also reading changes every `idle_round` without requests, and
    /// counting into `metrics`.
    pub fn with(
        pool: PgPool,
        limits: JobCacheLimits,
        idle_round: Option<Duration>,
        metrics: Arc<JobCacheMetrics>,
    ) -> JobCache {
        let (served, _) = watch::channel(Served::default());
        JobCache {
            inner: Arc::new(Inner {
                pool,
                limits,
                idle_round,
                metrics,
                window: RwLock::new(window_within(limits)),
                demand: AtomicU64::new(0),
                wake: Notify::new(),
                served,
                started: AtomicBool::new(false),
            }),
        }
    }

    /// Starts the reader task unless it runs already (the first request does otherwise).
    /// Needs a tokio runtime.
    pub fn start(&self) {
        if !self.inner.started.swap(true, Ordering::SeqCst) {
            tokio::spawn(run(self.inner.clone()));
        }
    }

    /// Waits until the window holds every change committed before this call. `false` when it
    /// cannot say so in time (not loaded, the read failed, or [`MAX_WAIT`] passed): read
    /// PostgreSQL instead.
    pub async fn catch_up(&self) -> bool {
        self.start();
        let mut served = self.inner.served.subscribe();
        let ticket = self.inner.demand.fetch_add(1, Ordering::SeqCst) + 1;
        self.inner.wake.notify_one();
        let outcome = match tokio::time::timeout(MAX_WAIT, served.wait_for(|s| s.through >= ticket)).await {
            Ok(Ok(s)) => s.ok,
            _ => false,
        };
        if !outcome {
            self.inner.metrics.pages_from_database.inc();
        }
        outcome
    }

    /// The page, when the window can tell it (see [`JobWindow::page`]). Call after
    /// [`JobCache::catch_up`].
    pub fn page(
        &self,
        visible: Visible<'_>,
        filter: &VisibleJobFilter,
        first: u32,
        after: Option<i64>,
    ) -> Option<WindowPage> {
        let page = self.inner.window.read().unwrap_or_else(|e| e.into_inner()).page(visible, filter, first, after);
        let counter =
            if page.is_some() { &self.inner.metrics.pages_cached } else { &self.inner.metrics.pages_from_database };
        counter.inc();
        page
    }

    /// Jobs held now.
    pub fn len(&self) -> usize {
        self.inner.window.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The jobs cache's counters, for `/metrics`.
#[derive(Debug)]
pub struct JobCacheMetrics {
    pages_cached: IntCounter,
    pages_from_database: IntCounter,
    change_reads: IntCounter,
    failed_reads: IntCounter,
    jobs: IntGauge,
}

impl Default for JobCacheMetrics {
    fn default() -> Self {
        JobCacheMetrics {
            pages_cached: metrics::counter("grus_jobs_cache_pages_total", "jobs pages answered from the jobs cache."),
            pages_from_database: metrics::counter(
                "grus_jobs_cache_misses_total",
                "jobs pages the cache could not answer (read from PostgreSQL).",
            ),
            change_reads: metrics::counter("grus_jobs_cache_change_reads_total", "Reads of changes by the jobs cache."),
            failed_reads: metrics::counter("grus_jobs_cache_failed_reads_total", "Reads of changes that failed."),
            jobs: metrics::gauge("grus_jobs_cache_jobs", "Jobs held by the jobs cache."),
        }
    }
}

impl MetricFamily for JobCacheMetrics {
    fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            metrics::boxed(&self.pages_cached),
            metrics::boxed(&self.pages_from_database),
            metrics::boxed(&self.change_reads),
            metrics::boxed(&self.failed_reads),
            metrics::boxed(&self.jobs),
        ]
    }
}

/// The reader: the first read loads the window, each later one applies what changed. One at a
/// time, so the window only moves forward. Ends when the pool closes.
async fn run(inner: Arc<Inner>) {
    let mut cursor: Option<ChangeCursor> = None;
    loop {
        let through = inner.served.borrow().through;
        // The load runs at once; later reads when asked for (or idle).
        if cursor.is_some() && inner.demand.load(Ordering::SeqCst) == through {
            match inner.idle_round {
                Some(every) => {
                    let _ = tokio::time::timeout(every, inner.wake.notified()).await;
                }
                None => inner.wake.notified().await,
            }
        }
        // Every ticket handed out before this read begins is answered by it.
        let target = inner.demand.load(Ordering::SeqCst);
        let read = match &cursor {
            None => load(&inner).await,
            Some(c) => job_changes::jobs_changed_since(&inner.pool, c).await.map(|(next, jobs)| {
                let mut window = inner.window.write().unwrap_or_else(|e| e.into_inner());
                for (head, tasks) in jobs {
                    window.upsert(CachedJob { head, tasks });
                }
                (next, window.len())
            }),
        };
        inner.metrics.change_reads.inc();
        match read {
            Ok((next, held)) => {
                inner.metrics.jobs.set(i64::try_from(held).unwrap_or(i64::MAX));
                cursor = Some(next);
                inner.served.send_replace(Served { through: target, ok: true });
            }
            Err(DbError::Internal(sqlx::Error::PoolClosed)) => {
                inner.served.send_replace(Served { through: u64::MAX, ok: false });
                return;
            }
            Err(e) => {
                inner.metrics.failed_reads.inc();
                tracing::warn!(error = %e, "jobs cache: cannot read changes; pages read PostgreSQL meanwhile");
                inner.served.send_replace(Served { through: target, ok: false });
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
    }
}

/// The first read: every project's newest jobs; the cursor of their snapshot and the jobs held.
async fn load(inner: &Inner) -> Result<(ChangeCursor, usize), DbError> {
    let mut conn = inner.pool.acquire().await?;
    let per_project = inner.limits.per_project.max(1);
    let (cursor, jobs) = job_changes::newest_jobs_per_project(&mut conn, per_project).await?;
    let mut window = window_within(inner.limits);
    let mut jobs = jobs.into_iter().peekable();
    while let Some((head, tasks)) = jobs.next() {
        let project_id = head.project_id;
        let mut newest: Vec<CachedJob> = vec![CachedJob { head, tasks }];
        while let Some((head, tasks)) = jobs.next_if(|(h, _)| h.project_id == project_id) {
            newest.push(CachedJob { head, tasks });
        }
        project_window(&mut window, project_id, newest, per_project as usize);
    }
    let held = window.len();
    tracing::info!(jobs = held, "jobs cache: loaded");
    *inner.window.write().unwrap_or_else(|e| e.into_inner()) = window;
    Ok((cursor, held))
}

fn window_within(limits: JobCacheLimits) -> JobWindow {
    JobWindow::new(limits.per_project as usize, limits.max_jobs as usize)
}

/// Loads one project's `newest` jobs (newest first, at most `per_project + 1`): when there is
/// one beyond the limit, it is the floor.
fn project_window(window: &mut JobWindow, project_id: i64, mut newest: Vec<CachedJob>, per_project: usize) {
    let floor = if newest.len() > per_project { newest.pop().map_or(0, |j| j.head.id) } else { 0 };
    window.load_project(project_id, newest, floor);
}
