//! Billing over GraphQL: the price book (`priceBook`, `setPrice`), usage grouped by dimension
//! (`usage`) and FOCUS exports (`exportUsage`, downloaded from `GET /api/exports/{id}`).
//!
//! Who sees what (invariant 7): usage rows come only from projects the caller has a role in
//! (a tenant admin: every project of the tenant; a platform admin: everything), so no filter
//! can reach another tenant's rows. Exports are per scope: a platform admin exports
//! everything or one tenant, a tenant admin their tenant. Prices are platform-wide: everyone
//! signed in reads them, only platform admins write them.
//!
//! Exports are of closed periods only: a period that ends after now is refused (VALIDATION),
//! because a stored file is frozen (UNIQUE per scope, period and format) and a still-running
//! period would change under it. `usage` covers open periods (running replicas count up to
//! now). Amounts are exact decimal strings computed from integer nano-units, plus `Float`
//! copies for charts.

use async_graphql::{Context, Enum, InputObject, Object, SimpleObject, ID};
use chrono::{DateTime, Duration, DurationRound, Utc};
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use super::{caller, parse_id, pool};
use crate::billing::{self, BillingError, Dim, FocusConfig, Period, PriceBook};
use crate::db::billing::{self as store, ExportRow, LedgerFilter, NewExport, NewPrice, PriceRow};
use crate::db::{self, User};
use crate::domain::{ExportFormat, Role};
use crate::error::{ApiError, ApiResult, FieldError};

/// The month up to `now` in whole seconds, or the whole month once it has ended.
fn month_to_date(month: Period, now: DateTime<Utc>) -> ApiResult<Period> {
    if month.end <= now {
        return Ok(month);
    }
    let cut = now.duration_trunc(Duration::seconds(1)).map_err(|e| ApiError::internal(&e))?;
    if cut <= month.start {
        return Err(ApiError::field("period.month", "has not begun: there is nothing to export yet"));
    }
    Ok(Period { start: month.start, end: cut })
}

/// Longest period one `usage` or `exportUsage` call covers.
const MAX_PERIOD_DAYS: i64 = 400;
/// Currency of an empty price book.
const DEFAULT_CURRENCY: &str = "USD";

/// A billing period: a calendar month (`month: "2026-11"`), the month up to a cut-off
/// (`month` and `cutoff`: month to date, as cloud providers deliver it daily), or a range
/// (`start`, `end`).
#[derive(InputObject, Clone, Debug, Default)]
pub struct PeriodInput {
    /// `YYYY-MM`: that UTC month.
    pub month: Option<String>,
    /// With `month`: the month from its start up to this instant (exclusive), after the
    /// month's start and not after its end. Exporting the same cut-off again returns the same
    /// file.
    pub cutoff: Option<DateTime<Utc>>,
    /// With `month`: the month to date by the server's clock, up to now in whole seconds (the
    /// cut-off it chose is the export's `periodEnd`; asking for that `cutoff` again gives the
    /// same file, so usage an agent reports only after the export is in the next one, not in
    /// that file). A month that has ended: the whole month. Not with `cutoff`.
    pub to_date: Option<bool>,
    /// Inclusive start of a range; with `end`, instead of `month`.
    pub start: Option<DateTime<Utc>>,
    /// Exclusive end of a range.
    pub end: Option<DateTime<Utc>>,
}

