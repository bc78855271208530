//! Monthly budgets in the API: `Project.budget`, `Tenant.budget`, `setBudget`, `removeBudget`.
//! What counts against a budget is `billing::budget`'s; admission refuses with
//! BUDGET_EXCEEDED (`admission`).

use async_graphql::{Context, Enum, Object, SimpleObject, ID};
use chrono::{DateTime, Utc};

use super::billing::billing_currency;
use super::{authorize, caller, parse_id, pool};
use crate::billing::budget::{self, Budget, BudgetLevel, MAX_SOFT_PERCENT};
use crate::billing::{micros_str, parse_price_micros, Nanos};
use crate::db::budgets::{self as store, BudgetScope};
use crate::db::{self, audit};
use crate::domain::{AuditAction, Role};
use crate::error::{ApiError, ApiResult};

// `domain::BudgetUnit` in the API (its doc comments are the SDL's descriptions).
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "BudgetUnit", remote = "crate::domain::BudgetUnit")]
pub enum BudgetUnitName {
    /// The price book's currency, at contracted prices.
    Currency,
    /// GPU-hours, whatever their price.
    GpuHours,
}

/// Where spending stands against a budget.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "BudgetStatus")]
pub enum BudgetStatusName {
    /// Below the soft threshold.
    Under,
    /// At or past the soft threshold: a warning.
    Warning,
    /// At or past the amount: a hard budget refuses new jobs.
    Exceeded,
}

impl From<BudgetLevel> for BudgetStatusName {
    fn from(l: BudgetLevel) -> Self {
        match l {
            BudgetLevel::Under => BudgetStatusName::Under,
            BudgetLevel::Warning => BudgetStatusName::Warning,
            BudgetLevel::Exceeded => BudgetStatusName::Exceeded,
        }
    }
}

/// One day of the burn-down: what the month had cost by that day's end.
#[derive(SimpleObject)]
#[graphql(name = "BudgetDay")]
pub struct BudgetDayObj {
    pub day: DateTime<Utc>,
    pub spent: f64,
}

/// A project's or tenant's budget for the current calendar month (UTC) and its spending.
/// Amounts are decimal strings in the unit (`*Value`: the same as numbers, for charts).
#[derive(SimpleObject)]
#[graphql(name = "Budget")]
pub struct BudgetObj {
    pub unit: BudgetUnitName,
    /// The book's currency with CURRENCY; `GPU-hours` with GPU_HOURS.
    pub unit_label: String,
    pub amount: String,
    pub amount_value: f64,
    /// The warning threshold, in percent of the amount.
    pub soft_percent: i32,
    /// Whether reaching the amount refuses new jobs (BUDGET_EXCEEDED).
    pub hard: bool,
    /// With `hard`: whether reaching the amount also suspends the scope's borrowed work
    /// (resumed once the budget is no longer spent).
    pub suspend_borrowed: bool,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    /// What the month has cost so far.
    pub spent: String,
    pub spent_value: f64,
    /// What running work is expected to cost until it ends (within the month): until its
    /// predicted run time (p90 of like jobs, while still ahead), never past its maximum runtime;
    /// nothing for work of unknown end.
    pub committed: String,
    pub committed_value: f64,
    pub status: BudgetStatusName,
    /// Cumulative spending at each day's end, from the first of the month to today.
    pub burn_down: Vec<BudgetDayObj>,
    pub updated_at: DateTime<Utc>,
}

/// The scope's budget with its spending now; `None` without one.
pub(super) async fn budget_of(ctx: &Context<'_>, scope: BudgetScope) -> ApiResult<Option<BudgetObj>> {
    let pool = pool(ctx)?;
    let now = Utc::now();
    let mut conn = pool.acquire().await.map_err(db::DbError::from)?;
    let Some((row, state, inputs)) = store::state_of(&mut conn, scope, now).await? else { return Ok(None) };
    let line = budget::burn_down(state.budget.unit, &inputs.so_far, &inputs.book, inputs.period, now)
        .map_err(|e| ApiError::internal(&e))?;
    let unit_label = match state.budget.unit {
        crate::domain::BudgetUnit::Currency => billing_currency(pool).await?,
        crate::domain::BudgetUnit::GpuHours => "GPU-hours".to_owned(),
    };
    Ok(Some(BudgetObj {
        unit: state.budget.unit.into(),
        unit_label,
        amount: micros_str(state.budget.amount_micros),
        amount_value: state.budget.amount().to_f64(),
        soft_percent: i32::from(state.budget.soft_percent),
        hard: state.budget.hard,
        suspend_borrowed: state.budget.suspend_borrowed,
        period_start: inputs.period.start,
        period_end: inputs.period.end,
        spent: state.spend.spent.to_string(),
        spent_value: state.spend.spent.to_f64(),
        committed: state.spend.committed.to_string(),
        committed_value: state.spend.committed.to_f64(),
        status: state.level().into(),
        burn_down: line
            .into_iter()
            .map(|(day, n): (DateTime<Utc>, Nanos)| BudgetDayObj { day, spent: n.to_f64() })
            .collect(),
        updated_at: row.updated_at,
    }))
}

