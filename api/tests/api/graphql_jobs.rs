//! The top-level `jobs` query and the DataLoaders behind nested fields, through the real
//! router against a fresh PostgreSQL database.
//!
//! The N+1 test counts the statements the server really sends: the server's pool connects
//! through a small TCP proxy that parses the PostgreSQL frontend protocol and counts Execute
//! ('E', extended protocol) and Query ('Q', simple protocol) messages, i.e. one per statement
//! run, whatever code issued it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use grus_api::db::{self, Cause, Scope};
use grus_api::domain::{JobState, Role};
use grus_testkit::api::TestApi;
use grus_testkit::client::gql;
use grus_testkit::env::database_addr;
use grus_testkit::seed::dev_user;
use grus_testkit::seed::{by_user, gpu_job, Fixture};
use grus_testkit::TestDb;
use serde_json::{json, Value};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn app(pool: PgPool) -> Router {
    app_with(pool, true)
}

/// The server's router (without a change feed or the admission batcher: nothing here
/// subscribes or submits); `jobs_cache`: whether `jobs` pages may come from the jobs cache
/// (without, every page reads PostgreSQL).
fn app_with(pool: PgPool, jobs_cache: bool) -> Router {
    TestApi::new(&pool).without_notifier().without_admission_batcher().jobs_cache(jobs_cache).router()
}

/// Inserts `n` jobs named `<prefix>-<i>` (two tasks of two replicas each), oldest first.
async fn jobs(pool: &PgPool, f: &Fixture, prefix: &str, n: usize) -> Vec<i64> {
    let mut conn = pool.acquire().await.unwrap();
    let mut ids = Vec::new();
    for i in 0..n {
        let mut job = gpu_job(f, &format!("{prefix}-{i}"), 2, 1, &[]);
        let mut second = job.tasks[0].clone();
        second.name = "side".into();
        job.tasks.push(second);
        ids.push(db::insert_job(&mut conn, &job, by_user("user:test")).await.unwrap().id);
    }
    ids
}

/// Counts statements sent to PostgreSQL through it (see the module comment).
struct CountingProxy {
    addr: SocketAddr,
    statements: Arc<AtomicU64>,
    /// The SQL of each executed statement, for the failure message.
    log: Arc<Mutex<Vec<String>>>,
}

impl CountingProxy {
    async fn start(upstream: SocketAddr) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let statements = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (counter, shared_log) = (statements.clone(), log.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let counter = counter.clone();
                let log = shared_log.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else { return };
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    });
                    let _ = forward_frontend(&mut cr, &mut sw, &counter, &log).await;
                });
            }
        });
        CountingProxy { addr, statements, log }
    }

    fn count(&self) -> u64 {
        self.statements.load(Ordering::SeqCst)
    }

    fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// Copies client → server message by message. The startup message has no type byte; every
/// later one is `type, int32 length (itself included), body`.
async fn forward_frontend(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    counter: &AtomicU64,
    log: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    // Prepared statement name -> SQL (Parse), and the statement of the last Bind.
    let mut prepared = std::collections::HashMap::<Vec<u8>, String>::new();
    let mut bound = String::new();
    let cstr = |b: &[u8]| -> (Vec<u8>, usize) {
        let end = b.iter().position(|c| *c == 0).unwrap_or(b.len());
        (b[..end].to_vec(), (end + 1).min(b.len()))
    };
    let len = from.read_u32().await?;
    let mut body = vec![0; len as usize - 4];
    from.read_exact(&mut body).await?;
    to.write_all(&len.to_be_bytes()).await?;
    to.write_all(&body).await?;
    loop {
        let ty = from.read_u8().await?;
        let len = from.read_u32().await?;
        let mut body = vec![0; len as usize - 4];
        from.read_exact(&mut body).await?;
        match ty {
            b'P' => {
                let (name, rest) = cstr(&body);
                let (sql, _) = cstr(&body[rest..]);
                prepared.insert(name, String::from_utf8_lossy(&sql).into_owned());
            }
            b'B' => {
                let (_portal, rest) = cstr(&body);
                let (stmt, _) = cstr(&body[rest..]);
                bound = prepared.get(&stmt).cloned().unwrap_or_default();
            }
            b'E' | b'Q' => {
                counter.fetch_add(1, Ordering::SeqCst);
                let sql = if ty == b'Q' {
                    String::from_utf8_lossy(cstr(&body).0.as_slice()).into_owned()
                } else {
                    bound.clone()
                };
                log.lock().unwrap().push(sql.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            _ => {}
        }
        to.write_all(&[ty]).await?;
        to.write_all(&len.to_be_bytes()).await?;
        to.write_all(&body).await?;
    }
}

/// A pool for database `name` whose connections go through `proxy` (no TLS, so the proxy
/// can read the messages).
async fn pool_through(proxy: &CountingProxy, name: &str) -> PgPool {
    let url = format!("postgres://postgres@{}/{name}?sslmode=disable", proxy.addr);
    PgPoolOptions::new().max_connections(5).connect(&url).await.unwrap()
}

const NESTED: &str = "query($first: Int!) { jobs(first: $first) { edges { node { name
    tasks { name replicas { id } } project { slug myRole } queue { name } } } } }";