impl PeriodInput {
    /// The period asked for, `now` the server's clock (for `toDate`).
    fn period(&self, now: DateTime<Utc>) -> ApiResult<Period> {
        let to_date = self.to_date == Some(true);
        if to_date && (self.cutoff.is_some() || self.month.is_none()) {
            return Err(ApiError::field("period.toDate", "goes with month alone (not with cutoff, start or end)"));
        }
        let p = match (&self.month, self.start, self.end) {
            (Some(m), None, None) => {
                let month = billing::month_period(m).map_err(|e| ApiError::field("period.month", e.to_string()))?;
                match self.cutoff {
                    _ if to_date => month_to_date(month, now)?,
                    Some(cutoff) if cutoff <= month.start || cutoff > month.end => {
                        return Err(ApiError::field("period.cutoff", "must fall within the month, after its start"))
                    }
                    Some(cutoff) => Period { start: month.start, end: cutoff },
                    None => month,
                }
            }
            (_, _, _) if self.cutoff.is_some() => {
                return Err(ApiError::field("period.cutoff", "goes with month (the month up to the cut-off)"))
            }
            (None, Some(start), Some(end)) => {
                if end <= start {
                    return Err(ApiError::field("period.end", "must be after start"));
                }
                Period { start, end }
            }
            _ => return Err(ApiError::field("period", "give either month, or start and end")),
        };
        if p.end - p.start > Duration::days(MAX_PERIOD_DAYS) {
            return Err(ApiError::field("period", format!("at most {MAX_PERIOD_DAYS} days")));
        }
        Ok(p)
    }
}

/// A dimension to group usage by.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(remote = "crate::billing::Dim")]
pub enum UsageDimension {
    Project,
    /// `<project>/<queue>`: queue names are unique within a project only.
    Queue,
    Cluster,
    GpuModel,
    User,
    /// The UTC day, `YYYY-MM-DD`.
    Day,
    /// The workload type: `batch`, `workspace` or `inference`.
    WorkloadType,
}

/// Restricts usage; every field given must match.
#[derive(InputObject, Clone, Debug, Default)]
pub struct UsageFilter {
    pub project_id: Option<ID>,
    pub queue_id: Option<ID>,
    pub cluster_id: Option<String>,
    pub gpu_model: Option<String>,
    pub user_id: Option<ID>,
}

// `domain::ExportFormat` in the API (its doc comments are the SDL's descriptions).
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "ExportFormat", remote = "crate::domain::ExportFormat")]
pub enum ExportFormatName {
    /// FOCUS 1.2 as CSV (RFC 4180, CRLF), `text/csv`.
    FocusCsv,
    /// FOCUS 1.2 as JSON Lines, `application/x-ndjson`.
    FocusJsonl,
}

/// One price of one GPU model, valid in `[effectiveFrom, effectiveTo)`.
#[derive(SimpleObject)]
pub struct PriceBookEntry {
    pub id: ID,
    pub gpu_model: String,
    /// Per GPU-hour, exact decimal (six fractional digits).
    pub list_price_per_gpu_hour: String,
    pub contracted_price_per_gpu_hour: String,
    pub currency: String,
    pub effective_from: DateTime<Utc>,
    /// `null`: until further notice.
    pub effective_to: Option<DateTime<Utc>>,
}

impl From<PriceRow> for PriceBookEntry {
    fn from(r: PriceRow) -> Self {
        PriceBookEntry {
            id: ID(r.id.to_string()),
            gpu_model: r.gpu_model,
            list_price_per_gpu_hour: billing::micros_str(r.list_micros),
            contracted_price_per_gpu_hour: billing::micros_str(r.contracted_micros),
            currency: r.currency,
            effective_from: r.effective_from,
            effective_to: r.effective_to,
        }
    }
}

/// Usage of one group. Only the dimensions grouped by are set.
#[derive(SimpleObject)]
pub struct UsageRow {
    pub project: Option<String>,
    pub queue: Option<String>,
    pub cluster: Option<String>,
    pub gpu_model: Option<String>,
    /// The user's subject.
    pub user: Option<String>,
    pub day: Option<String>,
    /// `batch`, `workspace` or `inference`.
    pub workload_type: Option<String>,
    /// Exact, nine fractional digits.
    pub gpu_hours: String,
    pub list_cost: String,
    pub contracted_cost: String,
    /// What is billed: the contracted cost (no commitment discounts yet).
    pub effective_cost: String,
    /// Approximate copies of the amounts above, for charts.
    pub gpu_hours_value: f64,
    pub list_cost_value: f64,
    pub contracted_cost_value: f64,
    pub effective_cost_value: f64,
    /// Priced pieces (interval x day x price) summed into this row.
    pub charges: i32,
}

