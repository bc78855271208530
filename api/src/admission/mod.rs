//! Admission of jobs against their queues' quotas (invariant 5: a quota limit is never
//! exceeded, even by concurrent submissions).
//!
//! The arithmetic is pure ([`demand`], [`decide`], [`plan_batch`]) and tested without a
//! database. The shell ([`admit_batch`], [`admit`], [`admit_in`], [`readmit`]) runs it inside
//! one transaction that first locks the queue rows (`FOR NO KEY UPDATE`, in id order). Quotas
//! are per queue, so every admission that could push a queue past a limit serializes on that
//! row, and under READ COMMITTED each statement after the lock sees every job the previous lock
//! holder committed: the usage it reads is current. Usage is kept by triggers as deltas, folded
//! now and then under the lock ([`db::lock_queues_for_admission`]), so reading it costs the same
//! however many jobs the queue holds.
//!
//! Submissions are admitted in batches ([`batcher`]): one transaction locks every queue of the
//! batch, decides the submissions in arrival order as if one after another ([`plan_batch`]) and
//! inserts the admitted ones in one statement. Per job, that is a fraction of a transaction of
//! its own (BENCHMARKS.md "Control plane API").
//!
//! Lock order across the crate: queues (ascending id), then job rows. A caller that wants to
//! change jobs in the same transaction calls admission first; locking a job and then admitting
//! could deadlock against a [`readmit`] of that job.
//!
//! `FOR NO KEY UPDATE` rather than `FOR UPDATE`: it still excludes other admissions, but not
//! the `FOR KEY SHARE` locks that foreign-key checks take, so inserting jobs of the queue
//! elsewhere (tests, imports) does not wait for an admission.
//!
//! The admitting transaction holds the locks until its commit is flushed, so it is kept to
//! two statements: lock (with the quotas and the usage, one SQL function), insert the jobs
//! whole.

pub mod batcher;

use std::collections::{BTreeMap, BTreeSet};

use grus_protocol::wire::ResourcesSpec;
use sqlx::{PgConnection, PgPool};

use crate::db::{self, fair_share, AdmittedJob, Cause, DbError, DbResult, Job, LockedQueue, NewJob, Quota};
use crate::domain::{JobState, QuotaLevel, WorkloadType};

/// Amounts per quota key (`gpu`, `gpu/<model>`, `pool/<pool>` in GPU milli; `cpu_milli`;
/// `memory_mib`).
pub type Amounts = BTreeMap<String, i64>;

pub use crate::domain::{QuotaKey, GPU, INTERACTIVE};

/// The GPU models and node pools a queue has quotas for (keys `gpu/<model>`, `pool/<pool>`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaScopes {
    pub models: BTreeSet<String>,
    pub pools: BTreeSet<String>,
}

/// What a job charges against quotas. A task allowing several GPU models is charged in full
/// against each of them (it may land on any), and a task naming no model is charged against
/// every model the queue has a quota for: conservative, so no placement can take a model beyond
/// its limit. Node pools the same way: the job's GPUs are charged to each pool it names, or,
/// naming none, to each pool the queue has a quota for. Every GPU request is also charged to
/// [`GPU`].
pub fn demand<'a>(
    tasks: impl IntoIterator<Item = (u32, &'a ResourcesSpec)>,
    pools: &[String],
    scopes: &QuotaScopes,
) -> Amounts {
    let queue_models = &scopes.models;
    let mut out = Amounts::new();
    let mut add = |key: String, amount: u64| {
        if amount > 0 {
            let amount = i64::try_from(amount).unwrap_or(i64::MAX);
            let slot = out.entry(key).or_insert(0);
            *slot = slot.saturating_add(amount);
        }
    };
    for (replicas, r) in tasks {
        let replicas = u64::from(replicas);
        let per_gpu = u64::from(r.gpu_milli.unwrap_or(1000));
        let gpu = replicas.saturating_mul(u64::from(r.gpus)).saturating_mul(per_gpu);
        if gpu > 0 {
            add(GPU.to_owned(), gpu);
            let models: Vec<&String> =
                if r.gpu_models.is_empty() { queue_models.iter().collect() } else { r.gpu_models.iter().collect() };
            // A task listing a model twice is charged once for it.
            let models: BTreeSet<&String> = models.into_iter().collect();
            for m in models {
                add(format!("gpu/{m}"), gpu);
            }
        }
        add("cpu_milli".to_owned(), replicas.saturating_mul(r.cpu_milli));
        add("memory_mib".to_owned(), replicas.saturating_mul(r.memory_mib));
    }
    if let Some(&gpu) = out.get(GPU) {
        let named: BTreeSet<&String> =
            if pools.is_empty() { scopes.pools.iter().collect() } else { pools.iter().collect() };
        for p in named {
            out.insert(format!("pool/{p}"), gpu);
        }
    }
    out
}

/// What `job` charges: [`demand`] over its tasks and, for an interactive workspace, its GPUs
/// again under [`INTERACTIVE`] (what its queue's interactive reserve is measured against).
pub fn job_demand(job: &NewJob, scopes: &QuotaScopes) -> Amounts {
    let mut want = demand(job.tasks.iter().map(|t| (t.replicas, &t.resources)), &job.pools, scopes);
    if WorkloadType::of_spec(&job.spec) == WorkloadType::Workspace {
        if let Some(&gpu) = want.get(GPU) {
            want.insert(INTERACTIVE.to_owned(), gpu);
        }
    }
    want
}

/// How an exceeded `gpu` quota is named when the interactive reserve narrowed it.
pub const GPU_LESS_RESERVE: &str = "gpu (less the part of the queue's interactive reserve that workspaces do not use)";