/// What to tell someone who just submitted to `project`: the first of its and its tenant's
/// budgets that is past its warning threshold, if any (one query when neither has a budget).
pub(super) async fn warning_for(ctx: &Context<'_>, project: i64) -> ApiResult<Option<String>> {
    let pool = pool(ctx)?;
    let now = Utc::now();
    let mut conn = pool.acquire().await.map_err(db::DbError::from)?;
    for (scope, name) in store::budgets_over(&mut conn, project).await? {
        let Some((_, state, _)) = store::state_of(&mut conn, scope, now).await? else { continue };
        let used = state.spend.total().to_f64() / state.budget.amount().to_f64().max(f64::MIN_POSITIVE) * 100.0;
        let what = match state.level() {
            BudgetLevel::Under => continue,
            BudgetLevel::Warning => format!("is {used:.0}% used (warning at {}%)", state.budget.soft_percent),
            BudgetLevel::Exceeded => format!("is spent ({used:.0}%); it only warns"),
        };
        tracing::info!(project, budget = name, used, "a submission under a budget past its warning threshold");
        return Ok(Some(format!("the monthly budget of {name} {what}")));
    }
    Ok(None)
}

/// Whose budget a mutation names, checked: a project's (tenant admins of its tenant) or a
/// tenant's (platform admins). Returns the scope and its audit target.
async fn scope_for_change(
    ctx: &Context<'_>,
    project_id: Option<ID>,
    tenant_id: Option<ID>,
) -> ApiResult<(BudgetScope, String)> {
    match (project_id, tenant_id) {
        (Some(p), None) => {
            let (project, _) = authorize(ctx, parse_id(&p, "project")?, Role::TenantAdmin).await?;
            Ok((BudgetScope::Project(project.id), format!("project/{}", project.slug)))
        }
        (None, Some(t)) => {
            if !caller(ctx)?.user.platform_admin {
                return Err(ApiError::Forbidden);
            }
            let tenant = db::get_tenant(pool(ctx)?, parse_id(&t, "tenant")?).await?;
            Ok((BudgetScope::Tenant(tenant.id), format!("tenant/{}", tenant.slug)))
        }
        _ => Err(ApiError::field("projectId", "name exactly one of projectId and tenantId")),
    }
}

#[derive(Default)]
pub struct BudgetMutation;

#[Object]
impl BudgetMutation {
    /// Sets the monthly budget of a project (tenant admins of its tenant) or of a tenant
    /// (platform admins); exactly one of `projectId` and `tenantId`. `amount` is a decimal
    /// string in the unit (`"1500"`, `"250.5"`: currency of the price book, or GPU-hours).
    /// At `softPercent` of it the budget warns; a `hard` budget refuses new jobs of the scope
    /// with BUDGET_EXCEEDED once what the month cost, plus what running work is expected to
    /// cost until it ends (its predicted run time, never past its maximum runtime), reaches the
    /// amount; with `suspendBorrowed` it also suspends
    /// the scope's borrowed work then, and resumes it once the budget is no longer spent.
    /// Audited.
    #[allow(clippy::too_many_arguments)]
    async fn set_budget(
        &self,
        ctx: &Context<'_>,
        project_id: Option<ID>,
        tenant_id: Option<ID>,
        unit: BudgetUnitName,
        amount: String,
        #[graphql(default = 80)] soft_percent: i32,
        #[graphql(default = true)] hard: bool,
        #[graphql(default = false)] suspend_borrowed: bool,
    ) -> ApiResult<BudgetObj> {
        let (scope, target) = scope_for_change(ctx, project_id, tenant_id).await?;
        let amount_micros = parse_price_micros(&amount)
            .ok()
            .filter(|m| *m > 0)
            .ok_or_else(|| ApiError::field("amount", "a positive decimal number with at most six decimals"))?;
        let soft_percent = u8::try_from(soft_percent)
            .ok()
            .filter(|p| (1..=MAX_SOFT_PERCENT).contains(p))
            .ok_or_else(|| ApiError::field("softPercent", "from 1 to 100"))?;
        if suspend_borrowed && !hard {
            return Err(ApiError::field("suspendBorrowed", "only a hard budget suspends borrowed work"));
        }
        let budget = Budget { unit: unit.into(), amount_micros, soft_percent, hard, suspend_borrowed };
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        store::set_budget(&mut *tx, scope, &budget).await?;
        let detail = format!(
            "{} {} a month, warning at {soft_percent}%, {}",
            micros_str(amount_micros),
            budget.unit.as_str(),
            if suspend_borrowed {
                "hard, suspends borrowed work"
            } else if hard {
                "hard"
            } else {
                "soft only"
            }
        );
        audit::record(&mut *tx, &caller(ctx)?.user.subject, AuditAction::BudgetSet, &target, &detail).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        budget_of(ctx, scope).await?.ok_or(ApiError::NotFound("budget"))
    }

    /// Removes the budget of a project or tenant (who may set it); false when there was none.
    /// Audited.
    async fn remove_budget(&self, ctx: &Context<'_>, project_id: Option<ID>, tenant_id: Option<ID>) -> ApiResult<bool> {
        let (scope, target) = scope_for_change(ctx, project_id, tenant_id).await?;
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        let removed = store::remove_budget(&mut *tx, scope).await?;
        if removed {
            audit::record(&mut *tx, &caller(ctx)?.user.subject, AuditAction::BudgetRemove, &target, "").await?;
        }
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(removed)
    }
}