/// Statements the server sends for NESTED over a page of `first` jobs (the second run, so
/// connection setup and statement preparation are not counted).
async fn statements_for_page(proxy: &CountingProxy, app: &Router, user: &str, first: usize) -> (u64, Value) {
    let vars = json!({ "first": first });
    let warm = gql(app, Some(user), NESTED, vars.clone()).await;
    assert!(warm["errors"].is_null(), "{warm}");
    let before = proxy.count();
    proxy.take_log();
    let v = gql(app, Some(user), NESTED, vars).await;
    (proxy.count() - before, v)
}

#[tokio::test]
async fn nested_page_costs_a_constant_number_of_statements() {
    let t = TestDb::new().await;
    // Three readable projects in two tenants and one of another tenant.
    let a = grus_testkit::seed::fixture(&t.pool, "pa").await;
    let b = grus_testkit::seed::fixture(&t.pool, "pb").await;
    let b2_project = db::create_project(&t.pool, b.tenant_id, "pb2", "PB2").await.unwrap();
    let b2_queue = db::create_queue(&t.pool, b2_project.id, &db::QueueSettings::named("default")).await.unwrap();
    let b2 = Fixture { project_id: b2_project.id, queue_id: b2_queue.id, ..b };
    let hidden = grus_testkit::seed::fixture(&t.pool, "hidden").await;
    let reader = dev_user(&t.pool, "reader").await;
    db::grant(&t.pool, reader, Scope::Project(a.project_id), Role::Viewer).await.unwrap();
    db::grant(&t.pool, reader, Scope::Tenant(b.tenant_id), Role::TenantAdmin).await.unwrap();
    jobs(&t.pool, &hidden, "hidden", 20).await;
    jobs(&t.pool, &a, "a", 40).await;
    jobs(&t.pool, &b, "b", 40).await;
    jobs(&t.pool, &b2, "c", 40).await;

    let proxy = CountingProxy::start(database_addr()).await;
    let mut pages = Vec::new();
    for jobs_cache in [false, true] {
        let app = app_with(pool_through(&proxy, &t.name).await, jobs_cache);
        let (small, v10) = statements_for_page(&proxy, &app, "reader", 10).await;
        let (large, v100) = statements_for_page(&proxy, &app, "reader", 100).await;
        let log = proxy.take_log();
        // Dev sign-in (1), projects + queues (2), replicas of tasks (1), and either the page with
        // the caller's roles and the jobs' tasks (1), or the caller's roles and the cache's read
        // of changes (2; concurrent requests share that read).
        let expected = if jobs_cache { 6 } else { 5 };
        assert_eq!(large, expected, "statements for a page of 100 (jobs cache: {jobs_cache}): {log:#?}");
        assert_eq!(small, large, "a page of 10 costs the same as a page of 100");
        pages.push((v10, v100));
    }
    assert_eq!(pages[0], pages[1], "the cache answers as PostgreSQL does");
    let (v10, v100) = pages.pop().unwrap();

    let edges = v100["data"]["jobs"]["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 100);
    assert_eq!(v10["data"]["jobs"]["edges"].as_array().unwrap().len(), 10);
    for e in edges {
        let node = &e["node"];
        let name = node["name"].as_str().unwrap();
        assert!(!name.starts_with("hidden"), "another tenant's job leaked: {name}");
        let slug = node["project"]["slug"].as_str().unwrap();
        // The roles the page's statement read: viewer of pa, tenant admin of pb's tenant.
        assert_eq!(node["project"]["myRole"], if slug == "pa" { "VIEWER" } else { "TENANT_ADMIN" }, "{node}");
        assert_eq!(&name[..1], if slug == "pb2" { "c" } else { &slug[1..2] }, "{node}");
        assert_eq!(node["queue"]["name"], "default");
        let tasks = node["tasks"].as_array().unwrap();
        // Read by the page's statement, a row per task: each job's own, in insertion order.
        assert_eq!(tasks.len(), 2, "{node}");
        assert_eq!((&tasks[0]["name"], &tasks[1]["name"]), (&json!("main"), &json!("side")), "{node}");
        for task in tasks {
            assert_eq!(task["replicas"].as_array().unwrap().len(), 2, "{node}");
        }
    }
    // The page of 10 stops at a job boundary: its last job has both its tasks.
    let last = &v10["data"]["jobs"]["edges"][9]["node"];
    assert_eq!(last["tasks"].as_array().unwrap().len(), 2, "{last}");
    // Newest first: the last 100 inserted are c-39 .. c-0, b-39 .. b-0, a-39 .. a-20.
    assert_eq!(edges[0]["node"]["name"], "c-39");
    assert_eq!(edges[99]["node"]["name"], "a-20");
}

#[tokio::test]
async fn jobs_are_filtered_to_readable_projects_and_paginate_stably() {
    let t = TestDb::new().await;
    let pool = &t.pool;
    let a = grus_testkit::seed::fixture(pool, "pa").await;
    let other = grus_testkit::seed::fixture(pool, "po").await;
    let member = dev_user(pool, "member").await;
    let root = dev_user(pool, "root").await;
    db::set_platform_admin(pool, root, true).await.unwrap();
    db::grant(pool, member, Scope::Project(a.project_id), Role::Member).await.unwrap();
    let mine = jobs(pool, &Fixture { user_id: member, ..a }, "mine", 3).await;
    let theirs = jobs(pool, &a, "theirs", 3).await;
    let foreign = jobs(pool, &other, "foreign", 2).await;
    // One job of `theirs` is cancelled and one runs on cluster c1.
    let mut tx = pool.begin().await.unwrap();
    db::transition_job(&mut tx, theirs[0], JobState::Cancelled, Cause { cause: "t", actor: "test" }).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    db::register_cluster(&mut *tx, "c1", &json!({}), &[0u8; 32]).await.unwrap();
    db::transition_job(&mut tx, theirs[1], JobState::Admitted, Cause { cause: "t", actor: "test" }).await.unwrap();
    db::insert_dispatch(&mut tx, theirs[1], "c1").await.unwrap();
    tx.commit().await.unwrap();

    let app = app(pool.clone());
    let q = "query($f: JobsFilter, $first: Int, $after: String) { jobs(filter: $f, first: $first, after: $after) {
               edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }";
    let names = |v: &Value| -> Vec<String> {
        v["data"]["jobs"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["node"]["name"].as_str().unwrap().into())
            .collect()
    };
    let run = |user: &'static str, f: Value| {
        let app = app.clone();
        async move { gql(&app, Some(user), q, json!({ "f": f, "first": 50 })).await }
    };

    // The member sees the six jobs of its project, newest first; the admin sees all eight.
    let v = run("member", Value::Null).await;
    assert_eq!(names(&v), ["theirs-2", "theirs-1", "theirs-0", "mine-2", "mine-1", "mine-0"]);
    assert_eq!(names(&run("root", Value::Null).await).len(), 8);

    // Filters.
    let by_user = run("member", json!({ "userId": member.to_string() })).await;
    assert_eq!(names(&by_user), ["mine-2", "mine-1", "mine-0"]);
    let cancelled = run("member", json!({ "states": ["CANCELLED"] })).await;
    assert_eq!(names(&cancelled), ["theirs-0"]);
    let on_c1 = run("member", json!({ "clusterId": "c1" })).await;
    assert_eq!(names(&on_c1), ["theirs-1"]);
    let search = run("member", json!({ "search": "IRS-" })).await;
    assert_eq!(names(&search), ["theirs-2", "theirs-1", "theirs-0"]);
    // LIKE metacharacters match literally.
    assert_eq!(names(&run("member", json!({ "search": "%" })).await).len(), 0);
    let by_queue =
        run("member", json!({ "queueId": a.queue_id.to_string(), "projectId": a.project_id.to_string() })).await;
    assert_eq!(names(&by_queue).len(), 6);
    // Another tenant's project, or a malformed id: an empty page, not an error.
    for f in [json!({ "projectId": other.project_id.to_string() }), json!({ "projectId": "x" })] {
        let v = run("member", f).await;
        assert!(v["errors"].is_null(), "{v}");
        assert_eq!(names(&v).len(), 0);
    }
    // The platform admin can filter on any project.
    assert_eq!(
        names(&run("root", json!({ "projectId": other.project_id.to_string() })).await),
        ["foreign-1", "foreign-0"]
    );
    let _ = (mine, foreign);

    // Pages of two; a job submitted meanwhile does not shift later pages.
    let page1 = gql(&app, Some("member"), q, json!({ "first": 2 })).await;
    assert_eq!(names(&page1), ["theirs-2", "theirs-1"]);
    assert_eq!(page1["data"]["jobs"]["pageInfo"]["hasNextPage"], true);
    let cursor = page1["data"]["jobs"]["pageInfo"]["endCursor"].as_str().unwrap().to_owned();
    jobs(pool, &a, "late", 1).await;
    let page2 = gql(&app, Some("member"), q, json!({ "first": 2, "after": cursor })).await;
    assert_eq!(names(&page2), ["theirs-0", "mine-2"]);
    let cursor = page2["data"]["jobs"]["pageInfo"]["endCursor"].as_str().unwrap().to_owned();
    let page3 = gql(&app, Some("member"), q, json!({ "first": 2, "after": cursor })).await;
    assert_eq!(names(&page3), ["mine-1", "mine-0"]);
    assert_eq!(page3["data"]["jobs"]["pageInfo"]["hasNextPage"], false);

    // Anonymous: UNAUTHENTICATED.
    let v = gql(&app, None, q, json!({ "first": 5 })).await;
    assert_eq!(v["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{v}");
}

