//! The request limits of /graphql through the real router and a fresh database: a query
//! nested too deep, one too complex (list fields multiply by `first`) and a body too large
//! each get a clear error (a GraphQL error with `extensions.code`, or HTTP 413), and
//! introspection is off in production mode and on in dev mode.

use axum::http::StatusCode;
use axum::Router;
use grus_api::db;
use grus_api::domain::Role;
use grus_api::graphql::GraphqlLimits;
use grus_testkit::api::TestApi;
use grus_testkit::client::graphql;
use grus_testkit::{seed, TestDb};
use serde_json::{json, Value};

const BODY_LIMIT: usize = 16 * 1024;

fn app(pool: sqlx::PgPool, limits: GraphqlLimits) -> Router {
    TestApi::new(&pool).limits(limits).body_limit(BODY_LIMIT).router()
}

/// A database with one project (no queue yet) and the dev user `alice` as its member.
async fn setup() -> TestDb {
    let t = TestDb::new().await;
    let tenant = seed::tenant(&t.pool, "t", "T").await;
    let project = db::create_project(&t.pool, tenant, "p", "P").await.unwrap();
    seed::member(&t.pool, project.id, "alice", Role::Member).await;
    t
}

/// The raw `body` as alice: the status and the body as JSON (`Null` when not JSON).
async fn post_raw(app: &Router, body: Vec<u8>) -> (StatusCode, Value) {
    graphql(app, &[("x-grus-dev-user", "alice")], body).await
}

async fn query(app: &Router, q: &str) -> Value {
    let (status, body) = post_raw(app, serde_json::to_vec(&json!({ "query": q })).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn first_error(v: &Value) -> (&str, &str) {
    let e = &v["errors"][0];
    (e["extensions"]["code"].as_str().unwrap_or("<no code>"), e["message"].as_str().unwrap_or(""))
}

#[tokio::test]
async fn too_deep_query_is_refused_with_a_code() {
    let t = setup().await;
    let app = app(t.pool.clone(), GraphqlLimits::production());
    // 13 field levels: jobs/edges/node/project three times, then slug.
    // Pages of one keep the complexity low, so the depth limit is what refuses it.
    let levels = ["jobs(first: 1)", "edges", "node", "project"].repeat(3);
    let deep = format!("{{ {} {{ slug }}{} }}", levels.join(" { "), " }".repeat(levels.len() - 1));
    let v = query(&app, &deep).await;
    let (code, message) = first_error(&v);
    assert_eq!(code, "VALIDATION", "{v}");
    assert!(message.contains("nested too deep"), "{message}");
    assert!(v["data"].is_null(), "no resolver ran: {v}");

    // A shallower query of the same kind is accepted.
    let ok = "{ jobs { edges { node { project { queues { quotas { resource } } } } } } }";
    let v = query(&app, ok).await;
    assert!(v["errors"].is_null(), "{v}");
}

#[tokio::test]
async fn list_complexity_multiplies_by_first() {
    let t = setup().await;
    let app = app(t.pool.clone(), GraphqlLimits::production());
    // A page of 500 jobs with 12 fields each: 500 * 12 > 5000.
    let heavy = "{ jobs(first: 500) { edges { node { id name state priority priorityClass preemptible \
                 borrowed submittedAt updatedAt epoch clusterId queueId } } } }";
    let v = query(&app, heavy).await;
    let (code, message) = first_error(&v);
    assert_eq!(code, "VALIDATION", "{v}");
    assert!(message.contains("too complex"), "{message}");

    // The same selection on a page of 100 fits.
    let v = query(&app, &heavy.replace("first: 500", "first: 100")).await;
    assert!(v["errors"].is_null(), "{v}");
    assert_eq!(v["data"]["jobs"]["edges"], json!([]));

    // Project.jobs multiplies the same way.
    let nested = "{ projects { jobs(first: 500) { edges { node { id name state priority priorityClass \
                  preemptible borrowed submittedAt updatedAt epoch clusterId queueId } } } } }";
    let v = query(&app, nested).await;
    assert_eq!(first_error(&v).0, "VALIDATION", "{v}");
}

#[tokio::test]
async fn page_size_and_cursor_are_validated() {
    let t = setup().await;
    let app = app(t.pool.clone(), GraphqlLimits::production());
    for first in [0, 501] {
        let v = query(&app, &format!("{{ jobs(first: {first}) {{ edges {{ cursor }} }} }}")).await;
        assert_eq!(first_error(&v).0, "VALIDATION", "first: {first}: {v}");
    }
    let v = query(&app, "{ jobs(after: \"not-a-cursor\") { edges { cursor } } }").await;
    assert_eq!(first_error(&v).0, "VALIDATION", "{v}");
}

#[tokio::test]
async fn too_large_body_is_413_and_changes_nothing() {
    let t = setup().await;
    let app = app(t.pool.clone(), GraphqlLimits::production());
    let padding = "x".repeat(BODY_LIMIT + 1);
    let body = serde_json::to_vec(&json!({
        "query": format!("mutation {{ createQueue(projectId: \"1\", name: \"{padding}\") {{ id }} }}")
    }))
    .unwrap();
    let (status, _) = post_raw(&app, body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (queues,): (i64,) = sqlx::query_as("SELECT count(*) FROM queues").fetch_one(&t.pool).await.unwrap();
    assert_eq!(queues, 0);

    // Just under the limit is parsed and answered.
    let v = query(&app, &format!("{{ me {{ id }} }} # {}", "y".repeat(BODY_LIMIT - 100))).await;
    assert!(v["errors"].is_null(), "{v}");
}

#[tokio::test]
async fn introspection_is_off_in_production_and_on_in_dev() {
    let t = setup().await;
    let prod = app(t.pool.clone(), GraphqlLimits::production());
    for q in ["{ __schema { types { name } } }", "{ __type(name: \"Job\") { name } }"] {
        // async-graphql answers a disabled introspection field with null: nothing of the
        // schema is in the response.
        let v = query(&prod, q).await;
        let data = &v["data"];
        assert!(data["__schema"].is_null() && data["__type"].is_null(), "{q}: {v}");
        assert!(!v.to_string().contains("Job\""), "{q}: {v}");
    }
    let dev = app(t.pool.clone(), GraphqlLimits { introspection: true, ..GraphqlLimits::production() });
    let v = query(&dev, "{ __schema { queryType { name } } }").await;
    assert_eq!(v["data"]["__schema"]["queryType"]["name"], "Query", "{v}");
}

#[tokio::test]
async fn syntax_and_unknown_field_errors_carry_a_code() {
    let t = setup().await;
    let app = app(t.pool.clone(), GraphqlLimits::production());
    let v = query(&app, "{ jobs { edges ").await;
    assert_eq!(first_error(&v).0, "VALIDATION", "{v}");
    let v = query(&app, "{ jobs { nope } }").await;
    assert_eq!(first_error(&v).0, "VALIDATION", "{v}");
}