impl From<billing::UsageRow> for UsageRow {
    fn from(r: billing::UsageRow) -> Self {
        let mut row = UsageRow {
            project: None,
            queue: None,
            cluster: None,
            gpu_model: None,
            user: None,
            day: None,
            workload_type: None,
            gpu_hours: r.gpu_hours.to_string(),
            list_cost: r.list_cost.to_string(),
            contracted_cost: r.contracted_cost.to_string(),
            effective_cost: r.contracted_cost.to_string(),
            gpu_hours_value: r.gpu_hours.to_f64(),
            list_cost_value: r.list_cost.to_f64(),
            contracted_cost_value: r.contracted_cost.to_f64(),
            effective_cost_value: r.contracted_cost.to_f64(),
            charges: i32::try_from(r.charges).unwrap_or(i32::MAX),
        };
        for (dim, value) in r.key {
            let slot = match dim {
                Dim::Project => &mut row.project,
                Dim::Queue => &mut row.queue,
                Dim::Cluster => &mut row.cluster,
                Dim::GpuModel => &mut row.gpu_model,
                Dim::User => &mut row.user,
                Dim::Day => &mut row.day,
                Dim::WorkloadType => &mut row.workload_type,
            };
            *slot = Some(value);
        }
        row
    }
}

/// Usage of a period, grouped.
#[derive(SimpleObject)]
pub struct UsageReport {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Running replicas are counted up to this instant (`min(now, end)`).
    pub as_of: DateTime<Utc>,
    pub currency: String,
    /// Sorted by the group keys; with no `groupBy`, one row with the total (none without usage).
    pub rows: Vec<UsageRow>,
}

/// A stored FOCUS export.
#[derive(SimpleObject)]
pub struct UsageExport {
    pub id: ID,
    /// `null`: every tenant (a platform export).
    pub tenant_id: Option<ID>,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    pub format: ExportFormatName,
    pub currency: String,
    /// Hex SHA-256 of the file (also its HTTP ETag).
    pub sha256: String,
    pub bytes: i64,
    /// Charge rows in the file.
    pub rows: i64,
    pub created_at: DateTime<Utc>,
    /// Relative URL of the file (same authentication as /graphql).
    pub download_url: String,
}

impl From<ExportRow> for UsageExport {
    fn from(e: ExportRow) -> Self {
        UsageExport {
            id: ID(e.id.to_string()),
            tenant_id: e.tenant_id.map(|t| ID(t.to_string())),
            period_start: e.period_start,
            period_end: e.period_end,
            format: e.format.into(),
            currency: e.currency,
            sha256: e.sha256,
            bytes: e.bytes,
            rows: e.row_count,
            created_at: e.created_at,
            download_url: format!("/api/exports/{}", e.id),
        }
    }
}

pub(super) fn billing_error(e: BillingError) -> ApiError {
    match e {
        BillingError::NoPrice { model, at } => ApiError::Conflict(format!(
            "no price for GPU model {model} at {}: add one with setPrice",
            at.format("%Y-%m-%dT%H:%M:%SZ")
        )),
        other => ApiError::internal(&other),
    }
}

/// Runs a pure billing computation on the blocking pool.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, BillingError> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::internal(&e))?.map_err(billing_error)
}

/// The currency of the price book (of an empty one, the default).
pub(super) async fn billing_currency(pool: &PgPool) -> ApiResult<String> {
    Ok(store::price_book(pool).await?.first().map_or_else(|| DEFAULT_CURRENCY.to_owned(), |r| r.currency.clone()))
}