/// [`decide`] in a queue with an interactive reserve of `reserve` GPU milli (at most its `gpu`
/// guarantee counts; without a `gpu` quota it has no effect). Work other than a workspace is
/// admitted as if the `gpu` guarantee and limit were smaller by the part of the reserve the
/// queue's workspaces do not hold, so batch work never holds more than guarantee − reserve
/// unborrowed, nor more than limit − reserve. A workspace within the reserve is therefore never
/// refused for `gpu` nor borrowed for it, even after batch work borrowed beyond the guarantee:
/// the batch work is the borrower. A workspace beyond the reserve is decided as any work.
pub fn decide_in_queue(quotas: &[Quota], usage: &Amounts, want: &Amounts, can_borrow: bool, reserve: i64) -> Verdict {
    let Some(gpu) = quotas.iter().find(|q| q.resource == GPU) else {
        return decide(quotas, usage, want, can_borrow);
    };
    let reserve = reserve.min(gpu.guaranteed);
    let amount = |a: &Amounts, key: &str| a.get(key).copied().unwrap_or(0);
    let held_by_workspaces = amount(usage, INTERACTIVE);
    let with_gpu_row = |guaranteed: i64, limit: Option<i64>| -> Vec<Quota> {
        quotas
            .iter()
            .map(|q| match q.resource == GPU {
                true => Quota { resource: q.resource.clone(), guaranteed, limit },
                false => q.clone(),
            })
            .collect()
    };
    if reserve <= 0 {
        return decide(quotas, usage, want, can_borrow);
    }
    if want.contains_key(INTERACTIVE) {
        let within = held_by_workspaces.saturating_add(amount(want, INTERACTIVE)) <= reserve;
        if !within || !can_borrow {
            return decide(quotas, usage, want, can_borrow);
        }
        let after = amount(usage, GPU).saturating_add(amount(want, GPU));
        return decide(&with_gpu_row(gpu.guaranteed.max(after), gpu.limit), usage, want, can_borrow);
    }
    let held = reserve.saturating_sub(held_by_workspaces).max(0);
    if held == 0 {
        return decide(quotas, usage, want, can_borrow);
    }
    let narrowed = with_gpu_row(gpu.guaranteed - held, gpu.limit.map(|l| l.saturating_sub(held).max(0)));
    match decide(&narrowed, usage, want, can_borrow) {
        Verdict::Exceeded { resource, used, demand, limit } if resource == GPU => {
            Verdict::Exceeded { resource: GPU_LESS_RESERVE.to_owned(), used, demand, limit }
        }
        other => other,
    }
}

/// The GPU models and pools a queue has quotas for.
pub fn quota_scopes(quotas: &[Quota]) -> QuotaScopes {
    let under = |prefix: &str| -> BTreeSet<String> {
        quotas.iter().filter_map(|q| q.resource.strip_prefix(prefix)).map(str::to_owned).collect()
    };
    QuotaScopes { models: under("gpu/"), pools: under("pool/") }
}

/// Outcome of the quota arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Fits under every limit; `borrowed` when some resource goes beyond its guarantee.
    Admit { borrowed: bool },
    /// `used + demand` would pass `limit` for `resource`. When the queue cannot borrow, the
    /// guarantee is the limit.
    Exceeded { resource: String, used: i64, demand: i64, limit: i64 },
}

/// Decides admission of `demand` on top of `usage`. Resources without a quota row are not
/// constrained. Pure.
pub fn decide(quotas: &[Quota], usage: &Amounts, demand: &Amounts, can_borrow: bool) -> Verdict {
    let mut borrowed = false;
    for q in quotas {
        let want = demand.get(&q.resource).copied().unwrap_or(0);
        if want == 0 {
            continue;
        }
        let used = usage.get(&q.resource).copied().unwrap_or(0);
        let after = used.saturating_add(want);
        let exceeded = |limit: i64| Verdict::Exceeded { resource: q.resource.clone(), used, demand: want, limit };
        if let Some(limit) = q.limit {
            if after > limit {
                return exceeded(limit);
            }
        }
        if after > q.guaranteed {
            if !can_borrow {
                return exceeded(q.guaranteed);
            }
            borrowed = true;
        }
    }
    Verdict::Admit { borrowed }
}

/// What [`plan_batch`] decided for one submission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// Admit it, charging `demand`; `borrowed` as in [`Verdict::Admit`].
    Admit { demand: Amounts, borrowed: bool },
    /// Refused: `used + demand` would pass `limit` for `resource` of the queue, project or
    /// tenant named `name`.
    Exceeded { level: QuotaLevel, name: String, resource: String, used: i64, limit: i64 },
    /// The job's queue was not locked: it is not (or no longer) a queue of the job's project.
    NoQueue,
}

/// A project's or tenant's limits, and what its queues together are admitted for now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelLimit {
    pub name: String,
    /// (quota key, limit).
    pub limits: Vec<(String, i64)>,
    pub usage: Amounts,
}

/// The limits above the queues of a batch (empty in the common case: nobody set any).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelLimits {
    /// Projects with limits, by id.
    pub projects: BTreeMap<i64, LevelLimit>,
    /// Tenants with limits, by id.
    pub tenants: BTreeMap<i64, LevelLimit>,
    /// Each project's tenant, for every project of the batch and every project whose queues'
    /// usage counts toward a limit.
    pub tenant_of: BTreeMap<i64, i64>,
}

impl LevelLimits {
    pub fn is_empty(&self) -> bool {
        self.projects.is_empty() && self.tenants.is_empty()
    }

    /// The project's limit and its tenant's, those that exist.
    fn above(&self, project: i64) -> impl Iterator<Item = (QuotaLevel, &LevelLimit)> {
        let tenant = self.tenant_of.get(&project).and_then(|t| self.tenants.get(t));
        let project = self.projects.get(&project);
        project.map(|l| (QuotaLevel::Project, l)).into_iter().chain(tenant.map(|l| (QuotaLevel::Tenant, l)))
    }

    /// Adds the usage of the locked `queues` to the levels they count toward.
    pub fn count_usage(&mut self, queues: &BTreeMap<i64, LockedQueue>) {
        for q in queues.values() {
            let tenant = self.tenant_of.get(&q.project_id).copied();
            let levels = [self.projects.get_mut(&q.project_id), tenant.and_then(|t| self.tenants.get_mut(&t))];
            for level in levels.into_iter().flatten() {
                add(&mut level.usage, q.usage.iter().map(|(r, a)| (r, *a)));
            }
        }
    }

