//! Jobs: insert with tasks and replicas, state transitions with their event trail (invariant
//! 6), keyset pagination, dispatch epochs, and role lookups.

use grus_api::db::{self, Cause, DbError, EventOrigin, JobFilter, Scope, UserProfile};
use grus_api::domain::{JobState, Role};
use grus_testkit::seed::{by_user, fixture, gpu_job};
use grus_testkit::TestDb;

#[tokio::test]
async fn insert_and_transitions_write_one_event_each() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "jobs").await;
    let mut tx = t.pool.begin().await.unwrap();
    let job = db::insert_job(&mut tx, &gpu_job(&f, "train", 3, 2, &["A100"]), by_user("user:1")).await.unwrap();
    assert_eq!(job.state, JobState::Pending);
    let sys = |cause| Cause { cause, actor: "system:test" };
    db::transition_job(&mut tx, job.id, JobState::Admitted, sys("admitted")).await.unwrap();
    tx.commit().await.unwrap();

    let (replicas,): (i64,) = sqlx::query_as("SELECT count(*) FROM replicas WHERE job_id = $1")
        .bind(job.id)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(replicas, 3);

    // A state change the machine forbids is a conflict and leaves no trace.
    let mut tx = t.pool.begin().await.unwrap();
    let err = db::transition_job(&mut tx, job.id, JobState::Succeeded, sys("skip")).await.unwrap_err();
    assert!(matches!(err, DbError::Conflict { .. }), "{err:?}");
    drop(tx);

    // An agent-reported change is idempotent on its message id.
    sqlx::query("INSERT INTO clusters (id) VALUES ('c1')").execute(&t.pool).await.unwrap();
    let mut tx = t.pool.begin().await.unwrap();
    let d = db::insert_dispatch(&mut tx, job.id, "c1").await.unwrap();
    db::transition_job(&mut tx, job.id, JobState::Dispatched, sys("dispatched")).await.unwrap();
    tx.commit().await.unwrap();
    let origin = EventOrigin { cluster_id: Some("c1"), epoch: Some(d.epoch), message_id: Some("1-0"), at: None };
    for expect_applied in [true, false] {
        let mut tx = t.pool.begin().await.unwrap();
        let agent = Cause { cause: "placed", actor: "agent:c1" };
        let applied = db::transition_job_from(&mut tx, job.id, JobState::Scheduled, agent, &origin).await.unwrap();
        assert_eq!(applied.is_some(), expect_applied);
        tx.commit().await.unwrap();
    }

    let events = db::job_events(&t.pool, job.id).await.unwrap();
    let trail: Vec<(Option<&str>, &str, &str)> =
        events.iter().map(|e| (e.from_state.as_deref(), e.to_state.as_str(), e.actor.as_str())).collect();
    assert_eq!(
        trail,
        [
            (None, "pending", "user:1"),
            (Some("pending"), "admitted", "system:test"),
            (Some("admitted"), "dispatched", "system:test"),
            (Some("dispatched"), "scheduled", "agent:c1"),
        ]
    );
    assert_eq!(events[3].epoch, Some(1));
    assert_eq!(db::get_job(&t.pool, job.id).await.unwrap().state, JobState::Scheduled);
}

#[tokio::test]
async fn events_are_append_only_and_state_needs_an_event() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "append").await;
    let mut tx = t.pool.begin().await.unwrap();
    let job = db::insert_job(&mut tx, &gpu_job(&f, "j", 1, 1, &[]), by_user("user:1")).await.unwrap();
    tx.commit().await.unwrap();
    for sql in [
        "UPDATE job_events SET cause = 'rewritten'",
        "DELETE FROM job_events",
        "TRUNCATE job_events CASCADE",
        // Bypassing transition_job: the trigger wants the matching event in this transaction.
        "UPDATE jobs SET state = 'admitted'",
    ] {
        let err: DbError = sqlx::query(sql).execute(&t.pool).await.unwrap_err().into();
        assert!(matches!(err, DbError::Conflict { .. }), "{sql}: {err:?}");
    }
    assert_eq!(db::job_events(&t.pool, job.id).await.unwrap().len(), 1);
    assert_eq!(db::get_job(&t.pool, job.id).await.unwrap().state, JobState::Pending);
}

