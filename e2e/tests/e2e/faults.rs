//! Faults mid-run: `kill -9` of the agent, a Redis restart that loses every stream, and
//! `kill -9` of the api. In each case nothing is lost (every job reaches its final state and
//! every transition is recorded) and nothing runs twice (one launch per replica in the
//! simulator's journal, one `running` event and one ledger interval per replica).

use std::collections::BTreeMap;

use grus_testkit::stack::{id_of, job_input, seed_dev, submit};
use grus_testkit::wait::PATIENCE;
use grus_testkit::{Deadline, Stack, StackConfig};
use serde_json::{json, Value};

use crate::trail;

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// `kill -9` of the agent while its replicas run, then a restart over the same state.
    KillAgent,
    /// Redis killed while the jobs run; started again (empty) after they ended unseen.
    RestartRedis,
    /// The api killed while the jobs run; started again after they ended unseen.
    RestartApi,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_agent_mid_run_loses_nothing_and_runs_nothing_twice() {
    survives(Fault::KillAgent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_mid_run_loses_nothing_and_runs_nothing_twice() {
    survives(Fault::RestartRedis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_restart_mid_run_loses_nothing_and_runs_nothing_twice() {
    survives(Fault::RestartApi).await;
}

/// An agent paused (SIGSTOP) past the loss timeout, as a partition looks to the control plane:
/// its running job turns UNKNOWN, and once the agent resumes the job is RUNNING again, settled
/// by the snapshot the control plane asks for, not left UNKNOWN until its next state change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_jobs_settle_when_a_paused_agent_comes_back() {
    let mut stack = Stack::start(StackConfig::default().api_flag("--cluster-loss-timeout", "3s")).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let id = submit(&alice, job_input("long", &[("main", 1, 1, &[])], 3600.0)).await;
    stack.wait_state(&alice, &id, "RUNNING").await;

    stack.agents["solo"].pause();
    stack.wait_state(&alice, &id, "UNKNOWN").await;
    stack.agents["solo"].resume();
    let job = stack.wait_state(&alice, &id, "RUNNING").await;
    assert_eq!(job["dispatches"].as_array().map(Vec::len), Some(1), "never re-dispatched: {job}");
}

/// An agent with its own credentials: it exchanges its registration token for a Redis user
/// limited to its cluster, runs jobs through it, and is cut off when the token is rotated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_runs_on_its_own_redis_user_and_a_rotated_token_cuts_it_off() {
    use std::os::unix::fs::PermissionsExt as _;
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster_with(&admin, "own", "1x4xA100-80GB", true).await;
    stack.wait_clusters_ready(&admin).await;
    let id = submit(&alice, job_input("with-acl", &[("main", 1, 1, &[])], 1.0)).await;
    stack.wait_state(&alice, &id, "SUCCEEDED").await;
    let file = stack.agent_state_dir("own").join("redis-credentials.json");
    let mode = std::fs::metadata(&file).expect("the agent keeps its credentials").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(stored["username"], "grus-agent-own");

    admin.data("mutation { rotateAgentToken(clusterId: \"own\") { agentToken } }", json!({})).await;
    let deadline = Deadline::new("the rotated agent's cluster to go silent", PATIENCE);
    loop {
        let r = admin.data("{ clusters { health } }", json!({})).await;
        if r["clusters"][0]["health"] != "healthy" {
            break;
        }
        deadline.tick(|| format!("{r}\n{}", stack.logs())).await;
    }
}

/// A reinstalled control plane (a new database, the same cluster registered again) while the
/// agent keeps its book: once, the agent silently ignored the new dispatches (it remembered
/// their ids from the old life) and events of the old life reached new jobs. Now the agent
/// serves the control plane it was pinned to, the cluster shows the mismatch and takes no
/// work, and the operator's re-pin makes it serve the new one, whose job 1 then runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_database_is_refused_until_the_agent_is_re_pinned() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let old = submit(&alice, job_input("old-life", &[("main", 1, 1, &[])], 1.0)).await;
    stack.wait_state(&alice, &old, "SUCCEEDED").await;

    stack.api.kill9();
    stack.db.replace().await;
    stack.api.start_again().await;
    seed_dev(&stack).await;
    admin.data("mutation { registerCluster(id: \"solo\") { agentToken } }", json!({})).await;
    let deadline = Deadline::new("the agent of another control plane to show", PATIENCE);
    loop {
        let r = admin.data("{ clusters { health controlPlaneMismatch agentControlPlane } }", json!({})).await;
        let c = &r["clusters"][0];
        if c["controlPlaneMismatch"] == true {
            assert_eq!(c["health"], "degraded", "alive but taking no work: {r}");
            break;
        }
        deadline.tick(|| format!("{r}\n{}", stack.logs())).await;
    }
    let new = submit(&alice, job_input("new-life", &[("main", 1, 1, &[])], 1.0)).await;
    assert_eq!(new, old, "the new database numbers its jobs from 1 again");

    let incarnation: String =
        sqlx::query_scalar("SELECT incarnation FROM control_plane").fetch_one(&stack.db.pool).await.unwrap();
    stack.agent("solo").restart_with_flag("--control-plane", &incarnation);
    let job = stack.wait_state(&alice, &new, "SUCCEEDED").await;
    assert_eq!(job["dispatches"].as_array().map(Vec::len), Some(1), "{job}");
}

/// Waits until every job in the agent's book has ended there.
async fn wait_agent_idle(stack: &Stack, cluster: &str) {
    let deadline = Deadline::new(format!("agent {cluster} to finish its jobs"), PATIENCE);
    // Ended jobs stay in the book a minute (for Snapshots after a Redis loss): idle is every
    // job there having ended, not an empty book.
    let ended = ["succeeded", "failed", "cancelled", "evicted", "preempted", "rejected"];
    loop {
        let book = stack.agents[cluster].book();
        let jobs = book["jobs"].as_object();
        if jobs.is_some_and(|jobs| jobs.values().all(|j| j["state"].as_str().is_some_and(|s| ended.contains(&s)))) {
            return;
        }
        deadline.tick(|| format!("book: {book}\n{}", stack.logs())).await;
    }
}

async fn survives(fault: Fault) {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "2x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let mut gang = job_input("gang", &[("worker", 2, 2, &["A100-80GB"])], 8.0);
    gang["gang"] = json!({ "minMembers": 2 });
    let jobs: Vec<(Value, usize)> = vec![
        (submit(&alice, gang).await, 2),
        (submit(&alice, job_input("single", &[("main", 1, 2, &[])], 8.0)).await, 1),
    ];
    for (id, _) in &jobs {
        stack.wait_state(&alice, id, "RUNNING").await;
    }

    match fault {
        Fault::KillAgent => {
            let agent = stack.agent("solo");
            agent.kill9();
            agent.restart();
        }
        Fault::RestartRedis => {
            stack.redis.kill9();
            // The jobs end while Redis is gone: their events wait in the agent's outbox.
            wait_agent_idle(&stack, "solo").await;
            stack.redis.start_again();
        }
        Fault::RestartApi => {
            stack.api.kill9();
            // The jobs end while no api reads the stream: the events wait in Redis.
            wait_agent_idle(&stack, "solo").await;
            stack.api.start_again().await;
        }
    }

    for (id, replicas) in &jobs {
        let job = stack.wait_state(&alice, id, "SUCCEEDED").await;
        assert_eq!(job["dispatches"].as_array().map(Vec::len), Some(1), "dispatched once: {job}");
        trail::assert_ran_once_and_succeeded(&stack.db.pool, id_of(id), *replicas).await;
    }

    // The simulator launched each replica exactly once (a relaunch would be a second line).
    let mut launches: BTreeMap<(i64, String, i64), usize> = BTreeMap::new();
    for entry in stack.agent("solo").journal() {
        if entry["op"] == "launch" {
            let r = &entry["replica"];
            let key =
                (r["job"].as_i64().unwrap(), r["task"].as_str().unwrap().to_owned(), r["replica"].as_i64().unwrap());
            *launches.entry(key).or_default() += 1;
        }
    }
    let expected: BTreeMap<(i64, String, i64), usize> = [
        ((id_of(&jobs[0].0), "worker".to_owned(), 0), 1),
        ((id_of(&jobs[0].0), "worker".to_owned(), 1), 1),
        ((id_of(&jobs[1].0), "main".to_owned(), 0), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(launches, expected, "one launch per replica ({fault:?})");

    // The cluster is healthy again and nothing was dead-lettered.
    stack.wait_clusters_ready(&admin).await;
    let mut redis = redis::Client::open(stack.redis.url()).unwrap().get_connection().unwrap();
    let dead: i64 = redis::cmd("XLEN").arg(grus_protocol::keys::dead_letter_stream("solo")).query(&mut redis).unwrap();
    assert_eq!(dead, 0, "nothing dead-lettered");
}