    /// The GPU models and pools a job of `project` is charged for, beyond its queue's: those
    /// the project's and tenant's limits name (a job naming no model is charged against each).
    fn scopes(&self, project: i64, queue: &QuotaScopes) -> QuotaScopes {
        let mut scopes = queue.clone();
        for (_, level) in self.above(project) {
            let more = quota_scopes(
                &level
                    .limits
                    .iter()
                    .map(|(r, _)| Quota { resource: r.clone(), guaranteed: 0, limit: None })
                    .collect::<Vec<_>>(),
            );
            scopes.models.extend(more.models);
            scopes.pools.extend(more.pools);
        }
        scopes
    }

    /// The first limit above a job of `project` that `want` would pass.
    pub fn exceeded(&self, project: i64, want: &Amounts) -> Option<Planned> {
        for (level, l) in self.above(project) {
            for (resource, limit) in &l.limits {
                let asked = want.get(resource).copied().unwrap_or(0);
                let used = l.usage.get(resource).copied().unwrap_or(0);
                if asked > 0 && used.saturating_add(asked) > *limit {
                    let (name, resource, used, limit) = (l.name.clone(), resource.clone(), used, *limit);
                    return Some(Planned::Exceeded { level, name, resource, used, limit });
                }
            }
        }
        None
    }

    /// Charges an admitted job's demand to the levels above it.
    fn charge(&mut self, project: i64, want: &Amounts) {
        let tenant = self.tenant_of.get(&project).copied();
        let levels = [self.projects.get_mut(&project), tenant.and_then(|t| self.tenants.get_mut(&t))];
        for level in levels.into_iter().flatten() {
            add(&mut level.usage, want.iter().map(|(r, a)| (r, *a)));
        }
    }
}

fn add<'a>(to: &mut Amounts, amounts: impl IntoIterator<Item = (&'a String, i64)>) {
    for (resource, amount) in amounts {
        let slot = to.entry(resource.clone()).or_insert(0);
        *slot = slot.saturating_add(amount);
    }
}

/// Decides a batch of jobs in arrival order against their locked queues and the limits above
/// them: each admitted job's demand is added to its queue's usage, and its project's and
/// tenant's, before the next job is decided, so the outcome is the one of admitting the jobs
/// one after another. Pure.
pub fn plan_batch<'a>(
    queues: &BTreeMap<i64, LockedQueue>,
    levels: &LevelLimits,
    jobs: impl IntoIterator<Item = &'a NewJob>,
) -> Vec<Planned> {
    let mut levels = levels.clone();
    let mut usage: BTreeMap<i64, Amounts> =
        queues.iter().map(|(id, q)| (*id, q.usage.iter().cloned().collect())).collect();
    let scopes: BTreeMap<i64, QuotaScopes> =
        queues.iter().map(|(id, q)| (*id, levels.scopes(q.project_id, &quota_scopes(&q.quotas)))).collect();
    let mut out = Vec::new();
    for job in jobs {
        let (Some(locked), Some(used)) = (queues.get(&job.queue_id), usage.get_mut(&job.queue_id)) else {
            out.push(Planned::NoQueue);
            continue;
        };
        if locked.project_id != job.project_id {
            out.push(Planned::NoQueue);
            continue;
        }
        let want = job_demand(job, &scopes[&job.queue_id]);
        out.push(match decide_in_queue(&locked.quotas, used, &want, locked.can_borrow, locked.interactive_reserve) {
            Verdict::Admit { borrowed } => match levels.exceeded(job.project_id, &want) {
                Some(above) => above,
                None => {
                    add(used, want.iter().map(|(r, a)| (r, *a)));
                    levels.charge(job.project_id, &want);
                    Planned::Admit { demand: want, borrowed }
                }
            },
            Verdict::Exceeded { resource, used, limit, .. } => {
                Planned::Exceeded { level: QuotaLevel::Queue, name: locked.name.clone(), resource, used, limit }
            }
        });
    }
    out
}

/// Result of an admission attempt.
#[derive(Clone, Debug, PartialEq)]
pub enum Admission {
    /// The job is stored in state `admitted`; borrowed work is preemptible.
    Admitted { job: Job, borrowed: bool },
    /// Nothing was stored; the client sees which quota or limit is full.
    QuotaExceeded { level: QuotaLevel, name: String, resource: String, used: i64, limit: i64 },
    /// Nothing was stored: the project's or its tenant's hard budget is spent this month.
    BudgetExceeded(db::budgets::BudgetRefusal),
}

/// One submission of a batch: the validated job and who submitted it.
#[derive(Clone, Copy, Debug)]
pub struct Submission<'a> {
    pub job: &'a NewJob,
    pub by: Cause<'a>,
}

/// Admits and inserts `job` in its own transaction (committed only when admitted).
pub async fn admit(pool: &PgPool, job: &NewJob, by: Cause<'_>) -> DbResult<Admission> {
    let mut outcomes = admit_batch(pool, &[Submission { job, by }]).await;
    outcomes.pop().expect("one outcome per submission")
}

