//! Admission against quotas in PostgreSQL (invariant 5), including the concurrency proof:
//! many simultaneous submissions never push a queue past its limit.

use std::sync::Arc;

use grus_api::admission::{self, Admission};
use grus_api::db::{self, Cause, Quota};
use grus_api::domain::{JobState, QuotaLevel};
use grus_api::metrics::MetricFamily;
use grus_testkit::seed::{by_user, fixture, gpu_job, Fixture};
use grus_testkit::TestDb;
use tokio::sync::Barrier;

fn quota(resource: &str, guaranteed: i64, limit: Option<i64>) -> Quota {
    Quota { resource: resource.into(), guaranteed, limit }
}

async fn usage(pool: &sqlx::PgPool, queue_id: i64, resource: &str) -> i64 {
    db::queue_usage(pool, queue_id).await.unwrap().into_iter().find(|(r, _)| r == resource).map_or(0, |(_, v)| v)
}

/// N = 32 submissions of one GPU each race into a queue guaranteed 4 GPUs and limited to 10:
/// exactly 10 are admitted, 6 of them borrowed, and usage is exactly the limit. Three rounds,
/// each on a fresh queue, to give an unlucky interleaving several chances to show up.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_submissions_never_exceed_the_limit() {
    const N: usize = 32;
    const K: usize = 10;
    let t = TestDb::with_connections(N as u32 + 2).await;
    let base = fixture(&t.pool, "race").await;
    for round in 0..3 {
        let queue = db::create_queue(&t.pool, base.project_id, &db::QueueSettings::named(&format!("round-{round}")))
            .await
            .unwrap();
        db::set_quota(&t.pool, queue.id, &quota("gpu", 4000, Some(K as i64 * 1000))).await.unwrap();
        let f = Arc::new(Fixture { queue_id: queue.id, ..base });
        let barrier = Arc::new(Barrier::new(N));
        let mut handles = Vec::new();
        for i in 0..N {
            let (pool, f, barrier) = (t.pool.clone(), f.clone(), barrier.clone());
            handles.push(tokio::spawn(async move {
                let job = gpu_job(&f, &format!("r{round}-j{i}"), 1, 1, &["A100"]);
                barrier.wait().await;
                admission::admit(&pool, &job, by_user("user:1")).await.expect("admission runs")
            }));
        }
        let mut admitted = 0;
        let mut borrowed = 0;
        for h in handles {
            match h.await.unwrap() {
                Admission::Admitted { borrowed: b, job } => {
                    assert_eq!(job.state, JobState::Admitted);
                    assert_eq!(job.borrowed, b);
                    admitted += 1;
                    borrowed += usize::from(b);
                }
                Admission::QuotaExceeded { resource, limit, used, .. } => {
                    assert_eq!((resource.as_str(), limit), ("gpu", K as i64 * 1000));
                    assert!(used <= limit);
                }
                other => panic!("no budget is set: {other:?}"),
            }
        }
        assert_eq!(admitted, K, "round {round}");
        assert_eq!(borrowed, K - 4, "round {round}");
        assert_eq!(usage(&t.pool, queue.id, "gpu").await, K as i64 * 1000);
        // Rejected submissions left nothing behind.
        let (jobs,): (i64,) = sqlx::query_as("SELECT count(*) FROM jobs WHERE queue_id = $1")
            .bind(queue.id)
            .fetch_one(&t.pool)
            .await
            .unwrap();
        assert_eq!(jobs, K as i64);
    }
}

