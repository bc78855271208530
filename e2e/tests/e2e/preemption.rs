//! Reclaim: a job running on borrowed capacity is evicted for a higher-priority job of a queue
//! within its guarantee. It keeps running through its grace period, ends Preempted, is
//! requeued (Admitted) and later runs again to completion; the preemptor runs in between. And
//! the gentler disruptions: shrinks, suspensions by checkpoint, moves for consolidation.

use grus_testkit::stack::{id_of, job_input, seed_dev, set_gpu_quota, submit, Tenancy};
use grus_testkit::{Stack, StackConfig};
use serde_json::json;

use crate::trail;

const GRACE_S: i64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_borrowing_job_is_preempted_after_its_grace_requeued_and_completes() {
    let config = StackConfig::default().api_flag("--eviction-grace", &format!("{GRACE_S}s"));
    let mut stack = Stack::start(config).await;
    let t = seed_dev(&stack).await;
    let alice = stack.dev("alice");
    let victim = borrowing_victim(&mut stack, &t, 12.0).await;

    let mut preemptor_input = job_input("urgent", &[("main", 1, 4, &["A100-80GB"])], 2.0);
    preemptor_input["priority"] = json!("high");
    let preemptor = submit(&alice, preemptor_input).await;
    stack.wait_state(&alice, &preemptor, "SUCCEEDED").await;
    let job = stack.wait_state(&alice, &victim, "SUCCEEDED").await;

    // The victim: two dispatches to the one cluster (requeued, then sent again).
    let epochs: Vec<(i64, String)> = job["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["epoch"].as_i64().unwrap(), d["clusterId"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(epochs, [(1, "solo".into()), (2, "solo".into())], "{job}");
    let pool = &stack.db.pool;
    let events = trail::events(pool, id_of(&victim)).await;
    let states = trail::job_states(&events);
    let at = |state: &str| {
        events
            .iter()
            .find(|e| e.task_id.is_none() && e.to_state == state)
            .unwrap_or_else(|| panic!("no {state} in {states:?}"))
    };
    let (preempting, preempted) = (at("preempting"), at("preempted"));
    trail::assert_in_order(&states, &["running", "preempting", "preempted", "admitted"]);
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "{states:?}");
    assert!(
        preempted.at - preempting.at >= chrono::Duration::seconds(GRACE_S),
        "the victim kept running through its {GRACE_S}s grace: preempting {} preempted {}",
        preempting.at,
        preempted.at
    );

    // The ledger: the victim's replica ran twice (the first run ended by preemption), the
    // preemptor ran in between, and the 4 GPUs were never held by both at once.
    let victim_runs = trail::ledger(pool, Some(id_of(&victim))).await;
    assert_eq!(victim_runs.len(), 2, "{victim_runs:?}");
    assert_eq!(victim_runs[0].replica_id, victim_runs[1].replica_id, "the same replica ran again");
    assert!(victim_runs[0].ended_by_preemption && !victim_runs[1].ended_by_preemption, "{victim_runs:?}");
    let urgent = trail::ledger(pool, Some(id_of(&preemptor))).await;
    assert_eq!(urgent.len(), 1, "{urgent:?}");
    let first_end = victim_runs[0].ended_at.expect("closed");
    assert!(
        first_end <= urgent[0].started_at,
        "the preemptor started after the victim let go: {victim_runs:?} {urgent:?}"
    );
    assert!(urgent[0].ended_at.expect("closed") <= victim_runs[1].started_at, "the victim ran again after it");
    trail::assert_ran_once_and_succeeded(pool, id_of(&preemptor), 1).await;
}

