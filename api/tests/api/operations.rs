//! Fleet and tenancy operations through the router against the real PostgreSQL: who may cordon,
//! drain, uncordon and retire clusters and nodes, that a drain evicts only preemptible work on
//! the node, that the agent is owed the new cordon set, that only empty queues, projects and
//! clusters go, and that every operation lands in the audit log.

use grus_api::db::{self, Cause};
use grus_api::domain::JobState;
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, gql};
use grus_testkit::seed::{self, Fixture, TwoTenants};
use grus_testkit::TestDb;
use serde_json::{json, Value};

const BY: Cause<'static> = Cause { cause: "test", actor: "test" };

/// Two tenants, cluster `c1`, and the fixture of pa's member in its default queue.
async fn member_of_pa_with_cluster_c1(pool: &sqlx::PgPool) -> Fixture {
    let w = TwoTenants::seed(pool).await;
    seed::cluster(pool, "c1", 1).await;
    let member = db::get_user_by_subject(pool, "dev:member").await.unwrap().id;
    Fixture { tenant_id: w.ta, project_id: w.pa, user_id: member, queue_id: w.queue_pa }
}

/// A job of `f` running on `node` of `cluster`; `preemptible` as given.
async fn running_on(pool: &sqlx::PgPool, f: &Fixture, cluster: &str, node: &str, preemptible: bool) -> i64 {
    let id = seed::dispatched_job(pool, f, cluster, 1, 1).await;
    sqlx::query("UPDATE jobs SET preemptible = $2 WHERE id = $1")
        .bind(id)
        .bind(preemptible)
        .execute(pool)
        .await
        .unwrap();
    seed::transition(pool, id, JobState::Scheduled, BY).await;
    seed::transition(pool, id, JobState::Running, BY).await;
    sqlx::query("UPDATE replicas SET node = $2, cluster_id = $3, epoch = (SELECT epoch FROM jobs WHERE id = $1) WHERE job_id = $1")
        .bind(id)
        .bind(node)
        .bind(cluster)
        .execute(pool)
        .await
        .unwrap();
    replicas_become(pool, id, "running").await;
    id
}

/// Moves every replica of `job` to `state`, with the events the schema asks for.
async fn replicas_become(pool: &sqlx::PgPool, job: i64, state: &str) {
    let mut tx = pool.begin().await.unwrap();
    sqlx::query(
        "INSERT INTO job_events (job_id, task_id, replica_id, from_state, to_state, cause, actor)
         SELECT job_id, task_id, id, state, $2, 'test', 'system:test' FROM replicas WHERE job_id = $1",
    )
    .bind(job)
    .bind(state)
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query("UPDATE replicas SET state = $2 WHERE job_id = $1")
        .bind(job)
        .bind(state)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// What the allocator's round does about drains, in a transaction of its own.
async fn evict_landed(pool: &sqlx::PgPool) -> Vec<i64> {
    let mut tx = pool.begin().await.unwrap();
    let evicted = db::operations::evict_landed_on_drains(&mut tx, 30, BY).await.unwrap();
    tx.commit().await.unwrap();
    evicted
}

async fn state(pool: &sqlx::PgPool, id: i64) -> String {
    sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1").bind(id).fetch_one(pool).await.unwrap()
}

const DRAIN_NODE: &str = "mutation($c: String!, $n: String!) { drainNode(clusterId: $c, node: $n, graceSeconds: 5) {
  id nodes { name cordoned draining } } }";

