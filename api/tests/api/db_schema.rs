//! The schema itself: migrations apply, and the database refuses what it can refuse.

use grus_api::db::{self, DbError, Quota};
use grus_testkit::seed::fixture;
use grus_testkit::TestDb;

#[tokio::test]
async fn migrations_apply_on_a_fresh_database_and_are_idempotent() {
    let t = TestDb::new().await;
    // Applying again is a no-op.
    db::migrate(&t.pool).await.expect("second run");
    let (tables,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ANY($1)",
    )
    .bind(vec![
        "tenants",
        "projects",
        "users",
        "memberships",
        "api_tokens",
        "clusters",
        "queues",
        "queue_quotas",
        "jobs",
        "tasks",
        "replicas",
        "job_events",
        "dispatches",
        "price_book",
        "usage_ledger",
        "exports",
    ])
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(tables, 16);
}

#[tokio::test]
async fn cluster_ids_must_be_dns_labels() {
    let t = TestDb::new().await;
    for good in ["c1", "eu-west-1", "a"] {
        sqlx::query("INSERT INTO clusters (id) VALUES ($1)").bind(good).execute(&t.pool).await.expect(good);
    }
    for bad in ["", "-c1", "c1-", "C1", "c_1", &"x".repeat(64)] {
        let err: DbError =
            sqlx::query("INSERT INTO clusters (id) VALUES ($1)").bind(bad).execute(&t.pool).await.unwrap_err().into();
        assert!(matches!(err, DbError::Validation { .. }), "{bad:?}: {err:?}");
    }
}

#[tokio::test]
async fn quotas_refuse_negative_guarantees_and_limits_below_them() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "quota").await;
    let set = |resource: &str, guaranteed, limit| Quota { resource: resource.into(), guaranteed, limit };
    db::set_quota(&t.pool, f.queue_id, &set("gpu", 0, Some(0))).await.expect("zero quota");
    db::set_quota(&t.pool, f.queue_id, &set("gpu/A100-80GB", 2000, None)).await.expect("unlimited");
    for (q, what) in [
        (set("gpu", -1, None), "negative guarantee"),
        (set("gpu", 4000, Some(3000)), "limit below guarantee"),
        (set("tpu", 1, None), "unknown resource"),
    ] {
        let err = db::set_quota(&t.pool, f.queue_id, &q).await.unwrap_err();
        assert!(matches!(err, DbError::Validation { .. }), "{what}: {err:?}");
        // The message names the rule, never the SQL.
        assert!(!err.to_string().contains("INSERT"), "{err}");
    }
    let err =
        db::create_queue(&t.pool, f.project_id, &db::QueueSettings { weight: 0.0, ..db::QueueSettings::named("w") })
            .await
            .unwrap_err();
    assert!(matches!(err, DbError::Validation { .. }), "{err:?}");
    let err = db::create_queue(&t.pool, f.project_id, &db::QueueSettings::named("default")).await.unwrap_err();
    assert_eq!(err.constraint(), Some("queues_project_name_key"));
    assert!(matches!(err, DbError::Conflict { .. }));
}

#[tokio::test]
async fn memberships_refuse_unknown_roles_and_wrong_scopes() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "roles").await;
    let insert = |tenant: Option<i64>, project: Option<i64>, role: &'static str| {
        sqlx::query("INSERT INTO memberships (user_id, tenant_id, project_id, role) VALUES ($1, $2, $3, $4)")
            .bind(f.user_id)
            .bind(tenant)
            .bind(project)
            .bind(role)
            .execute(&t.pool)
    };
    for (tenant, project, role) in [
        (None, Some(f.project_id), "owner"),
        (None, Some(f.project_id), "tenant_admin"),
        (Some(f.tenant_id), None, "member"),
        (Some(f.tenant_id), Some(f.project_id), "tenant_admin"),
        (None, None, "viewer"),
    ] {
        let err: DbError = insert(tenant, project, role).await.unwrap_err().into();
        assert!(matches!(err, DbError::Validation { .. }), "{role}: {err:?}");
    }
    insert(None, Some(f.project_id), "viewer").await.expect("viewer");
    let err: DbError = insert(None, Some(f.project_id), "member").await.unwrap_err().into();
    assert!(matches!(err, DbError::Conflict { .. }), "{err:?}");
}

#[tokio::test]
async fn price_ranges_of_one_model_cannot_overlap() {
    let t = TestDb::new().await;
    let add = |model: &'static str, from: &'static str, to: Option<&'static str>| {
        sqlx::query(
            "INSERT INTO price_book (gpu_model, list_price_per_gpu_hour, contracted_price_per_gpu_hour, effective_from, effective_to)
             VALUES ($1, 4.10, 3.20, $2::timestamptz, $3::timestamptz)",
        )
        .bind(model)
        .bind(from)
        .bind(to)
        .execute(&t.pool)
    };
    add("A100", "2026-01-01Z", Some("2026-02-01Z")).await.unwrap();
    add("A100", "2026-02-01Z", None).await.expect("adjacent range");
    add("H100", "2026-01-15Z", None).await.expect("other model");
    let err: DbError = add("A100", "2026-01-20Z", Some("2026-01-25Z")).await.unwrap_err().into();
    assert_eq!(err.constraint(), Some("price_book_no_overlap"));
    let err: DbError = add("V100", "2026-02-01Z", Some("2026-01-01Z")).await.unwrap_err().into();
    assert!(matches!(err, DbError::Validation { .. }), "{err:?}");
}

#[tokio::test]
async fn a_job_queue_must_belong_to_the_job_project() {
    let t = TestDb::new().await;
    let a = fixture(&t.pool, "proj-a").await;
    let b = fixture(&t.pool, "proj-b").await;
    let mut job = grus_testkit::seed::gpu_job(&a, "cross", 1, 1, &[]);
    job.queue_id = b.queue_id;
    let mut tx = t.pool.begin().await.unwrap();
    let err = db::insert_job(&mut tx, &job, grus_testkit::seed::by_user("user:1")).await.unwrap_err();
    assert_eq!(err.constraint(), Some("jobs_queue_in_project_fk"));
}