/// `default` is guaranteed the cluster's 4 GPUs; `batch` is guaranteed nothing but may borrow
/// up to 4. Starts the one cluster `solo` (4 A100s) and a low-priority preemptible job of
/// `batch` running `secs` on all of it, on borrowed capacity; returns its id.
async fn borrowing_victim(stack: &mut Stack, t: &Tenancy, secs: f64) -> serde_json::Value {
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    set_gpu_quota(&admin, &t.default_queue, 4000, 4000).await;
    let batch = admin
        .data(
            r#"mutation($p: ID!) { createQueue(projectId: $p, name: "batch", canBorrow: true) { id } }"#,
            json!({ "p": t.project_id }),
        )
        .await["createQueue"]["id"]
        .clone();
    set_gpu_quota(&admin, &batch, 0, 4000).await;
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let mut victim_input = job_input("victim", &[("main", 1, 4, &["A100-80GB"])], secs);
    victim_input["queue"] = json!("batch");
    victim_input["priority"] = json!("low");
    victim_input["preemptible"] = json!(true);
    let r = alice
        .data(
            "mutation($input: JobInput!) { submitJob(input: $input) { borrowed job { id } } }",
            json!({ "input": victim_input }),
        )
        .await;
    assert_eq!(r["submitJob"]["borrowed"], true, "batch runs on borrowed capacity: {r}");
    let victim = r["submitJob"]["job"]["id"].clone();
    stack.wait_state(&alice, &victim, "RUNNING").await;
    victim
}

/// A tenant whose rights forbid preemption: its high-priority job inside its guarantee waits
/// for the borrowed job to finish instead of reclaiming, and whyPending says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_without_preemption_rights_waits_and_its_why_pending_says_so() {
    let config = StackConfig::default().api_flag("--eviction-grace", &format!("{GRACE_S}s"));
    let mut stack = Stack::start(config).await;
    let t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    let rights = "mutation($t: ID!) { setTenantRights(tenantId: $t, mayPreempt: false) { rights { mayPreempt } } }";
    let v = admin.data(rights, json!({ "t": t.tenant_id })).await;
    assert_eq!(v["setTenantRights"]["rights"]["mayPreempt"], false, "{v}");
    let victim = borrowing_victim(&mut stack, &t, 8.0).await;

    let mut input = job_input("urgent", &[("main", 1, 4, &["A100-80GB"])], 1.0);
    input["priority"] = json!("high");
    let urgent = submit(&alice, input).await;
    let waiting = stack
        .wait_job(&alice, &urgent, "whyPending { summary }", "whyPending", |j| {
            j["whyPending"]["summary"].as_str().is_some_and(|s| s.contains("its tenant may not preempt other work"))
        })
        .await;
    assert!(["ADMITTED", "REJECTED"].contains(&waiting["state"].as_str().unwrap()), "{waiting}");
    stack.wait_state(&alice, &urgent, "SUCCEEDED").await;
    let pool = &stack.db.pool;
    let states = trail::job_states(&trail::events(pool, id_of(&victim)).await);
    assert!(!states.iter().any(|s| s == "preempting"), "never evicted: {states:?}");
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "{states:?}");
    let victim_end = trail::ledger(pool, Some(id_of(&victim))).await[0].ended_at.expect("closed");
    let urgent_start = trail::ledger(pool, Some(id_of(&urgent))).await[0].started_at;
    assert!(victim_end <= urgent_start, "it waited for the borrowed job to end");
}

