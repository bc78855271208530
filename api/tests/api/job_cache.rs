//! The jobs cache against a real PostgreSQL: after each catch-up its pages equal the database's
//! (`list_visible_jobs`), whichever connection made the change, also while another transaction
//! stays open; a rolled-back change never shows; a page past what it holds is left to
//! PostgreSQL.

use grus_api::db::{self, Cause, PageIncludes, VisibleJobFilter};
use grus_api::domain::{JobState, UnitState};
use grus_api::job_cache::{JobCache, JobCacheLimits, Visible};
use grus_testkit::seed::{self, by_user, fixture, gpu_job, Fixture};
use grus_testkit::TestDb;

/// The cache's page and the database's page for a platform admin, as (id, state, name,
/// priority, cluster, tasks with their states).
async fn both_pages(t: &TestDb, cache: &JobCache, filter: &VisibleJobFilter, first: u32, after: Option<i64>) {
    assert!(cache.catch_up().await, "the cache caught up");
    let admin = admin_id(t).await;
    let want =
        db::list_visible_jobs(&t.pool, admin, true, filter, first, after, PageIncludes { tasks: true }).await.unwrap();
    let got = cache.page(Visible::All, filter, first, after).expect("the cache answers");
    let got_jobs: Vec<_> = got.jobs.iter().map(|j| j.head.clone()).collect();
    assert_eq!(got_jobs, want.jobs);
    assert_eq!(got.next_cursor, want.next_cursor);
    let tasks = want.tasks.unwrap();
    for j in &got.jobs {
        assert_eq!(Some(&j.tasks), tasks.get(&j.head.id), "tasks of job {}", j.head.id);
    }
}

async fn admin_id(t: &TestDb) -> i64 {
    seed::platform_admin(&t.pool, "admin").await
}

async fn submit(t: &TestDb, f: &Fixture, name: &str) -> i64 {
    seed::insert_job(&t.pool, &gpu_job(f, name, 2, 1, &["A100"]), "user:1").await
}

fn limits(per_project: u32) -> JobCacheLimits {
    JobCacheLimits { per_project, ..Default::default() }
}

fn system(cause: &str) -> Cause<'_> {
    Cause { cause, actor: "system:test" }
}

#[tokio::test]
async fn pages_equal_the_database_after_every_kind_of_change() {
    let t = TestDb::new().await;
    let a = fixture(&t.pool, "alpha").await;
    let b = fixture(&t.pool, "beta").await;
    // Jobs before the cache exists come with its load; the rest as changes.
    let early = submit(&t, &a, "early").await;
    let cache = JobCache::new(t.pool.clone(), limits(100));
    let all = VisibleJobFilter::default();
    both_pages(&t, &cache, &all, 10, None).await;

    let mut ids = vec![early];
    for i in 0..4 {
        ids.push(submit(&t, if i % 2 == 0 { &a } else { &b }, &format!("job-{i}")).await);
    }
    both_pages(&t, &cache, &all, 10, None).await;
    both_pages(&t, &cache, &all, 2, None).await;
    both_pages(&t, &cache, &all, 2, Some(ids[3])).await;

    // A state change, a dispatch (epoch, cluster), a priority change, a task's state.
    sqlx::query("INSERT INTO clusters (id) VALUES ('c1')").execute(&t.pool).await.unwrap();
    let mut tx = t.pool.begin().await.unwrap();
    db::transition_job(&mut tx, ids[1], JobState::Admitted, system("admitted")).await.unwrap();
    db::insert_dispatch(&mut tx, ids[1], "c1").await.unwrap();
    db::transition_job(&mut tx, ids[1], JobState::Dispatched, system("dispatched")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = t.pool.begin().await.unwrap();
    db::dispatch::set_priority(&mut tx, ids[2], 900, "high", system("priority")).await.unwrap();
    tx.commit().await.unwrap();
    let task = db::tasks(&t.pool, ids[3]).await.unwrap()[0].id;
    let mut tx = t.pool.begin().await.unwrap();
    db::transition_task(&mut tx, task, UnitState::Cancelled, system("cancelled")).await.unwrap();
    tx.commit().await.unwrap();
    both_pages(&t, &cache, &all, 10, None).await;

    let by_state = VisibleJobFilter { states: vec![JobState::Dispatched], ..Default::default() };
    both_pages(&t, &cache, &by_state, 10, None).await;
    let by_cluster = VisibleJobFilter { cluster_id: Some("c1".into()), ..Default::default() };
    both_pages(&t, &cache, &by_cluster, 10, None).await;
    let by_name =
        VisibleJobFilter { search: Some("JOB-".into()), project_id: Some(a.project_id), ..Default::default() };
    both_pages(&t, &cache, &by_name, 10, None).await;
}

#[tokio::test]
async fn a_long_open_transaction_holds_back_neither_later_commits_nor_its_own() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "open").await;
    let first = submit(&t, &f, "first").await;
    let cache = JobCache::new(t.pool.clone(), limits(100));
    let all = VisibleJobFilter::default();
    both_pages(&t, &cache, &all, 10, None).await;

    // A transaction that changes a job and stays open: its id is below every later one.
    let mut open = t.pool.begin().await.unwrap();
    db::transition_job(&mut open, first, JobState::Admitted, system("admitted")).await.unwrap();
    // Committed meanwhile: seen at once, not when the open transaction ends.
    let later = submit(&t, &f, "later").await;
    both_pages(&t, &cache, &all, 10, None).await;
    let page = cache.page(Visible::All, &all, 10, None).unwrap();
    assert_eq!(page.jobs[0].head.id, later);
    assert_eq!(page.jobs[1].head.state, JobState::Pending);

    open.commit().await.unwrap();
    both_pages(&t, &cache, &all, 10, None).await;
    let page = cache.page(Visible::All, &all, 10, None).unwrap();
    assert_eq!(page.jobs[1].head.state, JobState::Admitted);
}

