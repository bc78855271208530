//! Monthly budgets: storage, and the inputs of `billing::budget` for one scope (its ledger for
//! the month and its running replicas with their maximum runtime and the run time predicted at
//! their dispatch, migration 0037). Admission calls
//! [`refusals`] inside its transaction.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::billing::{ledger_intervals, price_book, LedgerFilter, PriceRow};
use super::{DbError, DbResult};
use crate::billing::budget::{self, Budget, BudgetState, Running};
use crate::billing::{Period, PriceBook};
use crate::domain::{BudgetUnit, QuotaLevel};

/// Whose budget: a project's or a tenant's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BudgetScope {
    Project(i64),
    Tenant(i64),
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct BudgetRow {
    pub id: i64,
    pub project_id: Option<i64>,
    pub tenant_id: Option<i64>,
    pub unit: String,
    pub amount_micros: i64,
    pub soft_percent: i16,
    pub hard: bool,
    pub suspend_borrowed: bool,
    pub updated_at: DateTime<Utc>,
}

impl BudgetRow {
    pub fn scope(&self) -> BudgetScope {
        match (self.project_id, self.tenant_id) {
            (Some(p), _) => BudgetScope::Project(p),
            (None, Some(t)) => BudgetScope::Tenant(t),
            (None, None) => unreachable!("the schema's CHECK names exactly one owner"),
        }
    }

    pub fn budget(&self) -> DbResult<Budget> {
        Ok(Budget {
            unit: BudgetUnit::parse(&self.unit).ok_or_else(|| DbError::validation("unknown budget unit"))?,
            amount_micros: self.amount_micros,
            soft_percent: u8::try_from(self.soft_percent)
                .map_err(|_| DbError::validation("soft percent out of range"))?,
            hard: self.hard,
            suspend_borrowed: self.suspend_borrowed,
        })
    }
}

const COLUMNS: &str =
    "id, project_id, tenant_id, unit, amount_micros, soft_percent, hard, suspend_borrowed, updated_at";

/// The calendar month (UTC) holding `now`: the period every budget counts.
pub fn month_of(now: DateTime<Utc>) -> Period {
    let start = Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0).single().expect("a valid first of month");
    let (y, m) = if now.month() == 12 { (now.year() + 1, 1) } else { (now.year(), now.month() + 1) };
    let end = Utc.with_ymd_and_hms(y, m, 1, 0, 0, 0).single().expect("a valid first of month");
    Period { start, end }
}

/// Sets (or replaces) the scope's budget.
pub async fn set_budget(db: impl PgExecutor<'_>, scope: BudgetScope, b: &Budget) -> DbResult<BudgetRow> {
    let (project, tenant, conflict) = match scope {
        BudgetScope::Project(p) => (Some(p), None, "project_id"),
        BudgetScope::Tenant(t) => (None, Some(t), "tenant_id"),
    };
    Ok(sqlx::query_as(&format!(
        "INSERT INTO budgets (project_id, tenant_id, unit, amount_micros, soft_percent, hard, suspend_borrowed)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT ({conflict}) DO UPDATE SET unit = excluded.unit, amount_micros = excluded.amount_micros,
             soft_percent = excluded.soft_percent, hard = excluded.hard,
             suspend_borrowed = excluded.suspend_borrowed, updated_at = now()
         RETURNING {COLUMNS}"
    ))
    .bind(project)
    .bind(tenant)
    .bind(b.unit.as_str())
    .bind(b.amount_micros)
    .bind(i16::from(b.soft_percent))
    .bind(b.hard)
    .bind(b.suspend_borrowed)
    .fetch_one(db)
    .await?)
}

/// Removes the scope's budget; whether there was one.
pub async fn remove_budget(db: impl PgExecutor<'_>, scope: BudgetScope) -> DbResult<bool> {
    let (project, tenant) = owner(scope);
    let done = sqlx::query("DELETE FROM budgets WHERE project_id = $1 OR tenant_id = $2")
        .bind(project)
        .bind(tenant)
        .execute(db)
        .await?;
    Ok(done.rows_affected() > 0)
}

