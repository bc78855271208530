//! Metrics over time (migrations 0033, 0034): each job's GPU samples and its replicas' CPU,
//! memory, disk and network totals, and each cluster's device readings, folded into 10-second
//! and 1-minute buckets as they are ingested, read back as a range, and pruned by age so the
//! tables stay bounded ([`RESOLUTIONS`]: each resolution with how long it is kept).

use chrono::{DateTime, Duration, Utc};
use sqlx::{PgConnection, PgExecutor};

use crate::db::DbResult;
use crate::domain::reports::{JobSample, JobUsage};

/// Each bucket width, in seconds, with how long its buckets are kept.
pub const RESOLUTIONS: [(i32, Duration); 2] = [(10, Duration::days(1)), (60, Duration::days(30))];

/// The most points one range read returns.
pub const MAX_POINTS: i64 = 2_000;

/// The tables of buckets, each with its subject's key column.
const TABLES: [(&str, &str); 2] = [("job_metric_buckets", "job_id"), ("cluster_metric_buckets", "cluster_id")];

/// The upsert of GPU samples into `table`, keyed by `key` (bound as `$2`, an array of the
/// key's type).
fn gpu_upsert(table: &str, key: &str, key_type: &str) -> String {
    format!(
        "INSERT INTO {table} ({key}, resolution_s, bucket, samples, busy_pct_sum, busy_pct_max,
                              memory_used_mib_sum, memory_used_mib_max)
         SELECT u.k, r.w, date_bin(make_interval(secs => r.w), $1, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                u.n, u.bs, u.bm, u.ms, u.mm
         FROM UNNEST($2::{key_type}[], $3::int[], $4::float8[], $5::real[], $6::float8[], $7::bigint[])
                AS u (k, n, bs, bm, ms, mm),
              UNNEST($8::int[]) AS r (w)
         ON CONFLICT ({key}, resolution_s, bucket) DO UPDATE SET
           samples = {table}.samples + EXCLUDED.samples,
           busy_pct_sum = {table}.busy_pct_sum + EXCLUDED.busy_pct_sum,
           busy_pct_max = GREATEST({table}.busy_pct_max, EXCLUDED.busy_pct_max),
           memory_used_mib_sum = {table}.memory_used_mib_sum + EXCLUDED.memory_used_mib_sum,
           memory_used_mib_max = GREATEST({table}.memory_used_mib_max, EXCLUDED.memory_used_mib_max)"
    )
}

fn widths() -> Vec<i32> {
    RESOLUTIONS.iter().map(|(w, _)| *w).collect()
}

/// Folds one GPU sample per job, taken at `at`, into its bucket of every resolution.
pub async fn record(conn: &mut PgConnection, at: DateTime<Utc>, samples: &[(i64, &JobSample)]) -> DbResult<()> {
    if samples.is_empty() {
        return Ok(());
    }
    let keys: Vec<i64> = samples.iter().map(|(id, _)| *id).collect();
    record_gpu(conn, &gpu_upsert(TABLES[0].0, TABLES[0].1, "bigint"), at, keys, samples.iter().map(|(_, s)| *s)).await
}

/// Folds a cluster's device readings of one Metrics message (`sample`: one per device), taken
/// at `at`, into its buckets.
pub async fn record_cluster(
    conn: &mut PgConnection,
    cluster: &str,
    at: DateTime<Utc>,
    sample: &JobSample,
) -> DbResult<()> {
    if sample.samples == 0 {
        return Ok(());
    }
    let sql = gpu_upsert(TABLES[1].0, TABLES[1].1, "text");
    record_gpu(conn, &sql, at, vec![cluster.to_owned()], std::iter::once(sample)).await
}

