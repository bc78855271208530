//! The allocator loop: the imperative shell around [`crate::allocator`]. Owns leadership
//! (one api replica at a time), the round (load, plan, write, send) and the delivery of the
//! commands a round owes to agents (Dispatch, Cancel, Evict).
//!
//! Leadership is a PostgreSQL session advisory lock held on a dedicated connection: it is
//! released when the leader's session ends (process death, network loss), and every round
//! first checks that session, so a replica that lost it stops planning.
//!
//! A round (see [`Dispatcher::round`]):
//! 1. dispatches whose job the agent has not placed by their answer deadline (recorded with the
//!    dispatch: `--dispatch-timeout` after it, and sent in the Dispatch) become `timed_out` and
//!    their jobs `rejected` (each in one transaction with its event); a Cancel for the old epoch
//!    is owed. The deadline is read on Redis's clock and only once the cluster's entries from
//!    before it are ingested ([`crate::event_streams`]): the agent judges its answer by the same clock,
//!    so a job it started is never given away;
//!    Then aging: a waiting job that has waited its queue's `max_wait_s` since it began waiting
//!    (or was last raised) is raised one priority class, with its event (`domain::aged_class`);
//!    and queues' windows for borrowed work: open, their borrowed jobs are suspended; closed,
//!    the jobs they suspended are resumed (`db::suspend`); preemptible work placed on a draining
//!    cluster or node after the drain (dispatched before it) is evicted with the drain's grace;
//! 2. jobs `admitted` or `rejected` are planned with [`plan_round`] against cluster views built
//!    from `clusters` (health, heartbeat freshness, cordon, labels, capacity) less reservations,
//!    which are the `pending` dispatches younger than `--reservation-ttl` (derived from the
//!    table, so a new leader sees the same ones);
//! 3. Dispatch actions are recorded in transactions of up to 500 (per job: dispatch row with
//!    epoch + 1 and reservation, `jobs.cluster_id/epoch`, the `dispatched` event; a job that
//!    changed meanwhile is skipped, never half-written); after each commit the commands are
//!    appended to `grus:{cluster}:cmd`; jobs that fit nowhere get their structured whyPending;
//!    a job that fits nowhere but would fit on a cluster once elastic jobs there that it may
//!    preempt give back their replicas above their minimum is dispatched there at once
//!    ([`plan_shrink_room`]: the agent shrinks them and places it after their grace period), or
//!    once jobs there that the agent may move give up their nodes ([`plan_consolidation_room`]:
//!    the agent moves them and places it once they left);
//! 4. jobs within their queue's guarantee that still wait get reclaim planning: the victim
//!    goes `preempting` (event) and is owed an Evict; evictions already decided count as freed
//!    capacity, so later rounds do not evict more for the same waiting job;
//! 5. every command owed and not confirmed sent is (re)sent.
//!
//! Steps 2-4 are skipped while nothing they read changed since a plan that decided nothing
//! (no job event, the same cluster views, at most [`FULL_PLAN_EVERY`] ago).
//!
//! Delivery: PostgreSQL records the intent first and a `*_sent_at` column only after the XADD
//! returned. A command whose send failed, or whose leader died between commit and send, is
//! re-sent by the next round with the same message id (`dispatch:<job>:<epoch>`, ...), so the
//! agent's idempotency on message ids makes duplicates harmless. A Dispatch that never gets
//! through still times out after `--dispatch-timeout` like any unanswered one and the job moves
//! on to another cluster. Cancels are owed for every timed-out dispatch and for the live
//! dispatch of every cancelled job, so `cancelJob` reaches the agent even across api restarts.

pub mod queue_settings;
pub mod services;
pub mod views;
pub mod why;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use grus_protocol::command::{Command, EvictionHold};
use grus_protocol::keys;
use grus_protocol::wire::JobSpec;
use grus_scheduler::fairshare::FairShareConfig;
use grus_scheduler::resources::MILLI_PER_GPU;
use sqlx::{PgConnection, PgPool};
use tokio::sync::{broadcast, watch};

use self::why::{RoundWhys, ShapeWhys, StoredWhy, BAD_SPEC_SHAPE};
use crate::allocator::{
    plan_consolidation_room, plan_reclaim_fair, plan_reclaim_with_evictions, plan_round, plan_round_fair,
    plan_shrink_room, timed_out, Action, AllocatorConfig, ClusterView, FleetShares, InFlight, PendingJob,
    ReclaimConfig, ReclaimRights,
};
use crate::commands::CommandPublisher;
use crate::db::dispatch::{self as store, OwedCommand, Sent};
use crate::db::job_changes::{self, ChangeCursor};
use crate::db::{self, fair_share, Cause, DbError};
use crate::domain::{self, aged_class, aging_ceiling, JobState, PriorityClass};
use crate::event_streams;
use crate::metrics::{self, MetricFamily};
use crate::notify::{AllocatorWake, Change};
use prometheus::{IntCounter, IntGauge};

/// The actor recorded on the loop's events.
pub const ACTOR: &str = "system:allocator";

/// Dispatches recorded per transaction.
const DISPATCH_BATCH: usize = 500;

/// Key of the session advisory lock that elects the leader (advisory locks are per database).
pub const LEADER_LOCK_KEY: i64 = 0x6772_7573_616c_6c6f;

/// Settings of the loop (from `grus-api serve` flags).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DispatcherConfig {
    /// Time between rounds.
    pub interval: std::time::Duration,
    /// An unanswered dispatch older than this times out and the job goes elsewhere.
    pub dispatch_timeout: Duration,
    /// How long a dispatch's reservation is deducted while the agent has not answered.
    pub reservation_ttl: Duration,
    /// A heartbeat older than this makes the cluster unhealthy.
    pub heartbeat_stale: Duration,
    /// Grace period of reclaim evictions.
    pub evict_grace_s: u32,
    /// Whether queues' decayed past usage counts in the fair-share order, and how.
    pub fair_share: FairShareConfig,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        DispatcherConfig {
            interval: std::time::Duration::from_secs(1),
            dispatch_timeout: Duration::seconds(120),
            reservation_ttl: Duration::seconds(60),
            heartbeat_stale: Duration::seconds(views::DEFAULT_HEARTBEAT_STALE_S),
            evict_grace_s: 30,
            fair_share: FairShareConfig::default(),
        }
    }
}

/// Why a round stopped early. Redis failures never stop a round: the commands stay owed.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for DispatchError {
    fn from(e: sqlx::Error) -> Self {
        DispatchError::Db(DbError::from(e))
    }
}

/// Leadership through a session advisory lock on a connection taken out of the pool.
pub struct Leadership {
    pool: PgPool,
    conn: Option<PgConnection>,
}

impl Leadership {
    pub fn new(pool: PgPool) -> Leadership {
        Leadership { pool, conn: None }
    }

    pub fn is_leader(&self) -> bool {
        self.conn.is_some()
    }

    /// Keeps or takes the lead: checks the session that holds the lock (a dead one means the
    /// lock is gone), else tries to take the lock. Returns whether this replica leads now.
    pub async fn try_lead(&mut self) -> Result<bool, DbError> {
        if let Some(conn) = self.conn.as_mut() {
            if sqlx::query("SELECT 1").execute(&mut *conn).await.is_ok() {
                return Ok(true);
            }
            tracing::warn!("allocator leadership lost: the lock session ended");
            self.conn = None;
        }
        let mut conn = self.pool.acquire().await?.detach();
        let (got,): (bool,) =
            sqlx::query_as("SELECT pg_try_advisory_lock($1)").bind(LEADER_LOCK_KEY).fetch_one(&mut conn).await?;
        if got {
            tracing::info!("this replica now leads the allocator");
            self.conn = Some(conn);
        } else {
            use sqlx::Connection as _;
            let _ = conn.close().await;
        }
        Ok(got)
    }

    /// The backend process of the lock session (operators and tests use it to see who leads).
    pub async fn backend_pid(&mut self) -> Option<i32> {
        let conn = self.conn.as_mut()?;
        sqlx::query_as::<_, (i32,)>("SELECT pg_backend_pid()").fetch_one(conn).await.ok().map(|r| r.0)
    }