/// Admits a batch of submissions in one transaction, committed when any was admitted, and
/// returns one outcome per submission, in order. When a statement of the batch fails (a job
/// breaking a constraint of the schema, say), the batch is rolled back and each submission is
/// admitted again in a transaction of its own, so that only the bad one fails. A failed commit
/// fails the whole batch: whether it committed is then unknown, and trying again could admit a
/// job twice.
pub async fn admit_batch(pool: &PgPool, batch: &[Submission<'_>]) -> Vec<DbResult<Admission>> {
    match try_batch(pool, batch).await {
        Ok(outcomes) => outcomes,
        Err(BatchError::Statement(err)) if batch.len() > 1 => {
            tracing::warn!(error = %err, source = ?std::error::Error::source(&err), jobs = batch.len(),
                "an admission batch failed: admitting its jobs one by one");
            let mut outcomes = Vec::with_capacity(batch.len());
            for one in batch.chunks(1) {
                outcomes.push(match try_batch(pool, one).await {
                    Ok(mut single) => single.pop().expect("one outcome per submission"),
                    Err(BatchError::Statement(err) | BatchError::Commit(err)) => Err(err),
                });
            }
            outcomes
        }
        Err(BatchError::Statement(err) | BatchError::Commit(err)) if batch.len() == 1 => vec![Err(err)],
        Err(BatchError::Statement(err) | BatchError::Commit(err)) => {
            tracing::error!(error = %err, source = ?std::error::Error::source(&err), jobs = batch.len(),
                "an admission batch failed");
            // Every submission gets the error (`DbError` is not `Clone`); the log above has its cause.
            let detail = format!("{:?}", std::error::Error::source(&err));
            batch
                .iter()
                .map(|_| Err(DbError::Internal(sqlx::Error::Protocol(format!("admission batch failed: {detail}")))))
                .collect()
        }
    }
}

/// Why a batch's transaction failed: before its commit (nothing was stored), or at it.
enum BatchError {
    Statement(DbError),
    Commit(DbError),
}

async fn try_batch(pool: &PgPool, batch: &[Submission<'_>]) -> Result<Vec<DbResult<Admission>>, BatchError> {
    let mut tx = pool.begin().await.map_err(|e| BatchError::Statement(e.into()))?;
    let outcomes = admit_batch_in(&mut tx, batch).await.map_err(BatchError::Statement)?;
    if outcomes.iter().any(|o| matches!(o, Ok(Admission::Admitted { .. }))) {
        tx.commit().await.map_err(|e| BatchError::Commit(e.into()))?;
    }
    Ok(outcomes)
}

/// [`admit`] inside the caller's transaction (which must be READ COMMITTED, the default: a
/// REPEATABLE READ snapshot taken before the lock would miss jobs admitted meanwhile). On
/// `QuotaExceeded` nothing was written.
pub async fn admit_in(conn: &mut PgConnection, job: &NewJob, by: Cause<'_>) -> DbResult<Admission> {
    let mut outcomes = admit_batch_in(conn, &[Submission { job, by }]).await?;
    outcomes.pop().expect("one outcome per submission")
}

/// [`admit_batch`] inside the caller's transaction (READ COMMITTED, as for [`admit_in`]): locks
/// the batch's queues, plans, inserts the admitted jobs. The outer error is a failed statement
/// (roll back); the inner ones are per submission (a queue that is not the project's, a job the
/// schema cannot hold), and leave nothing of theirs behind.
pub async fn admit_batch_in(conn: &mut PgConnection, batch: &[Submission<'_>]) -> DbResult<Vec<DbResult<Admission>>> {
    let mut queues: Vec<(i64, i64)> = batch.iter().map(|s| (s.job.project_id, s.job.queue_id)).collect();
    queues.sort_unstable();
    queues.dedup();
    let mut projects: Vec<i64> = queues.iter().map(|(p, _)| *p).collect();
    projects.dedup();
    // Spending does not change with admissions (only with running work), so it is read before
    // the locks, which stay held for as short as can be.
    let over_budget = db::budgets::refusals(&mut *conn, &projects, chrono::Utc::now()).await?;
    let (locked, levels) = lock_for_admission(conn, &queues).await?;
    // A job the schema cannot hold, or whose project's budget is spent, is refused before
    // planning, so it charges nothing that the jobs after it would see.
    let checked: Vec<Result<(), Box<DbResult<Admission>>>> = batch
        .iter()
        .map(|s| {
            db::check_insertable(s.job).map_err(|e| Box::new(Err(e)))?;
            match over_budget.get(&s.job.project_id) {
                Some(r) => Err(Box::new(Ok(Admission::BudgetExceeded(r.clone())))),
                None => Ok(()),
            }
        })
        .collect();
    let mut plans =
        plan_batch(&locked, &levels, batch.iter().zip(&checked).filter(|(_, c)| c.is_ok()).map(|(s, _)| s.job))
            .into_iter();
    // Outcomes known now; `None` for the jobs to insert, listed in `admitted` in batch order.
    let mut outcomes: Vec<Option<DbResult<Admission>>> = Vec::with_capacity(batch.len());
    let mut admitted: Vec<ToInsert<'_>> = Vec::new();
    for (submission, check) in batch.iter().zip(checked) {
        if let Err(refused) = check {
            outcomes.push(Some(*refused));
            continue;
        }
        outcomes.push(match plans.next().expect("one plan per checked job") {
            Planned::Admit { demand, borrowed } => {
                admitted.push(ToInsert { submission, demands: demand.into_iter().collect(), borrowed });
                None
            }
            Planned::Exceeded { level, name, resource, used, limit } => {
                Some(Ok(Admission::QuotaExceeded { level, name, resource, used, limit }))
            }
            Planned::NoQueue => Some(Err(DbError::NotFound("queue"))),
        });
    }
    let rows: Vec<AdmittedJob<'_>> = admitted
        .iter()
        .map(|a| AdmittedJob {
            job: a.submission.job,
            demands: &a.demands,
            borrowed: a.borrowed,
            submitted: a.submission.by,
            admitted: if a.borrowed {
                "admitted beyond the queue's guarantee (borrowed)"
            } else {
                "admitted within quota"
            },
        })
        .collect();
    let mut inserted = db::insert_admitted_jobs(conn, &rows).await?.into_iter().zip(&admitted);
    Ok(outcomes
        .into_iter()
        .map(|known| {
            known.unwrap_or_else(|| {
                let (job, planned) = inserted.next().expect("one row per admitted job");
                Ok(Admission::Admitted { job, borrowed: planned.borrowed })
            })
        })
        .collect())
}

/// Locks what admitting jobs into `queues` (`(project id, queue id)` pairs, sorted) must hold:
/// with no project or tenant limit above them, just those queues. Otherwise first the rows of
/// the limited tenants and projects (`FOR NO KEY UPDATE`, tenants then projects, in id order:
/// every admission under a limit serializes there, and reads the list of queues after the lock),
/// then every queue under them too, whose usage the limits count. Lock order: tenants,
/// projects, queues.
async fn lock_for_admission(
    conn: &mut PgConnection,
    queues: &[(i64, i64)],
) -> DbResult<(BTreeMap<i64, LockedQueue>, LevelLimits)> {
    let projects: Vec<i64> = queues.iter().map(|(p, _)| *p).collect();
    let rows = fair_share::limits_above(&mut *conn, &projects).await?;
    if rows.is_empty() {
        return Ok((db::lock_queues_for_admission(conn, queues, db::FOLD_DELTAS_ABOVE).await?, LevelLimits::default()));
    }
    let mut levels = LevelLimits::default();
    for row in rows {
        let map = if row.level == QuotaLevel::Tenant.as_str() { &mut levels.tenants } else { &mut levels.projects };
        let level =
            map.entry(row.owner).or_insert_with(|| LevelLimit { name: row.name.clone(), ..LevelLimit::default() });
        level.limits.push((row.resource, row.limit_amount));
    }
    let tenants: Vec<i64> = levels.tenants.keys().copied().collect();
    let limited: Vec<i64> = levels.projects.keys().copied().collect();
    let under = fair_share::lock_limited_levels(&mut *conn, &tenants, &limited).await?;
    let mut all: Vec<(i64, i64)> =
        queues.iter().copied().chain(under.iter().map(|u| (u.project_id, u.queue_id))).collect();
    all.sort_unstable();
    all.dedup();
    for u in &under {
        levels.tenant_of.insert(u.project_id, u.tenant_id);
    }
    let mut locked = db::lock_queues_for_admission(conn, &all, db::FOLD_DELTAS_ABOVE).await?;
    levels.count_usage(&locked);
    // Only the batch's own queues are planned against.
    let wanted: BTreeSet<i64> = queues.iter().map(|(_, q)| *q).collect();
    locked.retain(|id, _| wanted.contains(id));
    Ok((locked, levels))
}

/// A job of a batch that its plan admits.
struct ToInsert<'s> {
    submission: &'s Submission<'s>,
    demands: Vec<(String, i64)>,
    borrowed: bool,
}

/// Admits again a job that was admitted once and is now `preempted` (or back to `pending`):
/// its stored demand is checked against current usage under the same locks. On
/// `QuotaExceeded` nothing changes.
pub async fn readmit(conn: &mut PgConnection, job_id: i64, by: Cause<'_>) -> DbResult<Admission> {
    let (project_id, queue_id): (i64, i64) = sqlx::query_as("SELECT project_id, queue_id FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DbError::NotFound("job"))?;
    let (mut locked, levels) = lock_for_admission(conn, &[(project_id, queue_id)]).await?;
    let queue = locked.remove(&queue_id).ok_or(DbError::NotFound("queue"))?;
    let (quotas, usage): (_, Amounts) = (queue.quotas, queue.usage.into_iter().collect());
    let want: Amounts =
        sqlx::query_as::<_, (String, i64)>("SELECT resource, amount FROM job_demands WHERE job_id = $1")
            .bind(job_id)
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .collect();
    if want.is_empty() {
        return Err(DbError::conflict("job was never admitted; submit it again"));
    }
    let borrowed = match decide_in_queue(&quotas, &usage, &want, queue.can_borrow, queue.interactive_reserve) {
        Verdict::Admit { borrowed } => borrowed,
        Verdict::Exceeded { resource, used, limit, .. } => {
            let (level, name) = (QuotaLevel::Queue, queue.name);
            return Ok(Admission::QuotaExceeded { level, name, resource, used, limit });
        }
    };
    if let Some(Planned::Exceeded { level, name, resource, used, limit }) = levels.exceeded(project_id, &want) {
        return Ok(Admission::QuotaExceeded { level, name, resource, used, limit });
    }
    sqlx::query("UPDATE jobs SET borrowed = $2 WHERE id = $1").bind(job_id).bind(borrowed).execute(&mut *conn).await?;
    db::transition_job(&mut *conn, job_id, JobState::Admitted, by).await?;
    let job = db::get_job(&mut *conn, job_id).await?;
    Ok(Admission::Admitted { job, borrowed })
}

/// Resumes a suspended job: admitted again if no hard budget of its project or tenant is spent (else
/// `BudgetExceeded`) and its queue's quota takes it now (else `QuotaExceeded`); refused, it
/// stays suspended. Its suspension request is cleared. A resumed job starts spending again as
/// a new submission would, so it meets the budget a submission meets; a preempted job put
/// back in the queue ([`readmit`] alone) continues work already admitted, and does not.
pub async fn resume(conn: &mut PgConnection, job_id: i64, by: Cause<'_>) -> DbResult<Admission> {
    let (state, project_id): (String, i64) =
        sqlx::query_as("SELECT state, project_id FROM jobs WHERE id = $1 FOR UPDATE")
            .bind(job_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(DbError::NotFound("job"))?;
    let state: JobState = state.parse()?;
    if state != JobState::Suspended {
        return Err(DbError::conflict(format!("the job is {state}, not suspended")));
    }
    if let Some(refusal) =
        db::budgets::refusals(&mut *conn, &[project_id], chrono::Utc::now()).await?.remove(&project_id)
    {
        return Ok(Admission::BudgetExceeded(refusal));
    }
    let demands: i64 = sqlx::query_scalar("SELECT count(*) FROM job_demands WHERE job_id = $1")
        .bind(job_id)
        .fetch_one(&mut *conn)
        .await?;
    // It was admitted before it was suspended: a job that demands nothing needs no quota.
    let admission = if demands == 0 {
        db::transition_job(&mut *conn, job_id, JobState::Admitted, by).await?;
        Admission::Admitted { job: db::get_job(&mut *conn, job_id).await?, borrowed: false }
    } else {
        readmit(&mut *conn, job_id, by).await?
    };
    if matches!(admission, Admission::Admitted { .. }) {
        sqlx::query("UPDATE jobs SET suspend_requested_at = NULL, suspend_grace_s = NULL, suspended_by_policy = false WHERE id = $1")
            .bind(job_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(admission)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(gpus: u32, milli: Option<u32>, models: &[&str], cpu: u64, mem: u64) -> ResourcesSpec {
        ResourcesSpec {
            gpus,
            gpu_milli: milli,
            gpu_memory_mib: None,
            gpu_models: models.iter().map(|m| m.to_string()).collect(),
            cpu_milli: cpu,
            memory_mib: mem,
            mig_profile: None,
        }
    }

    fn quota(resource: &str, guaranteed: i64, limit: Option<i64>) -> Quota {
        Quota { resource: resource.into(), guaranteed, limit }
    }

    fn amounts(pairs: &[(&str, i64)]) -> Amounts {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn demand_counts_whole_fractional_and_every_allowed_model() {
        let train = res(8, None, &["A100-80GB", "H100-80GB"], 32000, 262144);
        let share = res(1, Some(250), &[], 2000, 8192);
        let scopes = QuotaScopes { models: ["V100".to_string()].into(), pools: BTreeSet::new() };
        let d = demand([(4, &train), (1, &share)], &[], &scopes);
        assert_eq!(
            d,
            amounts(&[
                ("gpu", 32_250),
                ("gpu/A100-80GB", 32_000),
                ("gpu/H100-80GB", 32_000),
                ("gpu/V100", 250),
                ("cpu_milli", 130_000),
                ("memory_mib", 1_056_768),
            ])
        );
    }

    #[test]
    fn demand_without_gpus_has_no_gpu_keys() {
        let cpu_only = res(0, None, &["A100"], 500, 0);
        let scopes = QuotaScopes { models: BTreeSet::new(), pools: ["train".to_string()].into() };
        assert_eq!(demand([(2, &cpu_only)], &[], &scopes), amounts(&[("cpu_milli", 1000)]));
    }

    #[test]
    fn demand_charges_each_named_pool_or_each_pool_the_queue_has_a_quota_for() {
        let gpus = res(2, None, &[], 0, 0);
        let scopes = QuotaScopes { models: BTreeSet::new(), pools: ["train".to_string(), "infer".to_string()].into() };
        let named = vec!["infer".to_string(), "spare".to_string()];
        assert_eq!(
            demand([(2, &gpus)], &named, &scopes),
            amounts(&[("gpu", 4000), ("pool/infer", 4000), ("pool/spare", 4000)])
        );
        assert_eq!(
            demand([(2, &gpus)], &[], &scopes),
            amounts(&[("gpu", 4000), ("pool/infer", 4000), ("pool/train", 4000)]),
            "naming none, it may land in any pool the queue is held to"
        );
        let q = [quota("pool/infer", 0, Some(2000))];
        assert_eq!(
            decide(&q, &Amounts::new(), &demand([(2, &gpus)], &named, &scopes), true),
            Verdict::Exceeded { resource: "pool/infer".into(), used: 0, demand: 4000, limit: 2000 }
        );
    }

    #[test]
    fn within_guarantee_is_not_borrowed() {
        let q = [quota("gpu", 4000, Some(8000))];
        let v = decide(&q, &amounts(&[("gpu", 2000)]), &amounts(&[("gpu", 2000)]), true);
        assert_eq!(v, Verdict::Admit { borrowed: false });
    }

    #[test]
    fn beyond_guarantee_is_borrowed_up_to_the_limit() {
        let q = [quota("gpu", 4000, Some(8000))];
        assert_eq!(
            decide(&q, &amounts(&[("gpu", 4000)]), &amounts(&[("gpu", 4000)]), true),
            Verdict::Admit { borrowed: true }
        );
        assert_eq!(
            decide(&q, &amounts(&[("gpu", 4001)]), &amounts(&[("gpu", 4000)]), true),
            Verdict::Exceeded { resource: "gpu".into(), used: 4001, demand: 4000, limit: 8000 }
        );
    }

    #[test]
    fn a_queue_that_cannot_borrow_stops_at_its_guarantee() {
        let q = [quota("gpu", 4000, Some(8000))];
        assert_eq!(
            decide(&q, &amounts(&[("gpu", 3000)]), &amounts(&[("gpu", 2000)]), false),
            Verdict::Exceeded { resource: "gpu".into(), used: 3000, demand: 2000, limit: 4000 }
        );
    }

    #[test]
    fn a_model_limit_binds_even_when_the_generic_one_does_not() {
        let q = [quota("gpu", 0, None), quota("gpu/A100", 0, Some(1000))];
        let want = amounts(&[("gpu", 2000), ("gpu/A100", 2000), ("gpu/H100", 2000)]);
        assert!(matches!(decide(&q, &Amounts::new(), &want, true), Verdict::Exceeded { limit: 1000, .. }));
    }

    #[test]
    fn unquoted_resources_and_zero_demand_are_free() {
        let q = [quota("memory_mib", 0, Some(0))];
        assert_eq!(decide(&q, &Amounts::new(), &amounts(&[("gpu", 1000)]), false), Verdict::Admit { borrowed: false });
    }

    #[test]
    fn admitted_usage_never_passes_the_limit() {
        // Sequential admission of random demands: the sum of admitted demand stays under the limit.
        let q = [quota("gpu", 3000, Some(10_000))];
        let mut usage = Amounts::new();
        for i in 0..200i64 {
            let want = amounts(&[("gpu", 250 + (i * 7919) % 4000)]);
            if let Verdict::Admit { .. } = decide(&q, &usage, &want, true) {
                *usage.entry("gpu".into()).or_insert(0) += want["gpu"];
            }
            assert!(usage.get("gpu").copied().unwrap_or(0) <= 10_000);
        }
    }

    fn workspace(gpu: i64) -> Amounts {
        amounts(&[("gpu", gpu), (INTERACTIVE, gpu)])
    }

    #[test]
    fn batch_work_leaves_the_unused_interactive_reserve_free() {
        let q = [quota("gpu", 4000, Some(8000))];
        let usage = amounts(&[("gpu", 2000)]);
        // Reserve 2 GPUs: batch sees a guarantee of 2 and a limit of 6.
        assert_eq!(
            decide_in_queue(&q, &usage, &amounts(&[("gpu", 1000)]), true, 2000),
            Verdict::Admit { borrowed: true }
        );
        assert_eq!(
            decide_in_queue(&q, &usage, &amounts(&[("gpu", 5000)]), true, 2000),
            Verdict::Exceeded { resource: GPU_LESS_RESERVE.into(), used: 2000, demand: 5000, limit: 6000 }
        );
        // A workspace takes the reserve within the guarantee: not borrowed.
        assert_eq!(decide_in_queue(&q, &usage, &workspace(2000), true, 2000), Verdict::Admit { borrowed: false });
        // Once workspaces hold the reserve, batch sees the whole quota again.
        let held = amounts(&[("gpu", 4000), (INTERACTIVE, 2000)]);
        assert_eq!(
            decide_in_queue(&q, &held, &amounts(&[("gpu", 4000)]), true, 2000),
            Verdict::Admit { borrowed: true }
        );
        // No reserve: as decide.
        assert_eq!(
            decide_in_queue(&q, &usage, &amounts(&[("gpu", 2000)]), true, 0),
            decide(&q, &usage, &amounts(&[("gpu", 2000)]), true)
        );
    }

    #[test]
    fn a_queue_that_cannot_borrow_keeps_the_reserve_from_its_batch_work() {
        let q = [quota("gpu", 4000, None)];
        let usage = amounts(&[("gpu", 3000)]);
        assert!(matches!(
            decide_in_queue(&q, &usage, &amounts(&[("gpu", 1000)]), false, 1000),
            Verdict::Exceeded { limit: 3000, .. }
        ));
        assert_eq!(decide_in_queue(&q, &usage, &workspace(1000), false, 1000), Verdict::Admit { borrowed: false });
    }

    #[test]
    fn a_workspace_charges_its_gpus_to_the_interactive_key_and_batch_does_not() {
        use crate::db::NewTask;
        let mut job = NewJob {
            project_id: 1,
            queue_id: 1,
            name: "nb".into(),
            priority: 0,
            priority_class: "normal".into(),
            preemptible: false,
            spec: serde_json::json!({"workspace": {"port": 8888}}),
            pools: Vec::new(),
            tasks: vec![NewTask {
                name: "t".into(),
                replicas: 1,
                resources: res(1, Some(500), &[], 0, 0),
                spec: serde_json::Value::Null,
            }],
            submitted_by: 1,
        };
        let scopes = QuotaScopes::default();
        assert_eq!(job_demand(&job, &scopes), amounts(&[("gpu", 500), (INTERACTIVE, 500)]));
        job.spec = serde_json::json!({});
        assert_eq!(job_demand(&job, &scopes), amounts(&[("gpu", 500)]));
    }

    proptest::proptest! {
        /// Whatever batch and workspace work was admitted before, in any order, a workspace
        /// that fits in the unused part of the reserve is admitted, within the guarantee.
        #[test]
        fn a_workspace_within_the_unused_reserve_is_always_admitted_unborrowed(
            guaranteed in 0i64..16_000,
            extra in proptest::option::of(0i64..16_000),
            reserve_share in 0i64..=100,
            can_borrow in proptest::bool::ANY,
            arrivals in proptest::collection::vec((proptest::bool::ANY, 1i64..4_000), 0..40),
        ) {
            let q = [quota("gpu", guaranteed, extra.map(|e| guaranteed + e))];
            let reserve = guaranteed * reserve_share / 100;
            let mut usage = Amounts::new();
            for (is_workspace, gpu) in arrivals {
                let want = if is_workspace { workspace(gpu) } else { amounts(&[("gpu", gpu)]) };
                if let Verdict::Admit { .. } = decide_in_queue(&q, &usage, &want, can_borrow, reserve) {
                    add(&mut usage, want.iter().map(|(r, a)| (r, *a)));
                }
                let free_reserve = reserve - usage.get(INTERACTIVE).copied().unwrap_or(0);
                if free_reserve > 0 {
                    proptest::prop_assert_eq!(
                        decide_in_queue(&q, &usage, &workspace(free_reserve), can_borrow, reserve),
                        Verdict::Admit { borrowed: false }
                    );
                }
            }
        }
    }

    mod batches {
        use super::*;
        use crate::db::NewTask;
        use proptest::prelude::*;

        /// Queues 1..=3 of project 1, each with a `gpu` and a `gpu/A100` quota; queue 3 cannot
        /// borrow.
        fn locked_queues(limits: &[(i64, i64, i64)]) -> BTreeMap<i64, LockedQueue> {
            limits
                .iter()
                .enumerate()
                .map(|(i, &(guaranteed, limit, used))| {
                    let id = i as i64 + 1;
                    let quotas =
                        vec![quota("gpu", guaranteed, Some(limit)), quota("gpu/A100", guaranteed / 2, Some(limit / 2))];
                    let queue = LockedQueue {
                        id,
                        project_id: 1,
                        name: format!("q{id}"),
                        can_borrow: id != 3,
                        quotas,
                        usage: vec![("gpu".into(), used)],
                        interactive_reserve: 0,
                    };
                    (id, queue)
                })
                .collect()
        }

        fn job(project_id: i64, queue_id: i64, gpus: u32, model: Option<&str>) -> NewJob {
            NewJob {
                project_id,
                queue_id,
                name: "j".into(),
                priority: 0,
                priority_class: "normal".into(),
                preemptible: false,
                spec: serde_json::Value::Null,
                pools: Vec::new(),
                tasks: vec![NewTask {
                    name: "t".into(),
                    replicas: 1,
                    resources: res(gpus, None, model.as_slice(), 0, 0),
                    spec: serde_json::Value::Null,
                }],
                submitted_by: 1,
            }
        }

        fn queue_strategy() -> impl Strategy<Value = (i64, i64, i64)> {
            (0i64..8_000, 0i64..16_000, 0i64..8_000).prop_map(|(g, extra, used)| (g, g + extra, used.min(g + extra)))
        }

        fn job_strategy() -> impl Strategy<Value = NewJob> {
            // Queue 4 does not exist; project 2 owns none of the queues.
            (prop::sample::select(vec![1i64, 1, 1, 2]), 1i64..=4, 0u32..6, prop::option::of(Just("A100")))
                .prop_map(|(project, queue, gpus, model)| job(project, queue, gpus, model))
        }

        proptest! {
            /// A batch decides exactly as admitting its jobs one after another would, and the
            /// usage it admits never passes a limit (invariant 5).
            #[test]
            fn a_batch_is_the_sequence_of_its_admissions(
                limits in prop::collection::vec(queue_strategy(), 3),
                jobs in prop::collection::vec(job_strategy(), 0..40),
            ) {
                let queues = locked_queues(&limits);
                let plans = plan_batch(&queues, &LevelLimits::default(), &jobs);
                prop_assert_eq!(plans.len(), jobs.len());

                let mut usage: BTreeMap<i64, Amounts> =
                    queues.iter().map(|(id, q)| (*id, q.usage.iter().cloned().collect())).collect();
                for (job, plan) in jobs.iter().zip(&plans) {
                    let Some(locked) = queues.get(&job.queue_id).filter(|q| q.project_id == job.project_id)
                    else {
                        prop_assert_eq!(plan, &Planned::NoQueue);
                        continue;
                    };
                    let used = usage.get_mut(&job.queue_id).unwrap();
                    let want = demand(
                        job.tasks.iter().map(|t| (t.replicas, &t.resources)),
                        &job.pools,
                        &quota_scopes(&locked.quotas),
                    );
                    match (decide(&locked.quotas, used, &want, locked.can_borrow), plan) {
                        (Verdict::Admit { borrowed }, Planned::Admit { demand, borrowed: planned_borrowed }) => {
                            prop_assert_eq!(&want, demand);
                            prop_assert_eq!(borrowed, *planned_borrowed);
                            for (k, v) in want {
                                *used.entry(k).or_insert(0) += v;
                            }
                        }
                        (Verdict::Exceeded { resource, used: at, limit, .. }, Planned::Exceeded { level: QuotaLevel::Queue, name, resource: r, used: u, limit: l }) => {
                            prop_assert_eq!(&locked.name, name);
                            prop_assert_eq!((&resource, at, limit), (r, *u, *l));
                        }
                        (verdict, plan) => prop_assert!(false, "sequential {verdict:?}, batch {plan:?}"),
                    }
                }
                for (id, used) in &usage {
                    let initial: i64 = queues[id].usage.iter().map(|(_, v)| v).sum();
                    for q in &queues[id].quotas {
                        let now = used.get(&q.resource).copied().unwrap_or(0);
                        // What was already there may be above a limit (quotas lowered since);
                        // admissions only add when the result stays under it.
                        let bound = if queues[id].can_borrow { q.limit.unwrap() } else { q.guaranteed };
                        prop_assert!(now <= bound.max(if q.resource == "gpu" { initial } else { 0 }),
                            "queue {id} {} at {now} over {bound}", q.resource);
                    }
                }
            }

            /// With limits above the queues, a batch never takes its project or its tenant past
            /// one (invariant 5 at every level), refuses a job only when it names the limit it
            /// would pass or its queue's quota, and charges each admitted job to both levels.
            #[test]
            fn a_batch_never_passes_a_project_or_tenant_limit(
                limits in prop::collection::vec(queue_strategy(), 3),
                project_limit in 0i64..20_000,
                tenant_limit in 0i64..30_000,
                tenant_used in 0i64..10_000,
                jobs in prop::collection::vec(job_strategy(), 0..40),
            ) {
                let queues = locked_queues(&limits);
                let project_used: i64 = queues.values().flat_map(|q| &q.usage).map(|(_, v)| v).sum();
                let level = |name: &str, limit: i64, used: i64| LevelLimit {
                    name: name.into(),
                    limits: vec![("gpu".into(), limit)],
                    usage: [("gpu".to_string(), used)].into(),
                };
                let levels = LevelLimits {
                    projects: [(1, level("p", project_limit, project_used))].into(),
                    // Another project of the tenant holds `tenant_used` too.
                    tenants: [(7, level("t", tenant_limit, project_used + tenant_used))].into(),
                    tenant_of: [(1, 7), (2, 7)].into(),
                };
                let plans = plan_batch(&queues, &levels, &jobs);
                let (mut project, mut tenant) = (project_used, project_used + tenant_used);
                for (job, plan) in jobs.iter().zip(&plans) {
                    match plan {
                        Planned::Admit { demand, .. } => {
                            let gpu = demand.get("gpu").copied().unwrap_or(0);
                            project += gpu;
                            tenant += gpu;
                            if gpu > 0 {
                                prop_assert!(project <= project_limit && tenant <= tenant_limit,
                                    "job {:?}: project {project} of {project_limit}, tenant {tenant} of {tenant_limit}", job.name);
                            }
                        }
                        Planned::Exceeded { level: QuotaLevel::Project, used, limit, .. } => {
                            prop_assert_eq!((*used, *limit), (project, project_limit));
                        }
                        Planned::Exceeded { level: QuotaLevel::Tenant, used, limit, .. } => {
                            prop_assert_eq!((*used, *limit), (tenant, tenant_limit));
                        }
                        Planned::Exceeded { level: QuotaLevel::Queue, .. } | Planned::NoQueue => {}
                    }
                }
            }
        }
    }
}