#[tokio::test]
async fn pagination_is_stable_under_concurrent_inserts() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "pages").await;
    let insert = |name: String| {
        let pool = t.pool.clone();
        let job = gpu_job(&f, &name, 1, 0, &[]);
        async move {
            let mut tx = pool.begin().await.unwrap();
            let j = db::insert_job(&mut tx, &job, by_user("user:1")).await.unwrap();
            tx.commit().await.unwrap();
            j.id
        }
    };
    let mut ids = Vec::new();
    for i in 0..25 {
        ids.push(insert(format!("j{i}")).await);
    }
    ids.reverse(); // newest first
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = db::list_jobs(&t.pool, f.project_id, &JobFilter::default(), 10, after).await.unwrap();
        seen.extend(page.jobs.iter().map(|j| j.id));
        // Jobs submitted while paging are newer than any cursor: they never shift a page.
        insert(format!("late{}", seen.len())).await;
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, ids);

    // Filters.
    let mut tx = t.pool.begin().await.unwrap();
    db::transition_job(&mut tx, ids[0], JobState::Cancelled, Cause { cause: "user", actor: "user:1" }).await.unwrap();
    tx.commit().await.unwrap();
    let cancelled = JobFilter { states: vec![JobState::Cancelled], queue_id: Some(f.queue_id) };
    let page = db::list_jobs(&t.pool, f.project_id, &cancelled, 10, None).await.unwrap();
    assert_eq!(page.jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [ids[0]]);
    assert_eq!(page.next_cursor, None);
}

#[tokio::test]
async fn dispatch_epochs_grow_and_stale_answers_change_nothing() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "epochs").await;
    sqlx::query("INSERT INTO clusters (id) VALUES ('c1'), ('c2')").execute(&t.pool).await.unwrap();
    let mut tx = t.pool.begin().await.unwrap();
    let job = db::insert_job(&mut tx, &gpu_job(&f, "j", 1, 1, &[]), by_user("user:1")).await.unwrap();
    let first = db::insert_dispatch(&mut tx, job.id, "c1").await.unwrap();
    let second = db::insert_dispatch(&mut tx, job.id, "c2").await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!((first.epoch, second.epoch), (1, 2));
    assert!(!db::answer_dispatch(&t.pool, job.id, 1, true, None).await.unwrap(), "stale epoch");
    assert!(db::answer_dispatch(&t.pool, job.id, 2, true, None).await.unwrap());
    let j = db::get_job(&t.pool, job.id).await.unwrap();
    assert_eq!((j.cluster_id.as_deref(), j.epoch), (Some("c2"), 2));
}

#[tokio::test]
async fn role_in_project_takes_the_strongest_grant() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "home").await;
    let other = fixture(&t.pool, "other").await;
    let user = |s: &'static str| {
        let pool = t.pool.clone();
        async move { db::upsert_user(&pool, &UserProfile { subject: s, ..Default::default() }).await.unwrap().id }
    };
    let (viewer, tadmin, padmin, stranger) = (user("v").await, user("ta").await, user("pa").await, user("s").await);
    db::grant(&t.pool, viewer, Scope::Project(f.project_id), Role::Viewer).await.unwrap();
    db::grant(&t.pool, tadmin, Scope::Tenant(f.tenant_id), Role::TenantAdmin).await.unwrap();
    db::grant(&t.pool, padmin, Scope::Project(f.project_id), Role::Member).await.unwrap();
    // Granting again changes the role.
    db::grant(&t.pool, padmin, Scope::Project(f.project_id), Role::ProjectAdmin).await.unwrap();
    db::set_platform_admin(&t.pool, stranger, true).await.unwrap();

    let role = |u, p| db::role_in_project(&t.pool, u, p);
    assert_eq!(role(viewer, f.project_id).await.unwrap(), Some(Role::Viewer));
    assert_eq!(role(tadmin, f.project_id).await.unwrap(), Some(Role::TenantAdmin));
    assert_eq!(role(padmin, f.project_id).await.unwrap(), Some(Role::ProjectAdmin));
    assert_eq!(role(stranger, f.project_id).await.unwrap(), Some(Role::PlatformAdmin));
    // No leak across tenants.
    assert_eq!(role(viewer, other.project_id).await.unwrap(), None);
    assert_eq!(role(tadmin, other.project_id).await.unwrap(), None);
    // A missing project is no access, even for a platform admin.
    assert_eq!(role(stranger, i64::MAX).await.unwrap(), None);

    let visible = db::projects_for_user(&t.pool, tadmin).await.unwrap();
    assert_eq!(visible.iter().map(|(p, r)| (p.slug.as_str(), *r)).collect::<Vec<_>>(), [("home", Role::TenantAdmin)]);
    db::revoke(&t.pool, viewer, Scope::Project(f.project_id)).await.unwrap();
    assert_eq!(role(viewer, f.project_id).await.unwrap(), None);
    let err = db::grant(&t.pool, viewer, Scope::Project(f.project_id), Role::TenantAdmin).await.unwrap_err();
    assert!(matches!(err, DbError::Validation { .. }), "{err:?}");
}

#[test]
fn state_machine_rules() {
    use JobState::*;
    assert!(Pending.can_become(Admitted));
    assert!(Running.can_become(Preempting));
    assert!(Preempted.can_become(Admitted));
    for end in [Succeeded, Failed, Cancelled] {
        assert!(JobState::ALL.iter().all(|&s| !end.can_become(s)), "{end} is final");
    }
    assert!(!Pending.can_become(Running), "placement needs admission and dispatch first");
    assert!(!Running.can_become(Running));
    for s in JobState::ALL {
        assert_eq!(s.as_str().parse::<JobState>().unwrap(), s);
    }
}

