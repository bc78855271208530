//! Admission of a job against its queue's quotas (invariant 5: a quota limit is never
//! exceeded, even by concurrent submissions).
//!
//! The arithmetic is pure ([`demand`], [`decide`]) and tested without a database. The shell
//! ([`admit`], [`admit_in`], [`readmit`]) runs it inside one transaction that first locks the
//! queue row (`FOR NO KEY UPDATE`). Quotas are per queue, so every admission that could
//! push a queue past a limit serializes on that row, and under READ COMMITTED each statement
//! after the lock sees every job the previous lock holder committed: the usage it reads is
//! current. Usage is kept by triggers as deltas, folded now and then under the lock
//! ([`db::lock_queue_for_admission`]), so reading it costs the same however many jobs the
//! queue holds.
//!
//! Lock order across the crate: queue, then job rows. A caller that wants to change jobs in
//! the same transaction calls admission first; locking a job and then admitting could deadlock
//! against a [`readmit`] of that job.
//!
//! `FOR NO KEY UPDATE` rather than `FOR UPDATE`: it still excludes other admissions, but not
//! the `FOR KEY SHARE` locks that foreign-key checks take, so inserting jobs of the queue
//! elsewhere (tests, imports) does not wait for an admission.
//!
//! The admitting transaction holds the lock until its commit is flushed, so it is kept to
//! two round trips: lock (with the quotas and the usage, one SQL function), insert the job
//! whole.

use std::collections::{BTreeMap, BTreeSet};

use grus_protocol::wire::ResourcesSpec;
use sqlx::{PgConnection, PgPool};

use crate::db::{self, Cause, DbError, DbResult, Job, JobState, NewJob, Queue, Quota};

/// Amounts per quota key (`gpu`, `gpu/<model>` in GPU milli; `cpu_milli`; `memory_mib`).
pub type Amounts = BTreeMap<String, i64>;

/// The generic GPU key, charged by every GPU request whatever its model.
pub const GPU: &str = "gpu";

/// What a job charges against quotas. A task allowing several GPU models is charged in full
/// against each of them (it may land on any), and a task naming no model is charged against
/// every model the queue has a quota for (`queue_models`): conservative, so no placement can
/// take a model beyond its limit. Every GPU request is also charged to [`GPU`].
pub fn demand<'a>(
    tasks: impl IntoIterator<Item = (u32, &'a ResourcesSpec)>,
    queue_models: &BTreeSet<String>,
) -> Amounts {
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
    out
}

/// The GPU models a queue has quotas for (keys `gpu/<model>`).
pub fn quota_models(quotas: &[Quota]) -> BTreeSet<String> {
    quotas.iter().filter_map(|q| q.resource.strip_prefix("gpu/")).map(str::to_owned).collect()
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

/// Result of an admission attempt.
#[derive(Clone, Debug, PartialEq)]
pub enum Admission {
    /// The job is stored in state `admitted`; borrowed work is preemptible.
    Admitted { job: Job, borrowed: bool },
    /// Nothing was stored; the client sees which quota is full.
    QuotaExceeded { queue: String, resource: String, used: i64, limit: i64 },
}

/// Admits and inserts `job` in its own transaction (committed only when admitted).
pub async fn admit(pool: &PgPool, job: &NewJob, by: Cause<'_>) -> DbResult<Admission> {
    let mut tx = pool.begin().await?;
    let outcome = admit_in(&mut tx, job, by).await?;
    if matches!(outcome, Admission::Admitted { .. }) {
        tx.commit().await?;
    }
    Ok(outcome)
}

/// [`admit`] inside the caller's transaction (which must be READ COMMITTED, the default: a
/// REPEATABLE READ snapshot taken before the lock would miss jobs admitted meanwhile). On
/// `QuotaExceeded` nothing was written.
pub async fn admit_in(conn: &mut PgConnection, job: &NewJob, by: Cause<'_>) -> DbResult<Admission> {
    let (queue, quotas, usage) = lock_queue(conn, job.project_id, job.queue_id).await?;
    let want = demand(job.tasks.iter().map(|t| (t.replicas, &t.resources)), &quota_models(&quotas));
    let borrowed = match decide(&quotas, &usage, &want, queue.can_borrow) {
        Verdict::Admit { borrowed } => borrowed,
        Verdict::Exceeded { resource, used, limit, .. } => {
            return Ok(Admission::QuotaExceeded { queue: queue.name, resource, used, limit })
        }
    };
    let want: Vec<(String, i64)> = want.into_iter().collect();
    let cause = if borrowed { "admitted beyond the queue's guarantee (borrowed)" } else { "admitted within quota" };
    let job = db::insert_admitted_job(&mut *conn, job, &want, borrowed, by, cause).await?;
    Ok(Admission::Admitted { job, borrowed })
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
    let (queue, quotas, usage) = lock_queue(conn, project_id, queue_id).await?;
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
    let borrowed = match decide(&quotas, &usage, &want, queue.can_borrow) {
        Verdict::Admit { borrowed } => borrowed,
        Verdict::Exceeded { resource, used, limit, .. } => {
            return Ok(Admission::QuotaExceeded { queue: queue.name, resource, used, limit })
        }
    };
    sqlx::query("UPDATE jobs SET borrowed = $2 WHERE id = $1").bind(job_id).bind(borrowed).execute(&mut *conn).await?;
    db::transition_job(&mut *conn, job_id, JobState::Admitted, by).await?;
    let job = db::get_job(&mut *conn, job_id).await?;
    Ok(Admission::Admitted { job, borrowed })
}

/// Locks the queue and loads what [`decide`] needs, in one round trip.
async fn lock_queue(conn: &mut PgConnection, project_id: i64, queue_id: i64) -> DbResult<(Queue, Vec<Quota>, Amounts)> {
    let locked = db::lock_queue_for_admission(conn, project_id, queue_id, db::FOLD_DELTAS_ABOVE).await?;
    Ok((locked.queue, locked.quotas, locked.usage.into_iter().collect()))
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
        let models: BTreeSet<String> = ["V100".to_string()].into();
        let d = demand([(4, &train), (1, &share)], &models);
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
        assert_eq!(demand([(2, &cpu_only)], &BTreeSet::new()), amounts(&[("cpu_milli", 1000)]));
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
}