    /// Gives the lead up (graceful shutdown): another replica takes it at its next round.
    pub async fn resign(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            use sqlx::Connection as _;
            let _ = sqlx::query("SELECT pg_advisory_unlock($1)").bind(LEADER_LOCK_KEY).execute(&mut conn).await;
            let _ = conn.close().await;
            tracing::info!("allocator leadership given up");
        }
    }
}

/// What one round did (for logs, tests and the bench).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundReport {
    /// (job, cluster, epoch) committed this round.
    pub dispatched: Vec<(i64, String, i64)>,
    /// (job, cluster, epoch) of dispatches that timed out.
    pub timed_out: Vec<(i64, String, i64)>,
    /// Jobs that fit nowhere.
    pub waiting: usize,
    /// (job, cluster, epoch) evicted to reclaim capacity.
    pub evicted: Vec<(i64, String, i64)>,
    /// Commands about jobs appended to command streams.
    pub sent: usize,
    /// Commands whose send failed (owed; re-sent next round).
    pub send_failures: usize,
    /// Whether the round planned (steps 2-4), or skipped that because nothing had changed.
    pub planned: bool,
    /// (job, class) of waiting jobs whose priority aging raised this round.
    pub aged: Vec<(i64, PriorityClass)>,
    /// Borrowed jobs suspended, and jobs resumed, by their queue's window this round.
    pub window_suspended: Vec<i64>,
    pub window_resumed: Vec<i64>,
    /// Jobs whose suspension, asked while they were on their way to a cluster, was carried out
    /// this round (evicted, or suspended at once).
    pub deferred_suspended: Vec<i64>,
    /// Preemptible jobs evicted because they were placed on a draining cluster or node after
    /// the drain.
    pub drain_evicted: Vec<i64>,
    /// Clusters whose agent was sent the queue settings this round ([`queue_settings`]).
    pub queues_sent_to: Vec<String>,
    /// Clusters whose agent was sent its cordoned nodes this round.
    pub cordons_sent_to: Vec<String>,
    /// Workspaces warned of their idle timeout, and those stopped or suspended by it.
    pub idle_warned: Vec<i64>,
    pub idle_culled: Vec<i64>,
    /// What the service step did to each service it changed.
    pub services: Vec<services::ServiceChange>,
}

/// The allocator loop's counters and its waiting-jobs gauge, for `/metrics`.
#[derive(Debug)]
pub struct AllocatorMetrics {
    /// Dispatches committed (first dispatches and re-dispatches).
    pub dispatches: IntCounter,
    /// Dispatches with an epoch above 1 (after a rejection or timeout).
    pub redispatches: IntCounter,
    /// Reclaim evictions decided.
    pub evictions: IntCounter,
    /// Admitted or rejected jobs that fit no cluster in the last round.
    pub waiting: IntGauge,
    /// 1 while this replica holds the allocator's lead, else 0 (which replica to watch, and
    /// how long a fail-over took).
    pub leader: IntGauge,
}

impl Default for AllocatorMetrics {
    fn default() -> Self {
        AllocatorMetrics {
            dispatches: metrics::counter("grus_allocator_dispatches_total", "Dispatches committed by the allocator."),
            redispatches: metrics::counter(
                "grus_allocator_redispatches_total",
                "Re-dispatches after a rejection or timeout.",
            ),
            evictions: metrics::counter(
                "grus_allocator_evictions_total",
                "Reclaim evictions decided by the allocator.",
            ),
            waiting: metrics::gauge(
                "grus_allocator_waiting_jobs",
                "Admitted jobs that fit no cluster in the last round.",
            ),
            leader: metrics::gauge("grus_allocator_leader", "1 while this replica leads the allocator, else 0."),
        }
    }
}

impl MetricFamily for AllocatorMetrics {
    fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            metrics::boxed(&self.dispatches),
            metrics::boxed(&self.redispatches),
            metrics::boxed(&self.evictions),
            metrics::boxed(&self.waiting),
            metrics::boxed(&self.leader),
        ]
    }
}

pub struct Dispatcher {
    pool: PgPool,
    publisher: CommandPublisher,
    cfg: DispatcherConfig,
    metrics: Arc<AllocatorMetrics>,
    leadership: Leadership,
    /// What the last full plan saw, when it changed nothing.
    memo: Option<PlanMemo>,
    /// The waiting jobs as the last plan decoded them.
    waiting: KnownWaiting,
    open: KnownOpen,
    /// Each job shape's whyPending as stored.
    why_shapes: ShapeWhys,
    /// When shapes no waiting job has were last pruned.
    why_pruned: Option<std::time::Instant>,
    /// What starts a round before the periodic one ([`Dispatcher::wake_on`]).
    triggers: Option<Triggers>,
    /// Tenant rights as last read ([`Dispatcher::rights`]).
    rights: Option<(std::time::Instant, Arc<ReclaimRights>)>,
    /// When waiting jobs were last looked at for aging ([`Dispatcher::age_waiting`]).
    aging_checked: Option<DateTime<Utc>>,
    /// When the agents' queue settings were last compared with the stored tree.
    queues_checked: Option<DateTime<Utc>>,
    /// When queues' past usage was last rolled forward.
    history_rolled: Option<DateTime<Utc>>,
    /// When the service step last ran, and what it remembers.
    services_checked: Option<DateTime<Utc>>,
    /// Run time history: each dispatch carries its job's predicted run time for backfill.
    runtimes: crate::runtime::RuntimeHistory,
    /// When jobs' metric history was last pruned to its retention.
    metrics_pruned: Option<DateTime<Utc>>,
    service_memory: services::ServiceMemory,
}

/// How often waiting jobs are looked at for aging: periods are at least a minute long.
const AGING_EVERY: Duration = Duration::seconds(5);

/// How often services are reconciled: replicas replaced, scaled and rolled.
const SERVICES_EVERY: Duration = Duration::seconds(2);

/// How often jobs' metric history is pruned to its retention (`db::metric_history`).
const METRICS_PRUNE_EVERY: Duration = Duration::minutes(10);

/// How often queues' past usage is rolled forward, when history counts.
const HISTORY_EVERY: Duration = Duration::seconds(15);

/// How often the agents' queue settings are compared with the stored tree: an admin's change
/// of a weight, a new queue or a restarted agent is told within this.
const QUEUE_SETTINGS_EVERY: Duration = Duration::seconds(5);

/// How long tenant rights read from the database are used: a platform admin's change applies
/// to dispatches and reclaim within this.
const RIGHTS_FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// Event-driven rounds: this replica's admissions poke `local`; jobs' events and clusters'
/// changes of every replica (and the ingester) arrive on `changes` (`None` once that feed is
/// gone: local pokes and the periodic round remain).
struct Triggers {
    local: AllocatorWake,
    changes: Option<broadcast::Receiver<Change>>,
}

impl Triggers {
    /// Resolves when something changed.
    async fn changed(&mut self) {
        let Some(changes) = self.changes.as_mut() else {
            self.local.poked().await;
            return;
        };
        tokio::select! {
            _ = self.local.poked() => {}
            // A lagged receiver missed changes: a round is due all the same.
            r = changes.recv() => if let Err(broadcast::error::RecvError::Closed) = r {
                self.changes = None;
            },
        }
    }

    /// Drops the changes that arrived meanwhile: the round about to run sees them all.
    fn fold(&mut self) {
        let Some(changes) = self.changes.as_mut() else { return };
        loop {
            match changes.try_recv() {
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(broadcast::error::TryRecvError::Empty) => return,
                Err(broadcast::error::TryRecvError::Closed) => {
                    self.changes = None;
                    return;
                }
            }
        }
    }
}

/// The shortest idle gap after a round before an event-driven one: a burst of changes (a
/// batch of admissions, a round's own dispatch events coming back through the feed) folds
/// into one round instead of a round per change. A round that took longer waits as long as
/// it took, so event-driven rounds use at most half of the loop's time.
const MIN_ROUND_GAP: std::time::Duration = std::time::Duration::from_millis(10);