#[tokio::test]
async fn model_limits_and_borrowing_rules() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "models").await;
    db::set_quota(&t.pool, f.queue_id, &quota("gpu/A100", 2000, Some(2000))).await.unwrap();
    db::set_quota(&t.pool, f.queue_id, &quota("gpu/H100", 0, Some(8000))).await.unwrap();
    let by = by_user("user:1");
    // Allowed on either model: charged to both, so the A100 limit binds at 2 GPUs.
    let either = gpu_job(&f, "either", 1, 2, &["A100", "H100"]);
    let Admission::Admitted { borrowed, .. } = admission::admit(&t.pool, &either, by).await.unwrap() else {
        panic!("first job fits")
    };
    assert!(borrowed, "beyond the H100 guarantee of 0");
    let more = gpu_job(&f, "more", 1, 1, &["A100"]);
    let out = admission::admit(&t.pool, &more, by).await.unwrap();
    assert_eq!(
        out,
        Admission::QuotaExceeded {
            level: QuotaLevel::Queue,
            name: "default".into(),
            resource: "gpu/A100".into(),
            used: 2000,
            limit: 2000
        }
    );
    // No model named: charged to every model the queue has a quota for.
    let any = gpu_job(&f, "any", 1, 1, &[]);
    assert!(matches!(admission::admit(&t.pool, &any, by).await.unwrap(), Admission::QuotaExceeded { .. }));
    // H100 alone still fits.
    let h100 = gpu_job(&f, "h100", 1, 4, &["H100"]);
    assert!(matches!(admission::admit(&t.pool, &h100, by).await.unwrap(), Admission::Admitted { .. }));

    // A queue that may not borrow stops at its guarantee.
    let strict = db::create_queue(
        &t.pool,
        f.project_id,
        &db::QueueSettings { weight: 2.0, can_borrow: false, ..db::QueueSettings::named("strict") },
    )
    .await
    .unwrap();
    db::set_quota(&t.pool, strict.id, &quota("gpu", 1000, Some(4000))).await.unwrap();
    let f2 = Fixture { queue_id: strict.id, ..f };
    let one = gpu_job(&f2, "one", 1, 1, &[]);
    assert!(matches!(admission::admit(&t.pool, &one, by).await.unwrap(), Admission::Admitted { borrowed: false, .. }));
    let two = gpu_job(&f2, "two", 1, 1, &[]);
    assert_eq!(
        admission::admit(&t.pool, &two, by).await.unwrap(),
        Admission::QuotaExceeded {
            level: QuotaLevel::Queue,
            name: "strict".into(),
            resource: "gpu".into(),
            used: 1000,
            limit: 1000
        }
    );
}

#[tokio::test]
async fn ended_and_preempted_jobs_free_their_quota_and_requeue_through_admission() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "requeue").await;
    db::set_quota(&t.pool, f.queue_id, &quota("gpu", 1000, Some(1000))).await.unwrap();
    let by = by_user("user:1");
    let sys = |cause| Cause { cause, actor: "system:test" };
    let Admission::Admitted { job: a, .. } = admission::admit(&t.pool, &gpu_job(&f, "a", 1, 1, &[]), by).await.unwrap()
    else {
        panic!("a fits")
    };
    let b = gpu_job(&f, "b", 1, 1, &[]);
    assert!(matches!(admission::admit(&t.pool, &b, by).await.unwrap(), Admission::QuotaExceeded { .. }));

    // Preempting `a` frees the quota; `b` takes it; `a` cannot come back until `b` ends.
    let mut tx = t.pool.begin().await.unwrap();
    for (to, cause) in [
        (JobState::Dispatched, "dispatched"),
        (JobState::Running, "running"),
        (JobState::Preempting, "victim"),
        (JobState::Preempted, "evicted"),
    ] {
        db::transition_job(&mut tx, a.id, to, sys(cause)).await.unwrap();
    }
    tx.commit().await.unwrap();
    let Admission::Admitted { job: b, .. } = admission::admit(&t.pool, &b, by).await.unwrap() else { panic!("b fits") };
    let mut tx = t.pool.begin().await.unwrap();
    assert!(matches!(
        admission::readmit(&mut tx, a.id, sys("requeue")).await.unwrap(),
        Admission::QuotaExceeded { .. }
    ));
    db::transition_job(&mut tx, b.id, JobState::Cancelled, sys("user cancelled")).await.unwrap();
    let again = admission::readmit(&mut tx, a.id, sys("requeue")).await.unwrap();
    assert!(matches!(again, Admission::Admitted { borrowed: false, .. }), "{again:?}");
    tx.commit().await.unwrap();
    assert_eq!(usage(&t.pool, f.queue_id, "gpu").await, 1000);
}

