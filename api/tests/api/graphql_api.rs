//! The GraphQL API end to end through the router (no network): authentication, the role
//! matrix of invariant 7, validation, admission, pagination, limits and the HTTP endpoints.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use grus_api::auth::web::hash_token;
use grus_api::auth::{AuthMode, OidcConfig};
use grus_api::db::{self, Quota};
use grus_api::domain::Role;
use grus_api::graphql::GraphqlLimits;
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, error_fields, gql, graphql, send};
use grus_testkit::seed::{self, TwoTenants};
use grus_testkit::TestDb;
use serde_json::{json, Value};

struct World {
    _db: TestDb,
    app: Router,
    pa: i64,
    queue_pa: i64,
}

/// The api as these tests drive it: a 64 KiB body limit (the 413 test sends 100 KiB).
fn api(pool: &sqlx::PgPool) -> TestApi {
    TestApi::new(pool).body_limit(64 * 1024)
}

/// [`TwoTenants`] with a GPU limit of 2 GPUs on `pa`'s queue and a second member, `member2`.
async fn world() -> World {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let w = TwoTenants::seed(&pool).await;
    db::set_quota(&pool, w.queue_pa, &Quota { resource: "gpu".into(), guaranteed: 1000, limit: Some(2000) })
        .await
        .unwrap();
    seed::member(&pool, w.pa, "member2", Role::Member).await;
    World { app: api(&pool).router(), _db: t, pa: w.pa, queue_pa: w.queue_pa }
}

const SUBMIT: &str = "mutation($in: JobInput!) { submitJob(input: $in) { borrowed job { id state priority } } }";

fn job(name: &str, gpus: i64) -> Value {
    json!({ "in": { "name": name, "project": "pa", "priority": "high",
        "tasks": [{ "name": "main", "replicas": 1, "image": "busybox", "resources": { "gpus": gpus } }] } })
}

