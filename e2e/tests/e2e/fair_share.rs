//! Hierarchical fair share with the real binaries (issue 20): the fleet's rounds serve tenants
//! by weight, not by age, and the agent is told the tenant → project → queue tree.

use grus_testkit::stack::{job_input, seed_dev, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::{json, Value};

/// Tenant `acme` weighs 3, tenant `lab` 1. Eight one-GPU jobs of `lab` wait, then eight of
/// `acme`; a cluster of 4 GPUs comes up: 3 go to `acme`'s jobs and 1 to `lab`'s, though every
/// job of `lab` is older. The agent's book then holds the tree as SetQueues sent it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_gpu_cluster_is_shared_three_to_one_between_tenants_weighing_three_and_one() {
    let mut stack = Stack::start(StackConfig::default()).await;
    let acme = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    let lab = admin.data(r#"mutation { createTenant(slug: "lab", name: "Lab") { id } }"#, json!({})).await;
    let nlp = admin
        .data(
            r#"mutation($t: ID!) { createProject(tenantId: $t, slug: "nlp", name: "NLP") { id } }"#,
            json!({ "t": lab["createTenant"]["id"] }),
        )
        .await["createProject"]["id"]
        .clone();
    admin
        .data(
            "mutation($p: ID!) { addMember(projectId: $p, subject: \"dev:alice\", role: MEMBER) }",
            json!({ "p": nlp }),
        )
        .await;
    let share = "mutation($t: ID!) { setTenantShare(tenantId: $t, weight: 3) { id } }";
    admin.data(share, json!({ "t": acme.tenant_id })).await;

    let mut jobs: Vec<(Value, &str)> = Vec::new();
    for (project, n) in [("nlp", 8), ("vision", 8)] {
        for i in 0..n {
            let mut input = job_input(&format!("{project}-{i}"), &[("main", 1, 1, &["A100-80GB"])], 60.0);
            input["project"] = json!(project);
            jobs.push((submit(&alice, input).await, project));
        }
    }
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    // Wait until the 4 GPUs run jobs, then count whose. (A round may send the cluster more
    // jobs before its capacity summary says it is full; those wait on the agent, which runs
    // nothing more until a job ends, a minute later.)
    let holding = |states: &[(String, &str)]| states.iter().filter(|(s, _)| s == "RUNNING").count();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let states = loop {
        let mut states = Vec::new();
        for (id, project) in &jobs {
            let job = alice.data("query($id: ID!) { job(id: $id) { state } }", json!({ "id": id })).await;
            states.push((job["job"]["state"].as_str().unwrap_or_default().to_owned(), *project));
        }
        if holding(&states) >= 4 || std::time::Instant::now() > deadline {
            break states;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    let held_by = |p: &str| states.iter().filter(|(s, project)| *project == p && s == "RUNNING").count();
    assert_eq!((held_by("vision"), held_by("nlp")), (3, 1), "{states:?}\n{}", stack.logs());

    // The agent is told the tree (within the dispatcher's check period): its book holds the
    // tenants' weights and the queues by project.
    let dir = stack.agent_state_dir("solo");
    let told = |book: &str| {
        book.contains(r#""queue_hierarchy":{"tenants":{"acme":3.0,"lab":1.0}"#)
            && book.contains(r#""nlp/default":1.0"#)
            && book.contains(r#""vision/default":1.0"#)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let book = read("book.journal") + &read("book.json");
        if told(&book) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the agent was not told the tree:\n{book}\n{}", stack.logs());
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}