/// A user suspends a running job: it is stopped after its grace period and waits `SUSPENDED`,
/// holding no GPUs, with its history kept; resumed, it is dispatched again under a new epoch
/// and runs to completion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_job_holds_nothing_and_resumes_under_a_new_epoch() {
    let mut stack = Stack::start(StackConfig::default()).await;
    let _t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let job = submit(&alice, job_input("pausable", &[("main", 1, 4, &["A100-80GB"])], 6.0)).await;
    stack.wait_state(&alice, &job, "RUNNING").await;

    let suspend = "mutation($id: ID!) { suspendJob(id: $id, graceSeconds: 1) { state } }";
    let v = alice.data(suspend, json!({ "id": job })).await;
    assert_eq!(v["suspendJob"]["state"], "PREEMPTING", "{v}");
    stack.wait_state(&alice, &job, "SUSPENDED").await;
    let pool = &stack.db.pool;
    let runs = trail::ledger(pool, Some(id_of(&job))).await;
    assert!(runs.len() == 1 && runs[0].ended_at.is_some(), "it holds no GPU while suspended: {runs:?}");
    // Another job can use the 4 GPUs meanwhile.
    let other = submit(&alice, job_input("meanwhile", &[("main", 1, 4, &["A100-80GB"])], 1.0)).await;
    stack.wait_state(&alice, &other, "SUCCEEDED").await;

    let v = alice.data("mutation($id: ID!) { resumeJob(id: $id) { state } }", json!({ "id": job })).await;
    assert_eq!(v["resumeJob"]["state"], "ADMITTED", "{v}");
    let done = stack.wait_state(&alice, &job, "SUCCEEDED").await;
    let epochs: Vec<i64> =
        done["dispatches"].as_array().unwrap().iter().map(|d| d["epoch"].as_i64().unwrap()).collect();
    assert_eq!(epochs, [1, 2], "{done}");
    let states = trail::job_states(&trail::events(pool, id_of(&job)).await);
    let order = ["running", "preempting", "preempted", "suspended", "admitted", "dispatched", "running", "succeeded"];
    trail::assert_in_order(&states, &order);
}

/// The checkpoint handshake end to end: a suspension asks the job for a checkpoint, stops it
/// as soon as the (simulated) workload acknowledges, well before its 60 s grace, and the job
/// resumes on the other cluster with the checkpoint's reference in its spec.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpointing_job_is_suspended_after_its_checkpoint_and_resumes_on_the_other_cluster_from_it() {
    let mut stack = Stack::start(StackConfig::default()).await;
    let _t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "east", "1x4xA100-80GB").await;
    stack.add_cluster(&admin, "west", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let mut input = job_input("resumable", &[("main", 1, 4, &["A100-80GB"])], 3.0);
    input["checkpoint"] = json!({});
    input["labels"].as_array_mut().unwrap().push(json!({ "key": "grus.io/sim-checkpoint-s", "value": "0.5" }));
    let job = submit(&alice, input).await;
    let running = stack.wait_state(&alice, &job, "RUNNING").await;
    let first = running["dispatches"][0]["clusterId"].as_str().unwrap().to_owned();

    let asked = std::time::Instant::now();
    let suspend = "mutation($id: ID!) { suspendJob(id: $id, graceSeconds: 60) { state } }";
    alice.data(suspend, json!({ "id": job })).await;
    stack.wait_state(&alice, &job, "SUSPENDED").await;
    assert!(asked.elapsed() < std::time::Duration::from_secs(30), "stopped after the checkpoint, not the grace");
    let reference = format!("sim://checkpoints/job-{}/epoch-1", id_of(&job));
    let read = "query($id: ID!) { job(id: $id) { checkpoint { lastReference } } }";
    let v = alice.data(read, json!({ "id": job })).await;
    assert_eq!(v["job"]["checkpoint"]["lastReference"], reference.as_str(), "{v}");
    let pool = &stack.db.pool;
    let events = trail::events(pool, id_of(&job)).await;
    let causes: Vec<&str> = events.iter().map(|e| e.cause.as_str()).collect();
    let written = format!("checkpoint written: {reference}");
    let at = causes.iter().position(|c| *c == written).unwrap_or_else(|| panic!("no checkpoint event: {causes:?}"));
    assert!(events[at + 1..].iter().any(|e| e.to_state == "suspended"), "written before it was stopped: {causes:?}");

    // The first cluster is cordoned: the resumed run goes to the other, from the checkpoint.
    sqlx::query("UPDATE clusters SET cordoned = true WHERE id = $1").bind(&first).execute(pool).await.unwrap();
    alice.data("mutation($id: ID!) { resumeJob(id: $id) { state } }", json!({ "id": job })).await;
    let done = stack.wait_state(&alice, &job, "SUCCEEDED").await;
    let second = &done["dispatches"][1];
    assert_eq!(second["epoch"], 2, "{done}");
    assert_ne!(second["clusterId"].as_str(), Some(first.as_str()), "{done}");
    let (spec,): (serde_json::Value,) =
        sqlx::query_as("SELECT spec FROM jobs WHERE id = $1").bind(id_of(&job)).fetch_one(pool).await.unwrap();
    assert_eq!(spec["checkpoint"]["resume_from"], reference.as_str(), "the Dispatch of epoch 2 carried it");
}