/// The waiting jobs decoded by earlier rounds, by id, each valid while its row's `updated_at`
/// is unchanged: every change of what a plan reads from a job (state, epoch, priority,
/// borrowed, a failed attempt) moves `updated_at`, the spec never changes, and whyPending of
/// a waiting job is written only by this loop (which records what it wrote here). The waiting
/// jobs' ids and `updated_at` are read whole once, then kept current from the jobs that
/// events name since (`db::job_changes`: every change of a job appends an event); a round
/// loads and decodes in full only the new or changed jobs. Decoding all of them each second
/// was the loop's cost under a stream of submissions, and reading 87,000 heads a round was
/// half of a round at 100,000 jobs.
#[derive(Default)]
struct KnownWaiting {
    jobs: HashMap<i64, KnownJob>,
    /// Every waiting job's `updated_at` by id, as of the cursor's snapshot.
    heads: Option<(ChangeCursor, std::collections::BTreeMap<i64, DateTime<Utc>>)>,
}

struct KnownJob {
    updated_at: DateTime<Utc>,
    /// `None`: its stored spec does not decode.
    pending: Option<PendingJob>,
    why: StoredWhy,
}

impl KnownWaiting {
    /// Every waiting job's head, by id: read whole the first time (and after a failure), then
    /// brought up to date with the jobs changed since.
    async fn current_heads(&mut self, pool: &PgPool) -> Result<Vec<store::WaitingHead>, DispatchError> {
        let heads = match self.heads.take() {
            None => {
                let (cursor, heads) = job_changes::waiting_heads_at(&mut *pool.acquire().await?).await?;
                (cursor, heads.into_iter().map(|h| (h.id, h.updated_at)).collect())
            }
            Some((cursor, mut heads)) => {
                let (next, changed) = job_changes::job_states_changed_since(pool, &cursor).await?;
                for job in changed {
                    if store::is_waiting_state(&job.state) {
                        heads.insert(job.id, job.updated_at);
                    } else {
                        heads.remove(&job.id);
                    }
                }
                (next, heads)
            }
        };
        let out = heads.1.iter().map(|(&id, &updated_at)| store::WaitingHead { id, updated_at }).collect();
        self.heads = Some(heads);
        Ok(out)
    }

    /// Forgets jobs no longer waiting and loads the new or changed ones among `heads`.
    async fn refresh(&mut self, pool: &PgPool, heads: &[store::WaitingHead]) -> Result<(), DispatchError> {
        let current: HashMap<i64, DateTime<Utc>> = heads.iter().map(|h| (h.id, h.updated_at)).collect();
        self.jobs.retain(|id, j| current.get(id) == Some(&j.updated_at));
        let missing: Vec<i64> = heads.iter().filter(|h| !self.jobs.contains_key(&h.id)).map(|h| h.id).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut attempts: HashMap<i64, Vec<store::FailedAttempt>> = HashMap::new();
        for a in store::failed_attempts(pool, &missing).await? {
            attempts.entry(a.job_id).or_default().push(a);
        }
        for j in store::waiting_jobs(pool, &missing).await? {
            let pending = views::pending_job(&j, attempts.get(&j.id).map(Vec::as_slice).unwrap_or(&[]));
            let why = StoredWhy::Loaded(j.why_pending);
            self.jobs.insert(j.id, KnownJob { updated_at: j.updated_at, pending, why });
        }
        Ok(())
    }
}

/// The open dispatches (their reservations are in every view), read whole once, then kept
/// current from the jobs events name since: a dispatch opens, is answered or times out with
/// an event of its job (an answer without a state change has none; its reservation then stays
/// deducted until the job's next event or its expiry: never more than the truth). Reading
/// every open dispatch each round was a fixed cost per round that grew with the dispatches in
/// flight.
#[derive(Default)]
struct KnownOpen {
    state: Option<(ChangeCursor, std::collections::BTreeMap<i64, store::OpenDispatch>)>,
}

impl KnownOpen {
    /// Every open dispatch, by job id; on a failure the next call reads them whole.
    async fn current(&mut self, pool: &PgPool) -> Result<Vec<store::OpenDispatch>, DispatchError> {
        let state = match self.state.take() {
            None => {
                let (cursor, open) = job_changes::open_dispatches_at(&mut *pool.acquire().await?).await?;
                (cursor, open.into_iter().map(|d| (d.job_id, d)).collect())
            }
            Some((cursor, mut open)) => {
                let (next, changed) = job_changes::job_states_changed_since(pool, &cursor).await?;
                if !changed.is_empty() {
                    let ids: Vec<i64> = changed.iter().map(|j| j.id).collect();
                    for id in &ids {
                        open.remove(id);
                    }
                    open.extend(store::open_dispatches_of(pool, &ids).await?.into_iter().map(|d| (d.job_id, d)));
                }
                (next, open)
            }
        };
        let out = state.1.values().cloned().collect();
        self.state = Some(state);
        Ok(out)
    }
}

/// The inputs of a full plan (steps 2-4) that decided nothing: while no job changed (every
/// change of a job appends an event), the cluster views are the same and [`FULL_PLAN_EVERY`]
/// has not passed, planning again would decide nothing again, so rounds skip it. Loading and
/// decoding every waiting job each second was the loop's whole cost, and it stalled the API's
/// requests behind it on a small machine.
struct PlanMemo {
    last_event: i64,
    /// The views with only the reservations still active (expiry is what time changes).
    views: Vec<ClusterView>,
    at: DateTime<Utc>,
    waiting: usize,
    /// The plan weighed reclaim victims, whose eligibility (minimum run time) changes with
    /// time alone. Nothing else a plan reads does: reservations' expiry and clusters' health
    /// are in `views`, jobs' changes in `last_event`.
    time_dependent: bool,
}

/// The longest a round goes without a full plan when the last one depended on time
/// ([`PlanMemo::time_dependent`]). Without that dependence an unchanged world is not planned
/// again at all: the periodic full plan of thousands of waiting jobs was a CPU burst every ten
/// seconds that made the API's reads queue (BENCHMARKS.md, session 7).
const FULL_PLAN_EVERY: Duration = Duration::seconds(10);

/// How often whyPending rows of shapes no waiting job has any more are deleted.
const WHY_PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// Whole seconds from `now` until a hold expires (at least 1: the hold is still in force).
fn hold_ttl_s(until: DateTime<Utc>, now: DateTime<Utc>) -> u32 {
    u32::try_from((until - now).num_seconds().max(1)).unwrap_or(u32::MAX)
}

/// Cluster views as a plan at `now` sees them.
fn views_at(views: &[ClusterView], now: DateTime<Utc>) -> Vec<ClusterView> {
    views
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v.reservations.retain(|r| r.is_active(now));
            v.holds.retain(|r| r.is_active(now));
            v
        })
        .collect()
}

impl Dispatcher {
    pub fn new(
        pool: PgPool,
        publisher: CommandPublisher,
        cfg: DispatcherConfig,
        metrics: Arc<AllocatorMetrics>,
    ) -> Dispatcher {
        Dispatcher {
            leadership: Leadership::new(pool.clone()),
            runtimes: crate::runtime::RuntimeHistory::new(pool.clone()),
            metrics_pruned: None,
            pool,
            publisher,
            cfg,
            metrics,
            memo: None,
            waiting: KnownWaiting::default(),
            open: KnownOpen::default(),
            why_shapes: ShapeWhys::default(),
            why_pruned: None,
            triggers: None,
            rights: None,
            aging_checked: None,
            queues_checked: None,
            history_rolled: None,
            services_checked: None,
            service_memory: services::ServiceMemory::default(),
        }
    }

    /// Sends the queue settings ([`queue_settings`]) to every cluster whose agent was last sent
    /// other ones, or none since it said Hello. A failed send is tried again next time.
    async fn send_queue_settings(&mut self, now: DateTime<Utc>, report: &mut RoundReport) -> Result<(), DispatchError> {
        let mut conn = self.pool.acquire().await?;
        let settings = queue_settings::queue_settings(&fair_share::share_levels(&mut conn).await?);
        for cluster in fair_share::clusters_owed_queues(&mut conn, &settings.digest).await? {
            // The digest alone would repeat when settings change back: the agent would drop
            // the second one as a message it has seen.
            let message_id = format!("queues-{}-{}", settings.digest, now.timestamp_millis());
            match self.publisher.send(&cluster, &message_id, now.timestamp_millis(), settings.command.clone()).await {
                Ok(_) => {
                    fair_share::record_queues_sent(&mut conn, &cluster, &settings.digest).await?;
                    report.queues_sent_to.push(cluster);
                }
                Err(e) => {
                    report.send_failures += 1;
                    tracing::debug!(cluster, error = %e, "could not send the queue settings");
                }
            }
        }
        Ok(())
    }