async fn submit(w: &World, who: &str, name: &str) -> String {
    let v = gql(&w.app, who, SUBMIT, job(name, 0)).await;
    assert_eq!(code(&v), "OK", "{v}");
    v["data"]["submitJob"]["job"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn reads_by_role() {
    let w = world().await;
    submit(&w, "member", "one").await;
    let q = r#"{ project(slug: "pa") { slug myRole queues { name weight quotas { resource guaranteed limit } usage { resource amount } }
                 jobs(first: 10) { edges { node { name } } } } }"#;
    for (who, want) in [
        ("viewer", "OK"),
        ("member", "OK"),
        ("padmin", "OK"),
        ("tadmin", "OK"),
        ("root", "OK"),
        ("outsider", "NOT_FOUND"),
    ] {
        let v = gql(&w.app, who, q, json!({})).await;
        assert_eq!(code(&v), want, "{who}: {v}");
        if want == "OK" {
            assert_eq!(v["data"]["project"]["queues"][0]["quotas"][0]["limit"], 2000);
            assert_eq!(v["data"]["project"]["jobs"]["edges"][0]["node"]["name"], "one");
        }
    }
    let v = gql(&w.app, "viewer", &format!("{{ project(id: \"{}\") {{ myRole }} }}", w.pa), json!({})).await;
    assert_eq!(v["data"]["project"]["myRole"], "VIEWER");
    // Lists never carry another tenant's rows.
    let v = gql(&w.app, "outsider", "{ tenants { slug } projects { slug } }", json!({})).await;
    assert_eq!(v["data"], json!({ "tenants": [{ "slug": "tb" }], "projects": [{ "slug": "pb" }] }));
    let v = gql(&w.app, "root", "{ tenants { slug } }", json!({})).await;
    assert_eq!(v["data"]["tenants"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn job_detail_by_role() {
    let w = world().await;
    let id = submit(&w, "member", "one").await;
    let q = "query($id: ID!) { job(id: $id) { name state priority tasks { name replicaCount } replicas { index state } events { toState actor } } }";
    for (who, want) in [("viewer", "OK"), ("padmin", "OK"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, q, json!({ "id": id })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let v = gql(&w.app, "viewer", q, json!({ "id": id })).await;
    let j = &v["data"]["job"];
    assert_eq!((j["state"].as_str(), j["priority"].as_i64()), (Some("ADMITTED"), Some(1000)));
    assert_eq!(j["tasks"][0]["name"], "main");
    assert_eq!(j["replicas"].as_array().unwrap().len(), 1);
    assert!(j["events"].as_array().unwrap().len() >= 2, "{v}");
}

#[tokio::test]
async fn submit_and_cancel_by_role() {
    let w = world().await;
    for (who, want) in [("viewer", "FORBIDDEN"), ("member", "OK"), ("padmin", "OK"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, SUBMIT, job(&format!("j-{who}"), 0)).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let cancel = "mutation($id: ID!) { cancelJob(id: $id) { state } }";
    let mine = submit(&w, "member", "mine").await;
    for (who, want) in [("viewer", "FORBIDDEN"), ("member2", "FORBIDDEN"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, cancel, json!({ "id": mine })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let v = gql(&w.app, "member", cancel, json!({ "id": mine })).await;
    assert_eq!(v["data"]["cancelJob"]["state"], "CANCELLED", "{v}");
    let other = submit(&w, "member", "other").await;
    let v = gql(&w.app, "padmin", cancel, json!({ "id": other })).await;
    assert_eq!(v["data"]["cancelJob"]["state"], "CANCELLED", "{v}");
    // Cancelling twice is a state-machine conflict.
    assert_eq!(code(&gql(&w.app, "padmin", cancel, json!({ "id": other })).await), "CONFLICT");
}

#[tokio::test]
async fn suspend_and_resume_by_role_with_clear_refusals() {
    let w = world().await;
    let suspend = "mutation($id: ID!) { suspendJob(id: $id) { state } }";
    let suspend_with_grace = "mutation($id: ID!, $g: Int!) { suspendJob(id: $id, graceSeconds: $g) { state } }";
    let resume = "mutation($id: ID!) { resumeJob(id: $id) { state } }";
    let mine = submit(&w, "member", "mine").await;
    for (who, want) in [("viewer", "FORBIDDEN"), ("member2", "FORBIDDEN"), ("outsider", "NOT_FOUND")] {
        assert_eq!(code(&gql(&w.app, who, suspend, json!({ "id": mine })).await), want, "{who}");
    }
    let v = gql(&w.app, "member", suspend_with_grace, json!({ "id": mine, "g": -1 })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], "graceSeconds", "{v}");
    // Admitted, held by no cluster: suspended at once.
    let v = gql(&w.app, "member", suspend, json!({ "id": mine })).await;
    assert_eq!(v["data"]["suspendJob"]["state"], "SUSPENDED", "{v}");
    let holds: bool = sqlx::query_scalar("SELECT job_state_holds_quota(state) FROM jobs WHERE id = $1")
        .bind(mine.parse::<i64>().unwrap())
        .fetch_one(&w._db.pool)
        .await
        .unwrap();
    assert!(!holds, "a suspended job holds no quota");
    let again = gql(&w.app, "member", suspend, json!({ "id": mine })).await;
    assert_eq!(code(&again), "CONFLICT", "{again}");
    assert_eq!(code(&gql(&w.app, "viewer", resume, json!({ "id": mine })).await), "FORBIDDEN");
    let v = gql(&w.app, "padmin", resume, json!({ "id": mine })).await;
    assert_eq!(v["data"]["resumeJob"]["state"], "ADMITTED", "admitted again: {v}");
    assert_eq!(code(&gql(&w.app, "member", resume, json!({ "id": mine })).await), "CONFLICT", "not suspended");
    // A job that ended has nothing to suspend.
    gql(&w.app, "member", "mutation($id: ID!) { cancelJob(id: $id) { state } }", json!({ "id": mine })).await;
    assert_eq!(code(&gql(&w.app, "member", suspend, json!({ "id": mine })).await), "CONFLICT");
}

#[tokio::test]
async fn management_by_role() {
    let w = world().await;
    let pa = w.pa.to_string();
    let create_queue = "mutation($p: ID!, $n: String!) { createQueue(projectId: $p, name: $n, weight: 2.0) { name } }";
    for (who, want) in [("viewer", "FORBIDDEN"), ("member", "FORBIDDEN"), ("padmin", "OK"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, create_queue, json!({ "p": pa, "n": format!("q-{who}") })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let quota = "mutation($q: ID!) { updateQuota(queueId: $q, resource: \"gpu/H100\", guaranteed: 1000, limit: 4000) { name quotas { resource } } }";
    for (who, want) in [("viewer", "FORBIDDEN"), ("member", "FORBIDDEN"), ("padmin", "OK"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, quota, json!({ "q": w.queue_pa.to_string() })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    seed::dev_user(&w._db.pool, "newbie").await;
    let add = "mutation($p: ID!) { addMember(projectId: $p, subject: \"dev:newbie\", role: MEMBER) }";
    for (who, want) in [("viewer", "FORBIDDEN"), ("member", "FORBIDDEN"), ("outsider", "NOT_FOUND"), ("padmin", "OK")] {
        let v = gql(&w.app, who, add, json!({ "p": pa })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let me = gql(&w.app, "newbie", "{ me { id } projects { slug myRole } }", json!({})).await;
    assert_eq!(me["data"]["projects"][0]["myRole"], "MEMBER");
    let newbie = me["data"]["me"]["id"].as_str().unwrap().to_owned();
    let set = "mutation($p: ID!, $u: ID!) { setRole(projectId: $p, userId: $u, role: VIEWER) }";
    assert_eq!(code(&gql(&w.app, "member", set, json!({ "p": pa, "u": newbie })).await), "FORBIDDEN");
    assert_eq!(code(&gql(&w.app, "padmin", set, json!({ "p": pa, "u": newbie })).await), "OK");
    let stranger = seed::dev_user(&w._db.pool, "stranger").await.to_string();
    assert_eq!(code(&gql(&w.app, "padmin", set, json!({ "p": pa, "u": stranger })).await), "NOT_FOUND");
    let remove = "mutation($p: ID!, $u: ID!) { removeMember(projectId: $p, userId: $u) }";
    assert_eq!(code(&gql(&w.app, "outsider", remove, json!({ "p": pa, "u": newbie })).await), "NOT_FOUND");
    assert_eq!(code(&gql(&w.app, "padmin", remove, json!({ "p": pa, "u": newbie })).await), "OK");
    let v = gql(&w.app, "newbie", "{ projects { slug } }", json!({})).await;
    assert_eq!(v["data"]["projects"], json!([]));

    let tenants = gql(&w.app, "root", "{ tenants { id slug } }", json!({})).await;
    let ta = tenants["data"]["tenants"][0]["id"].as_str().unwrap().to_owned();
    let create_project = "mutation($t: ID!, $s: String!) { createProject(tenantId: $t, slug: $s, name: \"X\") { slug queues { name } } }";
    for (who, want) in [("padmin", "FORBIDDEN"), ("outsider", "NOT_FOUND"), ("tadmin", "OK")] {
        let v = gql(&w.app, who, create_project, json!({ "t": ta, "s": format!("x-{who}") })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let create_tenant = "mutation { createTenant(slug: \"tc\", name: \"C\") { slug } }";
    for (who, want) in [("tadmin", "FORBIDDEN"), ("padmin", "FORBIDDEN"), ("root", "OK")] {
        assert_eq!(code(&gql(&w.app, who, create_tenant, json!({})).await), want, "{who}");
    }
    assert_eq!(code(&gql(&w.app, "root", create_tenant, json!({})).await), "CONFLICT");
}

#[tokio::test]
async fn a_queues_class_of_service_is_set_by_its_admins_checked_and_applied_at_submit() {
    let w = world().await;
    let q = w.queue_pa.to_string();
    let update = "mutation($q: ID!, $wait: Int, $def: Int, $max: Int) {
        updateQueue(queueId: $q, maxWaitSeconds: $wait, defaultRuntimeSeconds: $def, maxRuntimeSeconds: $max) {
          weight canBorrow maxWaitSeconds defaultRuntimeSeconds maxRuntimeSeconds } }";
    let vars = json!({ "q": q, "wait": 3600, "def": 600, "max": 7200 });
    for (who, want) in [("viewer", "FORBIDDEN"), ("member", "FORBIDDEN"), ("outsider", "NOT_FOUND"), ("padmin", "OK")] {
        assert_eq!(code(&gql(&w.app, who, update, vars.clone()).await), want, "{who}");
    }
    // Bad values: every field named, nothing stored.
    let bad = gql(&w.app, "padmin", update, json!({ "q": q, "wait": 10, "def": 9000, "max": 7200 })).await;
    assert_eq!(code(&bad), "VALIDATION", "{bad}");
    assert_eq!(error_fields(&bad), ["maxWaitSeconds", "defaultRuntimeSeconds"]);
    let negative = gql(&w.app, "padmin", update, json!({ "q": q, "wait": 3600, "def": 600, "max": -5 })).await;
    assert_eq!(code(&negative), "VALIDATION", "{negative}");
    let now = gql(
        &w.app,
        "padmin",
        "{ projects { queues { maxWaitSeconds defaultRuntimeSeconds maxRuntimeSeconds } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        now["data"]["projects"][0]["queues"][0],
        json!({ "maxWaitSeconds": 3600, "defaultRuntimeSeconds": 600, "maxRuntimeSeconds": 7200 })
    );

    // A job without a runtime gets the default; one above the maximum is refused on its field.
    let runtime = "query($id: ID!) { job(id: $id) { spec } }";
    let id = submit(&w, "member", "defaulted").await;
    let v = gql(&w.app, "member", runtime, json!({ "id": id })).await;
    assert_eq!(v["data"]["job"]["spec"]["max_runtime_s"], 600, "{v}");
    let mut long = job("long", 0);
    long["in"]["maxRuntime"] = json!("3h");
    let v = gql(&w.app, "member", SUBMIT, long.clone()).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], "maxRuntime");
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["message"], "queue default allows at most 2h (7200s)");

    // Left out: kept; null: cleared. Then the long job is accepted.
    let clear_max =
        "mutation($q: ID!) { updateQueue(queueId: $q, maxRuntimeSeconds: null) { maxRuntimeSeconds maxWaitSeconds } }";
    let v = gql(&w.app, "padmin", clear_max, json!({ "q": q })).await;
    assert_eq!(v["data"]["updateQueue"]["maxRuntimeSeconds"], Value::Null, "{v}");
    assert_eq!(v["data"]["updateQueue"]["maxWaitSeconds"], 3600);
    let cleared = "mutation($q: ID!) { updateQueue(queueId: $q, defaultRuntimeSeconds: null, weight: 3.0) {
        weight maxWaitSeconds defaultRuntimeSeconds } }";
    let v = gql(&w.app, "padmin", cleared, json!({ "q": q })).await;
    assert_eq!(
        v["data"]["updateQueue"],
        json!({ "weight": 3.0, "maxWaitSeconds": 3600, "defaultRuntimeSeconds": null })
    );
    assert_eq!(code(&gql(&w.app, "member", SUBMIT, long).await), "OK");

    // A job that checkpoints says how; its last checkpoint shows once one is written.
    let mut ck = job("ckpt", 0);
    ck["in"]["checkpoint"] = json!({ "httpPort": 8080, "httpPath": "/checkpoint" });
    let v = gql(
        &w.app,
        "member",
        "mutation($in: JobInput!) { submitJob(input: $in) { job { checkpoint { httpPort httpPath lastReference } } } }",
        ck,
    )
    .await;
    assert_eq!(
        v["data"]["submitJob"]["job"]["checkpoint"],
        json!({ "httpPort": 8080, "httpPath": "/checkpoint", "lastReference": null }),
        "{v}"
    );
    let mut bad = job("ckpt-bad", 0);
    bad["in"]["checkpoint"] = json!({ "httpPort": 8080 });
    let v = gql(&w.app, "member", SUBMIT, bad).await;
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], "checkpoint.httpPath", "{v}");

    // createQueue takes the same settings, with the same checks.
    let create = "mutation($p: ID!, $max: Int) { createQueue(projectId: $p, name: \"short\", maxRuntimeSeconds: $max) { maxRuntimeSeconds } }";
    let v = gql(&w.app, "padmin", create, json!({ "p": w.pa.to_string(), "max": 0 })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    let v = gql(&w.app, "padmin", create, json!({ "p": w.pa.to_string(), "max": 900 })).await;
    assert_eq!(v["data"]["createQueue"]["maxRuntimeSeconds"], 900, "{v}");
}

#[tokio::test]
async fn an_interactive_reserve_keeps_quota_for_workspaces_against_batch_work() {
    let w = world().await;
    let pool = w._db.pool.clone();
    db::set_quota(&pool, w.queue_pa, &Quota { resource: "gpu".into(), guaranteed: 4000, limit: Some(4000) })
        .await
        .unwrap();
    let q = w.queue_pa.to_string();
    let update = "mutation($q: ID!, $r: Float) { updateQueue(queueId: $q, interactiveReserveGpus: $r) {
        interactiveReserveGpus maxWaitSeconds } }";
    for bad in [json!(-1.0), json!(0.0001), json!(2e6)] {
        let v = gql(&w.app, "padmin", update, json!({ "q": q, "r": bad })).await;
        assert_eq!(code(&v), "VALIDATION", "{v}");
        assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], "interactiveReserveGpus", "{v}");
    }
    assert_eq!(code(&gql(&w.app, "member", update, json!({ "q": q, "r": 1.0 })).await), "FORBIDDEN");
    let v = gql(&w.app, "padmin", update, json!({ "q": q, "r": 1.0 })).await;
    assert_eq!(v["data"]["updateQueue"], json!({ "interactiveReserveGpus": 1.0, "maxWaitSeconds": null }), "{v}");
    // Left out: kept.
    let v = gql(&w.app, "padmin", update, json!({ "q": q })).await;
    assert_eq!(v["data"]["updateQueue"]["interactiveReserveGpus"], 1.0, "{v}");

    // Batch work may hold 3 of the 4 GPUs; the refusal names the reserve.
    let v = gql(&w.app, "member", SUBMIT, job("all-four", 4)).await;
    assert_eq!(code(&v), "QUOTA_EXCEEDED", "{v}");
    let ext = &v["errors"][0]["extensions"];
    assert_eq!(ext["resource"].as_str(), Some(grus_api::admission::GPU_LESS_RESERVE), "{v}");
    assert_eq!(ext["limit"].as_i64(), Some(3000), "{v}");
    let v = gql(&w.app, "member", SUBMIT, job("three", 3)).await;
    assert_eq!(v["data"]["submitJob"]["borrowed"], false, "{v}");
    let dry = "mutation($in: JobInput!) { dryRunJob(input: $in) { admitted quotaExceeded { resource limit } } }";
    let v = gql(&w.app, "member", dry, job("one-more", 1)).await;
    assert_eq!(
        v["data"]["dryRunJob"],
        json!({ "admitted": false, "quotaExceeded": { "resource": grus_api::admission::GPU_LESS_RESERVE, "limit": 3000 } }),
        "{v}"
    );

    // A workspace takes the reserve at once, within the guarantee (not preemptible as borrowed).
    let mut notebook = job("notebook", 1);
    notebook["in"]["workspace"] = json!({ "port": 8888 });
    let v = gql(&w.app, "member", SUBMIT, notebook.clone()).await;
    assert_eq!(v["data"]["submitJob"]["borrowed"], false, "{v}");
    let usage = gql(&w.app, "member", "{ projects { queues { usage { resource amount } } } }", json!({})).await;
    let usage = &usage["data"]["projects"][0]["queues"][0]["usage"];
    assert!(usage.as_array().unwrap().contains(&json!({ "resource": "interactive", "amount": 1000 })), "{usage}");
    // The quota is full now, for workspaces too.
    notebook["in"]["name"] = json!("notebook-2");
    assert_eq!(code(&gql(&w.app, "member", SUBMIT, notebook).await), "QUOTA_EXCEEDED");
}

#[tokio::test]
async fn job_logs_are_for_readers_of_the_job_checked_and_time_out_without_an_agent() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let w = TwoTenants::seed(&pool).await;
    seed::member(&pool, w.pa, "viewer2", Role::Viewer).await;
    let redis = redis::Client::open(grus_testkit::env::redis_url()).unwrap();
    let publisher = grus_api::commands::CommandPublisher::connect(&redis).await.unwrap();
    let reader = grus_api::logs::LogReader::new(publisher, std::time::Duration::from_millis(300));
    let app = api(&pool).logs(reader).router();
    let w = World { app, _db: t, pa: w.pa, queue_pa: w.queue_pa };
    let id = submit(&w, "member", "printer").await;
    let q = "query($id: ID!, $task: String, $replica: Int, $tail: Int) {
        jobLogs(jobId: $id, task: $task, replica: $replica, tail: $tail) { task replica clusterId source ended lines { text } } }";
    // Not sent to a cluster yet: nothing to read, and it says so.
    let v = gql(&w.app, "viewer2", q, json!({ "id": id })).await;
    assert_eq!(
        v["data"]["jobLogs"],
        json!({ "task": "main", "replica": 0, "clusterId": null, "source": "GONE", "ended": false, "lines": [] }),
        "{v}"
    );
    assert_eq!(code(&gql(&w.app, "outsider", q, json!({ "id": id })).await), "NOT_FOUND");
    // Arguments are checked against the job.
    let v = gql(&w.app, "member", q, json!({ "id": id, "task": "nope", "tail": 0 })).await;
    assert_eq!((code(&v), error_fields(&v)), ("VALIDATION".to_owned(), vec!["task".to_owned(), "tail".into()]), "{v}");
    let v = gql(&w.app, "member", q, json!({ "id": id, "replica": 1 })).await;
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["message"], "task main has replicas 0 to 0", "{v}");
    // Sent to a cluster whose agent never answers: a clear CONFLICT, not a hang.
    let cluster = format!("t-logs-{}", &grus_testkit::env::random_hex()[..10]);
    seed::cluster(&pool, &cluster, 9).await;
    sqlx::query("UPDATE jobs SET cluster_id = $2 WHERE id = $1")
        .bind(id.parse::<i64>().unwrap())
        .bind(&cluster)
        .execute(&pool)
        .await
        .unwrap();
    let v = gql(&w.app, "member", q, json!({ "id": id })).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    assert!(
        v["errors"][0]["message"].as_str().unwrap().contains(&format!("the agent of cluster {cluster} did not answer")),
        "{v}"
    );
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let _: () =
        redis::cmd("DEL").arg(grus_protocol::keys::command_stream(&cluster)).query_async(&mut conn).await.unwrap();
}

#[tokio::test]
async fn a_waiting_job_knows_its_place_in_its_queues_line() {
    let w = world().await;
    let pool = w._db.pool.clone();
    db::set_quota(&pool, w.queue_pa, &Quota { resource: "gpu".into(), guaranteed: 8000, limit: None }).await.unwrap();
    let normal = |name: &str| {
        let mut j = job(name, 1);
        j["in"]["priority"] = json!("normal");
        j
    };
    let first = submit_input(&w, normal("first")).await;
    let second = submit_input(&w, normal("second")).await;
    let urgent = submit_input(&w, job("urgent", 1)).await;
    let mut notebook = normal("notebook");
    notebook["in"]["workspace"] = json!({ "port": 8888 });
    let notebook = submit_input(&w, notebook).await;
    let position = |id: String| {
        let app = w.app.clone();
        async move {
            let v =
                gql(&app, "viewer", "query($id: ID!) { job(id: $id) { queuePosition } }", json!({ "id": id })).await;
            v["data"]["job"]["queuePosition"].clone()
        }
    };
    // Priority first, then workspaces, then age.
    assert_eq!(position(urgent.clone()).await, 1);
    assert_eq!(position(notebook.clone()).await, 2);
    assert_eq!(position(first.clone()).await, 3);
    assert_eq!(position(second.clone()).await, 4);
    // A job that leaves the line (here cancelled) has no place; those behind it move up.
    let cancel = "mutation($id: ID!) { cancelJob(id: $id) { id } }";
    assert_eq!(code(&gql(&w.app, "member", cancel, json!({ "id": urgent })).await), "OK");
    assert_eq!(position(urgent).await, Value::Null);
    assert_eq!(position(second).await, 3);
}

#[tokio::test]
async fn a_waiting_job_is_predicted_from_finished_runs_and_gets_an_estimated_start() {
    let w = world().await;
    let pool = w._db.pool.clone();
    db::set_quota(&pool, w.queue_pa, &Quota { resource: "gpu".into(), guaranteed: 64_000, limit: None }).await.unwrap();
    let cluster = format!("t-est-{}", &grus_testkit::env::random_hex()[..10]);
    seed::cluster(&pool, &cluster, 11).await;
    let capacity = serde_json::to_value(grus_protocol::wire::CapacitySummary {
        models: vec![grus_protocol::wire::ModelCapacity {
            model: "A100-80GB".into(),
            total_gpus: 8,
            ..Default::default()
        }],
        ..Default::default()
    })
    .unwrap();
    sqlx::query("UPDATE clusters SET health = 'healthy', capacity = $2 WHERE id = $1")
        .bind(&cluster)
        .bind(&capacity)
        .execute(&pool)
        .await
        .unwrap();
    // Three finished runs of `train-N` on 4 GPUs: 20, 30 and 40 minutes.
    let set_state = |id: String, state: &'static str, ran_for_min: i64, ended_min_ago: i64| {
        let pool = pool.clone();
        async move {
            let id: i64 = id.parse().unwrap();
            let mut tx = pool.begin().await.unwrap();
            sqlx::query(
                "INSERT INTO job_events (job_id, from_state, to_state, cause, actor, at)
                 SELECT $1, NULL, 'running', 'test', 'system:test', now() - make_interval(mins => $2)
                 UNION ALL
                 SELECT $1, state, $3, 'test', 'system:test', now() - make_interval(mins => $4) FROM jobs WHERE id = $1",
            )
            .bind(id)
            .bind((ran_for_min + ended_min_ago) as i32)
            .bind(state)
            .bind(ended_min_ago as i32)
            .execute(&mut *tx)
            .await
            .unwrap();
            sqlx::query("UPDATE jobs SET state = $2, updated_at = now() - make_interval(mins => $3) WHERE id = $1")
                .bind(id)
                .bind(state)
                .bind(ended_min_ago as i32)
                .execute(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
    };
    for (n, minutes) in [20, 30, 40].into_iter().enumerate() {
        let id = submit_input(&w, job(&format!("train-{n}"), 4)).await;
        set_state(id, "succeeded", minutes, 60).await;
    }
    // One like them runs on all 8 GPUs since 10 minutes: expected to end in about 20.
    let running = submit_input(&w, job("train-7", 8)).await;
    set_state(running.clone(), "running", 0, 10).await;
    let waiting = submit_input(&w, job("train-8", 4)).await;
    let behind = submit_input(&w, job("eval", 4)).await;
    let huge = submit_input(&w, job("train-9", 16)).await;
    let q = "query($id: ID!) { job(id: $id) {
        predictedRuntime { p50Seconds p90Seconds samples basis } estimatedStart { at jobsAhead } } }";
    let read = |id: String| {
        let app = w.app.clone();
        async move { gql(&app, "viewer", q, json!({ "id": id })).await["data"]["job"].clone() }
    };
    let v = read(waiting.clone()).await;
    assert_eq!(
        v["predictedRuntime"],
        json!({ "p50Seconds": 1800, "p90Seconds": 2400, "samples": 3, "basis": "same name and shape" }),
        "{v}"
    );
    let start = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v["estimatedStart"]["at"].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    let in_min = (start(&v) - chrono::Utc::now()).num_seconds() as f64 / 60.0;
    assert!((18.5..=20.5).contains(&in_min), "when the running one is expected to end: {in_min} min; {v}");
    assert_eq!(v["estimatedStart"]["jobsAhead"], 0);
    // The next one fits beside it at the same time; one larger than the fleet has no estimate,
    // and neither has a job that runs.
    let b = read(behind).await;
    assert!((start(&b) - start(&v)).num_seconds().abs() <= 2, "{b}");
    assert_eq!(b["estimatedStart"]["jobsAhead"], 1);
    assert_eq!(read(huge).await["estimatedStart"], Value::Null);
    assert_eq!(read(running).await["estimatedStart"], Value::Null);
}