#[tokio::test]
async fn an_agent_that_cannot_cordon_nodes_gets_a_clear_refusal_and_no_command() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    TwoTenants::seed(&pool).await;
    seed::cluster(&pool, "old", 1).await;
    let mut conn = pool.acquire().await.unwrap();
    db::ingest::record_inventory(&mut conn, "old", &[crate::ingest::a100_node("n1", 8)]).await.unwrap();
    // What agents said before `CordonNodes` existed.
    let caps: Vec<String> = ["sim", "gpu-milli", "gang", "elastic"].map(String::from).to_vec();
    db::ingest::record_hello(&mut conn, "old", "0.9.0", &caps).await.unwrap();
    let app = TestApi::new(&pool).router();
    for mutation in [DRAIN_NODE, "mutation($c: String!, $n: String!) { cordonNode(clusterId: $c, node: $n) { id } }"] {
        let v = gql(&app, "root", mutation, json!({ "c": "old", "n": "n1" })).await;
        assert_eq!(code(&v), "CONFLICT", "{v}");
        let message = v["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("cannot cordon single nodes") && message.contains("0.9.0"), "{message}");
    }
    let cordoned: i64 = sqlx::query_scalar("SELECT count(*) FROM node_cordons").fetch_one(&pool).await.unwrap();
    assert_eq!(cordoned, 0, "nothing was recorded");
    // A cordon recorded before the agent was downgraded is not sent to it either.
    db::operations::cordon_node(&mut conn, "old", "n1", None).await.unwrap();
    assert!(
        db::operations::clusters_owed_cordons(&mut conn).await.unwrap().is_empty(),
        "an old agent gets no CordonNodes"
    );
    db::operations::uncordon_node(&mut conn, "old", "n1").await.unwrap();
    // The whole cluster still cordons; an upgraded agent (a new Hello) may cordon nodes.
    let v = gql(&app, "root", "mutation { cordonCluster(id: \"old\") { id } }", json!({})).await;
    assert_eq!(code(&v), "OK", "{v}");
    let caps: Vec<String> = grus_protocol::capability::ALL.iter().map(|c| c.to_string()).collect();
    db::ingest::record_hello(&mut conn, "old", "1.0.0", &caps).await.unwrap();
    let v = gql(&app, "root", DRAIN_NODE, json!({ "c": "old", "n": "n1" })).await;
    assert_eq!(code(&v), "OK", "{v}");
    assert_eq!(db::operations::clusters_owed_cordons(&mut conn).await.unwrap().len(), 1);
}

