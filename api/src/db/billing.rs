//! Billing storage: the price book, usage-ledger intervals of a period, and stored exports.
//!
//! Prices are `numeric(18, 6)` in the table and integer micro-units here; the conversion is
//! done by PostgreSQL (`* 1000000`, exact at scale 6), so no float ever touches money.
//! Ledger rows are read, never written: the event ingester owns them.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::{DbError, DbResult};
use crate::billing::{Account, LedgerInterval, Period, PriceEntry};
use crate::domain::ExportFormat;

/// One row of the price book.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct PriceRow {
    pub id: i64,
    pub gpu_model: String,
    pub list_micros: i64,
    pub contracted_micros: i64,
    pub currency: String,
    pub effective_from: DateTime<Utc>,
    pub effective_to: Option<DateTime<Utc>>,
}

impl PriceRow {
    pub fn entry(&self) -> PriceEntry {
        PriceEntry {
            model: self.gpu_model.clone(),
            list_micros: self.list_micros,
            contracted_micros: Some(self.contracted_micros),
            effective_from: self.effective_from,
            effective_to: self.effective_to,
        }
    }
}

const PRICE_COLUMNS: &str = "id, gpu_model,
    (list_price_per_gpu_hour * 1000000)::bigint AS list_micros,
    (contracted_price_per_gpu_hour * 1000000)::bigint AS contracted_micros,
    currency, effective_from, effective_to";

/// The whole price book, by model then start.
pub async fn price_book(db: impl PgExecutor<'_>) -> DbResult<Vec<PriceRow>> {
    Ok(sqlx::query_as(&format!("SELECT {PRICE_COLUMNS} FROM price_book ORDER BY gpu_model, effective_from"))
        .fetch_all(db)
        .await?)
}

/// A new price of one GPU model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewPrice<'a> {
    pub gpu_model: &'a str,
    pub list_micros: i64,
    pub contracted_micros: i64,
    pub currency: &'a str,
    pub effective_from: DateTime<Utc>,
    pub effective_to: Option<DateTime<Utc>>,
}

/// Adds a price. Run it in a transaction (`&mut *tx`).
///
/// Rules, in order:
/// - one currency for the whole book (exports and usage totals are in one currency): a
///   different currency is VALIDATION;
/// - a stored export is frozen: a price whose range reaches into an exported period is
///   CONFLICT (the file would no longer match the book);
/// - a price starting after the start of the model's open-ended price closes that price at
///   the new start (the usual "new price from the 1st" edit);
/// - anything still overlapping is CONFLICT, from the table's exclusion constraint.
pub async fn set_price(conn: &mut PgConnection, p: &NewPrice<'_>) -> DbResult<PriceRow> {
    // One writer per model at a time, so two concurrent edits cannot both close the same
    // open-ended price.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('grus.price_book'), hashtext($1))")
        .bind(p.gpu_model)
        .execute(&mut *conn)
        .await?;
    let other: Option<(String,)> = sqlx::query_as("SELECT currency FROM price_book WHERE currency <> $1 LIMIT 1")
        .bind(p.currency)
        .fetch_optional(&mut *conn)
        .await?;
    if let Some((existing,)) = other {
        return Err(DbError::Validation {
            message: format!("the price book is in {existing}; every price must use it"),
            constraint: Some("currency".into()),
        });
    }
    let frozen: Option<(DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(
        "SELECT period_start, period_end FROM exports
         WHERE period_end > $1 AND ($2::timestamptz IS NULL OR period_start < $2)
         ORDER BY period_start LIMIT 1",
    )
    .bind(p.effective_from)
    .bind(p.effective_to)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((s, e)) = frozen {
        return Err(DbError::conflict(format!(
            "usage from {} to {} is already exported; prices in it are frozen",
            s.to_rfc3339(),
            e.to_rfc3339()
        )));
    }
    sqlx::query(
        "UPDATE price_book SET effective_to = $2
         WHERE gpu_model = $1 AND effective_to IS NULL AND effective_from < $2",
    )
    .bind(p.gpu_model)
    .bind(p.effective_from)
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query_as(&format!(
        "INSERT INTO price_book (gpu_model, list_price_per_gpu_hour, contracted_price_per_gpu_hour, currency,
                                 effective_from, effective_to)
         VALUES ($1, $2::numeric / 1000000, $3::numeric / 1000000, $4, $5, $6)
         RETURNING {PRICE_COLUMNS}"
    ))
    .bind(p.gpu_model)
    .bind(p.list_micros)
    .bind(p.contracted_micros)
    .bind(p.currency)
    .bind(p.effective_from)
    .bind(p.effective_to)
    .fetch_one(&mut *conn)
    .await?)
}