/// The price book as the pure code takes it, and its currency.
pub(super) async fn load_book(pool: &PgPool) -> ApiResult<(PriceBook, String)> {
    let rows = store::price_book(pool).await?;
    let currency = rows.first().map_or_else(|| DEFAULT_CURRENCY.to_owned(), |r| r.currency.clone());
    let book = PriceBook::new(rows.iter().map(PriceRow::entry).collect()).map_err(billing_error)?;
    Ok((book, currency))
}

/// May `user` read exports of `tenant_id` (`None`: the platform-wide scope)? Errors tell
/// NOT_FOUND (no role anywhere in the tenant) from FORBIDDEN (a role too weak).
async fn authorize_export_scope(pool: &PgPool, user: &User, tenant_id: Option<i64>) -> ApiResult<()> {
    if user.platform_admin {
        return Ok(());
    }
    let Some(tenant) = tenant_id else { return Err(ApiError::Forbidden) };
    match db::role_in_tenant(pool, user.id, tenant).await? {
        Some(r) if r >= Role::TenantAdmin => Ok(()),
        _ => {
            let visible = db::projects_for_user(pool, user.id).await?;
            if visible.iter().any(|(p, _)| p.tenant_id == tenant) {
                Err(ApiError::Forbidden)
            } else {
                Err(ApiError::NotFound("tenant"))
            }
        }
    }
}

/// Whether `user` may download export `e` (the HTTP route answers 404 otherwise).
pub async fn may_read_export(pool: &PgPool, user: &User, e: &ExportRow) -> ApiResult<bool> {
    match authorize_export_scope(pool, user, e.tenant_id).await {
        Ok(()) => Ok(true),
        Err(ApiError::Forbidden | ApiError::NotFound(_)) => Ok(false),
        Err(other) => Err(other),
    }
}

/// The file name of a stored export (for Content-Disposition).
pub async fn export_file_name(pool: &PgPool, e: &ExportRow) -> ApiResult<String> {
    let scope = match e.tenant_id {
        Some(t) => db::get_tenant(pool, t).await?.slug,
        None => "all".to_owned(),
    };
    let period = Period { start: e.period_start, end: e.period_end };
    Ok(billing::export_file_name(&scope, period, e.format.as_str()))
}

/// Builds (or finds) the export of a scope and closed period.
async fn export(
    pool: &PgPool,
    tenant: Option<db::Tenant>,
    period: Period,
    format: ExportFormat,
) -> ApiResult<ExportRow> {
    let tenant_id = tenant.as_ref().map(|t| t.id);
    if let Some(found) = store::find_export(pool, tenant_id, period, format).await? {
        return Ok(found);
    }
    let (book, currency) = load_book(pool).await?;
    let filter = LedgerFilter { tenant_id, ..LedgerFilter::default() };
    // The period is closed, so `now` = its end clips nothing more: the file depends only on
    // the ledger and the price book.
    let intervals = store::ledger_intervals(pool, period, period.end, &filter).await?;
    let (account_id, account_name) = match &tenant {
        Some(t) => (t.slug.clone(), t.name.clone()),
        None => ("grus-platform".to_owned(), "Grus platform".to_owned()),
    };
    let cfg = FocusConfig {
        currency: currency.clone(),
        provider_name: "Grus".into(),
        publisher_name: "Grus".into(),
        invoice_issuer_name: "Grus".into(),
        billing_account_id: account_id,
        billing_account_name: account_name,
        service_name: "Grus GPU Jobs".into(),
        invoice_id: None,
        region_id: None,
        region_name: None,
    };
    // Pricing a month of a fleet is seconds of CPU: off the async workers.
    let (rows, content, sha256) = blocking(move || {
        let rows = billing::charges(&intervals, &book, period)?.len();
        let content = match format {
            ExportFormat::FocusCsv => billing::focus_csv(&intervals, &book, period, &cfg),
            ExportFormat::FocusJsonl => billing::focus_jsonl(&intervals, &book, period, &cfg),
        }?;
        let sha256 = hex::encode(Sha256::digest(content.as_bytes()));
        Ok((rows, content, sha256))
    })
    .await?;
    let mut tx = pool.begin().await.map_err(|e| ApiError::internal(&e))?;
    let stored = store::store_export(
        &mut tx,
        &NewExport {
            tenant_id,
            period,
            format,
            sha256: &sha256,
            content: content.as_bytes(),
            row_count: i64::try_from(rows).unwrap_or(i64::MAX),
            currency: &currency,
        },
    )
    .await?;
    tx.commit().await.map_err(|e| ApiError::internal(&e))?;
    Ok(stored)
}