async fn record_gpu<'a, K>(
    conn: &mut PgConnection,
    sql: &str,
    at: DateTime<Utc>,
    keys: Vec<K>,
    samples: impl Iterator<Item = &'a JobSample> + Clone,
) -> DbResult<()>
where
    Vec<K>: for<'q> sqlx::Encode<'q, sqlx::Postgres> + sqlx::Type<sqlx::Postgres> + Send,
{
    sqlx::query(sql)
        .bind(at)
        .bind(keys)
        .bind(samples.clone().map(|s| i32::try_from(s.samples).unwrap_or(i32::MAX)).collect::<Vec<_>>())
        .bind(samples.clone().map(|s| s.busy_sum).collect::<Vec<_>>())
        .bind(samples.clone().map(|s| s.busy_max).collect::<Vec<_>>())
        .bind(samples.clone().map(|s| s.memory_sum).collect::<Vec<_>>())
        .bind(samples.map(|s| s.memory_max).collect::<Vec<_>>())
        .bind(widths())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Folds one total of its replicas' resource use per job, taken at `at`, into its buckets.
pub async fn record_usage(conn: &mut PgConnection, at: DateTime<Utc>, totals: &[(i64, JobUsage)]) -> DbResult<()> {
    if totals.is_empty() {
        return Ok(());
    }
    let column = |f: fn(&JobUsage) -> i64| totals.iter().map(|(_, u)| f(u)).collect::<Vec<i64>>();
    sqlx::query(
        "INSERT INTO job_metric_buckets (job_id, resolution_s, bucket, samples, busy_pct_sum, busy_pct_max,
                                         memory_used_mib_sum, memory_used_mib_max, usage_samples,
                                         cpu_milli_sum, cpu_milli_max, memory_mib_sum, memory_mib_max,
                                         disk_read_bps_sum, disk_write_bps_sum, net_rx_bps_sum, net_tx_bps_sum)
         SELECT u.j, r.w, date_bin(make_interval(secs => r.w), $1, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                0, 0, 0, 0, 0, 1, u.cpu, u.cpu, u.mem, u.mem, u.dr, u.dw, u.rx, u.tx
         FROM UNNEST($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
                AS u (j, cpu, mem, dr, dw, rx, tx),
              UNNEST($9::int[]) AS r (w)
         ON CONFLICT (job_id, resolution_s, bucket) DO UPDATE SET
           usage_samples = job_metric_buckets.usage_samples + 1,
           cpu_milli_sum = job_metric_buckets.cpu_milli_sum + EXCLUDED.cpu_milli_sum,
           cpu_milli_max = GREATEST(job_metric_buckets.cpu_milli_max, EXCLUDED.cpu_milli_max),
           memory_mib_sum = job_metric_buckets.memory_mib_sum + EXCLUDED.memory_mib_sum,
           memory_mib_max = GREATEST(job_metric_buckets.memory_mib_max, EXCLUDED.memory_mib_max),
           disk_read_bps_sum = job_metric_buckets.disk_read_bps_sum + EXCLUDED.disk_read_bps_sum,
           disk_write_bps_sum = job_metric_buckets.disk_write_bps_sum + EXCLUDED.disk_write_bps_sum,
           net_rx_bps_sum = job_metric_buckets.net_rx_bps_sum + EXCLUDED.net_rx_bps_sum,
           net_tx_bps_sum = job_metric_buckets.net_tx_bps_sum + EXCLUDED.net_tx_bps_sum",
    )
    .bind(at)
    .bind(totals.iter().map(|(id, _)| *id).collect::<Vec<_>>())
    .bind(column(|u| u.cpu_milli))
    .bind(column(|u| u.memory_mib))
    .bind(column(|u| u.disk_read_bps))
    .bind(column(|u| u.disk_write_bps))
    .bind(column(|u| u.net_rx_bps))
    .bind(column(|u| u.net_tx_bps))
    .bind(widths())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes the buckets older than their resolution keeps them at `now`; returns how many.
pub async fn prune(db: impl PgExecutor<'_> + Copy, now: DateTime<Utc>) -> DbResult<u64> {
    let mut deleted = 0;
    for (table, _) in TABLES {
        for (width, kept) in RESOLUTIONS {
            deleted += sqlx::query(&format!("DELETE FROM {table} WHERE resolution_s = $1 AND bucket < $2"))
                .bind(width)
                .bind(now - kept)
                .execute(db)
                .await?
                .rows_affected();
        }
    }
    Ok(deleted)
}

/// The finest resolution that still holds all of `[since, until)` at `now` and gives at most
/// [`MAX_POINTS`] points; the coarsest when none does.
pub fn resolution_for(since: DateTime<Utc>, until: DateTime<Utc>, now: DateTime<Utc>) -> i32 {
    let span = (until - since).num_seconds().max(0);
    RESOLUTIONS
        .iter()
        .find(|(width, kept)| since >= now - *kept && span / i64::from(*width) <= MAX_POINTS)
        .or(RESOLUTIONS.last())
        .map_or(60, |(w, _)| *w)
}

/// One bucket as read back: GPU fields are null where it holds no GPU sample, resource fields
/// where it holds no resource sample (and for clusters, which have none).
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct MetricPoint {
    pub bucket: DateTime<Utc>,
    pub samples: i32,
    pub busy_pct_avg: Option<f64>,
    pub busy_pct_max: Option<f32>,
    pub memory_used_mib_avg: Option<f64>,
    pub memory_used_mib_max: Option<i64>,
    pub usage_samples: i32,
    pub cpu_milli_avg: Option<f64>,
    pub cpu_milli_max: Option<i64>,
    pub memory_mib_avg: Option<f64>,
    pub memory_mib_max: Option<i64>,
    pub disk_read_bps_avg: Option<f64>,
    pub disk_write_bps_avg: Option<f64>,
    pub net_rx_bps_avg: Option<f64>,
    pub net_tx_bps_avg: Option<f64>,
}

/// What a range reads: a job's buckets, or a cluster's.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    Job(i64),
    Cluster(&'a str),
}

/// `subject`'s buckets of `resolution_s` in `[since, until)`, oldest first, at most
/// [`MAX_POINTS`] (the latest ones).
pub async fn range(
    db: impl PgExecutor<'_>,
    subject: Subject<'_>,
    resolution_s: i32,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> DbResult<Vec<MetricPoint>> {
    const GPU: &str = "samples, CASE WHEN samples > 0 THEN busy_pct_sum / samples END AS busy_pct_avg,
                  CASE WHEN samples > 0 THEN busy_pct_max END AS busy_pct_max,
                  CASE WHEN samples > 0 THEN memory_used_mib_sum / samples END AS memory_used_mib_avg,
                  CASE WHEN samples > 0 THEN memory_used_mib_max END AS memory_used_mib_max";
    let (usage, table, key) = match subject {
        Subject::Job(_) => (
            "usage_samples, CASE WHEN usage_samples > 0 THEN cpu_milli_sum / usage_samples END AS cpu_milli_avg,
             CASE WHEN usage_samples > 0 THEN cpu_milli_max END AS cpu_milli_max,
             CASE WHEN usage_samples > 0 THEN memory_mib_sum / usage_samples END AS memory_mib_avg,
             CASE WHEN usage_samples > 0 THEN memory_mib_max END AS memory_mib_max,
             CASE WHEN usage_samples > 0 THEN disk_read_bps_sum / usage_samples END AS disk_read_bps_avg,
             CASE WHEN usage_samples > 0 THEN disk_write_bps_sum / usage_samples END AS disk_write_bps_avg,
             CASE WHEN usage_samples > 0 THEN net_rx_bps_sum / usage_samples END AS net_rx_bps_avg,
             CASE WHEN usage_samples > 0 THEN net_tx_bps_sum / usage_samples END AS net_tx_bps_avg",
            TABLES[0].0,
            TABLES[0].1,
        ),
        Subject::Cluster(_) => (
            "0 AS usage_samples, NULL::float8 AS cpu_milli_avg, NULL::bigint AS cpu_milli_max,
             NULL::float8 AS memory_mib_avg, NULL::bigint AS memory_mib_max, NULL::float8 AS disk_read_bps_avg,
             NULL::float8 AS disk_write_bps_avg, NULL::float8 AS net_rx_bps_avg, NULL::float8 AS net_tx_bps_avg",
            TABLES[1].0,
            TABLES[1].1,
        ),
    };
    let sql = format!(
        "SELECT * FROM (
           SELECT bucket, {GPU}, {usage}
           FROM {table}
           WHERE {key} = $1 AND resolution_s = $2 AND bucket >= $3 AND bucket < $4
           ORDER BY bucket DESC LIMIT $5) latest
         ORDER BY bucket"
    );
    let query = sqlx::query_as(&sql);
    let query = match subject {
        Subject::Job(id) => query.bind(id),
        Subject::Cluster(id) => query.bind(id.to_owned()),
    };
    Ok(query.bind(resolution_s).bind(since).bind(until).bind(MAX_POINTS).fetch_all(db).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_at_the_finest_resolution_that_still_holds_it() {
        let now = Utc::now();
        assert_eq!(resolution_for(now - Duration::hours(1), now, now), 10);
        assert_eq!(resolution_for(now - Duration::hours(12), now, now), 60, "more than 2,000 ten-second points");
        assert_eq!(resolution_for(now - Duration::days(3), now - Duration::days(2), now), 60, "10 s buckets are gone");
        assert_eq!(resolution_for(now - Duration::days(90), now, now), 60);
    }
}