/// Which ledger rows to read; empty fields do not filter. `projects: None` is every
/// project (platform admins); `Some` restricts to those ids, and must hold exactly what the
/// caller may see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerFilter {
    pub projects: Option<Vec<i64>>,
    pub tenant_id: Option<i64>,
    pub queue_id: Option<i64>,
    pub cluster_id: Option<String>,
    pub gpu_model: Option<String>,
    pub user_id: Option<i64>,
    /// Only these jobs' intervals (a workload's cost).
    pub job_ids: Option<Vec<i64>>,
}

#[derive(FromRow)]
struct LedgerRow {
    project: String,
    queue: String,
    cluster_id: String,
    gpu_model: String,
    gpu_milli: i64,
    started_at: DateTime<Utc>,
    ended_at: DateTime<Utc>,
    job_id: i64,
    workload_type: String,
    task: String,
    replica: i32,
    subject: String,
    ended_by_preemption: bool,
    tenant_slug: String,
    tenant_name: String,
}

/// The ledger intervals overlapping `period`, as the pure billing code takes them. An open
/// interval (a replica still running) ends at `min(now, period.end)`, so a running replica is
/// charged up to now and never into the future. Queues are named `<project>/<queue>`: queue
/// names are only unique within a project. Every interval names its tenant as its account.
pub async fn ledger_intervals(
    db: impl PgExecutor<'_>,
    period: Period,
    now: DateTime<Utc>,
    f: &LedgerFilter,
) -> DbResult<Vec<LedgerInterval>> {
    let rows: Vec<LedgerRow> = sqlx::query_as(
        "SELECT p.slug AS project, p.slug || '/' || q.name AS queue, l.cluster_id, l.gpu_model, l.gpu_milli,
                l.started_at,
                GREATEST(l.started_at, COALESCE(l.ended_at, LEAST($3, $2))) AS ended_at,
                l.job_id, j.workload_type, t.name AS task, r.index AS replica, u.subject, l.ended_by_preemption,
                tn.slug AS tenant_slug, tn.name AS tenant_name
         FROM usage_ledger l
         JOIN projects p ON p.id = l.project_id
         JOIN tenants tn ON tn.id = p.tenant_id
         JOIN queues q ON q.id = l.queue_id
         JOIN jobs j ON j.id = l.job_id
         JOIN tasks t ON t.id = l.task_id
         JOIN replicas r ON r.id = l.replica_id
         JOIN users u ON u.id = l.user_id
         WHERE l.started_at < $2 AND (l.ended_at IS NULL OR l.ended_at > $1)
           AND ($4::bigint[] IS NULL OR l.project_id = ANY($4))
           AND ($5::bigint IS NULL OR p.tenant_id = $5)
           AND ($6::bigint IS NULL OR l.queue_id = $6)
           AND ($7::text IS NULL OR l.cluster_id = $7)
           AND ($8::text IS NULL OR l.gpu_model = $8)
           AND ($9::bigint IS NULL OR l.user_id = $9)
           AND ($10::bigint[] IS NULL OR l.job_id = ANY($10))
         ORDER BY l.id",
    )
    .bind(period.start)
    .bind(period.end)
    .bind(now)
    .bind(f.projects.as_deref())
    .bind(f.tenant_id)
    .bind(f.queue_id)
    .bind(f.cluster_id.as_deref())
    .bind(f.gpu_model.as_deref())
    .bind(f.user_id)
    .bind(f.job_ids.as_deref())
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|r| {
            let milli = u32::try_from(r.gpu_milli).map_err(|_| DbError::validation("gpu_milli out of range"))?;
            Ok(LedgerInterval {
                project: r.project,
                queue: r.queue,
                cluster: r.cluster_id,
                gpu_model: r.gpu_model,
                milli,
                start: r.started_at,
                end: r.ended_at,
                job: r.job_id as u64,
                workload: r.workload_type.parse().map_err(|_| DbError::validation("unknown workload type"))?,
                task: r.task,
                replica: r.replica as u32,
                user: r.subject,
                ended_by_preemption: r.ended_by_preemption,
                account: Some(Account { id: r.tenant_slug, name: r.tenant_name }),
            })
        })
        .collect()
}