#[tokio::test]
async fn admission_refuses_a_repeatable_read_transaction() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "iso").await;
    let mut tx = t.pool.begin().await.unwrap();
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").execute(&mut *tx).await.unwrap();
    let err = admission::admit_in(&mut tx, &gpu_job(&f, "j", 1, 1, &[]), by_user("user:1")).await.unwrap_err();
    assert!(matches!(err, db::DbError::Internal(_)), "{err:?}");
    assert_eq!(err.to_string(), "internal database error", "no detail reaches clients");
}

/// The quota usage that triggers keep (migration 0007) equals a recount from the jobs that
/// hold quota, through admissions (which fold the deltas), every kind of transition and a
/// re-admission; and the SQL list of quota-holding states is the crate's.
#[tokio::test]
async fn usage_counters_match_a_recount_through_every_transition() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "counters").await;
    db::set_quota(&t.pool, f.queue_id, &quota("gpu", 2000, Some(100_000))).await.unwrap();
    let states = [
        "pending",
        "admitted",
        "dispatched",
        "rejected",
        "scheduled",
        "running",
        "preempting",
        "preempted",
        "succeeded",
        "failed",
        "cancelled",
        "unknown",
    ];
    for state in states {
        let (holds,): (bool,) =
            sqlx::query_as("SELECT job_state_holds_quota($1)").bind(state).fetch_one(&t.pool).await.unwrap();
        assert_eq!(holds, JobState::parse(state).expect("a job state").holds_quota(), "{state}");
    }
    let recount = || async {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT d.resource, SUM(d.amount)::bigint FROM job_demands d JOIN jobs j ON j.id = d.job_id
             WHERE job_state_holds_quota(j.state) AND j.queue_id = $1 GROUP BY d.resource ORDER BY d.resource",
        )
        .bind(f.queue_id)
        .fetch_all(&t.pool)
        .await
        .unwrap();
        rows
    };
    let sys = |cause| Cause { cause, actor: "system:test" };
    let paths: [&[JobState]; 5] = [
        &[JobState::Dispatched, JobState::Running, JobState::Succeeded],
        &[JobState::Dispatched, JobState::Rejected, JobState::Dispatched, JobState::Running, JobState::Failed],
        &[JobState::Cancelled],
        &[JobState::Dispatched, JobState::Running, JobState::Unknown, JobState::Running],
        &[JobState::Dispatched, JobState::Running, JobState::Preempting, JobState::Preempted],
    ];
    let mut preempted = Vec::new();
    for round in 0..3 {
        for (i, path) in paths.iter().enumerate() {
            let job = gpu_job(&f, &format!("r{round}-{i}"), 1 + i as u32 % 2, 1 + round, &["A100"]);
            let Admission::Admitted { job, .. } = admission::admit(&t.pool, &job, by_user("user:1")).await.unwrap()
            else {
                panic!("fits")
            };
            let events = db::job_events(&t.pool, job.id).await.unwrap();
            let steps: Vec<_> = events.iter().map(|e| (e.from_state.as_deref(), e.to_state.as_str())).collect();
            assert_eq!(steps, [(None, "pending"), (Some("pending"), "admitted")]);
            let mut tx = t.pool.begin().await.unwrap();
            for to in *path {
                db::transition_job(&mut tx, job.id, *to, sys("test")).await.unwrap();
            }
            tx.commit().await.unwrap();
            if path.last() == Some(&JobState::Preempted) {
                preempted.push(job.id);
            }
            assert_eq!(db::queue_usage(&t.pool, f.queue_id).await.unwrap(), recount().await, "round {round} path {i}");
        }
    }
    for id in preempted {
        let mut tx = t.pool.begin().await.unwrap();
        assert!(matches!(admission::readmit(&mut tx, id, sys("requeue")).await.unwrap(), Admission::Admitted { .. }));
        tx.commit().await.unwrap();
    }
    let expected = recount().await;
    assert!(!expected.is_empty());
    assert_eq!(db::queue_usage(&t.pool, f.queue_id).await.unwrap(), expected);
    let mut tx = t.pool.begin().await.unwrap();
    // Fold whatever the count: the usage read after folding is the same.
    let locked = db::lock_queue_for_admission(&mut tx, f.project_id, f.queue_id, 0).await.unwrap();
    let mut folded = locked.usage;
    folded.sort();
    tx.commit().await.unwrap();
    assert_eq!(folded, expected);
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM queue_usage_deltas WHERE queue_id = $1")
        .bind(f.queue_id)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(rows as usize, expected.len(), "a fold leaves one row per resource");
}