#[tokio::test]
async fn draining_a_node_evicts_its_preemptible_work_and_tells_the_agent() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let w = TwoTenants::seed(&pool).await;
    seed::cluster(&pool, "c1", 1).await;
    let mut conn = pool.acquire().await.unwrap();
    let nodes = [crate::ingest::a100_node("n1", 8), crate::ingest::a100_node("n2", 8)];
    db::ingest::record_inventory(&mut conn, "c1", &nodes).await.unwrap();
    let caps: Vec<String> = grus_protocol::capability::ALL.iter().map(|c| c.to_string()).collect();
    db::ingest::record_hello(&mut conn, "c1", "1.0.0", &caps).await.unwrap();
    let member = db::get_user_by_subject(&pool, "dev:member").await.unwrap().id;
    let f = Fixture { tenant_id: w.ta, project_id: w.pa, user_id: member, queue_id: w.queue_pa };
    let on_n1 = running_on(&pool, &f, "c1", "n1", true).await;
    let pinned_on_n1 = running_on(&pool, &f, "c1", "n1", false).await;
    let on_n2 = running_on(&pool, &f, "c1", "n2", true).await;
    let app = TestApi::new(&pool).router();

    for (who, want) in [("padmin", "FORBIDDEN"), ("tadmin", "FORBIDDEN")] {
        let v = gql(&app, who, DRAIN_NODE, json!({ "c": "c1", "n": "n1" })).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    let v = gql(&app, "root", DRAIN_NODE, json!({ "c": "c1", "n": "no-such-node" })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    let v = gql(&app, "root", DRAIN_NODE, json!({ "c": "nope", "n": "n1" })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    assert!(db::operations::clusters_owed_cordons(&mut conn).await.unwrap().is_empty(), "nothing cordoned yet");

    let v = gql(&app, "root", DRAIN_NODE, json!({ "c": "c1", "n": "n1" })).await;
    assert_eq!(code(&v), "OK", "{v}");
    assert_eq!(
        v["data"]["drainNode"]["nodes"],
        json!([{ "name": "n1", "cordoned": true, "draining": true }, { "name": "n2", "cordoned": false, "draining": false }])
    );
    assert_eq!(state(&pool, on_n1).await, "preempting", "preemptible work on the node is evicted");
    assert_eq!(state(&pool, pinned_on_n1).await, "running", "work that is not preemptible runs to its end");
    assert_eq!(state(&pool, on_n2).await, "running", "other nodes are not touched");
    let owed = db::operations::clusters_owed_cordons(&mut conn).await.unwrap();
    assert_eq!(owed.len(), 1);
    assert_eq!((owed[0].0.as_str(), owed[0].2.clone()), ("c1", vec!["n1".to_owned()]));
    db::operations::record_cordons_sent(&mut conn, "c1", owed[0].1).await.unwrap();
    assert!(db::operations::clusters_owed_cordons(&mut conn).await.unwrap().is_empty());

    let uncordon = "mutation { uncordonNode(clusterId: \"c1\", node: \"n1\") { nodes { name cordoned } } }";
    let v = gql(&app, "root", uncordon, json!({})).await;
    assert_eq!(v["data"]["uncordonNode"]["nodes"][0], json!({ "name": "n1", "cordoned": false }), "{v}");
    let owed = db::operations::clusters_owed_cordons(&mut conn).await.unwrap();
    assert_eq!(owed[0].2, Vec::<String>::new(), "the agent is told the node is free again");

    let v = gql(&app, "root", "{ auditEvents(clusterId: \"c1\") { actor action target detail } }", json!({})).await;
    let actions: Vec<(&str, &str)> = v["data"]["auditEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    assert_eq!(actions, [("node_uncordon", "node/c1/n1"), ("node_drain", "node/c1/n1")], "{v}");
    assert_eq!(v["data"]["auditEvents"][1]["actor"], "dev:root");
    assert_eq!(v["data"]["auditEvents"][1]["detail"], "1 preemptible job(s) evicted, grace 5s");
    assert_eq!(code(&gql(&app, "tadmin", "{ auditEvents { id } }", json!({})).await), "FORBIDDEN");
}

#[tokio::test]
async fn preemptible_work_placed_on_a_draining_node_after_the_drain_is_evicted_with_its_grace() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let f = member_of_pa_with_cluster_c1(&pool).await;
    let mut conn = pool.acquire().await.unwrap();
    db::operations::cordon_node(&mut conn, "c1", "n1", Some(5)).await.unwrap();
    db::operations::cordon_node(&mut conn, "c1", "n3", None).await.unwrap();
    // Dispatched before the drain, placed after it (the agent had not yet learnt of it).
    let landed = running_on(&pool, &f, "c1", "n1", true).await;
    let pinned = running_on(&pool, &f, "c1", "n1", false).await;
    let elsewhere = running_on(&pool, &f, "c1", "n2", true).await;
    let on_cordoned = running_on(&pool, &f, "c1", "n3", true).await;
    assert_eq!(evict_landed(&pool).await, vec![landed]);
    assert_eq!(state(&pool, landed).await, "preempting");
    let grace: Option<i32> = sqlx::query_scalar("SELECT evict_grace_s FROM dispatches WHERE job_id = $1")
        .bind(landed)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(grace, Some(5), "the drain's own grace, not the default");
    for (job, why) in [(pinned, "not preemptible"), (elsewhere, "another node"), (on_cordoned, "cordoned, not drained")]
    {
        assert_eq!(state(&pool, job).await, "running", "{why}");
    }
    assert!(evict_landed(&pool).await.is_empty(), "evicted once");
    // A plain cordon of the draining node keeps the drain and its grace.
    db::operations::cordon_node(&mut conn, "c1", "n1", None).await.unwrap();
    let cordons = db::operations::node_cordons(&pool, "c1").await.unwrap();
    assert!(cordons.iter().any(|c| c.node == "n1" && c.draining), "{cordons:?}");
    let grace: Option<i32> =
        sqlx::query_scalar("SELECT drain_grace_s FROM node_cordons WHERE cluster_id = 'c1' AND node = 'n1'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(grace, Some(5), "and its grace");
    // A replica of the current epoch that ended on the draining node does not evict its job.
    let ended = running_on(&pool, &f, "c1", "n1", true).await;
    replicas_become(&pool, ended, "succeeded").await;
    assert!(evict_landed(&pool).await.is_empty(), "only placed or running replicas count");
    // Uncordoned, the node keeps what lands there.
    db::operations::uncordon_node(&mut conn, "c1", "n1").await.unwrap();
    running_on(&pool, &f, "c1", "n1", true).await;
    assert!(evict_landed(&pool).await.is_empty());
}

#[tokio::test]
async fn a_drained_cluster_takes_no_work_and_retires_only_when_empty() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let f = member_of_pa_with_cluster_c1(&pool).await;
    let job = running_on(&pool, &f, "c1", "n1", true).await;
    let app = TestApi::new(&pool).router();

    let drain = "mutation { drainCluster(id: \"c1\", graceSeconds: 0) { cordoned draining } }";
    let v = gql(&app, "root", drain, json!({})).await;
    assert_eq!(v["data"]["drainCluster"], json!({ "cordoned": true, "draining": true }), "{v}");
    assert_eq!(state(&pool, job).await, "preempting");
    let bad = gql(&app, "root", "mutation { drainCluster(id: \"c1\", graceSeconds: 99999) { id } }", json!({})).await;
    assert_eq!(code(&bad), "VALIDATION", "{bad}");

    let retire = "mutation { retireCluster(id: \"c1\") { retiredAt } }";
    let v = gql(&app, "root", retire, json!({})).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("still holds 1 job"), "{v}");

    seed::transition(&pool, job, JobState::Preempted, BY).await;
    let v = gql(&app, "root", retire, json!({})).await;
    assert_eq!(code(&v), "OK", "{v}");
    assert!(v["data"]["retireCluster"]["retiredAt"].is_string());
    let v = gql(&app, "root", "{ clusters { id } }", json!({})).await;
    assert_eq!(v["data"]["clusters"], json!([]), "a retired cluster leaves the list");
    let token: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT agent_token_hash FROM clusters WHERE id = 'c1'").fetch_one(&pool).await.unwrap();
    assert_eq!(token, None, "its agent token stops working");
    let rotate = gql(&app, "root", "mutation { rotateAgentToken(clusterId: \"c1\") { agentToken } }", json!({})).await;
    assert_eq!(code(&rotate), "NOT_FOUND", "{rotate}");
    let again = gql(&app, "root", "mutation { uncordonCluster(id: \"c1\") { id } }", json!({})).await;
    assert_eq!(code(&again), "NOT_FOUND", "{again}");
}

/// Whether `cluster`'s Redis user is due for deletion (`agent_access::revoke_rotated`'s rule).
async fn agent_revoked(pool: &sqlx::PgPool, cluster: &str) -> bool {
    let due: Option<bool> = sqlx::query_scalar(
        "SELECT agent_redis_user IS NOT NULL AND agent_token_rotated_at > agent_credentials_at
         FROM clusters WHERE id = $1",
    )
    .bind(cluster)
    .fetch_one(pool)
    .await
    .unwrap();
    due == Some(true)
}

#[tokio::test]
async fn a_retired_cluster_has_its_agent_revoked_and_raises_no_loss_nor_gets_queue_settings() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    seed::platform_admin(&pool, "root").await;
    seed::cluster(&pool, "c1", 1).await;
    seed::cluster(&pool, "c2", 2).await;
    // c1's agent was issued Redis credentials a minute ago.
    sqlx::query(
        "UPDATE clusters SET agent_redis_user = 'agent-c1', agent_credentials_at = now() - interval '1 minute'
         WHERE id = 'c1'",
    )
    .execute(&pool)
    .await
    .unwrap();
    assert!(!agent_revoked(&pool, "c1").await);
    let app = TestApi::new(&pool).router();
    let v = gql(&app, "root", "mutation { retireCluster(id: \"c1\") { retiredAt } }", json!({})).await;
    assert_eq!(code(&v), "OK", "{v}");
    assert!(agent_revoked(&pool, "c1").await, "retiring rotates the agent token, so its Redis user is deleted");

    let ids: Vec<String> = db::ingest::cluster_liveness(&pool).await.unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["c2"], "a retired cluster's silence is no loss");
    assert_eq!(db::ingest::cluster_ids(&pool).await.unwrap(), ["c2"], "nor are its events read");
    let mut conn = pool.acquire().await.unwrap();
    let owed = db::fair_share::clusters_owed_queues(&mut conn, "digest").await.unwrap();
    assert_eq!(owed, ["c2"], "nor is it sent queue settings");
}