/// A stored export (without its content).
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct ExportRow {
    pub id: i64,
    /// `None`: the platform-wide export.
    pub tenant_id: Option<i64>,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    #[sqlx(try_from = "String")]
    pub format: ExportFormat,
    pub sha256: String,
    pub bytes: i64,
    pub row_count: i64,
    pub currency: String,
    pub created_at: DateTime<Utc>,
}

const EXPORT_COLUMNS: &str = "id, tenant_id, period_start, period_end, format, sha256,
    octet_length(content)::bigint AS bytes, row_count, currency, created_at";

/// The stored export of this scope, period and format, if any.
pub async fn find_export(
    db: impl PgExecutor<'_>,
    tenant_id: Option<i64>,
    period: Period,
    format: ExportFormat,
) -> DbResult<Option<ExportRow>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {EXPORT_COLUMNS} FROM exports
         WHERE tenant_id IS NOT DISTINCT FROM $1 AND period_start = $2 AND period_end = $3 AND format = $4"
    ))
    .bind(tenant_id)
    .bind(period.start)
    .bind(period.end)
    .bind(format.as_str())
    .fetch_optional(db)
    .await?)
}

/// A file to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewExport<'a> {
    pub tenant_id: Option<i64>,
    pub period: Period,
    pub format: ExportFormat,
    pub sha256: &'a str,
    pub content: &'a [u8],
    pub row_count: i64,
    pub currency: &'a str,
}

/// Stores the export unless one of the same scope, period and format exists, and returns the
/// stored one either way: two concurrent first exports of a period both answer with the row
/// that won.
pub async fn store_export(conn: &mut PgConnection, e: &NewExport<'_>) -> DbResult<ExportRow> {
    sqlx::query(
        "INSERT INTO exports (tenant_id, period_start, period_end, format, sha256, content, row_count, currency)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT ON CONSTRAINT exports_scope_period_format_key DO NOTHING",
    )
    .bind(e.tenant_id)
    .bind(e.period.start)
    .bind(e.period.end)
    .bind(e.format.as_str())
    .bind(e.sha256)
    .bind(e.content)
    .bind(e.row_count)
    .bind(e.currency)
    .execute(&mut *conn)
    .await?;
    find_export(&mut *conn, e.tenant_id, e.period, e.format).await?.ok_or(DbError::NotFound("export"))
}

pub async fn get_export(db: impl PgExecutor<'_>, id: i64) -> DbResult<ExportRow> {
    sqlx::query_as(&format!("SELECT {EXPORT_COLUMNS} FROM exports WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("export"))
}

/// The stored bytes of an export.
pub async fn export_content(db: impl PgExecutor<'_>, id: i64) -> DbResult<Vec<u8>> {
    let row: Option<(Vec<u8>,)> =
        sqlx::query_as("SELECT content FROM exports WHERE id = $1").bind(id).fetch_optional(db).await?;
    row.map(|(c,)| c).ok_or(DbError::NotFound("export"))
}