fn owner(scope: BudgetScope) -> (Option<i64>, Option<i64>) {
    match scope {
        BudgetScope::Project(p) => (Some(p), None),
        BudgetScope::Tenant(t) => (None, Some(t)),
    }
}

pub async fn budget_of(db: impl PgExecutor<'_>, scope: BudgetScope) -> DbResult<Option<BudgetRow>> {
    let (project, tenant) = owner(scope);
    Ok(sqlx::query_as(&format!("SELECT {COLUMNS} FROM budgets WHERE project_id = $1 OR tenant_id = $2"))
        .bind(project)
        .bind(tenant)
        .fetch_optional(db)
        .await?)
}

/// What one scope's month looks like: its ledger so far, its running replicas and the book.
pub struct MonthInputs {
    pub period: Period,
    pub so_far: Vec<crate::billing::LedgerInterval>,
    pub running: Vec<Running>,
    pub book: PriceBook,
}

/// A running replica's ledger row, its maximum runtime and the run time predicted when its
/// job was dispatched (`None`: unknown).
#[derive(FromRow)]
struct RunningBound {
    job_id: i64,
    replica: i32,
    started_at: DateTime<Utc>,
    max_runtime_s: Option<i64>,
    predicted_runtime_s: Option<i64>,
}

/// A hard budget over a project of the batch.
#[derive(FromRow)]
struct Applying {
    project: i64,
    budget_id: i64,
    of_project: Option<i64>,
    of_tenant: Option<i64>,
    name: String,
}

/// Loads [`MonthInputs`] for `scope` at `now`.
pub async fn month_inputs(conn: &mut PgConnection, scope: BudgetScope, now: DateTime<Utc>) -> DbResult<MonthInputs> {
    let period = month_of(now);
    let filter = match scope {
        BudgetScope::Project(p) => LedgerFilter { projects: Some(vec![p]), ..LedgerFilter::default() },
        BudgetScope::Tenant(t) => LedgerFilter { tenant_id: Some(t), ..LedgerFilter::default() },
    };
    let so_far = ledger_intervals(&mut *conn, period, now, &filter).await?;
    let (project, tenant) = owner(scope);
    // A running replica is expected to end after its predicted run time, or its job's maximum
    // runtime (its own, else its queue's): `budget::expected_end`.
    let bounds: Vec<RunningBound> = sqlx::query_as(
        "SELECT l.job_id, r.index AS replica, l.started_at,
                COALESCE((j.spec ->> 'max_runtime_s')::bigint, q.max_runtime_s) AS max_runtime_s,
                d.predicted_runtime_s
         FROM usage_ledger l
         JOIN jobs j ON j.id = l.job_id
         JOIN queues q ON q.id = l.queue_id
         JOIN replicas r ON r.id = l.replica_id
         JOIN projects p ON p.id = l.project_id
         LEFT JOIN dispatches d ON d.job_id = r.job_id AND d.epoch = r.epoch
         WHERE l.ended_at IS NULL AND (l.project_id = $1 OR p.tenant_id = $2)",
    )
    .bind(project)
    .bind(tenant)
    .fetch_all(&mut *conn)
    .await?;
    let bound: BTreeMap<(u64, u32, DateTime<Utc>), Option<DateTime<Utc>>> = bounds
        .into_iter()
        .map(|b| {
            let end = budget::expected_end(b.started_at, b.max_runtime_s, b.predicted_runtime_s, now);
            ((b.job_id as u64, b.replica as u32, b.started_at), end)
        })
        .collect();
    let running = so_far
        .iter()
        .filter_map(|iv| {
            let end = bound.get(&(iv.job, iv.replica, iv.start))?;
            Some(Running { interval: iv.clone(), bound_to_end: *end })
        })
        .collect();
    let rows = price_book(&mut *conn).await?;
    let book = PriceBook::new(rows.iter().map(PriceRow::entry).collect())
        .map_err(|e| DbError::validation(format!("the price book is invalid: {e}")))?;
    Ok(MonthInputs { period, so_far, running, book })
}