const DELETE_QUEUE: &str = "mutation($q: ID!) { deleteQueue(queueId: $q) }";
const DELETE_PROJECT: &str = "mutation($p: ID!) { deleteProject(projectId: $p) { slug } }";

fn message(v: &Value) -> &str {
    v["errors"][0]["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn only_an_empty_queue_or_project_can_be_deleted() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let w = TwoTenants::seed(&pool).await;
    let app = TestApi::new(&pool).router();
    let spare = db::create_queue(&pool, w.pa, &db::QueueSettings::named("spare")).await.unwrap();

    let v = gql(&app, "member", DELETE_QUEUE, json!({ "q": spare.id.to_string() })).await;
    assert_eq!(code(&v), "FORBIDDEN", "{v}");
    let v = gql(&app, "outsider", DELETE_QUEUE, json!({ "q": spare.id.to_string() })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    let missing = gql(&app, "outsider", DELETE_QUEUE, json!({ "q": "987654" })).await;
    assert_eq!(message(&v), message(&missing), "whether another project's queue exists does not leak");
    let v = gql(&app, "padmin", DELETE_QUEUE, json!({ "q": w.queue_pa.to_string() })).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    assert!(message(&v).contains("submissions that name no queue"), "{v}");

    let member = db::get_user_by_subject(&pool, "dev:member").await.unwrap().id;
    let f = Fixture { tenant_id: w.ta, project_id: w.pa, user_id: member, queue_id: spare.id };
    let job = seed::insert_job(&pool, &seed::gpu_job(&f, "j", 1, 1, &["A100"]), "user:1").await;
    let v = gql(&app, "padmin", DELETE_QUEUE, json!({ "q": spare.id.to_string() })).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    assert!(message(&v).contains("still has 1 unfinished job"), "{v}");
    seed::transition(&pool, job, JobState::Cancelled, BY).await;
    let v = gql(&app, "padmin", DELETE_QUEUE, json!({ "q": spare.id.to_string() })).await;
    assert!(message(&v).contains("keeps the history of 1 finished job"), "{v}");

    let empty = db::create_queue(&pool, w.pa, &db::QueueSettings::named("empty")).await.unwrap();
    let v = gql(&app, "padmin", DELETE_QUEUE, json!({ "q": empty.id.to_string() })).await;
    assert_eq!(v["data"]["deleteQueue"], true, "{v}");
    let v = gql(&app, "padmin", DELETE_QUEUE, json!({ "q": empty.id.to_string() })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");

    // A project with history stays; an empty one goes, with its queue and members.
    let v = gql(&app, "tadmin", DELETE_PROJECT, json!({ "p": w.pa.to_string() })).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    let (fresh, _) = seed::project(&pool, w.ta, "fresh", "Fresh").await;
    seed::member(&pool, fresh, "fresh-member", grus_api::domain::Role::Member).await;
    let v = gql(&app, "padmin", DELETE_PROJECT, json!({ "p": fresh.to_string() })).await;
    assert_eq!(code(&v), "NOT_FOUND", "padmin of pa is not in project fresh: {v}");
    let v = gql(&app, "tadmin", DELETE_PROJECT, json!({ "p": fresh.to_string() })).await;
    assert_eq!(v["data"]["deleteProject"]["slug"], "fresh", "{v}");
    assert!(matches!(db::get_project(&pool, fresh).await, Err(db::DbError::NotFound(_))));
    let v = gql(&app, "root", "{ auditEvents { action target actor } }", json!({})).await;
    assert_eq!(
        v["data"]["auditEvents"],
        json!([
            { "action": "project_delete", "target": "project/fresh", "actor": "dev:tadmin" },
            { "action": "queue_delete", "target": "queue/pa/empty", "actor": "dev:padmin" },
        ])
    );
}