fn gpu_model_ok(m: &str) -> bool {
    let b = m.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Billing reads.
#[derive(Default)]
pub struct BillingQuery;

#[Object]
impl BillingQuery {
    /// Every price of every GPU model, by model then start.
    async fn price_book(&self, ctx: &Context<'_>) -> ApiResult<Vec<PriceBookEntry>> {
        caller(ctx)?;
        Ok(store::price_book(pool(ctx)?).await?.into_iter().map(PriceBookEntry::from).collect())
    }

    /// GPU usage and its cost in `period`, grouped by `groupBy` (in the order given), over
    /// the projects the caller can see.
    async fn usage(
        &self,
        ctx: &Context<'_>,
        period: PeriodInput,
        group_by: Option<Vec<UsageDimension>>,
        filter: Option<UsageFilter>,
    ) -> ApiResult<UsageReport> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let period = period.period(Utc::now())?;
        let mut dims: Vec<Dim> = Vec::new();
        for d in group_by.unwrap_or_default() {
            let d = Dim::from(d);
            if dims.contains(&d) {
                return Err(ApiError::field("groupBy", "a dimension appears twice"));
            }
            dims.push(d);
        }
        let filter = filter.unwrap_or_default();
        let mut projects = if user.platform_admin {
            None
        } else {
            Some(db::projects_for_user(pool, user.id).await?.into_iter().map(|(p, _)| p.id).collect::<Vec<_>>())
        };
        if let Some(id) = &filter.project_id {
            let id = parse_id(id, "project")?;
            let visible = match &projects {
                None => db::get_project(pool, id).await.is_ok(),
                Some(ids) => ids.contains(&id),
            };
            if !visible {
                return Err(ApiError::NotFound("project"));
            }
            projects = Some(vec![id]);
        }
        let id_or_none = |id: &Option<ID>, what| id.as_ref().map(|i| parse_id(i, what)).transpose();
        let ledger_filter = LedgerFilter {
            projects,
            tenant_id: None,
            queue_id: id_or_none(&filter.queue_id, "queue")?,
            cluster_id: filter.cluster_id,
            gpu_model: filter.gpu_model,
            user_id: id_or_none(&filter.user_id, "user")?,
            job_ids: None,
        };
        let now = Utc::now();
        let (book, currency) = load_book(pool).await?;
        let intervals = store::ledger_intervals(pool, period, now, &ledger_filter).await?;
        let rows = blocking(move || billing::group_usage(&intervals, &book, &dims, period)).await?;
        Ok(UsageReport {
            start: period.start,
            end: period.end,
            as_of: now.min(period.end),
            currency,
            rows: rows.into_iter().map(UsageRow::from).collect(),
        })
    }
}

/// Billing writes.
#[derive(Default)]
pub struct BillingMutation;