#[tokio::test]
async fn a_rolled_back_change_never_shows() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "rollback").await;
    let job = submit(&t, &f, "kept").await;
    let cache = JobCache::new(t.pool.clone(), limits(100));
    let all = VisibleJobFilter::default();
    assert!(cache.catch_up().await);

    let mut tx = t.pool.begin().await.unwrap();
    db::insert_job(&mut tx, &gpu_job(&f, "dropped", 1, 1, &["A100"]), by_user("user:1")).await.unwrap();
    db::transition_job(&mut tx, job, JobState::Admitted, system("admitted")).await.unwrap();
    tx.rollback().await.unwrap();
    both_pages(&t, &cache, &all, 10, None).await;
    assert_eq!(cache.len(), 1);
}

#[tokio::test]
async fn pages_past_the_window_are_left_to_the_database() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "deep").await;
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(submit(&t, &f, &format!("loaded-{i}")).await);
    }
    // Three jobs of the project, room for two: the load leaves the oldest out.
    let cache = JobCache::new(t.pool.clone(), limits(2));
    let all = VisibleJobFilter::default();
    both_pages(&t, &cache, &all, 1, None).await;
    assert!(cache.catch_up().await);
    assert_eq!(cache.page(Visible::All, &all, 2, None), None, "the third job is not held");
    // New jobs push the window up; the first page stays answerable.
    ids.push(submit(&t, &f, "new").await);
    both_pages(&t, &cache, &all, 1, None).await;
    assert_eq!(cache.len(), 2);
    assert_eq!(cache.page(Visible::All, &all, 1, Some(ids[2])), None);
}

#[tokio::test]
async fn concurrent_readers_all_see_what_committed_before_them() {
    let t = TestDb::with_connections(10).await;
    let f = fixture(&t.pool, "readers").await;
    let cache = JobCache::new(t.pool.clone(), limits(1000));
    let all = VisibleJobFilter::default();
    assert!(cache.catch_up().await);
    for round in 0..10 {
        let id = submit(&t, &f, &format!("r-{round}")).await;
        let readers: Vec<_> = (0..8)
            .map(|_| {
                let cache = cache.clone();
                let all = all.clone();
                tokio::spawn(async move {
                    assert!(cache.catch_up().await);
                    cache.page(Visible::All, &all, 1, None).unwrap().jobs[0].head.id
                })
            })
            .collect();
        for r in readers {
            assert_eq!(r.await.unwrap(), id);
        }
    }
}