/// The scope's budget with its spending at `now`; `None` without a budget.
pub async fn state_of(
    conn: &mut PgConnection,
    scope: BudgetScope,
    now: DateTime<Utc>,
) -> DbResult<Option<(BudgetRow, BudgetState, MonthInputs)>> {
    let Some(row) = budget_of(&mut *conn, scope).await? else { return Ok(None) };
    let b = row.budget()?;
    let inputs = month_inputs(conn, scope, now).await?;
    let spend = budget::spend(b.unit, &inputs.so_far, &inputs.running, &inputs.book, inputs.period, now)
        .map_err(|e| DbError::validation(format!("cannot price the month: {e}")))?;
    Ok(Some((row, BudgetState { budget: b, spend }, inputs)))
}

/// [`state_of`] for admission and the suspend step, which judge many budgets at once: one that
/// cannot be computed is logged and skipped ([`or_skip`]) instead of failing every other. It
/// runs under a savepoint, so a failed statement leaves the caller's transaction usable. The
/// outer error is the savepoint's own (the connection is gone).
async fn state_or_skip(
    conn: &mut PgConnection,
    scope: BudgetScope,
    now: DateTime<Utc>,
) -> DbResult<Option<BudgetState>> {
    use sqlx::Connection;
    let mut savepoint = conn.begin().await?;
    let computed = state_of(&mut savepoint, scope, now).await;
    if computed.is_ok() {
        savepoint.commit().await?;
    } else {
        savepoint.rollback().await?;
    }
    Ok(or_skip(scope, computed.map(|found| found.map(|(_, state, _)| state))))
}

/// A budget's state, or `None` when it could not be computed (logged): its scope is then
/// treated as within budget, refusing and suspending nothing until it can be computed again,
/// rather than stopping admission or the suspend step for every scope.
fn or_skip<T>(scope: BudgetScope, computed: DbResult<Option<T>>) -> Option<T> {
    match computed {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(?scope, error = ?e, "budget not computed: skipped (refuses and suspends nothing)");
            None
        }
    }
}

/// The budgets over `project`: its own, then its tenant's, with their owner's name (`project
/// pa`, `tenant ta`).
pub async fn budgets_over(conn: &mut PgConnection, project: i64) -> DbResult<Vec<(BudgetScope, String)>> {
    let rows: Vec<(Option<i64>, Option<i64>, String)> = sqlx::query_as(
        "SELECT b.project_id, b.tenant_id, CASE WHEN b.project_id IS NULL THEN 'tenant ' || t.slug ELSE 'project ' || p.slug END
         FROM projects p JOIN tenants t ON t.id = p.tenant_id
         JOIN budgets b ON b.project_id = p.id OR b.tenant_id = p.tenant_id
         WHERE p.id = $1 ORDER BY b.tenant_id NULLS FIRST",
    )
    .bind(project)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(p, t, name)| match (p, t) {
            (Some(p), _) => Some((BudgetScope::Project(p), name)),
            (None, Some(t)) => Some((BudgetScope::Tenant(t), name)),
            (None, None) => None,
        })
        .collect())
}

/// Why admission refuses the jobs of a project: its or its tenant's hard budget is spent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetRefusal {
    pub level: QuotaLevel,
    /// The project's or tenant's slug.
    pub name: String,
    pub unit: BudgetUnit,
    /// Spent and committed this month, and the amount, in the unit (nano-units).
    pub spent: crate::billing::Nanos,
    pub amount: crate::billing::Nanos,
}

