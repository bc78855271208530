//! Two clusters with different GPU models: a gang lands on the only cluster that can hold it;
//! a job spills over to the other cluster when the first one rejects it (epochs 1 and 2); a job
//! over its queue's limit is refused with QUOTA_EXCEEDED and leaves nothing behind.

use grus_testkit::stack::{id_of, job_input, seed_dev, set_gpu_quota, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::{json, Value};

use crate::trail;

const DISPATCHES: &str = "dispatches { epoch clusterId outcome reason }";

fn dispatch_summary(job: &Value) -> Vec<(i64, String, String)> {
    job["dispatches"]
        .as_array()
        .expect("dispatches")
        .iter()
        .map(|d| {
            (
                d["epoch"].as_i64().expect("epoch"),
                d["clusterId"].as_str().expect("cluster").to_owned(),
                d["outcome"].as_str().expect("outcome").to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gangs_land_where_they_fit_spill_over_on_rejection_and_quotas_hold() {
    // A dispatch the agent cannot place within 3s is rejected, so the allocator can try elsewhere.
    let mut stack = Stack::start(StackConfig::default().agent_flag("--place-deadline", "3s")).await;
    let t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    set_gpu_quota(&admin, &t.default_queue, 12_000, 12_000).await;
    stack.add_cluster(&admin, "east", "2x2xA100-80GB").await;
    stack.add_cluster(&admin, "west", "2x4xH100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    // 1. A gang of two H100 replicas: only west has H100s.
    let mut gang = job_input("gang-h100", &[("worker", 2, 2, &["H100-80GB"])], 1.0);
    gang["gang"] = json!({ "minMembers": 2 });
    let dry = alice
        .data("mutation($input: JobInput!) { dryRunJob(input: $input) { admitted cluster } }", json!({ "input": gang }))
        .await;
    assert_eq!(dry["dryRunJob"], json!({ "admitted": true, "cluster": "west" }));
    let first = submit(&alice, gang).await;
    let job = stack.wait_state(&alice, &first, "SUCCEEDED").await;
    assert_eq!(dispatch_summary(&job), [(1, "west".into(), "acknowledged".into())], "{job}");
    trail::assert_ran_once_and_succeeded(&stack.db.pool, id_of(&first), 2).await;
    assert!(trail::ledger(&stack.db.pool, Some(id_of(&first)))
        .await
        .iter()
        .all(|iv| iv.cluster_id == "west" && iv.gpu_model == "H100-80GB" && iv.gpu_milli == 2000));

    // 2. Spillover. A gang of two 2-GPU replicas fits both clusters; east is the tighter fit
    // (nothing left over), so the allocator picks it. East's agent dies before it reads the
    // dispatch and comes back with a single 2-GPU node: it cannot place the gang, rejects it
    // after its place deadline, and the allocator sends epoch 2 to west.
    let mut spill = job_input("spill", &[("worker", 2, 2, &["A100-80GB", "H100-80GB"])], 1.0);
    spill["gang"] = json!({ "minMembers": 2 });
    stack.agent("east").kill9();
    let second = submit(&alice, spill).await;
    let job = stack
        .wait_job(&alice, &second, DISPATCHES, "a first dispatch", |j| {
            j["dispatches"].as_array().is_some_and(|d| !d.is_empty())
        })
        .await;
    assert_eq!(
        job["dispatches"][0]["clusterId"], "east",
        "the tighter fit is chosen first (east still looked healthy): {job}"
    );
    stack.agent("east").restart_with_nodes("1x2xA100-80GB");
    let job = stack.wait_state(&alice, &second, "SUCCEEDED").await;
    assert_eq!(
        dispatch_summary(&job),
        [(1, "east".into(), "rejected".into()), (2, "west".into(), "acknowledged".into())],
        "{job}"
    );
    let reason = job["dispatches"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("not placed"), "the agent's reason is kept: {reason}");
    trail::assert_ran_once_and_succeeded(&stack.db.pool, id_of(&second), 2).await;
    let events = trail::events(&stack.db.pool, id_of(&second)).await;
    assert!(
        events.iter().filter(|e| e.replica_id.is_some()).all(|e| e.epoch == Some(2)),
        "every replica ran under epoch 2: {events:?}"
    );
    let states = trail::job_states(&events);
    let rejected = states.iter().position(|s| s == "rejected").expect("a rejected event");
    assert!(
        states[rejected..].iter().filter(|s| *s == "dispatched").count() == 1,
        "dispatched again after the rejection: {states:?}"
    );

    // 3. Over the queue's 12-GPU limit: refused, nothing stored.
    let too_big = job_input("too-big", &[("worker", 4, 4, &["H100-80GB"])], 1.0);
    let (code, response) = alice
        .error_code(
            "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }",
            json!({ "input": too_big }),
        )
        .await;
    assert_eq!(code, "QUOTA_EXCEEDED", "{response}");
    let ext = &response["errors"][0]["extensions"];
    assert_eq!((ext["resource"].clone(), ext["limit"].clone()), (json!("gpu"), json!(12_000)), "{response}");
    let (stored,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM jobs WHERE name = 'too-big'").fetch_one(&stack.db.pool).await.unwrap();
    assert_eq!(stored, 0, "a refused job leaves no row");
}

/// Node pools end to end: the agent puts its nodes in pools by label (`--node-pool`) and
/// reports them; a queue's quota on one pool refuses what would exceed it at submit; a job
/// naming a pool runs only on its nodes, one naming a pool no cluster has waits and says so,
/// and one naming none counts against every pool its queue has a quota for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_run_in_the_node_pools_they_name_within_each_pools_quota() {
    let mut stack = Stack::start(StackConfig::default().agent_flag("--node-pool", "train=pool=train")).await;
    let t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "pooled", "2x8xA100-80GB:pool=train,2x8xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let r = admin
        .data(
            r#"mutation($q: ID!) { updateQuota(queueId: $q, resource: "pool/train", guaranteed: 0, limit: 16000) { id } }"#,
            json!({ "q": t.default_queue }),
        )
        .await;
    assert!(r["updateQuota"]["id"].is_string(), "{r}");
    let (code, _) = admin
        .error_code(
            r#"mutation($q: ID!) { updateQuota(queueId: $q, resource: "pool/Train", guaranteed: 0, limit: 1) { id } }"#,
            json!({ "q": t.default_queue }),
        )
        .await;
    assert_eq!(code, "VALIDATION", "a pool name is a DNS label");

    let pooled = |name: &str, replicas: u32, pools: &[&str]| {
        let mut input = job_input(name, &[("main", replicas, 8, &[])], 600.0);
        input["pools"] = json!(pools);
        input
    };
    let nodes_of = |job: &Value| -> Vec<String> {
        let mut nodes: Vec<String> = job["tasks"][0]["replicas"]
            .as_array()
            .expect("replicas")
            .iter()
            .map(|r| r["node"].as_str().unwrap_or_default().to_owned())
            .collect();
        nodes.sort();
        nodes
    };
    const REPLICAS: &str = "tasks { replicas { node } }";

    // 1. A gang naming pool train runs on its two nodes, whole.
    let train = submit(&alice, pooled("train-gang", 2, &["train"])).await;
    stack.wait_state(&alice, &train, "RUNNING").await;
    let job =
        stack.wait_job(&alice, &train, REPLICAS, "replicas on nodes", |j| !nodes_of(j).contains(&String::new())).await;
    assert_eq!(nodes_of(&job), ["a100-80gb-000", "a100-80gb-001"], "{job}");

    // 2. More in pool train passes its 16-GPU limit: refused at submit, nothing stored.
    let (code, response) = alice
        .error_code(
            "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }",
            json!({ "input": pooled("too-much-train", 1, &["train"]) }),
        )
        .await;
    assert_eq!(code, "QUOTA_EXCEEDED", "{response}");
    assert_eq!(response["errors"][0]["extensions"]["resource"], "pool/train", "{response}");

    // 3. A pool no cluster has: admitted, waits, and whyPending says which pools there are.
    let nowhere = submit(&alice, pooled("nowhere", 1, &["inference"])).await;
    stack
        .wait_job(&alice, &nowhere, "whyPending { summary }", "whyPending names the pools", |j| {
            j["whyPending"]["summary"]
                .as_str()
                .is_some_and(|s| s.contains("lacks node pool inference (has default, train)"))
        })
        .await;

    // 4. A job naming no pool counts against pool train's quota too (it might land there):
    // refused, with the way out in the message; naming the default pool, it runs there.
    let (code, response) = alice
        .error_code(
            "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }",
            json!({ "input": job_input("anywhere", &[("main", 1, 8, &[])], 600.0) }),
        )
        .await;
    assert_eq!(code, "QUOTA_EXCEEDED", "{response}");
    assert!(response["errors"][0]["message"].as_str().unwrap().contains("name the pools it may use"), "{response}");
    let anywhere = submit(&alice, pooled("anywhere", 1, &["default"])).await;
    stack.wait_state(&alice, &anywhere, "RUNNING").await;
    let job = stack
        .wait_job(&alice, &anywhere, REPLICAS, "replica on a node", |j| !nodes_of(j).contains(&String::new()))
        .await;
    assert!(["a100-80gb-002", "a100-80gb-003"].contains(&nodes_of(&job)[0].as_str()), "{job}");

    // The cluster reports its pools and each node's.
    let want = "pools { name nodes totalGpus freeWholeGpus } nodes { name pool }";
    let query = format!("{{ clusters {{ id {want} }} }}");
    let expected = json!([
        { "name": "default", "nodes": 2, "totalGpus": 16, "freeWholeGpus": 8 },
        { "name": "train", "nodes": 2, "totalGpus": 16, "freeWholeGpus": 0 }
    ]);
    let deadline = grus_testkit::Deadline::new("the pools' free GPUs", grus_testkit::wait::PATIENCE);
    let r = loop {
        let r = admin.data(&query, json!({})).await;
        if r["clusters"][0]["pools"] == expected {
            break r;
        }
        deadline.tick(|| format!("{r}\n{}", stack.logs())).await;
    };
    let pools: Vec<(&str, &str)> = r["clusters"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["name"].as_str().unwrap(), n["pool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pools,
        [
            ("a100-80gb-000", "train"),
            ("a100-80gb-001", "train"),
            ("a100-80gb-002", "default"),
            ("a100-80gb-003", "default")
        ]
    );
}