/// Consolidation: a big gang (two whole nodes) waits only because the free GPUs are scattered
/// over three nodes. The allocator sends it to the cluster anyway (the summary says which
/// nodes movable jobs would free); the agent moves the two small checkpointing jobs (their
/// checkpoint first), the gang starts on the nodes they left, and both small jobs run again at
/// once beside the pinned job, each resumed from its checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_gang_starts_after_consolidation_moves_two_small_checkpointing_jobs() {
    let mut stack = Stack::start(StackConfig::default()).await;
    let t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "3x8xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    // Everything inside the queue's guarantee: nothing may be preempted for the gang.
    set_gpu_quota(&admin, &t.default_queue, 24_000, 24_000).await;
    let a100 = &["A100-80GB"][..];
    let run = async |input: serde_json::Value| {
        let job = submit(&alice, input).await;
        stack.wait_state(&alice, &job, "RUNNING").await;
        job
    };
    // Two fillers of 6 GPUs take a node each, a pinned job of 4 the third; the small jobs fill
    // the two GPUs left beside the fillers, which then end.
    let fill_a = run(job_input("fill-a", &[("main", 1, 6, a100)], 20.0)).await;
    let fill_b = run(job_input("fill-b", &[("main", 1, 6, a100)], 20.0)).await;
    let pinned = run(job_input("pinned", &[("main", 1, 4, a100)], 600.0)).await;
    let small = |name: &str| {
        let mut input = job_input(name, &[("main", 1, 2, a100)], 600.0);
        input["checkpoint"] = json!({});
        input["labels"].as_array_mut().unwrap().push(json!({ "key": "grus.io/sim-checkpoint-s", "value": "0.5" }));
        input
    };
    let small_1 = run(small("small-1")).await;
    let small_2 = run(small("small-2")).await;
    stack.wait_state(&alice, &fill_a, "SUCCEEDED").await;
    stack.wait_state(&alice, &fill_b, "SUCCEEDED").await;

    let gang = submit(&alice, job_input("big-gang", &[("main", 2, 8, a100)], 3.0)).await;
    stack.wait_state(&alice, &gang, "SUCCEEDED").await;
    let pool = &stack.db.pool;
    let gang_events = trail::events(pool, id_of(&gang)).await;
    assert!(
        gang_events.iter().any(|e| e.cause.contains("consolidation")),
        "sent for the room moves make: {:?}",
        gang_events.iter().map(|e| &e.cause).collect::<Vec<_>>()
    );
    for small in [&small_1, &small_2] {
        let job = stack.wait_state(&alice, small, "RUNNING").await;
        let dispatches = job["dispatches"].as_array().unwrap();
        assert_eq!(dispatches.len(), 2, "moved once, and ran again at once: {job}");
        let events = trail::events(pool, id_of(small)).await;
        let gang_id = id_of(&gang);
        let moved = format!("moved to make room for job {gang_id}");
        assert!(
            events.iter().any(|e| e.cause.starts_with(&moved)),
            "{:?}",
            events.iter().map(|e| &e.cause).collect::<Vec<_>>()
        );
        let reference = format!("sim://checkpoints/job-{}/epoch-1", id_of(small));
        assert!(events.iter().any(|e| e.cause == format!("checkpoint written: {reference}")));
        let (spec,): (serde_json::Value,) =
            sqlx::query_as("SELECT spec FROM jobs WHERE id = $1").bind(id_of(small)).fetch_one(pool).await.unwrap();
        assert_eq!(spec["checkpoint"]["resume_from"], reference.as_str(), "resumed from its checkpoint");
    }
    let pinned = stack.wait_state(&alice, &pinned, "RUNNING").await;
    assert_eq!(pinned["dispatches"].as_array().map(Vec::len), Some(1), "the pinned job never moved: {pinned}");
}
