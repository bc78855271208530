//! A job's GPU metrics over time (migration 0033): samples folded into 10-second and 1-minute
//! buckets as they are ingested, read back as a range, and pruned by age so the table stays
//! bounded ([`RESOLUTIONS`]: each resolution with how long it is kept).

use chrono::{DateTime, Duration, Utc};
use sqlx::{PgConnection, PgExecutor};

use crate::db::DbResult;
use crate::domain::reports::JobSample;

/// Each bucket width, in seconds, with how long its buckets are kept.
pub const RESOLUTIONS: [(i32, Duration); 2] = [(10, Duration::days(1)), (60, Duration::days(30))];

/// The most points one range read returns.
pub const MAX_POINTS: i64 = 2_000;

/// Folds one sample per job, taken at `at`, into its bucket of every resolution.
pub async fn record(conn: &mut PgConnection, at: DateTime<Utc>, samples: &[(i64, &JobSample)]) -> DbResult<()> {
    if samples.is_empty() {
        return Ok(());
    }
    let widths: Vec<i32> = RESOLUTIONS.iter().map(|(w, _)| *w).collect();
    sqlx::query(
        "INSERT INTO job_metric_buckets (job_id, resolution_s, bucket, samples, busy_pct_sum, busy_pct_max,
                                         memory_used_mib_sum, memory_used_mib_max)
         SELECT u.j, r.w, date_bin(make_interval(secs => r.w), $1, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                u.n, u.bs, u.bm, u.ms, u.mm
         FROM UNNEST($2::bigint[], $3::int[], $4::float8[], $5::real[], $6::float8[], $7::bigint[])
                AS u (j, n, bs, bm, ms, mm),
              UNNEST($8::int[]) AS r (w)
         ON CONFLICT (job_id, resolution_s, bucket) DO UPDATE SET
           samples = job_metric_buckets.samples + EXCLUDED.samples,
           busy_pct_sum = job_metric_buckets.busy_pct_sum + EXCLUDED.busy_pct_sum,
           busy_pct_max = GREATEST(job_metric_buckets.busy_pct_max, EXCLUDED.busy_pct_max),
           memory_used_mib_sum = job_metric_buckets.memory_used_mib_sum + EXCLUDED.memory_used_mib_sum,
           memory_used_mib_max = GREATEST(job_metric_buckets.memory_used_mib_max, EXCLUDED.memory_used_mib_max)",
    )
    .bind(at)
    .bind(samples.iter().map(|(id, _)| *id).collect::<Vec<_>>())
    .bind(samples.iter().map(|(_, s)| i32::try_from(s.samples).unwrap_or(i32::MAX)).collect::<Vec<_>>())
    .bind(samples.iter().map(|(_, s)| s.busy_sum).collect::<Vec<_>>())
    .bind(samples.iter().map(|(_, s)| s.busy_max).collect::<Vec<_>>())
    .bind(samples.iter().map(|(_, s)| s.memory_sum).collect::<Vec<_>>())
    .bind(samples.iter().map(|(_, s)| s.memory_max).collect::<Vec<_>>())
    .bind(&widths)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes the buckets older than their resolution keeps them at `now`; returns how many.
pub async fn prune(db: impl PgExecutor<'_> + Copy, now: DateTime<Utc>) -> DbResult<u64> {
    let mut deleted = 0;
    for (width, kept) in RESOLUTIONS {
        deleted += sqlx::query("DELETE FROM job_metric_buckets WHERE resolution_s = $1 AND bucket < $2")
            .bind(width)
            .bind(now - kept)
            .execute(db)
            .await?
            .rows_affected();
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

/// One bucket as read back.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct MetricPoint {
    pub bucket: DateTime<Utc>,
    pub samples: i32,
    pub busy_pct_avg: f64,
    pub busy_pct_max: f32,
    pub memory_used_mib_avg: f64,
    pub memory_used_mib_max: i64,
}

/// Job `job_id`'s buckets of `resolution_s` in `[since, until)`, oldest first, at most
/// [`MAX_POINTS`] (the latest ones).
pub async fn range(
    db: impl PgExecutor<'_>,
    job_id: i64,
    resolution_s: i32,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> DbResult<Vec<MetricPoint>> {
    Ok(sqlx::query_as(
        "SELECT * FROM (
           SELECT bucket, samples, busy_pct_sum / samples AS busy_pct_avg, busy_pct_max,
                  memory_used_mib_sum / samples AS memory_used_mib_avg, memory_used_mib_max
           FROM job_metric_buckets
           WHERE job_id = $1 AND resolution_s = $2 AND bucket >= $3 AND bucket < $4
           ORDER BY bucket DESC LIMIT $5) latest
         ORDER BY bucket",
    )
    .bind(job_id)
    .bind(resolution_s)
    .bind(since)
    .bind(until)
    .bind(MAX_POINTS)
    .fetch_all(db)
    .await?)
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