/// For each of `projects` whose own or whose tenant's hard budget is spent (or committed) at
/// `now`, why. One query when no hard budget applies (the common case). A budget that cannot
/// be computed refuses nothing (`state_or_skip`).
pub async fn refusals(
    conn: &mut PgConnection,
    projects: &[i64],
    now: DateTime<Utc>,
) -> DbResult<BTreeMap<i64, BudgetRefusal>> {
    let applying: Vec<Applying> = sqlx::query_as(
        "SELECT p.id AS project, b.id AS budget_id, b.project_id AS of_project, b.tenant_id AS of_tenant,
                COALESCE(bp.slug, bt.slug) AS name
         FROM projects p
         JOIN budgets b ON b.hard AND (b.project_id = p.id OR b.tenant_id = p.tenant_id)
         LEFT JOIN projects bp ON bp.id = b.project_id
         LEFT JOIN tenants bt ON bt.id = b.tenant_id
         WHERE p.id = ANY($1)
         ORDER BY b.tenant_id NULLS FIRST, b.id",
    )
    .bind(projects)
    .fetch_all(&mut *conn)
    .await?;
    let mut judged: BTreeMap<i64, Option<BudgetRefusal>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for a in applying {
        if out.contains_key(&a.project) {
            continue;
        }
        let verdict = match judged.get(&a.budget_id) {
            Some(v) => v.clone(),
            None => {
                let scope = match (a.of_project, a.of_tenant) {
                    (Some(p), _) => BudgetScope::Project(p),
                    (None, Some(t)) => BudgetScope::Tenant(t),
                    (None, None) => continue,
                };
                let level = if a.of_project.is_some() { QuotaLevel::Project } else { QuotaLevel::Tenant };
                let v = state_or_skip(&mut *conn, scope, now).await?.and_then(|state| {
                    state.refuses().then(|| BudgetRefusal {
                        level,
                        name: a.name.clone(),
                        unit: state.budget.unit,
                        spent: state.spend.total(),
                        amount: state.budget.amount(),
                    })
                });
                judged.insert(a.budget_id, v.clone());
                v
            }
        };
        if let Some(refusal) = verdict {
            out.insert(a.project, refusal);
        }
    }
    Ok(out)
}

/// The queues whose borrowed work a spent budget suspends now (hard budgets with
/// `suspend_borrowed`, by what the month has already cost: `BudgetState::pauses_borrowed`),
/// each with the cause to record. A budget that cannot be computed suspends nothing
/// (`state_or_skip`).
pub async fn paused_queues(conn: &mut PgConnection, now: DateTime<Utc>) -> DbResult<Vec<(i64, String)>> {
    let budgets: Vec<(Option<i64>, Option<i64>, String)> = sqlx::query_as(
        "SELECT b.project_id, b.tenant_id,
                CASE WHEN b.project_id IS NULL THEN 'tenant ' || t.slug ELSE 'project ' || p.slug END
         FROM budgets b LEFT JOIN projects p ON p.id = b.project_id LEFT JOIN tenants t ON t.id = b.tenant_id
         WHERE b.hard AND b.suspend_borrowed ORDER BY b.id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::new();
    for (project, tenant, name) in budgets {
        let scope = match (project, tenant) {
            (Some(p), _) => BudgetScope::Project(p),
            (None, Some(t)) => BudgetScope::Tenant(t),
            (None, None) => continue,
        };
        let Some(state) = state_or_skip(&mut *conn, scope, now).await? else { continue };
        if !state.pauses_borrowed() {
            continue;
        }
        let queues: Vec<i64> = sqlx::query_scalar(
            "SELECT q.id FROM queues q JOIN projects p ON p.id = q.project_id
             WHERE q.project_id = $1 OR p.tenant_id = $2 ORDER BY q.id",
        )
        .bind(project)
        .bind(tenant)
        .fetch_all(&mut *conn)
        .await?;
        let cause = format!("suspended: the monthly budget of {name} is spent, and it suspends borrowed work");
        out.extend(
            queues
                .into_iter()
                .filter(|q| !out.iter().any(|(o, _)| o == q))
                .map(|q| (q, cause.clone()))
                .collect::<Vec<_>>(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_that_cannot_be_computed_is_skipped_not_fatal() {
        let scope = BudgetScope::Project(7);
        assert_eq!(or_skip(scope, Ok(Some(3))), Some(3));
        assert_eq!(or_skip::<i32>(scope, Ok(None)), None);
        let failed: DbResult<Option<i32>> = Err(DbError::validation("cannot price the month: no book"));
        assert_eq!(or_skip(scope, failed), None, "skipped: refuses and suspends nothing");
    }
}