#[tokio::test]
async fn a_jobs_metric_history_reads_its_buckets_over_a_range() {
    let w = world().await;
    let pool = w._db.pool.clone();
    let id = submit(&w, "member", "with-history").await;
    let job: i64 = id.parse().unwrap();
    let sample = grus_api::domain::reports::JobSample {
        samples: 2,
        busy_sum: 120.0,
        busy_max: 80.0,
        memory_sum: 2048.0,
        memory_max: 1536,
    };
    let now = chrono::Utc::now();
    let mut conn = pool.acquire().await.unwrap();
    for minutes_ago in [50, 5] {
        db::metric_history::record(&mut conn, now - chrono::Duration::minutes(minutes_ago), &[(job, &sample)])
            .await
            .unwrap();
    }
    let q = "query($id: ID!, $since: DateTime, $until: DateTime) { job(id: $id) {
        metricHistory(since: $since, until: $until) { resolutionSeconds
          points { at samples busyPctAvg busyPctMax memoryUsedMibMax usageSamples cpuCoresAvg } } } }";
    let v = gql(&w.app, "viewer", q, json!({ "id": id })).await;
    let history = &v["data"]["job"]["metricHistory"];
    assert_eq!(history["resolutionSeconds"], 10, "{v}");
    let points = history["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{v}");
    assert_eq!((points[1]["busyPctAvg"].as_f64(), points[1]["busyPctMax"].as_f64()), (Some(60.0), Some(80.0)));
    assert_eq!(
        (points[1]["usageSamples"].as_i64(), &points[1]["cpuCoresAvg"]),
        (Some(0), &Value::Null),
        "no CPU reading"
    );
    let since = (now - chrono::Duration::minutes(20)).to_rfc3339();
    let v = gql(&w.app, "viewer", q, json!({ "id": id, "since": since })).await;
    assert_eq!(v["data"]["job"]["metricHistory"]["points"].as_array().unwrap().len(), 1, "{v}");
    let v = gql(&w.app, "viewer", q, json!({ "id": id, "since": now.to_rfc3339(), "until": since })).await;
    assert_eq!((code(&v), error_fields(&v)), ("VALIDATION".to_owned(), vec!["since".to_owned()]), "{v}");
    assert_eq!(code(&gql(&w.app, "outsider", q, json!({ "id": id })).await), "NOT_FOUND");
}