#[Object]
impl BillingMutation {
    /// Adds a price (platform admins). Prices are decimal strings (`"2.50"`, at most six
    /// decimals); `contractedPricePerGpuHour` defaults to the list price, `currency` to the
    /// book's (one currency per book). A price starting after the start of the model's
    /// open-ended price closes that one at its start; any other overlap is CONFLICT, and so
    /// is a range that reaches into an already exported period.
    #[allow(clippy::too_many_arguments)]
    async fn set_price(
        &self,
        ctx: &Context<'_>,
        gpu_model: String,
        list_price_per_gpu_hour: String,
        contracted_price_per_gpu_hour: Option<String>,
        currency: Option<String>,
        effective_from: DateTime<Utc>,
        effective_to: Option<DateTime<Utc>>,
    ) -> ApiResult<PriceBookEntry> {
        if !caller(ctx)?.user.platform_admin {
            return Err(ApiError::Forbidden);
        }
        let pool = pool(ctx)?;
        let mut errs = Vec::new();
        let mut err = |field: &str, message: String| errs.push(FieldError { field: field.into(), message });
        if !gpu_model_ok(&gpu_model) {
            err("gpuModel", "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit".into());
        }
        let list = billing::parse_price_micros(&list_price_per_gpu_hour)
            .map_err(|e| err("listPricePerGpuHour", e.to_string()))
            .ok();
        let contracted = match &contracted_price_per_gpu_hour {
            Some(s) => billing::parse_price_micros(s).map_err(|e| err("contractedPricePerGpuHour", e.to_string())).ok(),
            None => list,
        };
        let currency = match currency {
            Some(c) => c,
            None => store::price_book(pool).await?.first().map_or(DEFAULT_CURRENCY.to_owned(), |r| r.currency.clone()),
        };
        if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
            err("currency", "an ISO 4217 code like USD".into());
        }
        if effective_to.is_some_and(|to| to <= effective_from) {
            err("effectiveTo", "must be after effectiveFrom".into());
        }
        let (Some(list), Some(contracted), true) = (list, contracted, errs.is_empty()) else {
            return Err(ApiError::Validation(errs));
        };
        let mut tx = pool.begin().await.map_err(|e| ApiError::internal(&e))?;
        let row = store::set_price(
            &mut tx,
            &NewPrice {
                gpu_model: &gpu_model,
                list_micros: list,
                contracted_micros: contracted,
                currency: &currency,
                effective_from,
                effective_to,
            },
        )
        .await?;
        tx.commit().await.map_err(|e| ApiError::internal(&e))?;
        Ok(row.into())
    }

    /// Exports a closed period as a FOCUS 1.2 file: every tenant (platform admins, without
    /// `tenantId`) or one tenant (its tenant admins, or platform admins). The month still
    /// running is exported up to a past cut-off (`period: { month, cutoff }`), charges cut
    /// there. Exporting the same scope, period (cut-off) and format again returns the stored
    /// file, byte for byte; later usage never changes it, and a closed month's file stays.
    async fn export_usage(
        &self,
        ctx: &Context<'_>,
        period: PeriodInput,
        format: ExportFormatName,
        tenant_id: Option<ID>,
    ) -> ApiResult<UsageExport> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let period = period.period(Utc::now())?;
        let tenant_id = tenant_id.as_ref().map(|t| parse_id(t, "tenant")).transpose()?;
        if tenant_id.is_none() && !user.platform_admin {
            return Err(ApiError::field("tenantId", "give the tenant to export; only platform admins export all"));
        }
        authorize_export_scope(pool, user, tenant_id).await?;
        if period.end > Utc::now() {
            return Err(ApiError::field(
                "period",
                "not closed yet: exports are of ended periods, or of a month up to a past cut-off (usage shows open ones)",
            ));
        }
        let tenant = match tenant_id {
            Some(t) => Some(db::get_tenant(pool, t).await?),
            None => None,
        };
        Ok(export(pool, tenant, period, format.into()).await?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods() {
        let m = PeriodInput { month: Some("2026-02".into()), ..Default::default() };
        assert_eq!(m.period(Utc::now()).unwrap(), billing::month_period("2026-02").unwrap());
        let t0 = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().to_utc();
        let range = PeriodInput { start: Some(t0), end: Some(t0 + Duration::hours(5)), ..Default::default() };
        assert_eq!(range.period(Utc::now()).unwrap(), Period { start: t0, end: t0 + Duration::hours(5) });
        let code = |p: PeriodInput| p.period(Utc::now()).unwrap_err().code();
        assert_eq!(code(PeriodInput::default()), "VALIDATION");
        assert_eq!(code(PeriodInput { start: Some(t0), end: Some(t0), ..Default::default() }), "VALIDATION");
        assert_eq!(code(PeriodInput { start: Some(t0), ..Default::default() }), "VALIDATION");
        assert_eq!(
            code(PeriodInput { month: Some("2026-02".into()), start: Some(t0), ..Default::default() }),
            "VALIDATION"
        );
        let long = PeriodInput { start: Some(t0), end: Some(t0 + Duration::days(401)), ..Default::default() };
        assert_eq!(code(long), "VALIDATION");
    }

    #[test]
    fn a_month_up_to_a_cutoff_is_the_month_to_date() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        let mtd = |cutoff: &str| PeriodInput {
            month: Some("2026-11".into()),
            cutoff: Some(at(cutoff)),
            ..Default::default()
        };
        assert_eq!(
            mtd("2026-11-28T00:00:00Z").period(Utc::now()).unwrap(),
            Period { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-28T00:00:00Z") }
        );
        assert_eq!(mtd("2026-12-01T00:00:00Z").period(Utc::now()).unwrap(), billing::month_period("2026-11").unwrap());
        for outside in ["2026-11-01T00:00:00Z", "2026-10-31T23:00:00Z", "2026-12-01T00:00:01Z"] {
            let e = mtd(outside).period(Utc::now()).unwrap_err();
            assert_eq!((e.code(), field_of(&e)), ("VALIDATION", "period.cutoff".to_owned()), "{outside}");
        }
        let t0 = at("2026-11-02T00:00:00Z");
        let range =
            PeriodInput { start: Some(t0), end: Some(t0 + Duration::hours(1)), cutoff: Some(t0), ..Default::default() };
        assert_eq!(field_of(&range.period(Utc::now()).unwrap_err()), "period.cutoff");
    }

    #[test]
    fn to_date_is_the_month_up_to_the_servers_clock() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        let to_date =
            |month: &str| PeriodInput { month: Some(month.into()), to_date: Some(true), ..Default::default() };
        let now = at("2026-11-22T03:04:05.678Z");
        assert_eq!(
            to_date("2026-11").period(now).unwrap(),
            Period { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-22T03:04:05Z") }
        );
        assert_eq!(
            to_date("2026-10").period(now).unwrap(),
            billing::month_period("2026-10").unwrap(),
            "an ended month whole"
        );
        let refused = |p: PeriodInput, now: DateTime<Utc>| {
            let e = p.period(now).unwrap_err();
            (e.code(), field_of(&e))
        };
        assert_eq!(refused(to_date("2026-12"), now), ("VALIDATION", "period.month".to_owned()), "not begun");
        assert_eq!(
            refused(to_date("2026-11"), at("2026-11-01T00:00:00.5Z")),
            ("VALIDATION", "period.month".to_owned())
        );
        let both = PeriodInput { cutoff: Some(at("2026-11-02T00:00:00Z")), ..to_date("2026-11") };
        assert_eq!(refused(both, now), ("VALIDATION", "period.toDate".to_owned()));
        let range = PeriodInput { start: Some(now), end: Some(now), to_date: Some(true), ..Default::default() };
        assert_eq!(refused(range, now), ("VALIDATION", "period.toDate".to_owned()));
    }

    fn field_of(e: &ApiError) -> String {
        match e {
            ApiError::Validation(fields) => fields[0].field.clone(),
            _ => String::new(),
        }
    }

    #[test]
    fn gpu_models() {
        assert!(gpu_model_ok("A100-80GB"));
        assert!(gpu_model_ok("H100_SXM.5"));
        assert!(!gpu_model_ok(""));
        assert!(!gpu_model_ok("-A100"));
        assert!(!gpu_model_ok("A100 80GB"));
        assert!(!gpu_model_ok(&"a".repeat(65)));
    }
}