/// One batch over two queues of one project, a queue of another project and a job the schema
/// refuses: the batch decides in arrival order as if one job after another, ids increase in
/// that order, each admitted job has its tasks, replicas, demands and two events, usage is
/// charged exactly, and the refused job fails alone.
#[tokio::test]
async fn a_batch_admits_in_arrival_order_across_queues() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "batch").await;
    let other = fixture(&t.pool, "batch-other").await;
    db::set_quota(&t.pool, f.queue_id, &quota("gpu", 2000, Some(3000))).await.unwrap();
    let second = db::create_queue(
        &t.pool,
        f.project_id,
        &db::QueueSettings { weight: 1.0, can_borrow: false, ..db::QueueSettings::named("second") },
    )
    .await
    .unwrap();
    db::set_quota(&t.pool, second.id, &quota("gpu", 2000, Some(8000))).await.unwrap();
    let g = Fixture { queue_id: second.id, ..f };
    let mut duplicate_tasks = gpu_job(&other, "duplicate-tasks", 1, 1, &[]);
    duplicate_tasks.tasks.push(duplicate_tasks.tasks[0].clone());
    let foreign_queue = Fixture { queue_id: other.queue_id, ..f };
    let jobs = [
        gpu_job(&f, "a", 2, 1, &[]),             // default: 2000 of 3000, borrowed from 2001 on
        gpu_job(&g, "b", 1, 2, &[]),             // second: 2000, its whole guarantee
        gpu_job(&f, "c", 1, 1, &[]),             // default: 3000, borrowed
        gpu_job(&f, "d", 1, 1, &[]),             // default: over the limit
        gpu_job(&g, "e", 1, 1, &[]),             // second: may not borrow
        gpu_job(&foreign_queue, "f", 1, 1, &[]), // not a queue of the project
    ];
    let by = by_user("user:1");
    let batch: Vec<admission::Submission<'_>> = jobs.iter().map(|job| admission::Submission { job, by }).collect();
    let out = admission::admit_batch(&t.pool, &batch).await;
    assert_eq!(out.len(), jobs.len());
    let admitted = |i: usize| match &out[i] {
        Ok(Admission::Admitted { job, borrowed }) => (job.clone(), *borrowed),
        other => panic!("job {i}: {other:?}"),
    };
    let ((a, a_borrowed), (b, b_borrowed), (c, c_borrowed)) = (admitted(0), admitted(1), admitted(2));
    assert_eq!((a_borrowed, b_borrowed, c_borrowed), (false, false, true));
    assert!(a.id < b.id && b.id < c.id, "ids follow the batch: {} {} {}", a.id, b.id, c.id);
    assert_eq!((a.name.as_str(), b.queue_id, c.state), ("a", second.id, JobState::Admitted));
    assert!(matches!(&out[3], Ok(Admission::QuotaExceeded { name, used: 3000, limit: 3000, .. }) if name == "default"));
    assert!(matches!(&out[4], Ok(Admission::QuotaExceeded { name, used: 2000, limit: 2000, .. }) if name == "second"));
    assert!(matches!(&out[5], Err(db::DbError::NotFound("queue"))), "{:?}", out[5]);
    assert_eq!(usage(&t.pool, f.queue_id, "gpu").await, 3000);
    assert_eq!(usage(&t.pool, second.id, "gpu").await, 2000);
    for job in [&a, &b, &c] {
        let events = db::job_events(&t.pool, job.id).await.unwrap();
        let steps: Vec<_> = events.iter().map(|e| (e.from_state.as_deref(), e.to_state.as_str())).collect();
        assert_eq!(steps, [(None, "pending"), (Some("pending"), "admitted")], "job {}", job.name);
    }
    let (replicas,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM replicas WHERE job_id = $1").bind(a.id).fetch_one(&t.pool).await.unwrap();
    assert_eq!(replicas, 2);
    let demands: Vec<(String, i64)> =
        sqlx::query_as("SELECT resource, amount FROM job_demands WHERE job_id = $1 ORDER BY resource")
            .bind(c.id)
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(demands, [("cpu_milli".to_string(), 1000), ("gpu".to_string(), 1000), ("memory_mib".to_string(), 1024)]);

    // A job the database refuses (two tasks of one name) fails alone: the batch is admitted
    // again job by job.
    let jobs = [gpu_job(&g, "ok-1", 1, 1, &[]), duplicate_tasks, gpu_job(&other, "ok-2", 1, 1, &[])];
    let batch: Vec<admission::Submission<'_>> = jobs.iter().map(|job| admission::Submission { job, by }).collect();
    let out = admission::admit_batch(&t.pool, &batch).await;
    assert!(matches!(out[0], Ok(Admission::QuotaExceeded { .. })), "second is full: {:?}", out[0]);
    assert!(matches!(out[1], Err(db::DbError::Conflict { .. })), "{:?}", out[1]);
    assert!(matches!(out[2], Ok(Admission::Admitted { .. })), "{:?}", out[2]);
    let (stored,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM jobs WHERE name = 'duplicate-tasks'").fetch_one(&t.pool).await.unwrap();
    assert_eq!(stored, 0, "nothing of the refused job is left");
    assert_eq!(usage(&t.pool, other.queue_id, "gpu").await, 1000, "only ok-2 is charged");
}

/// The batcher under a burst: 48 simultaneous submissions over two queues of one shard are
/// admitted in fewer transactions than submissions, and each queue stops exactly at its limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_batcher_groups_a_burst_and_keeps_every_limit() {
    use grus_api::admission::batcher::{AdmissionBatcher, AdmissionMetrics, BatcherConfig};

    const N: usize = 48;
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "burst").await;
    db::set_quota(&t.pool, f.queue_id, &quota("gpu", 4000, Some(10_000))).await.unwrap();
    let second = db::create_queue(&t.pool, f.project_id, &db::QueueSettings::named("second")).await.unwrap();
    db::set_quota(&t.pool, second.id, &quota("gpu", 0, Some(7000))).await.unwrap();
    let metrics = Arc::new(AdmissionMetrics::default());
    let batcher = AdmissionBatcher::start(t.pool.clone(), BatcherConfig { shards: 1, max_batch: 16 }, metrics.clone());
    let barrier = Arc::new(Barrier::new(N));
    let mut handles = Vec::new();
    for i in 0..N {
        let queue_id = if i % 2 == 0 { f.queue_id } else { second.id };
        let job = gpu_job(&Fixture { queue_id, ..f }, &format!("burst-{i}"), 1, 1, &[]);
        let (batcher, barrier) = (batcher.clone(), barrier.clone());
        handles.push(tokio::spawn(async move {
            barrier.wait().await;
            batcher.admit(job, by_user("user:1")).await.expect("admission runs")
        }));
    }
    let mut admitted = std::collections::BTreeMap::<i64, usize>::new();
    for h in handles {
        if let Admission::Admitted { job, .. } = h.await.unwrap() {
            *admitted.entry(job.queue_id).or_default() += 1;
        }
    }
    assert_eq!(admitted.get(&f.queue_id), Some(&10));
    assert_eq!(admitted.get(&second.id), Some(&7));
    assert_eq!(usage(&t.pool, f.queue_id, "gpu").await, 10_000);
    assert_eq!(usage(&t.pool, second.id, "gpu").await, 7000);
    let batches = metrics.batches();
    assert!(batches >= (N / 16) as u64 && batches < N as u64, "{batches} transactions for {N} submissions");
    assert!(metrics.render().contains("grus_admissions_total{outcome=\"quota_exceeded\"} 31"), "{}", metrics.render());
}