#[tokio::test]
async fn nested_fields_recheck_the_role_and_load_the_right_rows() {
    let t = TestDb::new().await;
    let pool = &t.pool;
    let a = grus_testkit::seed::fixture(pool, "pa").await;
    let viewer = dev_user(pool, "viewer").await;
    db::grant(pool, viewer, Scope::Project(a.project_id), Role::Viewer).await.unwrap();
    let padmin = dev_user(pool, "padmin").await;
    db::grant(pool, padmin, Scope::Project(a.project_id), Role::ProjectAdmin).await.unwrap();
    db::set_quota(pool, a.queue_id, &db::Quota { resource: "gpu".into(), guaranteed: 1000, limit: Some(4000) })
        .await
        .unwrap();
    let ids = jobs(pool, &Fixture { user_id: viewer, ..a }, "j", 2).await;
    let app = app(pool.clone());

    let q = "{ jobs { edges { node { name spec whyPending { summary } tasks { name spec } submitter { subject } events { toState } replicas { index }
               project { slug myRole members { user { subject } role } queues { name quotas { resource limit } usage { amount } } }
               queue { name quotas { guaranteed } } } } } }";
    let v = gql(&app, Some("viewer"), q, json!({})).await;
    assert!(v["errors"].is_null(), "{v}");
    let node = &v["data"]["jobs"]["edges"][0]["node"];
    assert_eq!(node["name"], "j-1");
    // The list page's rows are lean; the documents are loaded when selected.
    assert_eq!(node["spec"], json!({ "name": "j-1" }));
    assert!(node["whyPending"].is_null());
    assert_eq!(node["tasks"][1], json!({ "name": "side", "spec": { "image": "busybox" } }));
    assert_eq!(node["submitter"]["subject"], "dev:viewer");
    assert_eq!(node["events"], json!([{ "toState": "pending" }]));
    assert_eq!(node["replicas"].as_array().unwrap().len(), 4);
    assert_eq!(node["project"]["myRole"], "VIEWER");
    let members: Vec<&str> =
        node["project"]["members"].as_array().unwrap().iter().map(|m| m["user"]["subject"].as_str().unwrap()).collect();
    assert_eq!(members, ["dev:padmin", "dev:viewer"]);
    assert_eq!(node["project"]["queues"][0]["quotas"], json!([{ "resource": "gpu", "limit": 4000 }]));
    assert_eq!(node["queue"]["quotas"], json!([{ "guaranteed": 1000 }]));

    // The role is re-read for every request: once revoked, the next request sees nothing.
    db::revoke(pool, viewer, Scope::Project(a.project_id)).await.unwrap();
    let v = gql(&app, Some("viewer"), q, json!({})).await;
    assert_eq!(v["data"]["jobs"]["edges"], json!([]), "{v}");
    // `job(id)` of a project without a role is NOT_FOUND.
    let v = gql(&app, Some("viewer"), "query($id: ID!) { job(id: $id) { name } }", json!({ "id": ids[0].to_string() }))
        .await;
    assert_eq!(v["errors"][0]["extensions"]["code"], "NOT_FOUND", "{v}");
}