#[tokio::test]
async fn replica_and_task_changes_are_events_too() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "units").await;
    sqlx::query("INSERT INTO clusters (id) VALUES ('c1')").execute(&t.pool).await.unwrap();
    let mut tx = t.pool.begin().await.unwrap();
    let job = db::insert_job(&mut tx, &gpu_job(&f, "j", 2, 1, &[]), by_user("user:1")).await.unwrap();
    tx.commit().await.unwrap();
    let reps = db::replicas(&t.pool, job.id).await.unwrap();
    assert_eq!(reps.len(), 2);
    let devices = serde_json::json!([{ "index": 3, "milli": 1000 }]);
    let agent = Cause { cause: "placed", actor: "agent:c1" };
    let origin = EventOrigin { cluster_id: Some("c1"), epoch: Some(1), message_id: Some("7-0"), at: None };
    let report = db::ReplicaReport {
        state: grus_api::domain::UnitState::Placed,
        node: Some("n1"),
        devices: Some(&devices),
        exit: None,
    };
    for expect in [true, false] {
        let mut tx = t.pool.begin().await.unwrap();
        let prev = db::transition_replica(&mut tx, reps[0].id, &report, agent, &origin).await.unwrap();
        assert_eq!(prev.is_some(), expect);
        tx.commit().await.unwrap();
    }
    let r = &db::replicas(&t.pool, job.id).await.unwrap()[0];
    assert_eq!(
        (r.state, r.node.as_deref(), r.cluster_id.as_deref()),
        (grus_api::domain::UnitState::Placed, Some("n1"), Some("c1"))
    );

    let mut tx = t.pool.begin().await.unwrap();
    db::transition_task(&mut tx, reps[0].task_id, grus_api::domain::UnitState::Running, agent).await.unwrap();
    let err =
        db::transition_task(&mut tx, reps[0].task_id, grus_api::domain::UnitState::Placed, agent).await.unwrap_err();
    assert!(matches!(err, DbError::Conflict { .. }), "{err:?}");
    drop(tx);

    // Writing states directly, without the event, is refused by the schema.
    for sql in ["UPDATE replicas SET state = 'running'", "UPDATE tasks SET state = 'failed'"] {
        let err: DbError = sqlx::query(sql).execute(&t.pool).await.unwrap_err().into();
        assert!(matches!(err, DbError::Conflict { .. }), "{sql}: {err:?}");
    }
    let events = db::job_events(&t.pool, job.id).await.unwrap();
    assert_eq!(events.len(), 2, "created + one replica placement");
    assert_eq!((events[1].replica_id, events[1].to_state.as_str()), (Some(reps[0].id), "placed"));
}

/// What aging measures from: a bounce between clusters is the same wait; a requeue after a
/// preemption, or a resume, begins a new one and forgets the last raise.
#[tokio::test]
async fn waiting_since_restarts_on_a_requeue_but_not_on_a_bounce_between_clusters() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "wait").await;
    let sys = |cause| Cause { cause, actor: "system:test" };
    let mut tx = t.pool.begin().await.unwrap();
    let job = db::insert_job(&mut tx, &gpu_job(&f, "w", 1, 1, &["A100"]), by_user("user:1")).await.unwrap();
    db::transition_job(&mut tx, job.id, JobState::Admitted, sys("admitted")).await.unwrap();
    tx.commit().await.unwrap();
    let long_ago = "UPDATE jobs SET waiting_since = now() - interval '1 hour', aged_at = now() - interval '1 minute'
                    WHERE id = $1";
    sqlx::query(long_ago).bind(job.id).execute(&t.pool).await.unwrap();
    let waited = || async {
        let (since, aged): (f64, Option<chrono::DateTime<chrono::Utc>>) =
            sqlx::query_as("SELECT EXTRACT(EPOCH FROM now() - waiting_since)::float8, aged_at FROM jobs WHERE id = $1")
                .bind(job.id)
                .fetch_one(&t.pool)
                .await
                .unwrap();
        (since, aged.is_some())
    };
    for to in [JobState::Dispatched, JobState::Rejected, JobState::Admitted] {
        let mut tx = t.pool.begin().await.unwrap();
        db::transition_job(&mut tx, job.id, to, sys("bounce")).await.unwrap();
        tx.commit().await.unwrap();
    }
    let (since, aged) = waited().await;
    assert!(since >= 3600.0 && aged, "a bounce keeps the wait: {since}");
    for to in [
        JobState::Dispatched,
        JobState::Scheduled,
        JobState::Running,
        JobState::Preempting,
        JobState::Preempted,
        JobState::Admitted,
    ] {
        let mut tx = t.pool.begin().await.unwrap();
        db::transition_job(&mut tx, job.id, to, sys("requeue")).await.unwrap();
        tx.commit().await.unwrap();
    }
    let (since, aged) = waited().await;
    assert!(since < 60.0 && !aged, "a requeue begins a new wait: {since}");
}