    /// Sends each cluster whose cordoned nodes changed since its agent was last told (or said
    /// Hello) the whole set (`CordonNodes`). A failed send is tried again next time.
    async fn send_cordons(&mut self, now: DateTime<Utc>, report: &mut RoundReport) -> Result<(), DispatchError> {
        let mut conn = self.pool.acquire().await?;
        for (cluster, version, nodes) in db::operations::clusters_owed_cordons(&mut conn).await? {
            let message_id = format!("cordons-{version}-{}", now.timestamp_millis());
            let command = grus_protocol::Command::CordonNodes { nodes };
            match self.publisher.send(&cluster, &message_id, now.timestamp_millis(), command).await {
                Ok(_) => {
                    db::operations::record_cordons_sent(&mut conn, &cluster, version).await?;
                    report.cordons_sent_to.push(cluster);
                }
                Err(e) => {
                    report.send_failures += 1;
                    tracing::debug!(cluster, error = %e, "could not send the cordoned nodes");
                }
            }
        }
        Ok(())
    }

    /// Raises the priority of every waiting job that has waited its queue's `max_wait_s`
    /// since it began waiting or was last raised, one class ([`aged_class`]), each with its
    /// event.
    async fn age_waiting(&mut self, now: DateTime<Utc>, report: &mut RoundReport) -> Result<(), DispatchError> {
        for c in db::aging::aging_candidates(&self.pool, now).await? {
            let (Some(current), Some(tenant_max)) =
                (PriorityClass::parse(&c.priority_class), PriorityClass::parse(&c.tenant_max_class))
            else {
                continue;
            };
            let Ok(max_wait) = u32::try_from(c.max_wait_s) else { continue };
            let Some(to) = aged_class(current, c.waited_s, max_wait, aging_ceiling(tenant_max)) else { continue };
            let cause = format!(
                "priority raised from {current} to {to}: waited {} (queue {} raises waiting work every {})",
                humantime::format_duration(std::time::Duration::from_secs(c.waited_s.max(0) as u64)),
                c.queue,
                humantime::format_duration(std::time::Duration::from_secs(max_wait.into())),
            );
            let by = Cause { cause: &cause, actor: ACTOR };
            let mut tx = self.pool.begin().await?;
            if db::aging::raise_waiting(&mut tx, c.job_id, current.as_str(), (to.value(), to.as_str()), now, by).await?
            {
                tx.commit().await?;
                report.aged.push((c.job_id, to));
            }
        }
        Ok(())
    }