async fn submit_input(w: &World, input: Value) -> String {
    let v = gql(&w.app, "member", SUBMIT, input).await;
    assert_eq!(code(&v), "OK", "{v}");
    v["data"]["submitJob"]["job"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_nul_character_in_any_input_is_validation_never_internal() {
    let w = world().await;
    let mut input = job("nul", 0);
    input["in"]["tasks"][0]["command"] = json!(["python", "train\u{0}.py"]);
    let v = gql(&w.app, "member", SUBMIT, input).await;
    assert_eq!((code(&v).as_str(), error_fields(&v)), ("VALIDATION", vec!["tasks.0.command.1".to_owned()]), "{v}");
    let mut input = job("nul", 0);
    input["in"]["project"] = json!("p\u{0}a");
    let v = gql(&w.app, "member", SUBMIT, input).await;
    assert_eq!((code(&v).as_str(), error_fields(&v)), ("VALIDATION", vec!["project".to_owned()]), "{v}");
    // A mutation without its own check: the database's verdict on the value is VALIDATION too.
    let tenants = gql(&w.app, "root", "{ tenants { id } }", json!({})).await;
    let ta = tenants["data"]["tenants"][0]["id"].as_str().unwrap().to_owned();
    let create =
        "mutation($t: ID!, $n: String!) { createProject(tenantId: $t, slug: \"nul-name\", name: $n) { slug } }";
    let v = gql(&w.app, "tadmin", create, json!({ "t": ta, "n": "X\u{0}" })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    let v = gql(&w.app, "root", "{ tenants { slug } }", json!({})).await;
    assert_eq!(code(&v), "OK", "the server still answers: {v}");
}

#[tokio::test]
async fn validation_and_quota_errors() {
    let w = world().await;
    let bad = json!({ "in": { "name": "Bad Name", "project": "pa", "priority": "urgent",
        "tasks": [{ "name": "main", "image": "x", "resources": { "gpus": 2, "gpuMilli": 500 } }] } });
    let v = gql(&w.app, "member", SUBMIT, bad).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    assert_eq!(error_fields(&v), ["name", "priority", "tasks.0.resources.gpuMilli"]);

    let v = gql(&w.app, "member", SUBMIT, job("big", 3)).await;
    assert_eq!(code(&v), "QUOTA_EXCEEDED", "{v}");
    let ext = &v["errors"][0]["extensions"];
    assert_eq!(
        (ext["queue"].as_str(), ext["resource"].as_str(), ext["limit"].as_i64()),
        (Some("default"), Some("gpu"), Some(2000))
    );
    let v = gql(&w.app, "member", SUBMIT, job("fits", 2)).await;
    assert_eq!(v["data"]["submitJob"]["borrowed"], true, "{v}");
}

#[tokio::test]
async fn jobs_paginate_with_cursors() {
    let w = world().await;
    for i in 0..3 {
        submit(&w, "member", &format!("j{i}")).await;
    }
    let q = "query($a: String) { project(slug: \"pa\") { jobs(first: 2, after: $a) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } } }";
    let v = gql(&w.app, "viewer", q, json!({ "a": null })).await;
    let jobs = &v["data"]["project"]["jobs"];
    assert_eq!(jobs["edges"][0]["node"]["name"], "j2");
    assert_eq!(jobs["pageInfo"]["hasNextPage"], true);
    let v = gql(&w.app, "viewer", q, json!({ "a": jobs["pageInfo"]["endCursor"] })).await;
    let jobs = &v["data"]["project"]["jobs"];
    assert_eq!(jobs["edges"].as_array().unwrap().len(), 1);
    assert_eq!(jobs["edges"][0]["node"]["name"], "j0");
    assert_eq!(jobs["pageInfo"]["hasNextPage"], false);
}

#[tokio::test]
async fn authentication() {
    let w = world().await;
    let (_, v) = graphql(&w.app, &[], json!({ "query": "{ me { id } }" }).to_string()).await;
    assert_eq!(code(&v), "UNAUTHENTICATED");
    let (_, v) =
        graphql(&w.app, &[("authorization", "Bearer grus_nope")], json!({ "query": "{ me { id } }" }).to_string())
            .await;
    assert_eq!(code(&v), "UNAUTHENTICATED");
    let pool = &w._db.pool;
    let uid = db::get_user_by_subject(pool, "dev:viewer").await.unwrap().id;
    let token = "grus_0123456789abcdef0123456789abcdef";
    let new = db::NewApiToken {
        user_id: uid,
        name: "ci",
        hash: hash_token(token),
        prefix: "grus_0123",
        scopes: &[],
        expires_at: None,
    };
    db::create_api_token(pool, &new).await.unwrap();
    let bearer = format!("Bearer {token}");
    let (_, v) =
        graphql(&w.app, &[("authorization", &bearer)], json!({ "query": "{ me { subject } }" }).to_string()).await;
    assert_eq!(v["data"]["me"]["subject"], "dev:viewer", "{v}");

    // Outside --dev the dev header is not an identity.
    let prod = api(pool).auth(AuthMode::Oidc(OidcConfig::new("https://issuer", "grus"))).router();
    assert_eq!(code(&gql(&prod, "viewer", "{ me { id } }", json!({})).await), "UNAUTHENTICATED");
    let (_, v) =
        graphql(&prod, &[("authorization", &bearer)], json!({ "query": "{ me { subject } }" }).to_string()).await;
    assert_eq!(v["data"]["me"]["subject"], "dev:viewer");
}

#[tokio::test]
async fn dev_platform_admin_subject_is_granted_to_that_dev_identity_only() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let app = api(&pool).dev_platform_admin("dev:boss").router();
    let me = "{ me { subject platformAdmin } }";
    assert_eq!(
        gql(&app, "boss", me, json!({})).await["data"]["me"],
        json!({ "subject": "dev:boss", "platformAdmin": true })
    );
    assert_eq!(gql(&app, "boss", me, json!({})).await["data"]["me"]["platformAdmin"], true, "stays on later requests");
    assert_eq!(gql(&app, "alice", me, json!({})).await["data"]["me"]["platformAdmin"], false);
    let v = gql(&app, "boss", "mutation { createTenant(slug: \"t1\", name: \"T\") { slug } }", json!({})).await;
    assert_eq!(code(&v), "OK", "{v}");
    // Without the setting the same identity is an ordinary user.
    let plain = api(&pool).router();
    let v = gql(&plain, "alice", "mutation { createTenant(slug: \"t2\", name: \"T\") { slug } }", json!({})).await;
    assert_eq!(code(&v), "FORBIDDEN", "{v}");
}

#[tokio::test]
async fn limits_and_endpoints() {
    let w = world().await;
    let v = gql(&w.app, "viewer", "{ __schema { types { name } } }", json!({})).await;
    // async-graphql answers a disabled introspection with null, not with an error.
    assert_eq!(v["data"]["__schema"], Value::Null, "introspection is off: {v}");
    let open = api(&w._db.pool).limits(GraphqlLimits { introspection: true, ..GraphqlLimits::production() }).router();
    let v = gql(&open, "viewer", "{ __schema { queryType { name } } }", json!({})).await;
    assert_eq!(v["data"]["__schema"]["queryType"]["name"], "Query", "{v}");
    let deep = "{ projects { queues { name } jobs { edges { node { tasks { name } replicas { index } events { actor } } } } } }";
    assert_eq!(code(&gql(&w.app, "viewer", deep, json!({})).await), "OK");
    assert_eq!(code(&gql(&w.app, "viewer", "{ me { id } }", json!({})).await), "OK");
    let strict = api(&w._db.pool).limits(GraphqlLimits { max_depth: 2, ..GraphqlLimits::production() }).router();
    assert!(gql(&strict, "viewer", deep, json!({})).await["errors"].is_array());
    // A page's cost is `first` times its selection.
    let costly = api(&w._db.pool).limits(GraphqlLimits { max_complexity: 100, ..GraphqlLimits::production() }).router();
    let page = |n: i32| format!("{{ project(slug: \"pa\") {{ jobs(first: {n}) {{ edges {{ node {{ name }} }} }} }} }}");
    assert_eq!(code(&gql(&costly, "viewer", &page(10), json!({})).await), "OK");
    let v = gql(&costly, "viewer", &page(50), json!({})).await;
    assert!(v["errors"][0]["message"].as_str().unwrap_or("").contains("complex"), "{v}");

    let (status, _) =
        graphql(&w.app, &[("x-grus-dev-user", "viewer")], format!("{{\"query\":\"{}\"}}", " ".repeat(100 * 1024)))
            .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    for (path, want) in [("/healthz", StatusCode::OK), ("/readyz", StatusCode::OK), ("/metrics", StatusCode::OK)] {
        let resp = send(&w.app, Request::get(path).body(Body::empty()).unwrap()).await;
        assert_eq!(resp.status, want, "{path}");
        if path == "/metrics" {
            let text = String::from_utf8_lossy(&resp.body);
            assert!(text.contains("grus_graphql_requests_total{operation=\"query\",outcome=\"ok\"} 3"), "{text}");
        }
    }
}

#[tokio::test]
async fn a_job_that_fits_no_node_of_any_cluster_is_refused_at_submit_and_in_dry_run() {
    let w = world().await;
    let pool = w._db.pool.clone();
    let cluster = format!("t-fit-{}", &grus_testkit::env::random_hex()[..10]);
    seed::cluster(&pool, &cluster, 12).await;
    let mut conn = pool.acquire().await.unwrap();
    let nodes = [crate::ingest::a100_node("n1", 8), crate::ingest::a100_node("n2", 8)];
    db::ingest::record_inventory(&mut conn, &cluster, &nodes).await.unwrap();
    for op in [SUBMIT, "mutation($in: JobInput!) { dryRunJob(input: $in) { admitted } }"] {
        let v = gql(&w.app, "member", op, job("too-big", 16)).await;
        assert_eq!(
            (code(&v), error_fields(&v)),
            ("VALIDATION".to_owned(), vec!["tasks.0.resources.gpus".to_owned()]),
            "{v}"
        );
        assert!(v["errors"][0]["message"].as_str().unwrap().contains("the most on one node: 8"), "{v}");
    }
    // Nothing was stored, and a job that fits a node is admitted as before.
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs").fetch_one(&pool).await.unwrap();
    assert_eq!(stored, 0);
    assert_eq!(code(&gql(&w.app, "member", SUBMIT, job("fits", 2)).await), "OK");
}