    /// Queues' windows for borrowed work, and spent budgets that suspend borrowed work: while
    /// one is open (spent), the queue's borrowed jobs are suspended (a running one after the eviction grace, through the checkpoint handshake if
    /// it checkpoints); once it closes, the jobs it suspended are resumed (one whose quota does
    /// not take it now stays suspended and is tried again).
    async fn apply_suspend_windows(
        &mut self,
        now: DateTime<Utc>,
        report: &mut RoundReport,
    ) -> Result<(), DispatchError> {
        use chrono::Timelike;
        let minute = (now.hour() * 60 + now.minute()) as u16;
        let queues = db::suspend::queues_with_windows(&self.pool).await?;
        // The queues whose borrowed work pauses now, each with the cause: an open window, or a
        // spent budget that suspends borrowed work.
        let mut open: Vec<(i64, String)> = queues
            .iter()
            .filter_map(|q| Some((q.id, q.name.clone(), q.class_of_service().borrowed_suspend?)))
            .filter(|(_, _, w)| w.contains(minute))
            .map(|(id, name, window)| (id, format!("suspended by queue {name}: its borrowed work pauses {window} UTC")))
            .collect();
        let mut conn = self.pool.acquire().await?;
        for (queue, cause) in db::budgets::paused_queues(&mut conn, now).await? {
            if !open.iter().any(|(q, _)| *q == queue) {
                open.push((queue, cause));
            }
        }
        drop(conn);
        let open_ids: Vec<i64> = open.iter().map(|(id, _)| *id).collect();
        if !open_ids.is_empty() {
            for (job, queue) in db::suspend::borrowed_jobs_in(&self.pool, &open_ids).await? {
                let Some((_, cause)) = open.iter().find(|(id, _)| *id == queue) else { continue };
                let mut tx = self.pool.begin().await?;
                let by = Cause { cause, actor: ACTOR };
                match db::suspend::suspend_job(&mut tx, job, self.cfg.evict_grace_s, by).await {
                    Ok(_) => {
                        db::suspend::mark_suspended_by_policy(&mut tx, job).await?;
                        tx.commit().await?;
                        report.window_suspended.push(job);
                    }
                    // Dispatched and unanswered, or changed meanwhile: the next look takes it.
                    Err(e) => tracing::debug!(job, error = %e, "not suspended by its queue's policy yet"),
                }
            }
        }
        for job in db::suspend::policy_suspended_outside(&self.pool, &open_ids).await? {
            let mut tx = self.pool.begin().await?;
            let by = Cause { cause: "resumed: its queue's borrowed work may run again", actor: ACTOR };
            match crate::admission::resume(&mut tx, job, by).await {
                Ok(crate::admission::Admission::Admitted { .. }) => {
                    tx.commit().await?;
                    report.window_resumed.push(job);
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(job, error = %e, "not resumed after its queue's window"),
            }
        }
        Ok(())
    }

    /// Workspaces' idle rule (`domain::idle_verdict`): one idle past its warning point is
    /// warned (an event: when it will be culled); one still idle at its timeout and at least
    /// the grace after its warning is stopped (cancelled) or suspended, as its settings say.
    async fn apply_idle_rule(&mut self, now: DateTime<Utc>, report: &mut RoundReport) -> Result<(), DispatchError> {
        for w in db::workspaces::running_workspaces(&self.pool).await? {
            let idle_after_s = w.settings.idle_after_s;
            let idle_after = Duration::seconds(i64::try_from(idle_after_s).unwrap_or(i64::MAX));
            let suspend = w.settings.idle_action == grus_protocol::wire::IdleAction::Suspend;
            let action = if suspend { "suspended" } else { "stopped" };
            match domain::idle_verdict(now, w.running_since, w.last_active_at, w.warning, idle_after) {
                domain::IdleVerdict::Active | domain::IdleVerdict::Warned => {}
                domain::IdleVerdict::Warn { active_at, cull_at } => {
                    let cause = format!(
                        "idle: no GPU activity since {}; {action} at {} unless used",
                        active_at.format("%H:%M:%S UTC"),
                        cull_at.format("%H:%M:%S UTC")
                    );
                    let mut tx = self.pool.begin().await?;
                    let warning = domain::IdleWarning { active_at, warned_at: now };
                    db::workspaces::warn(&mut tx, w.job_id, warning, Cause { cause: &cause, actor: ACTOR }).await?;
                    tx.commit().await?;
                    report.idle_warned.push(w.job_id);
                }
                domain::IdleVerdict::Cull => {
                    let idle = humantime::format_duration(std::time::Duration::from_secs(idle_after_s));
                    let cause = format!("{action}: idle for {idle} (its workspace idle timeout)");
                    let by = Cause { cause: &cause, actor: ACTOR };
                    let mut tx = self.pool.begin().await?;
                    let done = if suspend {
                        db::suspend::suspend_job(&mut tx, w.job_id, self.cfg.evict_grace_s, by).await.map(|_| ())
                    } else {
                        db::transition_job(&mut tx, w.job_id, JobState::Cancelled, by).await.map(|_| ())
                    };
                    match done {
                        Ok(()) => {
                            tx.commit().await?;
                            report.idle_culled.push(w.job_id);
                        }
                        // Changed meanwhile (ended, suspended by its user): nothing to cull.
                        Err(e) => tracing::debug!(job = w.job_id, error = %e, "idle workspace not culled"),
                    }
                }
            }
        }
        Ok(())
    }

    /// Suspensions asked while their jobs were dispatched and unanswered: a placed job is
    /// evicted (its Evict is owed, sent with the others) and ends suspended; a refused one is
    /// suspended at once.
    async fn carry_out_deferred_suspensions(&mut self, report: &mut RoundReport) -> Result<(), DispatchError> {
        for s in db::suspend::deferred_suspensions(&self.pool).await? {
            let mut tx = self.pool.begin().await?;
            let by = Cause { cause: "suspended as asked while it was on its way to a cluster", actor: ACTOR };
            match db::suspend::carry_out_deferred(&mut tx, &s, self.cfg.evict_grace_s, by).await {
                Ok(true) => {
                    tx.commit().await?;
                    report.deferred_suspended.push(s.id);
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(job = s.id, error = %e, "could not carry out a deferred suspension"),
            }
        }
        Ok(())
    }

    /// Evicts the preemptible work placed on a draining cluster or node since the drain, with
    /// the drain's grace (`db::operations::evict_landed_on_drains`), in one transaction.
    async fn evict_landed_on_drains(&mut self, report: &mut RoundReport) -> Result<(), DispatchError> {
        let mut tx = self.pool.begin().await?;
        let by = Cause { cause: "drained: placed on a draining cluster or node after the drain", actor: ACTOR };
        let evicted = db::operations::evict_landed_on_drains(&mut tx, self.cfg.evict_grace_s, by).await?;
        tx.commit().await?;
        report.drain_evicted = evicted;
        Ok(())
    }

    /// Tenant rights, read again when older than [`RIGHTS_FRESH_FOR`].
    async fn rights(&mut self) -> Result<Arc<ReclaimRights>, DispatchError> {
        if let Some((at, rights)) = &self.rights {
            if at.elapsed() < RIGHTS_FRESH_FOR {
                return Ok(rights.clone());
            }
        }
        let rights = Arc::new(db::tenant_rights::rights_by_project(&self.pool).await?);
        self.rights = Some((std::time::Instant::now(), rights.clone()));
        Ok(rights)
    }

    /// Rounds start as soon as something changes: `local` pokes (this replica's admissions)
    /// and `changes` (the change feed: job events and cluster changes from every replica);
    /// the periodic round stays as a safety net.
    pub fn wake_on(mut self, local: AllocatorWake, changes: broadcast::Receiver<Change>) -> Dispatcher {
        self.triggers = Some(Triggers { local, changes: Some(changes) });
        self
    }

    pub fn leadership(&mut self) -> &mut Leadership {
        &mut self.leadership
    }

    /// Runs rounds every `interval` while this replica leads, until `shutdown` turns true
    /// (or its sender is dropped); then gives the lead up.
    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(self.cfg.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // When the last round ended, and how long it took.
        let (mut ended, mut took) = (tokio::time::Instant::now(), std::time::Duration::ZERO);
        loop {
            let mut triggers = self.triggers.take();
            // Only the leader plans: a follower waits for its periodic attempt at the lead
            // (each attempt costs a connection), whatever changes.
            let leading = self.leadership.is_leader();
            let changed = async {
                match triggers.as_mut() {
                    Some(t) if leading => t.changed().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tick.tick() => {}
                _ = changed => {
                    tokio::time::sleep_until(ended + took.max(MIN_ROUND_GAP)).await;
                }
                changed = shutdown.changed() => {
                    if changed.is_err() || *shutdown.borrow() {
                        break;
                    }
                }
            }
            if let Some(t) = triggers.as_mut() {
                t.fold();
            }
            self.triggers = triggers;
            let started = tokio::time::Instant::now();
            let lead = self.leadership.try_lead().await;
            self.metrics.leader.set(i64::from(matches!(lead, Ok(true))));
            match lead {
                Ok(true) => match self.round(Utc::now()).await {
                    Ok(r) if !r.dispatched.is_empty() || !r.timed_out.is_empty() || !r.evicted.is_empty() => {
                        tracing::info!(
                            dispatched = r.dispatched.len(),
                            timed_out = r.timed_out.len(),
                            evicted = r.evicted.len(),
                            waiting = r.waiting,
                            "allocator round"
                        );
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "allocator round failed; retried next round"),
                },
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "allocator leadership check failed"),
            }
            (ended, took) = (tokio::time::Instant::now(), started.elapsed());
        }
        self.leadership.resign().await;
        self.metrics.leader.set(0);
    }

    /// One round at `now` (see the module comment). Assumes leadership; every write re-checks
    /// the job's state and epoch under its row lock, so even two overlapping leaders cannot
    /// dispatch one epoch twice.
    pub async fn round(&mut self, now: DateTime<Utc>) -> Result<RoundReport, DispatchError> {
        let mut report = RoundReport::default();
        let cfg = self.cfg;

        // 0. A Redis that restarted empty lost the commands it held: owe them again (else the
        // dispatches made just before it would time out, their jobs waiting for nothing).
        match self.publisher.redis_lost_data().await {
            Ok(true) => {
                let owed = store::owe_again_after_redis_loss(&mut *self.pool.acquire().await?).await?;
                if owed > 0 {
                    tracing::warn!(owed, "Redis lost its data: commands it held are sent again");
                }
            }
            Ok(false) => {}
            // Redis away: this round's commands stay owed; the next round looks again.
            Err(e) => tracing::debug!(error = %e, "could not check Redis for lost data"),
        }

        // 1. Timeouts: a dispatch is given up once its answer deadline has passed on Redis's
        // clock (the one that stamps the agent's answer) and every entry its cluster appended
        // before the deadline has been ingested: an answer that beat the deadline cannot still
        // be in flight, so the agent, which reads the same clock off its answer, has launched
        // nothing of it (invariant 2). Redis away: no timeouts this round.
        let mut open = self.open.current(&self.pool).await?;
        let overdue = store::overdue_dispatches(&self.pool, now, cfg.dispatch_timeout).await?;
        let answered = if overdue.is_empty() { None } else { self.answer_clock(&overdue).await };
        let in_flight: Vec<InFlight> = match &answered {
            None => Vec::new(),
            Some((_, ingested)) => overdue
                .iter()
                .filter(|d| ingested.contains(&d.cluster_id))
                .filter_map(|d| {
                    Some(InFlight {
                        job: u64::try_from(d.job_id).ok()?,
                        cluster: d.cluster_id.clone(),
                        epoch: u64::try_from(d.epoch).ok()?,
                        deadline: d.deadline,
                    })
                })
                .collect(),
        };
        let clock = answered.as_ref().map_or(now, |(redis_now, _)| now.min(*redis_now));
        for (job, attempt) in timed_out(&in_flight, clock) {
            let (job, epoch) = (job as i64, attempt.epoch as i64);
            let reason = format!("not placed within {}s", cfg.dispatch_timeout.num_seconds());
            let cause = format!("dispatch to {} (epoch {epoch}) timed out: {reason}", attempt.cluster);
            let mut tx = self.pool.begin().await?;
            match store::time_out(&mut tx, job, epoch, &reason, Cause { cause: &cause, actor: ACTOR }).await {
                Ok(true) => {
                    tx.commit().await?;
                    open.retain(|d| !(d.job_id == job && d.epoch == epoch));
                    report.timed_out.push((job, attempt.cluster, epoch));
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(job, epoch, error = %e, "could not time the dispatch out"),
            }
        }

        // 1a. Suspensions asked while their jobs were on their way, now that the cluster
        // answered: before the plan, so that a refused one is not sent anywhere else.
        self.carry_out_deferred_suspensions(&mut report).await?;
        // 1a'. Preemptible work that landed on a draining cluster or node after the drain
        // (dispatched before it, placed after) is sent away like the work the drain found.
        self.evict_landed_on_drains(&mut report).await?;

        // 1b. Aging: waiting jobs past their queue's maximum wait are raised one class. Before
        // the plan, which serves them in the new order (each raise appends an event, so a
        // memoized plan is not reused).
        if self.aging_checked.is_none_or(|at| now - at >= AGING_EVERY) {
            self.age_waiting(now, &mut report).await?;
            self.apply_suspend_windows(now, &mut report).await?;
            self.apply_idle_rule(now, &mut report).await?;
            self.aging_checked = Some(now);
        }
        if self.services_checked.is_none_or(|at| now - at >= SERVICES_EVERY) {
            services::reconcile(&self.pool, &mut self.service_memory, now, &mut report).await?;
            self.services_checked = Some(now);
        }
        if let Some(half_life_s) = cfg.fair_share.half_life_s {
            if self.history_rolled.is_none_or(|at| now - at >= HISTORY_EVERY) {
                fair_share::roll_usage_history(&self.pool, now, half_life_s).await?;
                self.history_rolled = Some(now);
            }
        }
        if self.metrics_pruned.is_none_or(|at| now - at >= METRICS_PRUNE_EVERY) {
            let deleted = db::metric_history::prune(&self.pool, now).await?;
            tracing::debug!(deleted, "metric history pruned to its retention");
            self.metrics_pruned = Some(now);
        }
        if self.queues_checked.is_none_or(|at| now - at >= QUEUE_SETTINGS_EVERY) {
            self.send_queue_settings(now, &mut report).await?;
            self.send_cordons(now, &mut report).await?;
            self.queues_checked = Some(now);
        }

        // 2. Plan, unless nothing changed since a plan that decided nothing.
        let last_event = store::last_job_event_id(&self.pool).await?;
        let clusters = db::list_clusters(&self.pool).await?;
        let mut views: Vec<ClusterView> = clusters
            .iter()
            .map(|c| views::cluster_view(c, &open, now, cfg.heartbeat_stale, cfg.reservation_ttl))
            .collect();
        let holds = store::active_holds(&mut *self.pool.acquire().await?).await?;
        views::attach_holds(&mut views, &holds);
        let seen = views_at(&views, now);
        if let Some(m) = &self.memo {
            let fresh = !m.time_dependent || now - m.at < FULL_PLAN_EVERY;
            if m.last_event == last_event && m.views == seen && fresh {
                report.waiting = m.waiting;
                self.send_owed(&mut report).await?;
                return Ok(report);
            }
        }
        self.memo = None;
        report.planned = true;
        // Taken out for the round (put back at the end; a failed round starts it over).
        let mut known = std::mem::take(&mut self.waiting);
        let heads = known.current_heads(&self.pool).await?;
        known.refresh(&self.pool, &heads).await?;
        let mut pending: Vec<&PendingJob> = Vec::with_capacity(heads.len());
        let mut whys = RoundWhys::default();
        let bad_spec: Arc<str> = BAD_SPEC_SHAPE.into();
        for h in &heads {
            let Some(job) = known.jobs.get(&h.id) else { continue };
            match &job.pending {
                Some(p) => pending.push(p),
                None => {
                    report.waiting += 1;
                    whys.note(h.id, bad_spec.clone(), None);
                }
            }
        }
        let alloc_cfg = AllocatorConfig { reservation_ttl: cfg.reservation_ttl };
        let capacity_milli = views
            .iter()
            .filter(|v| v.healthy && !v.cordoned)
            .flat_map(|v| &v.capacity.models)
            .map(|m| u64::from(m.total_gpus) * u64::from(MILLI_PER_GPU))
            .sum();
        let mut tree = fair_share::share_tree(&mut *self.pool.acquire().await?, capacity_milli).await?;
        tree.history = cfg.fair_share;
        tree.now_s = u64::try_from(now.timestamp()).unwrap_or(0);
        // Stored weights and guarantees the scheduler refuses (a guarantee above a limit):
        // serve by priority, and reclaim only to guarantees, rather than not at all.
        let shares = FleetShares::new(&tree, pending.iter().copied())
            .inspect_err(|e| tracing::warn!(error = %e, "fair-share tree is invalid; serving by priority this round"))
            .ok();
        let actions = match &shares {
            Some(shares) => plan_round_fair(shares, pending, &views, now, &alloc_cfg),
            None => plan_round(pending, &views, now, &alloc_cfg),
        };

        // 3. Write and send: dispatches commit in batches (one transaction each, set-based),
        // and each batch's commands go out right after its commit.
        let mut still_waiting: Vec<i64> = Vec::new();
        let mut decided: Vec<(store::NewDispatch, crate::allocator::Reservation)> = Vec::new();
        let rights = self.rights().await?;
        // Waiting jobs of tenants that may not preempt are told so (their reclaim is skipped).
        let anyone_barred = rights.anyone_barred();
        for action in actions {
            match action {
                Action::Dispatch { job, cluster, epoch, reservation } => {
                    decided.push(self.new_dispatch(job, cluster, epoch, reservation, None, now));
                }
                Action::Wait { job, skipped, shape } => {
                    report.waiting += 1;
                    let barred = anyone_barred
                        && known
                            .jobs
                            .get(&(job as i64))
                            .and_then(|k| k.pending.as_ref())
                            .is_some_and(|p| !p.borrowed && !rights.may_preempt(&p.spec.project));
                    let shape = if barred { why::without_preemption(&shape) } else { shape };
                    whys.note(job as i64, shape, Some(skipped));
                    still_waiting.push(job as i64);
                }
            }
        }
        // 3b. Room that elastic jobs give back, for jobs that fit nowhere as things are.
        if !still_waiting.is_empty() {
            let rooms = self.shrink_rooms(&known, &still_waiting, &views, &decided, &rights, now).await?;
            let dispatched: std::collections::HashSet<i64> = rooms.iter().map(|(n, _)| n.job_id).collect();
            still_waiting.retain(|j| !dispatched.contains(j));
            whys.forget(&dispatched);
            report.waiting -= dispatched.len();
            decided.extend(rooms);
        }
        // 3c. Room that moving jobs makes (the agent consolidates), for jobs still waiting.
        if !still_waiting.is_empty() {
            let rooms = self.consolidation_rooms(&known, &still_waiting, &views, &decided, now);
            let dispatched: std::collections::HashSet<i64> = rooms.iter().map(|(n, _)| n.job_id).collect();
            still_waiting.retain(|j| !dispatched.contains(j));
            whys.forget(&dispatched);
            report.waiting -= dispatched.len();
            decided.extend(rooms);
        }
        for chunk in decided.chunks(DISPATCH_BATCH) {
            let batch: Vec<store::NewDispatch> = chunk.iter().map(|(n, _)| n.clone()).collect();
            let mut tx = self.pool.begin().await?;
            let recorded = match store::record_dispatches(&mut tx, &batch, ACTOR).await {
                Ok(ids) => {
                    tx.commit().await?;
                    ids
                }
                Err(e) => {
                    tracing::warn!(error = %e, jobs = batch.len(), "could not record dispatches; planned again next round");
                    continue;
                }
            };
            let recorded: std::collections::HashSet<i64> = recorded.into_iter().collect();
            let mut outgoing = Vec::new();
            let mut predicted = Vec::new();
            for (n, reservation) in chunk.iter().filter(|(n, _)| recorded.contains(&n.job_id)) {
                self.metrics.dispatches.inc();
                if n.epoch > 1 {
                    self.metrics.redispatches.inc();
                }
                if let Some(v) = views.iter_mut().find(|v| v.id == n.cluster) {
                    v.reservations.push(reservation.clone());
                }
                report.dispatched.push((n.job_id, n.cluster.clone(), n.epoch));
                let Some(p) = known.jobs.get(&n.job_id).and_then(|k| k.pending.as_ref()) else { continue };
                let mut spec = p.spec.clone();
                spec.may_preempt = rights.may_preempt(&spec.project);
                spec.predicted_runtime_s = self.predicted_p90(&spec).await;
                predicted.extend(spec.predicted_runtime_s.map(|s| (n.job_id, n.epoch, s)));
                let cmd = Command::Dispatch {
                    job: Box::new(spec),
                    epoch: n.epoch as u64,
                    answer_by_ms: Some(n.answer_by.timestamp_millis()),
                };
                outgoing.push((n.cluster.clone(), n.job_id, n.epoch, cmd));
            }
            self.record_predictions(&predicted).await;
            self.send_all(&mut report, outgoing, Sent::Dispatch).await;
        }
        self.record_why_pending(&whys, &mut known).await?;
        self.waiting = known;
        self.metrics.waiting.set(i64::try_from(report.waiting).unwrap_or(i64::MAX));

        // 4. Reclaim for waiting jobs within their guarantee.
        let mut time_dependent = false;
        if !still_waiting.is_empty() {
            time_dependent = self.reclaim(&mut report, &still_waiting, &views, &rights, shares.as_ref(), now).await?;
        }

        // 5. Owed commands.
        self.send_owed(&mut report).await?;
        if report.dispatched.is_empty() && report.evicted.is_empty() && report.timed_out.is_empty() {
            self.memo = Some(PlanMemo { last_event, views: seen, at: now, waiting: report.waiting, time_dependent });
        }
        Ok(report)
    }

    /// Dispatches for the `waiting` jobs (ids) that fit once elastic jobs give back their
    /// spare replicas, on the views less this round's `decided` dispatches.
    async fn shrink_rooms(
        &self,
        known: &KnownWaiting,
        waiting: &[i64],
        views: &[ClusterView],
        decided: &[(store::NewDispatch, crate::allocator::Reservation)],
        rights: &ReclaimRights,
        now: DateTime<Utc>,
    ) -> Result<Vec<(store::NewDispatch, crate::allocator::Reservation)>, DispatchError> {
        let rows = store::elastic_above_minimum(&self.pool).await?;
        let elastic: Vec<_> = rows.iter().filter_map(views::elastic_job).collect();
        if elastic.is_empty() {
            return Ok(Vec::new());
        }
        let waiting: Vec<PendingJob> = waiting.iter().filter_map(|id| known.jobs.get(id)?.pending.clone()).collect();
        let views = with_decided(views, decided);
        let planned = plan_shrink_room(&waiting, &elastic, &views, now, self.cfg.reservation_ttl, rights);
        Ok(planned
            .into_iter()
            .map(|r| {
                let shrinking = r.shrinking.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
                let why = format!("room from elastic job(s) {shrinking} giving back replicas above their minimum");
                self.new_dispatch(r.job, r.cluster, r.epoch, r.reservation, Some(&why), now)
            })
            .collect())
    }

    /// Dispatches for the `waiting` jobs (ids) of whole GPUs that fit once jobs the agent may
    /// move give up their nodes, on the views less this round's `decided` dispatches.
    fn consolidation_rooms(
        &self,
        known: &KnownWaiting,
        waiting: &[i64],
        views: &[ClusterView],
        decided: &[(store::NewDispatch, crate::allocator::Reservation)],
        now: DateTime<Utc>,
    ) -> Vec<(store::NewDispatch, crate::allocator::Reservation)> {
        let movable = views.iter().any(|v| v.capacity.models.iter().any(|m| !m.movable_per_node.is_empty()));
        if !movable {
            return Vec::new();
        }
        let waiting: Vec<PendingJob> = waiting.iter().filter_map(|id| known.jobs.get(id)?.pending.clone()).collect();
        let views = with_decided(views, decided);
        plan_consolidation_room(&waiting, &views, now, self.cfg.reservation_ttl)
            .into_iter()
            .map(|r| {
                let why = format!(
                    "free GPUs there are scattered; running jobs holding {} GPU(s) move to other nodes to make \
                     room (consolidation)",
                    r.moved_gpus
                );
                self.new_dispatch(r.job, r.cluster, r.epoch, r.reservation, Some(&why), now)
            })
            .collect()
    }

    /// A dispatch to record, with its reservation; `why`: the room it goes into, when running
    /// jobs make it.
    fn new_dispatch(
        &self,
        job: u64,
        cluster: String,
        epoch: u64,
        reservation: crate::allocator::Reservation,
        why: Option<&str>,
        now: DateTime<Utc>,
    ) -> (store::NewDispatch, crate::allocator::Reservation) {
        let verb = if epoch > 1 { "re-dispatched" } else { "dispatched" };
        let why = why.map(|w| format!(": {w}")).unwrap_or_default();
        let new = store::NewDispatch {
            job_id: job as i64,
            cause: format!("{verb} to {cluster} (epoch {epoch}){why}"),
            cluster,
            epoch: epoch as i64,
            reservation: store::reservation_json(&reservation.gpus, reservation.cpu_milli, reservation.memory_mib),
            answer_by: now + self.cfg.dispatch_timeout,
        };
        (new, reservation)
    }

    /// Evicts borrowed work for the `waiting` jobs (ids) within their guarantee. Returns whether
    /// any running job could be a victim: the plan then depends on time (minimum run times).
    async fn reclaim(
        &mut self,
        report: &mut RoundReport,
        waiting: &[i64],
        views: &[ClusterView],
        rights: &ReclaimRights,
        shares: Option<&FleetShares>,
        now: DateTime<Utc>,
    ) -> Result<bool, DispatchError> {
        let rows = store::running_jobs(&self.pool).await?;
        let running: Vec<_> = rows.iter().filter_map(views::running_job).collect();
        // Only borrowed work can be a victim: without any, there is nothing to plan.
        if !running.iter().any(|r| r.borrowed && r.preemptible) {
            return Ok(false);
        }
        let waiting: Vec<PendingJob> = waiting
            .iter()
            .filter_map(|id| self.waiting.jobs.get(id)?.pending.clone())
            // Borrowed jobs reclaim only to their fair share (the planner checks it).
            .filter(|p| !p.borrowed || shares.is_some())
            .collect();
        if waiting.is_empty() {
            return Ok(false);
        }
        // Evictions already decided: their capacity is as good as free for this plan.
        let evicting_rows = store::evicting_jobs(&self.pool).await?;
        let evicting: Vec<_> = evicting_rows.iter().filter_map(views::running_job).collect();
        let cfg = ReclaimConfig { grace_s: u64::from(self.cfg.evict_grace_s), ..ReclaimConfig::default() };
        let planned = match shares {
            Some(shares) => plan_reclaim_fair(shares, &waiting, &running, &evicting, views, now, &cfg, rights),
            None => plan_reclaim_with_evictions(&waiting, &running, &evicting, views, now, &cfg, rights),
        };
        for ev in planned {
            let (job, epoch) = (ev.job as i64, ev.epoch as i64);
            let cause = format!(
                "reclaim: evicted from {} to make room for job {} {}",
                ev.cluster,
                ev.for_job,
                ev.ground.describe()
            );
            let by = Cause { cause: &cause, actor: ACTOR };
            let mut tx = self.pool.begin().await?;
            let hold = store::HoldRow {
                job_id: ev.for_job as i64,
                cluster_id: ev.cluster.clone(),
                reservation: store::reservation_json(&ev.hold.gpus, ev.hold.cpu_milli, ev.hold.memory_mib),
                expires_at: ev.hold.expires_at,
            };
            let for_job = Some(ev.for_job as i64);
            let recorded = match store::record_evict(&mut tx, job, epoch, self.cfg.evict_grace_s, for_job, by).await {
                Ok(true) => store::record_hold(&mut *tx, &hold).await.map(|()| true),
                other => other,
            };
            match recorded {
                Ok(true) => tx.commit().await?,
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!(job, error = %e, "could not record the eviction");
                    continue;
                }
            }
            self.metrics.evictions.inc();
            let hold = Some(EvictionHold { job: ev.for_job, ttl_s: hold_ttl_s(ev.hold.expires_at, now) });
            let cmd = Command::Evict { job: ev.job, grace_s: self.cfg.evict_grace_s, epoch: ev.epoch, hold };
            if self.send(report, &ev.cluster, job, epoch, Sent::Evict, cmd).await {
                self.mark(&[(job, epoch)], Sent::Evict).await;
            }
            report.evicted.push((job, ev.cluster, epoch));
        }
        Ok(true)
    }

    /// Redis's clock and the clusters of `overdue` whose event streams hold nothing
    /// un-ingested from before their latest overdue deadline, or `None` when Redis cannot say
    /// (then nothing times out).
    async fn answer_clock(&self, overdue: &[store::OverdueDispatch]) -> Option<(DateTime<Utc>, BTreeSet<String>)> {
        let mut conn = self.publisher.connection();
        let group = keys::api_group(self.publisher.control_plane().unwrap_or("unstamped"));
        let mut latest: HashMap<&str, DateTime<Utc>> = HashMap::new();
        for d in overdue {
            let at = latest.entry(d.cluster_id.as_str()).or_insert(d.deadline);
            *at = (*at).max(d.deadline);
        }
        let deadlines: Vec<(String, DateTime<Utc>)> = latest.into_iter().map(|(c, d)| (c.to_owned(), d)).collect();
        let read = async {
            let redis_now = event_streams::redis_now(&mut conn).await?;
            let ingested = event_streams::ingested_before(&mut conn, &group, &deadlines).await?;
            Ok::<_, redis::RedisError>((redis_now, ingested))
        };
        read.await.map_err(|e| tracing::debug!(error = %e, "cannot read Redis's clock or the event streams")).ok()
    }

    /// Stores the round's whyPending: the shapes whose reasons changed, then the references of
    /// jobs that do not point at their shape yet. Rows no waiting job refers to are pruned
    /// every [`WHY_PRUNE_EVERY`].
    async fn record_why_pending(&mut self, whys: &RoundWhys, known: &mut KnownWaiting) -> Result<(), DispatchError> {
        if self.why_pruned.is_none_or(|t| t.elapsed() >= WHY_PRUNE_EVERY) {
            store::prune_why_shapes(&self.pool).await?;
            self.why_shapes.forget();
            self.why_pruned = Some(std::time::Instant::now());
        }
        let written = store::record_why_shapes(&self.pool, &self.why_shapes.to_write(whys)).await?;
        self.why_shapes.written(whys, written);
        let references = self.why_shapes.references(whys, &mut known.jobs, |j| &mut j.why);
        store::refer_why_pending(&self.pool, &references).await?;
        Ok(())
    }

    /// The run time the job's history predicts (p90), for the cluster's backfill; none when
    /// the history cannot be read (the dispatch goes without it).
    async fn predicted_p90(&self, spec: &grus_protocol::wire::JobSpec) -> Option<u64> {
        match self.runtimes.predict(spec).await {
            Ok(p) => p.map(|p| p.p90_s),
            Err(e) => {
                tracing::warn!(error = %e, job = spec.id, "could not read the run time history");
                None
            }
        }
    }

    /// Keeps the run times predicted for dispatches with them, for budgets to count running
    /// work's cost ahead by (`db::budgets`). Best effort: a failure costs the budgets an
    /// estimate, never the dispatch.
    async fn record_predictions(&self, predicted: &[(i64, i64, u64)]) {
        if predicted.is_empty() {
            return;
        }
        if let Err(e) = store::record_predicted_runtimes(&self.pool, predicted).await {
            tracing::warn!(error = %e, "could not record the predicted run times of dispatches");
        }
    }

    /// Sends every command that is owed and not confirmed sent.
    async fn send_owed(&mut self, report: &mut RoundReport) -> Result<(), DispatchError> {
        let mut outgoing = Vec::new();
        let mut predicted = Vec::new();
        let unsent = store::unsent_dispatches(&self.pool).await?;
        let rights = if unsent.is_empty() { Arc::default() } else { self.rights().await? };
        for o in unsent {
            match wire_spec(&o) {
                Some(mut spec) => {
                    spec.may_preempt = rights.may_preempt(&spec.project);
                    spec.predicted_runtime_s = self.predicted_p90(&spec).await;
                    predicted.extend(spec.predicted_runtime_s.map(|s| (o.job_id, o.epoch, s)));
                    let answer_by_ms = o.answer_by.map(|t| t.timestamp_millis());
                    let cmd = Command::Dispatch { job: Box::new(spec), epoch: o.epoch as u64, answer_by_ms };
                    outgoing.push((o.cluster_id, o.job_id, o.epoch, cmd));
                }
                None => tracing::error!(job = o.job_id, "stored spec of a dispatched job does not decode"),
            }
        }
        self.record_predictions(&predicted).await;
        // After Redis lost its data this is every unanswered dispatch: pipelines of a bounded
        // size, each within the connection's response timeout.
        while !outgoing.is_empty() {
            let rest = outgoing.split_off(outgoing.len().min(DISPATCH_BATCH));
            self.send_all(report, outgoing, Sent::Dispatch).await;
            outgoing = rest;
        }
        let mut sent = Vec::new();
        for o in store::owed_cancels(&self.pool).await? {
            let cmd = Command::Cancel { job: o.job_id as u64, epoch: o.epoch as u64 };
            if self.send(report, &o.cluster_id, o.job_id, o.epoch, Sent::Cancel, cmd).await {
                sent.push((o.job_id, o.epoch));
            }
        }
        self.mark(&sent, Sent::Cancel).await;
        let mut sent = Vec::new();
        for o in store::owed_evicts(&self.pool).await? {
            let grace_s = o.grace_s.and_then(|g| u32::try_from(g).ok()).unwrap_or(self.cfg.evict_grace_s);
            let hold = match (o.hold_for, o.hold_until) {
                (Some(job), Some(until)) if until > Utc::now() => {
                    Some(EvictionHold { job: job as u64, ttl_s: hold_ttl_s(until, Utc::now()) })
                }
                _ => None,
            };
            let cmd = Command::Evict { job: o.job_id as u64, grace_s, epoch: o.epoch as u64, hold };
            if self.send(report, &o.cluster_id, o.job_id, o.epoch, Sent::Evict, cmd).await {
                sent.push((o.job_id, o.epoch));
            }
        }
        self.mark(&sent, Sent::Evict).await;
        Ok(())
    }

    /// One XADD. A failure leaves the command owed (logged here); returns whether it went out.
    async fn send(
        &self,
        report: &mut RoundReport,
        cluster: &str,
        job: i64,
        epoch: i64,
        what: Sent,
        cmd: Command,
    ) -> bool {
        let id = message_id(what, job, epoch);
        match self.publisher.send(cluster, &id, Utc::now().timestamp_millis(), cmd).await {
            Ok(_) => {
                report.sent += 1;
                true
            }
            Err(e) => {
                report.send_failures += 1;
                tracing::warn!(job, epoch, cluster, error = %e, "command not sent; retried next round");
                false
            }
        }
    }

    /// Sends `commands` (cluster, job, epoch, command) in one pipeline and records them as
    /// sent; on an error all stay owed (logged here) and go again next round.
    async fn send_all(&self, report: &mut RoundReport, commands: Vec<(String, i64, i64, Command)>, what: Sent) {
        if commands.is_empty() {
            return;
        }
        let sent: Vec<(i64, i64)> = commands.iter().map(|(_, job, epoch, _)| (*job, *epoch)).collect();
        let batch = commands.into_iter().map(|(c, job, epoch, cmd)| (c, message_id(what, job, epoch), cmd)).collect();
        match self.publisher.send_all(batch, Utc::now().timestamp_millis()).await {
            Ok(()) => {
                report.sent += sent.len();
                self.mark(&sent, what).await;
            }
            Err(e) => {
                report.send_failures += sent.len();
                tracing::warn!(commands = sent.len(), error = %e, "commands not sent; retried next round");
            }
        }
    }

    /// Records commands as sent. If this fails they are re-sent next round under the same
    /// message ids, which the agent recognises.
    async fn mark(&self, sent: &[(i64, i64)], what: Sent) {
        if let Err(e) = store::mark_sent(&self.pool, sent, what).await {
            tracing::warn!(commands = sent.len(), error = %e, "could not record sent commands");
        }
    }
}

/// The message id of a command: the same for every re-send of it.
pub fn message_id(what: Sent, job: i64, epoch: i64) -> String {
    let kind = match what {
        Sent::Dispatch => "dispatch",
        Sent::Cancel => "cancel",
        Sent::Evict => "evict",
    };
    format!("{kind}:{job}:{epoch}")
}

/// The wire spec of a stored job (row id, priority and submission time win over the spec's).
fn wire_spec(o: &OwedCommand) -> Option<JobSpec> {
    let mut spec: JobSpec = serde_json::from_value(o.spec.clone()).ok()?;
    spec.id = u64::try_from(o.job_id).ok()?;
    spec.priority = o.priority;
    spec.submitted_at_ms = o.submitted_at.timestamp_millis();
    Some(spec)
}

/// The views with this round's `decided` dispatches reserved.
fn with_decided(
    views: &[ClusterView],
    decided: &[(store::NewDispatch, crate::allocator::Reservation)],
) -> Vec<ClusterView> {
    let mut views = views.to_vec();
    for (n, reservation) in decided {
        if let Some(v) = views.iter_mut().find(|v| v.id == n.cluster) {
            v.reservations.push(reservation.clone());
        }
    }
    views
}
