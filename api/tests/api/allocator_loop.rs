//! The allocator loop against the real PostgreSQL and Redis: rounds are run directly with an
//! explicit `now` (no timers), cluster rows are written directly to play the ingestion, and
//! the agents' command streams are read back and decoded with grus-protocol. Cluster ids carry
//! a random suffix because Redis is shared.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use grus_api::admission::{self, Admission};
use grus_api::commands::CommandPublisher;
use grus_api::db::{self, Cause, NewJob, NewTask, Quota};
use grus_api::dispatcher::AllocatorMetrics;
use grus_api::dispatcher::{Dispatcher, DispatcherConfig, RoundReport};
use grus_api::domain::{ClassOfService, JobState, PriorityClass, Role, SuspendWindow, DAY_MIN};
use grus_api::metrics::MetricFamily;
use grus_protocol::codec::Envelope;
use grus_protocol::command::Command;
use grus_protocol::wire::{CapacitySummary, GangSpec, JobSpec, ModelCapacity, ResourcesSpec, TaskSpec};
use grus_testkit::api::{execute_as, TestApi};
use grus_testkit::client::code;
use grus_testkit::env::{random_hex, redis_url};
use grus_testkit::seed::{self, fixture, Fixture};
use grus_testkit::streams::{self, ClusterKeys};
use grus_testkit::TestDb;
use redis::AsyncCommands;
use serde_json::{json, Value};
use sqlx::PgPool;

struct World {
    db: TestDb,
    f: Fixture,
    redis: redis::aio::ConnectionManager,
    metrics: Arc<AllocatorMetrics>,
    cfg: DispatcherConfig,
    tag: String,
    /// Deleted from Redis when the test ends.
    clusters: Vec<ClusterKeys>,
}

impl World {
    async fn new(cfg: DispatcherConfig) -> World {
        let db = TestDb::new().await;
        let f = fixture(&db.pool, "alloc").await;
        let client = redis::Client::open(redis_url()).unwrap();
        let redis = redis::aio::ConnectionManager::new(client).await.expect("redis");
        World {
            db,
            f,
            redis,
            metrics: Arc::new(AllocatorMetrics::default()),
            cfg,
            tag: random_hex()[..12].to_owned(),
            clusters: vec![],
        }
    }

    fn pool(&self) -> &PgPool {
        &self.db.pool
    }

    async fn dispatcher(&self) -> Dispatcher {
        Dispatcher::new(self.pool().clone(), CommandPublisher::new(self.redis.clone()), self.cfg, self.metrics.clone())
    }

    /// Registers a cluster as the ingestion would have seen it: `free` whole A100s per node.
    async fn cluster(&mut self, name: &str, free: &[u32], health: &str, heartbeat: DateTime<Utc>) -> String {
        let id = format!("{name}-{}", self.tag);
        sqlx::query("INSERT INTO clusters (id, labels, health, last_heartbeat, capacity) VALUES ($1, $2, $3, $4, $5)")
            .bind(&id)
            .bind(json!({ "region": "eu" }))
            .bind(health)
            .bind(heartbeat)
            .bind(serde_json::to_value(capacity(free)).unwrap())
            .execute(self.pool())
            .await
            .unwrap();
        self.clusters.push(ClusterKeys::new(&id, &redis_url()));
        id
    }

    async fn set_capacity(&self, id: &str, free: &[u32], heartbeat: DateTime<Utc>) {
        sqlx::query("UPDATE clusters SET capacity = $2, last_heartbeat = $3 WHERE id = $1")
            .bind(id)
            .bind(serde_json::to_value(capacity(free)).unwrap())
            .bind(heartbeat)
            .execute(self.pool())
            .await
            .unwrap();
    }

    /// Submits through admission (state `admitted`), into `queue` (the fixture's by default).
    async fn submit(&self, name: &str, members: u32, gpus: u32, queue: Option<i64>, by: i64) -> i64 {
        let spec = spec(name, members, gpus);
        let new = NewJob {
            project_id: self.f.project_id,
            queue_id: queue.unwrap_or(self.f.queue_id),
            name: name.into(),
            priority: 100,
            priority_class: "normal".into(),
            preemptible: false,
            spec: serde_json::to_value(&spec).unwrap(),
            pools: spec.pools.clone(),
            tasks: spec
                .tasks
                .iter()
                .map(|t| NewTask {
                    name: t.name.clone(),
                    replicas: t.replicas,
                    resources: t.resources.clone(),
                    spec: serde_json::to_value(t).unwrap(),
                })
                .collect(),
            submitted_by: by,
        };
        let actor = format!("user:{by}");
        match admission::admit(self.pool(), &new, Cause { cause: "submitted", actor: &actor }).await.unwrap() {
            Admission::Admitted { job, .. } => job.id,
            other => panic!("not admitted: {other:?}"),
        }
    }

    /// Submits `name` (one replica of `gpus` A100s) into `f`'s project and default queue.
    async fn submit_to(&self, f: &Fixture, slug: &str, name: &str, gpus: u32) -> i64 {
        let mut spec = spec(name, 1, gpus);
        spec.project = slug.into();
        let mut new = seed::gpu_job(f, name, 1, gpus, &["A100"]);
        new.spec = serde_json::to_value(&spec).unwrap();
        new.submitted_by = self.f.user_id;
        let actor = format!("user:{}", self.f.user_id);
        match admission::admit(self.pool(), &new, Cause { cause: "submitted", actor: &actor }).await.unwrap() {
            Admission::Admitted { job, .. } => job.id,
            other => panic!("not admitted: {other:?}"),
        }
    }

    /// The commands about jobs on a cluster's stream, oldest first.
    async fn commands(&self, cluster: &str) -> Vec<Envelope<Command>> {
        let all = streams::commands(&mut self.redis.clone(), cluster).await;
        all.into_iter().filter(|c| !matches!(c.message, Command::SetQueues { .. })).collect()
    }

    /// The queue settings sent to a cluster, oldest first.
    async fn queue_settings(&self, cluster: &str) -> Vec<Command> {
        let all = streams::commands(&mut self.redis.clone(), cluster).await;
        all.into_iter().map(|c| c.message).filter(|c| matches!(c, Command::SetQueues { .. })).collect()
    }

    /// What an agent's answer does through the ingestion: the dispatch answered and, on a
    /// rejection, the job `rejected`; on acceptance the job runs.
    async fn agent_answers(&self, job: i64, epoch: i64, cluster: &str, accepted: bool) {
        assert!(db::answer_dispatch(self.pool(), job, epoch, accepted, (!accepted).then_some("no room"))
            .await
            .unwrap());
        let actor = format!("agent:{cluster}");
        let to = if accepted { JobState::Running } else { JobState::Rejected };
        seed::transition(self.pool(), job, to, Cause { cause: "agent", actor: &actor }).await;
    }

    async fn job(&self, id: i64) -> db::Job {
        db::get_job(self.pool(), id).await.unwrap()
    }

    /// A job's whyPending as the API shows it (its shape's, when it refers to one).
    async fn why(&self, id: i64) -> Option<Value> {
        db::dispatch::why_pending_of(self.pool(), id).await.unwrap()
    }
}

fn capacity(free: &[u32]) -> CapacitySummary {
    let total: u32 = free.iter().sum();
    CapacitySummary {
        models: vec![ModelCapacity {
            model: "A100".into(),
            total_gpus: total.max(8),
            free_whole_per_node: free.iter().copied().filter(|&n| n > 0).collect(),
            free_milli_per_device: vec![],
            movable_per_node: vec![],
            largest_gang_gpus: BTreeMap::from([
                ("node".into(), free.iter().copied().max().unwrap_or(0)),
                ("nvlink".into(), free.iter().copied().max().unwrap_or(0)),
                ("rack".into(), total),
                ("any".into(), total),
            ]),
            mig_free: Default::default(),
        }],
        cpu_free_milli: 1_000_000,
        memory_free_mib: 10_000_000,
        pending_jobs: 0,
        pools: vec![],
    }
}

/// A gang of `members` replicas with `gpus` A100s each.
fn spec(name: &str, members: u32, gpus: u32) -> JobSpec {
    JobSpec {
        id: 0,
        name: name.into(),
        project: "alloc".into(),
        queue: "default".into(),
        priority: 100,
        preemptible: false,
        may_preempt: true,
        tasks: vec![TaskSpec {
            name: "main".into(),
            replicas: members,
            image: "busybox".into(),
            command: vec![],
            env: BTreeMap::new(),
            resources: ResourcesSpec {
                gpus,
                gpu_models: vec!["A100".into()],
                cpu_milli: 1000,
                memory_mib: 1024,
                ..Default::default()
            },
            topology: None,
        }],
        gang: Some(GangSpec { min_members: members }),
        elastic: None,
        policies: vec![],
        max_runtime_s: None,
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels: BTreeMap::new(),
        node_selector: BTreeMap::new(),
        pools: Vec::new(),
        submitted_by: "sub-alloc".into(),
        submitted_at_ms: 0,
        checkpoint: None,
        workspace: None,
        service: None,
    }
}

fn dispatched(r: &RoundReport) -> Vec<(i64, &str, i64)> {
    r.dispatched.iter().map(|(j, c, e)| (*j, c.as_str(), *e)).collect()
}

fn epoch_of(env: &Envelope<Command>) -> (String, u64, u64) {
    match &env.message {
        Command::Dispatch { job, epoch, .. } => ("Dispatch".into(), job.id, *epoch),
        Command::Cancel { job, epoch } => ("Cancel".into(), *job, *epoch),
        Command::Evict { job, epoch, .. } => ("Evict".into(), *job, *epoch),
        other => (other.kind().into(), 0, 0),
    }
}

/// A Redis restart without persistence lost the Dispatch commands in the streams: the jobs sat
/// `dispatched` until the dispatch timeout. The allocator sees the loss and sends them again.
#[tokio::test]
async fn dispatches_lost_with_redis_data_are_sent_again() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let job = w.submit("lost", 1, 4, None, w.f.user_id).await;
    let incarnation = format!("test-{}", w.tag);
    let publisher = CommandPublisher::new(w.redis.clone()).stamped(&incarnation);
    let mut d = Dispatcher::new(w.pool().clone(), publisher, w.cfg, w.metrics.clone());
    d.round(now).await.unwrap();
    assert_eq!(w.commands(&c).await.len(), 1);
    assert!(d.round(now).await.unwrap().sent == 0, "sent once while Redis keeps it");

    // Redis restarts empty: the stream and the control plane's marker are gone.
    let mut r = w.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(grus_protocol::keys::command_stream(&c))
        .arg(grus_protocol::keys::liveness_marker(&incarnation))
        .query_async(&mut r)
        .await
        .unwrap();
    let report = d.round(now).await.unwrap();
    assert_eq!(report.sent, 1, "{report:?}");
    let sent = w.commands(&c).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].id, format!("dispatch:{job}:1"), "the same message id: an agent that read it drops the copy");
    let _: () =
        redis::cmd("DEL").arg(grus_protocol::keys::liveness_marker(&incarnation)).query_async(&mut r).await.unwrap();
}

/// The agents ran every job in one "(unlisted)" queue: the control plane never told them the
/// tree (issue 20). Each cluster is sent the tenants, projects and queues with their weights,
/// again when they change or its agent says Hello, and not otherwise.
#[tokio::test]
async fn agents_are_told_the_fair_share_tree_when_it_changes_and_when_they_start() {
    use db::fair_share::{self, Level};
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let mut d = w.dispatcher().await;
    let report = d.round(now).await.unwrap();
    assert_eq!(report.queues_sent_to, vec![c.clone()]);
    let sent = w.queue_settings(&c).await;
    let Command::SetQueues { weights, hierarchy: Some(h), quotas, .. } = &sent[0] else { panic!("{sent:?}") };
    assert_eq!(weights, &BTreeMap::from([("alloc/default".to_string(), 1.0)]));
    assert_eq!((h.tenants["t-alloc"], h.projects["alloc"].tenant.as_str()), (1.0, "t-alloc"));
    assert!(quotas.is_empty());

    // Nothing changed: nothing sent, however many rounds.
    for s in [1, 6, 12] {
        assert!(d.round(now + Duration::seconds(s)).await.unwrap().queues_sent_to.is_empty());
    }
    assert_eq!(w.queue_settings(&c).await.len(), 1);

    // A tenant admin reweighs the project: every cluster hears of it.
    let mut tx = w.pool().begin().await.unwrap();
    let change = fair_share::ShareChange { weight: Some(2.5), ..Default::default() };
    fair_share::set_share_settings(&mut tx, Level::Project, w.f.project_id, change).await.unwrap();
    tx.commit().await.unwrap();
    let other = w.cluster("other", &[8], "healthy", now).await;
    let report = d.round(now + Duration::seconds(18)).await.unwrap();
    assert_eq!(report.queues_sent_to, vec![c.clone(), other.clone()]);
    let Command::SetQueues { hierarchy: Some(h), .. } = &w.queue_settings(&c).await[1] else { panic!() };
    assert_eq!(h.projects["alloc"].weight, 2.5);

    // The agent restarts (perhaps without its state): sent again, as they are.
    let mut conn = w.pool().acquire().await.unwrap();
    db::ingest::record_hello(&mut conn, &c, "0.1.0", &[]).await.unwrap();
    let report = d.round(now + Duration::seconds(24)).await.unwrap();
    assert_eq!(report.queues_sent_to, vec![c.clone()]);
    let sent = w.queue_settings(&c).await;
    assert_eq!(sent[2], sent[1]);
    assert_eq!(w.queue_settings(&other).await.len(), 1);
}

/// Fair share with decayed usage (issue 20): with a half-life set, the leader rolls each
/// queue's past GPU usage forward from what its work holds, and the next rounds read it back.
#[tokio::test]
async fn the_leader_keeps_each_queues_decayed_usage_while_history_counts() {
    let cfg = DispatcherConfig {
        fair_share: grus_scheduler::fairshare::FairShareConfig { half_life_s: Some(3600), history_weight: 0.5 },
        ..DispatcherConfig::default()
    };
    let mut w = World::new(cfg).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let job = w.submit("busy", 1, 4, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    d.round(now).await.unwrap();
    w.agent_answers(job, 1, &c, true).await;
    let history = |w: &World| {
        let pool = w.pool().clone();
        async move { db::fair_share::usage_history(&mut pool.acquire().await.unwrap()).await.unwrap() }
    };
    // Seen running for the first time: its history starts now, at nothing.
    d.round(now + Duration::seconds(20)).await.unwrap();
    let first = history(&w).await;
    assert_eq!(first[&w.f.queue_id].amounts.values().sum::<f64>(), 0.0);
    d.round(now + Duration::seconds(40)).await.unwrap();
    let held = history(&w).await[&w.f.queue_id].amounts.values().sum::<f64>();
    // 4 GPUs for 20 s, decayed a little: just under 80,000 milli-seconds.
    assert!((79_000.0..80_000.0).contains(&held), "{held}");
    // Without a half-life nothing is kept.
    let mut plain = World::new(DispatcherConfig::default()).await;
    let c = plain.cluster("c", &[8], "healthy", now).await;
    let job = plain.submit("busy", 1, 4, None, plain.f.user_id).await;
    let mut d = plain.dispatcher().await;
    d.round(now).await.unwrap();
    plain.agent_answers(job, 1, &c, true).await;
    d.round(now + Duration::seconds(20)).await.unwrap();
    assert!(history(&plain).await.is_empty());
}

#[tokio::test]
async fn a_gang_goes_to_the_only_cluster_that_holds_it_with_epoch_1() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let small = w.cluster("small", &[4, 4], "healthy", now).await;
    let big = w.cluster("big", &[8, 8], "healthy", now).await;
    let job = w.submit("gang", 2, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    let r = d.round(now).await.unwrap();
    assert_eq!(dispatched(&r), vec![(job, big.as_str(), 1)]);

    let sent = w.commands(&big).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].epoch, Some(1));
    assert_eq!(sent[0].id, format!("dispatch:{job}:1"));
    let Command::Dispatch { job: spec, epoch: 1, .. } = &sent[0].message else { panic!("not a dispatch: {sent:?}") };
    assert_eq!((spec.id, spec.tasks[0].replicas), (job as u64, 2));
    assert!(w.commands(&small).await.is_empty());

    let row = w.job(job).await;
    assert_eq!((row.state, row.cluster_id.as_deref(), row.epoch), (JobState::Dispatched, Some(big.as_str()), 1));
    let events = db::job_events(w.pool(), job).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!((last.to_state.as_str(), last.actor.as_str()), ("dispatched", "system:allocator"));

    // Sent once: a second round sends nothing more.
    let r = d.round(now).await.unwrap();
    assert!(r.dispatched.is_empty() && r.sent == 0, "{r:?}");
    assert_eq!(w.commands(&big).await.len(), 1);

    // A send that was never confirmed (leader died between commit and XADD) is re-sent
    // under the same message id.
    sqlx::query("UPDATE dispatches SET sent_at = NULL WHERE job_id = $1").bind(job).execute(w.pool()).await.unwrap();
    let r = d.round(now).await.unwrap();
    assert_eq!(r.sent, 1);
    let sent = w.commands(&big).await;
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].id, sent[0].id);
    assert!(w.metrics.render().contains("grus_allocator_dispatches_total 1"));
}

#[tokio::test]
async fn a_rejected_dispatch_goes_to_the_other_cluster_with_epoch_2() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let a = w.cluster("a", &[8, 8], "healthy", now).await;
    let b = w.cluster("b", &[8, 8], "healthy", now).await;
    let job = w.submit("gang", 2, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    let first = d.round(now).await.unwrap();
    let (_, to, _) = dispatched(&first)[0];
    let (to, other) = if to == a { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) };

    w.agent_answers(job, 1, &to, false).await;
    let r = d.round(now).await.unwrap();
    assert_eq!(dispatched(&r), vec![(job, other.as_str(), 2)]);
    let sent = w.commands(&other).await;
    assert_eq!(sent.iter().map(epoch_of).collect::<Vec<_>>(), vec![("Dispatch".into(), job as u64, 2)]);
    let history = db::dispatch::dispatch_history(w.pool(), job).await.unwrap();
    let h: Vec<(&str, &str)> = history.iter().map(|d| (d.cluster_id.as_str(), d.outcome.as_str())).collect();
    assert_eq!(h, vec![(to.as_str(), "rejected"), (other.as_str(), "pending")]);
    assert!(w.metrics.render().contains("grus_allocator_redispatches_total 1"));
    // The cluster that rejected it got no Cancel: it already refused the job.
    assert_eq!(w.commands(&to).await.len(), 1);
}

#[tokio::test]
async fn a_timed_out_dispatch_is_cancelled_and_goes_elsewhere() {
    let cfg = DispatcherConfig { dispatch_timeout: Duration::seconds(120), ..DispatcherConfig::default() };
    let mut w = World::new(cfg).await;
    let now = Utc::now();
    let a = w.cluster("a", &[8], "healthy", now).await;
    let b = w.cluster("b", &[8, 8], "healthy", now).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    // Best fit: the cluster left with fewer free GPUs.
    assert_eq!(dispatched(&d.round(now).await.unwrap()), vec![(job, a.as_str(), 1)]);

    let answer_by = db::dispatch::open_dispatches(w.pool()).await.unwrap()[0].answer_by;
    let dispatched_at = db::dispatch::dispatch_history(w.pool(), job).await.unwrap()[0].dispatched_at;
    let after = answer_by.expect("an answer deadline") - dispatched_at;
    assert!((after - Duration::seconds(120)).num_milliseconds().abs() < 1_000, "the timeout after it: {after}");
    let Command::Dispatch { answer_by_ms, .. } = &w.commands(&a).await[0].message else { panic!() };
    assert_eq!(*answer_by_ms, answer_by.map(|t| t.timestamp_millis()), "... is sent with it");
    // The agent never answers: age the dispatch past the deadline.
    sqlx::query(
        "UPDATE dispatches SET dispatched_at = dispatched_at - interval '10 minutes',
           answer_by = answer_by - interval '10 minutes' WHERE job_id = $1",
    )
    .bind(job)
    .execute(w.pool())
    .await
    .unwrap();
    let later = Utc::now();
    let r = d.round(later).await.unwrap();
    assert_eq!(r.timed_out, vec![(job, a.clone(), 1)]);
    assert_eq!(dispatched(&r), vec![(job, b.as_str(), 2)]);
    let on_a: Vec<_> = w.commands(&a).await.iter().map(epoch_of).collect();
    assert_eq!(on_a, vec![("Dispatch".into(), job as u64, 1), ("Cancel".into(), job as u64, 1)]);
    let on_b: Vec<_> = w.commands(&b).await.iter().map(epoch_of).collect();
    assert_eq!(on_b, vec![("Dispatch".into(), job as u64, 2)]);
    let events = db::job_events(w.pool(), job).await.unwrap();
    assert!(events.iter().any(|e| e.to_state == "rejected" && e.cause.contains("timed out")));

    // The Cancel is not sent again.
    d.round(later).await.unwrap();
    assert_eq!(w.commands(&a).await.len(), 2);
}

#[tokio::test]
async fn a_dispatch_is_not_given_up_while_answers_of_its_cluster_wait_to_be_ingested() {
    let cfg = DispatcherConfig { dispatch_timeout: Duration::seconds(120), ..DispatcherConfig::default() };
    let mut w = World::new(cfg).await;
    let now = Utc::now();
    let a = w.cluster("a", &[8], "healthy", now).await;
    w.cluster("b", &[8, 8], "healthy", now).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    assert_eq!(dispatched(&d.round(now).await.unwrap()), vec![(job, a.as_str(), 1)]);
    // An entry of the cluster's appended before the deadline: until ingested, it may be the
    // placement that beat it.
    let mut r = w.redis.clone();
    let stream = grus_protocol::keys::event_stream(&a);
    let group = grus_protocol::keys::api_group("unstamped");
    let _: () = r.xgroup_create_mkstream(&stream, &group, "0").await.unwrap();
    let _: String = r.xadd(&stream, "*", &[("m", "{}")]).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    // The agent said it waits for room (an acknowledgement does not stretch the deadline), and
    // the deadline passed.
    assert!(db::answer_dispatch(w.pool(), job, 1, true, None).await.unwrap());
    sqlx::query("UPDATE dispatches SET answer_by = now() WHERE job_id = $1").bind(job).execute(w.pool()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let _: String = r.xadd(&stream, "*", &[("m", "{}")]).await.unwrap();
    let held = d.round(Utc::now()).await.unwrap();
    assert!(held.timed_out.is_empty(), "not delivered: {held:?}");

    // Delivered to a consumer, not acknowledged (its transaction may not have committed).
    let read: redis::streams::StreamReadReply = r
        .xread_options(&[&stream], &[">"], &redis::streams::StreamReadOptions::default().group(&group, "test"))
        .await
        .unwrap();
    let ids: Vec<String> = read.keys.iter().flat_map(|k| k.ids.iter().map(|e| e.id.clone())).collect();
    assert_eq!(ids.len(), 2);
    let held = d.round(Utc::now()).await.unwrap();
    assert!(held.timed_out.is_empty(), "pending: {held:?}");
    assert_eq!(db::get_job(w.pool(), job).await.unwrap().state, JobState::Dispatched);

    // Ingested; the entry appended after the deadline, still pending, does not count.
    let _: i64 = r.xack(&stream, &group, &ids[..1]).await.unwrap();
    let given_up = d.round(Utc::now()).await.unwrap();
    assert_eq!(given_up.timed_out, vec![(job, a.clone(), 1)]);
}

#[tokio::test]
async fn waiting_jobs_share_their_shapes_why_pending_and_unused_shapes_are_pruned() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    w.cluster("small", &[2], "healthy", now).await;
    let (a, b) = (w.submit("big", 1, 8, None, w.f.user_id).await, w.submit("big", 1, 8, None, w.f.user_id).await);
    let mut d = w.dispatcher().await;
    assert_eq!(d.round(now).await.unwrap().waiting, 2);
    let shape = |j: db::Job| db::dispatch::referenced_shape(&j.why_pending.expect("whyPending")).expect("a reference");
    let kept = shape(w.job(a).await);
    assert_eq!(shape(w.job(b).await), kept, "one row for both jobs of the shape");
    assert_eq!(w.why(a).await, w.why(b).await);
    let old = vec![("a shape nobody has".to_string(), json!({ "summary": "old", "reasons": [] }))];
    let gone = db::dispatch::record_why_shapes(w.pool(), &old).await.unwrap()[0].1;
    sqlx::query("UPDATE why_pending_shapes SET updated_at = now() - interval '1 hour'")
        .execute(w.pool())
        .await
        .unwrap();
    assert_eq!(db::dispatch::prune_why_shapes(w.pool()).await.unwrap(), 1);
    let left = db::dispatch::why_shapes(w.pool(), &[kept, gone]).await.unwrap();
    assert_eq!(left.iter().map(|r| r.0).collect::<Vec<_>>(), [kept], "the shape waiting jobs refer to stays");
}

#[tokio::test]
async fn unhealthy_stale_and_cordoned_clusters_are_skipped_with_reasons() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let sick = w.cluster("sick", &[8], "unreachable", now).await;
    let stale = w.cluster("stale", &[8], "healthy", now - Duration::minutes(5)).await;
    let cordoned = w.cluster("cordoned", &[8], "healthy", now).await;
    sqlx::query("UPDATE clusters SET cordoned = true WHERE id = $1").bind(&cordoned).execute(w.pool()).await.unwrap();
    let small = w.cluster("small", &[2], "healthy", now).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    let r = d.round(now).await.unwrap();
    assert!(r.dispatched.is_empty());
    assert_eq!(r.waiting, 1);
    let row = w.job(job).await;
    assert_eq!(row.state, JobState::Admitted);
    let why = w.why(job).await.expect("whyPending recorded");
    let reasons: BTreeMap<String, (String, String)> = why["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (s("cluster"), (s("stage"), s("reason")))
        })
        .collect();
    assert_eq!(reasons[&sick], ("health".into(), "agent heartbeat is stale".into()));
    assert_eq!(reasons[&stale], ("health".into(), "agent heartbeat is stale".into()));
    assert_eq!(reasons[&cordoned], ("health".into(), "cluster is cordoned".into()));
    assert_eq!(reasons[&small].0, "capacity");
    assert!(why["summary"].as_str().unwrap().contains(&format!("{cordoned}: cluster is cordoned")));
    assert!(w.metrics.render().contains("grus_allocator_waiting_jobs 1"));
    for c in [&sick, &stale, &cordoned, &small] {
        assert!(w.commands(c).await.is_empty());
    }
}

#[tokio::test]
async fn reservations_keep_two_rounds_from_promising_the_same_gpus() {
    let cfg = DispatcherConfig {
        reservation_ttl: Duration::seconds(60),
        dispatch_timeout: Duration::hours(1),
        ..DispatcherConfig::default()
    };
    let mut w = World::new(cfg).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let first = w.submit("first", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    assert_eq!(dispatched(&d.round(now).await.unwrap()), vec![(first, c.as_str(), 1)]);

    // The agent has not reported yet: its summary still shows 8 free GPUs.
    let second = w.submit("second", 1, 8, None, w.f.user_id).await;
    let r = d.round(now + Duration::seconds(5)).await.unwrap();
    assert!(r.dispatched.is_empty(), "{r:?}");
    let why = w.why(second).await.unwrap();
    assert_eq!(why["reasons"][0]["stage"], "reservation");

    // A new leader derives the same reservation from the table.
    let mut other = w.dispatcher().await;
    assert!(other.round(now + Duration::seconds(6)).await.unwrap().dispatched.is_empty());

    // Once the TTL passed the summary is trusted again.
    let later = now + Duration::seconds(90);
    w.set_capacity(&c, &[8], later).await;
    assert_eq!(dispatched(&d.round(later).await.unwrap()), vec![(second, c.as_str(), 1)]);
}

#[tokio::test]
async fn only_one_loop_leads_and_the_other_takes_over_when_it_stops() {
    let w = World::new(DispatcherConfig::default()).await;
    let mut d1 = w.dispatcher().await;
    let mut d2 = w.dispatcher().await;
    assert!(d1.leadership().try_lead().await.unwrap());
    assert!(!d2.leadership().try_lead().await.unwrap());
    assert!(d1.leadership().try_lead().await.unwrap(), "the leader keeps the lead");

    // The leader's process dies: its session goes, and with it the lock.
    let pid = d1.leadership().backend_pid().await.expect("leader session");
    let (gone,): (bool,) =
        sqlx::query_as("SELECT pg_terminate_backend($1, 10000)").bind(pid).fetch_one(w.pool()).await.unwrap();
    assert!(gone);
    assert!(d2.leadership().try_lead().await.unwrap(), "the other replica takes over");
    assert!(!d1.leadership().try_lead().await.unwrap(), "the old leader notices it lost the lead");
    assert!(!d1.leadership().is_leader());

    // A graceful stop hands the lead over as well.
    d2.leadership().resign().await;
    assert!(d1.leadership().try_lead().await.unwrap());
}

#[tokio::test]
async fn the_loop_stops_on_shutdown_and_gives_up_the_lead() {
    let cfg = DispatcherConfig { interval: std::time::Duration::from_millis(20), ..DispatcherConfig::default() };
    let mut w = World::new(cfg).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now + Duration::minutes(1)).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let (stop, rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(w.dispatcher().await.run(rx));
    // Wait for the loop's first dispatch (the stream is the observable effect); the bound
    // only turns a loop that never dispatches into a failure instead of a hang.
    let mut polls = 0;
    while w.commands(&c).await.is_empty() {
        polls += 1;
        assert!(polls < 6000, "the loop never dispatched");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    stop.send(true).unwrap();
    task.await.unwrap();
    assert_eq!(w.job(job).await.state, JobState::Dispatched);
    let mut next = w.dispatcher().await;
    assert!(next.leadership().try_lead().await.unwrap(), "the stopped loop released the lock");
}

/// What [`borrowed_work_running`] set up.
struct BorrowedRunning {
    /// The queue `owner`.
    owner: i64,
    cluster: String,
    /// The job of the queue `lender`, running on `cluster`.
    borrowed: i64,
    d: Dispatcher,
    /// When the cluster reported itself full.
    later: DateTime<Utc>,
}

/// Queues `lender` (no guarantee) and `owner` (`owner_guarantee` GPU milli); a borrowed job of
/// `lender` dispatched by `d` to the cluster `c` (8 GPUs), running there and filling it.
async fn borrowed_work_running(w: &mut World, owner_guarantee: i64) -> BorrowedRunning {
    let pool = w.pool().clone();
    let settings = db::QueueSettings::named;
    let lender = db::create_queue(&pool, w.f.project_id, &settings("lender")).await.unwrap();
    db::set_quota(&pool, lender.id, &Quota { resource: "gpu".into(), guaranteed: 0, limit: None }).await.unwrap();
    let owner = db::create_queue(&pool, w.f.project_id, &settings("owner")).await.unwrap();
    let quota = Quota { resource: "gpu".into(), guaranteed: owner_guarantee, limit: None };
    db::set_quota(&pool, owner.id, &quota).await.unwrap();

    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let borrowed = w.submit("borrowed", 1, 8, Some(lender.id), w.f.user_id).await;
    assert!(w.job(borrowed).await.borrowed);
    let mut d = w.dispatcher().await;
    assert_eq!(dispatched(&d.round(now).await.unwrap()), vec![(borrowed, c.as_str(), 1)]);
    w.agent_answers(borrowed, 1, &c, true).await;
    let later = Utc::now() + Duration::seconds(1);
    w.set_capacity(&c, &[0], later).await;
    BorrowedRunning { owner: owner.id, cluster: c, borrowed, d, later }
}

#[tokio::test]
async fn reclaim_evicts_borrowed_work_once_for_a_queue_within_its_guarantee() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let pool = w.pool().clone();
    let BorrowedRunning { owner, cluster: c, borrowed, mut d, later } = borrowed_work_running(&mut w, 8000).await;

    let guaranteed = w.submit("guaranteed", 1, 8, Some(owner), w.f.user_id).await;
    assert!(!w.job(guaranteed).await.borrowed);
    let r = d.round(later).await.unwrap();
    assert!(r.dispatched.is_empty());
    assert_eq!(r.evicted, vec![(borrowed, c.clone(), 1)]);
    assert_eq!(w.job(borrowed).await.state, JobState::Preempting);
    let events = db::job_events(&pool, borrowed).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.to_state, "preempting");
    assert!(last.cause.contains(&format!("job {guaranteed}")), "{}", last.cause);
    let sent: Vec<_> = w.commands(&c).await.iter().map(epoch_of).collect();
    assert_eq!(sent, vec![("Dispatch".into(), borrowed as u64, 1), ("Evict".into(), borrowed as u64, 1)]);
    let Command::Evict { grace_s, hold, .. } = w.commands(&c).await[1].message else { panic!() };
    assert_eq!(grace_s, 30);
    // The agent keeps what the eviction frees for the guaranteed job, as long as the allocator does.
    let hold = hold.expect("the eviction names the job it makes room for");
    assert_eq!(hold.job, guaranteed as u64);
    assert!((120..=150).contains(&hold.ttl_s), "the grace and the hold: {hold:?}");

    // Idempotent: the eviction in flight already makes room, nothing more is evicted or sent.
    let r = d.round(later + Duration::seconds(1)).await.unwrap();
    assert!(r.evicted.is_empty() && r.sent == 0, "{r:?}");
    assert_eq!(w.commands(&c).await.len(), 2);
    assert!(w.metrics.render().contains("grus_allocator_evictions_total 1"));

    // Sent again (Redis lost it): with the same hold.
    sqlx::query("UPDATE dispatches SET evict_sent_at = NULL WHERE job_id = $1")
        .bind(borrowed)
        .execute(&pool)
        .await
        .unwrap();
    d.round(later + Duration::seconds(2)).await.unwrap();
    let Command::Evict { hold: again, .. } = w.commands(&c).await.last().unwrap().message else { panic!() };
    assert_eq!(again.map(|h| h.job), Some(guaranteed as u64));
}

#[tokio::test]
async fn a_tenant_without_preemption_rights_waits_for_free_capacity_and_is_told_so() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let pool = w.pool().clone();
    let BorrowedRunning { owner, cluster: c, borrowed, mut d, later } = borrowed_work_running(&mut w, 8000).await;
    let mut rights = db::tenant_rights::tenant_rights(&pool, w.f.tenant_id).await.unwrap();
    rights.may_preempt = false;
    let mut tx = pool.begin().await.unwrap();
    db::tenant_rights::set_tenant_rights(&mut tx, w.f.tenant_id, &rights).await.unwrap();
    tx.commit().await.unwrap();
    // The allocator reads rights again once those it read are a second old.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;

    let guaranteed = w.submit("guaranteed", 1, 8, Some(owner), w.f.user_id).await;
    let r = d.round(later).await.unwrap();
    assert!(r.dispatched.is_empty() && r.evicted.is_empty(), "{r:?}");
    assert_eq!(w.job(borrowed).await.state, JobState::Running, "nothing evicted for it");
    let why = w.why(guaranteed).await.expect("whyPending recorded");
    let summary = why["summary"].as_str().unwrap();
    assert!(summary.ends_with(grus_api::dispatcher::why::NO_PREEMPTION_NOTE), "{summary}");
    assert!(w.commands(&c).await.iter().all(|c| !matches!(c.message, Command::Evict { .. })));

    // Given the right back: the next plan reclaims (rights are read at most a second old).
    rights.may_preempt = true;
    let mut tx = pool.begin().await.unwrap();
    db::tenant_rights::set_tenant_rights(&mut tx, w.f.tenant_id, &rights).await.unwrap();
    tx.commit().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    w.submit("poke", 1, 8, Some(owner), w.f.user_id).await;
    let r = d.round(later + Duration::seconds(2)).await.unwrap();
    assert_eq!(r.evicted, vec![(borrowed, c.clone(), 1)], "{r:?}");
}

/// A plan that weighed reclaim victims depends on time (minimum run times): with nothing else
/// changed it is skipped for a while, then made again. Without victims it is not (see
/// `an_unchanged_world_is_not_planned_again`).
#[tokio::test]
async fn a_plan_that_weighed_victims_is_made_again_in_time() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let BorrowedRunning { owner, cluster: _, borrowed: _, mut d, later } = borrowed_work_running(&mut w, 16000).await;

    // Within its guarantee, but evicting the borrowed job would not make room for it.
    let big = w.submit("big", 2, 8, Some(owner), w.f.user_id).await;
    assert!(!w.job(big).await.borrowed);
    let r = d.round(later).await.unwrap();
    assert!(r.planned && r.evicted.is_empty() && r.dispatched.is_empty(), "{r:?}");
    assert!(!d.round(later + Duration::seconds(1)).await.unwrap().planned);
    assert!(d.round(later + Duration::seconds(11)).await.unwrap().planned);
}

#[tokio::test]
async fn cancel_job_reaches_the_agent_also_after_a_restart() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    d.round(now).await.unwrap();
    w.agent_answers(job, 1, &c, true).await;
    drop(d);

    // cancelJob commits the state change; the api may stop before anything else happens.
    let actor = format!("user:{}", w.f.user_id);
    seed::transition(w.pool(), job, JobState::Cancelled, Cause { cause: "cancelled", actor: &actor }).await;

    // A fresh replica's loop owes the agent a Cancel for the live epoch, and sends it once.
    let mut restarted = w.dispatcher().await;
    restarted.round(now).await.unwrap();
    let sent: Vec<_> = w.commands(&c).await.iter().map(epoch_of).collect();
    assert_eq!(sent, vec![("Dispatch".into(), job as u64, 1), ("Cancel".into(), job as u64, 1)]);
    assert_eq!(w.commands(&c).await[1].id, format!("cancel:{job}:1"));
    restarted.round(now).await.unwrap();
    assert_eq!(w.commands(&c).await.len(), 2);
}

async fn gql(pool: &PgPool, user: &db::User, query: &str, vars: Value) -> Value {
    execute_as(&TestApi::new(pool).schema(), user, query, vars).await
}

async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(&format!("SELECT count(*) FROM {table}")).fetch_one(pool).await.unwrap().0
}

async fn member(pool: &PgPool, f: &Fixture, name: &str, role: Option<Role>) -> db::User {
    let id = match role {
        Some(role) => seed::member(pool, f.project_id, name, role).await,
        None => seed::dev_user(pool, name).await,
    };
    db::get_user(pool, id).await.unwrap()
}

const DRY_RUN: &str = "mutation($input: JobInput!) { dryRunJob(input: $input) {
    admitted borrowed cluster quotaExceeded { resource limit }
    whyPending { summary reasons { cluster stage reason } } } }";

fn job_input(gpus: i32, replicas: i32) -> Value {
    json!({ "name": "try", "project": "alloc", "gang": { "minMembers": replicas }, "tasks": [{
        "name": "main", "replicas": replicas, "image": "busybox",
        "resources": { "gpus": gpus, "gpuModels": ["A100"], "cpuMilli": 1000, "memoryMib": 1024 } }] })
}

#[tokio::test]
async fn dry_run_job_answers_where_and_why_and_stores_nothing() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    w.cluster("small", &[4, 4], "healthy", now).await;
    let big = w.cluster("big", &[8, 8], "healthy", now).await;
    let pool = w.pool().clone();
    let alice = member(&pool, &w.f, "alice", Some(Role::Member)).await;
    let viewer = member(&pool, &w.f, "viewer", Some(Role::Viewer)).await;
    let tables = ["jobs", "job_events", "dispatches", "tasks", "replicas", "job_demands"];
    let mut before = vec![];
    for t in tables {
        before.push(count(&pool, t).await);
    }

    let r = gql(&pool, &alice, DRY_RUN, json!({ "input": job_input(8, 2) })).await;
    let out = &r["data"]["dryRunJob"];
    assert_eq!(out["admitted"], true, "{r}");
    assert_eq!(out["cluster"], big.as_str());
    assert!(out["whyPending"].is_null());

    let r = gql(&pool, &alice, DRY_RUN, json!({ "input": job_input(8, 3) })).await;
    let out = &r["data"]["dryRunJob"];
    assert!(out["cluster"].is_null());
    let reasons = out["whyPending"]["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 2);
    assert!(reasons.iter().all(|x| x["stage"] == "capacity"), "{reasons:?}");

    // Same validation as submitJob, same authorization.
    let r = gql(&pool, &alice, DRY_RUN, json!({ "input": job_input(0, 0) })).await;
    assert_eq!(code(&r), "VALIDATION");
    let r = gql(&pool, &viewer, DRY_RUN, json!({ "input": job_input(8, 2) })).await;
    assert_eq!(code(&r), "FORBIDDEN");

    // The quota verdict without admitting.
    db::set_quota(&pool, w.f.queue_id, &Quota { resource: "gpu".into(), guaranteed: 0, limit: Some(4000) })
        .await
        .unwrap();
    let r = gql(&pool, &alice, DRY_RUN, json!({ "input": job_input(8, 2) })).await;
    let out = &r["data"]["dryRunJob"];
    assert_eq!(out["admitted"], false);
    assert_eq!(out["quotaExceeded"], json!({ "resource": "gpu", "limit": 4000 }));

    let mut after = vec![];
    for t in tables {
        after.push(count(&pool, t).await);
    }
    assert_eq!(before, after, "dryRunJob wrote rows");
}

const SET_PRIORITY: &str = "mutation($id: ID!, $p: String!) { setJobPriority(id: $id, priority: $p) {
    priority priorityClass } }";

#[tokio::test]
async fn set_job_priority_is_authorized_validated_recorded_and_used_next_round() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let pool = w.pool().clone();
    let owner = member(&pool, &w.f, "owner", Some(Role::Member)).await;
    let peer = member(&pool, &w.f, "peer", Some(Role::Member)).await;
    let viewer = member(&pool, &w.f, "viewer", Some(Role::Viewer)).await;
    let admin = member(&pool, &w.f, "admin", Some(Role::ProjectAdmin)).await;
    let outsider = member(&pool, &w.f, "outsider", None).await;
    let early = w.submit("early", 1, 8, None, owner.id).await;
    let late = w.submit("late", 1, 8, None, owner.id).await;
    let vars = |p: &str| json!({ "id": late.to_string(), "p": p });

    assert_eq!(code(&gql(&pool, &outsider, SET_PRIORITY, vars("high")).await), "NOT_FOUND");
    assert_eq!(code(&gql(&pool, &viewer, SET_PRIORITY, vars("high")).await), "FORBIDDEN");
    assert_eq!(code(&gql(&pool, &peer, SET_PRIORITY, vars("high")).await), "FORBIDDEN");
    assert_eq!(code(&gql(&pool, &owner, SET_PRIORITY, vars("urgent")).await), "VALIDATION");
    let r = gql(&pool, &owner, SET_PRIORITY, vars("high")).await;
    assert_eq!(r["data"]["setJobPriority"], json!({ "priority": 1000, "priorityClass": "high" }), "{r}");
    // Tenant rights: `critical` only once a platform admin allows it to the tenant.
    let refused = gql(&pool, &admin, SET_PRIORITY, vars("critical")).await;
    assert_eq!(code(&refused), "VALIDATION", "{refused}");
    assert!(refused["errors"][0]["message"].as_str().unwrap().contains("up to high"), "{refused}");
    let mut rights = db::tenant_rights::tenant_rights(&pool, w.f.tenant_id).await.unwrap();
    rights.max_priority_class = grus_api::domain::PriorityClass::Critical;
    let mut tx = pool.begin().await.unwrap();
    db::tenant_rights::set_tenant_rights(&mut tx, w.f.tenant_id, &rights).await.unwrap();
    tx.commit().await.unwrap();
    let r = gql(&pool, &admin, SET_PRIORITY, vars("critical")).await;
    assert_eq!(r["data"]["setJobPriority"]["priority"], 10000, "{r}");
    let events = db::job_events(&pool, late).await.unwrap();
    let changes: Vec<&str> =
        events.iter().filter(|e| e.cause.starts_with("priority")).map(|e| e.cause.as_str()).collect();
    assert_eq!(
        changes,
        ["priority changed from normal to high (1000)", "priority changed from high to critical (10000)"]
    );

    // The next round serves the later job first; the Dispatch carries the new priority.
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let mut d = w.dispatcher().await;
    assert_eq!(dispatched(&d.round(now).await.unwrap()), vec![(late, c.as_str(), 1)]);
    let Command::Dispatch { job, .. } = &w.commands(&c).await[0].message else { panic!() };
    assert_eq!(job.priority, 10000);
    assert_eq!(w.job(early).await.state, JobState::Admitted);

    // Finished jobs keep their priority.
    let mut tx = pool.begin().await.unwrap();
    db::transition_job(&mut tx, early, JobState::Cancelled, Cause { cause: "x", actor: "user:1" }).await.unwrap();
    tx.commit().await.unwrap();
    let r = gql(&pool, &owner, SET_PRIORITY, json!({ "id": early.to_string(), "p": "high" })).await;
    assert_eq!(code(&r), "CONFLICT");

    // Job.whyPending and Job.dispatches through the API.
    let q = "query($id: ID!) { job(id: $id) { whyPending { summary } dispatches { epoch clusterId outcome } } }";
    let r = gql(&pool, &owner, q, json!({ "id": late.to_string() })).await;
    assert_eq!(r["data"]["job"]["dispatches"], json!([{ "epoch": 1, "clusterId": c, "outcome": "pending" }]), "{r}");
}

/// A round whose inputs did not change since a plan that decided nothing does not plan again;
/// a job change, a cluster change or ten seconds bring the plan back.
#[tokio::test]
async fn an_unchanged_world_is_not_planned_again() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let small = w.cluster("small", &[2], "healthy", now).await;
    let job = w.submit("big", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    let r = d.round(now).await.unwrap();
    assert!(r.planned);
    assert_eq!(r.waiting, 1);
    assert!(w.why(job).await.is_some());

    let r = d.round(now + Duration::seconds(1)).await.unwrap();
    assert!(!r.planned, "nothing changed: not planned");
    assert_eq!(r.waiting, 1, "the skipped round reports the last plan's waiting jobs");

    // A job change (an event): planned, and the new job gets its whyPending.
    let other = w.submit("other", 1, 8, None, w.f.user_id).await;
    let r = d.round(now + Duration::seconds(2)).await.unwrap();
    assert!(r.planned);
    assert_eq!(r.waiting, 2);
    assert!(w.why(other).await.is_some());

    // A cluster change: planned, and the jobs fit now.
    assert!(!d.round(now + Duration::seconds(3)).await.unwrap().planned);
    w.set_capacity(&small, &[8, 8], now + Duration::seconds(3)).await;
    let r = d.round(now + Duration::seconds(4)).await.unwrap();
    assert_eq!(r.dispatched.len(), 2, "{r:?}");

    // Time alone changes nothing here (no reclaim victim could become eligible): not planned
    // again however long it waits.
    w.submit("third", 1, 8, None, w.f.user_id).await;
    let t = now + Duration::seconds(5);
    assert!(d.round(t).await.unwrap().planned);
    assert!(!d.round(t + Duration::seconds(1)).await.unwrap().planned);
    assert!(!d.round(t + Duration::seconds(11)).await.unwrap().planned);
}

/// Jobs decoded by an earlier round are reused while their rows are unchanged, and a changed
/// row (here a priority change) is read again: the plan sees the new priority.
#[tokio::test]
async fn a_changed_waiting_job_is_read_again() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let c = w.cluster("one", &[8], "healthy", now).await;
    let low = w.submit("low", 1, 8, None, w.f.user_id).await;
    let high = w.submit("high", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    // Both wait (the cluster is cordoned) and are decoded once.
    sqlx::query("UPDATE clusters SET cordoned = true WHERE id = $1").bind(&c).execute(w.pool()).await.unwrap();
    assert_eq!(d.round(now).await.unwrap().waiting, 2);
    // `high` becomes urgent (an event and a new updated_at), then the cluster opens: the plan
    // must place `high`, which only the re-read row says.
    let mut tx = w.pool().begin().await.unwrap();
    db::dispatch::set_priority(&mut tx, high, 1000, "urgent", Cause { cause: "test", actor: "system:test" })
        .await
        .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("UPDATE clusters SET cordoned = false WHERE id = $1").bind(&c).execute(w.pool()).await.unwrap();
    let r = d.round(now + Duration::seconds(1)).await.unwrap();
    assert_eq!(r.dispatched.iter().map(|d| d.0).collect::<Vec<_>>(), vec![high], "{r:?}");
    assert_eq!(w.job(low).await.state, JobState::Admitted);
}

/// Polls `cluster`'s command stream until the loop has sent something; the bound only turns a
/// loop that never sends into a failure instead of a hang.
async fn wait_for_a_command(w: &World, cluster: &str, why: &str) {
    let mut polls = 0;
    while w.commands(cluster).await.is_empty() {
        polls += 1;
        assert!(polls < 6000, "{why}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Waits until the loop `metrics` belong to leads (its first round has run).
async fn wait_until_leading(metrics: &AllocatorMetrics) {
    let mut polls = 0;
    while metrics.leader.get() == 0 {
        polls += 1;
        assert!(polls < 6000, "the loop never took the lead");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The periodic round is an hour away: only the admission's poke can start the round that
/// dispatches the job.
#[tokio::test]
async fn an_admitted_job_is_planned_at_once_not_at_the_next_periodic_round() {
    let cfg = DispatcherConfig { interval: std::time::Duration::from_secs(3600), ..DispatcherConfig::default() };
    let mut w = World::new(cfg).await;
    let c = w.cluster("c", &[8], "healthy", Utc::now() + Duration::minutes(5)).await;
    let wake = grus_api::notify::AllocatorWake::default();
    let (_feed, changes) = tokio::sync::broadcast::channel(16);
    let (stop, rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(w.dispatcher().await.wake_on(wake.clone(), changes).run(rx));
    wait_until_leading(&w.metrics).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    wake.poke();
    wait_for_a_command(&w, &c, "the poke did not start a round").await;
    stop.send(true).unwrap();
    task.await.unwrap();
    assert_eq!(w.job(job).await.state, JobState::Dispatched);
}

/// A cluster that reports free capacity (through any replica's ingestion: a row change the
/// change feed carries) starts a round at once for the job that waited for it.
#[tokio::test]
async fn freed_capacity_on_any_replica_starts_a_round_for_the_waiting_job() {
    let cfg = DispatcherConfig { interval: std::time::Duration::from_secs(3600), ..DispatcherConfig::default() };
    let mut w = World::new(cfg).await;
    let c = w.cluster("c", &[0], "healthy", Utc::now() + Duration::minutes(5)).await;
    let job = w.submit("one", 1, 8, None, w.f.user_id).await;
    let notifier = grus_api::notify::Notifier::new(w.pool().clone());
    let changes = notifier.subscribe();
    notifier.listening().await;
    let (stop, rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(w.dispatcher().await.wake_on(Default::default(), changes).run(rx));
    // The first round found no room for it.
    let mut polls = 0;
    while w.metrics.waiting.get() == 0 {
        polls += 1;
        assert!(polls < 6000, "the first round never ran");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(w.commands(&c).await.is_empty());
    w.set_capacity(&c, &[8], Utc::now() + Duration::minutes(5)).await;
    wait_for_a_command(&w, &c, "the capacity change did not start a round").await;
    stop.send(true).unwrap();
    task.await.unwrap();
    assert_eq!(w.job(job).await.state, JobState::Dispatched);
}

/// What a loop with no memory of earlier rounds would dispatch now: every input read whole
/// from the database and planned afresh.
async fn planned_afresh(w: &World, now: DateTime<Utc>) -> Vec<(i64, String, i64)> {
    use grus_api::allocator::{plan_round_afresh, Action, AllocatorConfig};
    use grus_api::dispatcher::views;
    let pool = w.pool();
    let open = db::dispatch::open_dispatches(pool).await.unwrap();
    let mut cviews: Vec<_> = db::list_clusters(pool)
        .await
        .unwrap()
        .iter()
        .map(|c| views::cluster_view(c, &open, now, w.cfg.heartbeat_stale, w.cfg.reservation_ttl))
        .collect();
    let holds = db::dispatch::active_holds(&mut pool.acquire().await.unwrap()).await.unwrap();
    views::attach_holds(&mut cviews, &holds);
    let ids: Vec<i64> = db::dispatch::waiting_heads(pool).await.unwrap().iter().map(|h| h.id).collect();
    let attempts = db::dispatch::failed_attempts(pool, &ids).await.unwrap();
    let pending: Vec<_> = db::dispatch::waiting_jobs(pool, &ids)
        .await
        .unwrap()
        .iter()
        .filter_map(|j| {
            let mine: Vec<_> = attempts.iter().filter(|a| a.job_id == j.id).cloned().collect();
            views::pending_job(j, &mine)
        })
        .collect();
    let cfg = AllocatorConfig { reservation_ttl: w.cfg.reservation_ttl };
    let mut out: Vec<(i64, String, i64)> = plan_round_afresh(&pending, &cviews, now, &cfg)
        .into_iter()
        .filter_map(|a| match a {
            Action::Dispatch { job, cluster, epoch, .. } => Some((job as i64, cluster, epoch as i64)),
            Action::Wait { .. } => None,
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn a_loop_that_remembers_earlier_rounds_dispatches_what_a_fresh_plan_would_over_random_changes() {
    use grus_scheduler::rng::SeededRng;
    for seed in [3u64, 11, 29] {
        let mut w = World::new(DispatcherConfig::default()).await;
        let now = Utc::now();
        let clusters = [w.cluster("a", &[8, 4], "healthy", now).await, w.cluster("b", &[2], "healthy", now).await];
        let mut d = w.dispatcher().await;
        let mut rng = SeededRng::new(seed);
        let mut jobs: Vec<i64> = Vec::new();
        for step in 0..30 {
            match rng.below(6) {
                0 | 1 => {
                    let (members, gpus) = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 4)][rng.below(5)];
                    jobs.push(w.submit(&format!("j{step}"), members, gpus, None, w.f.user_id).await);
                }
                2 => {
                    let free: Vec<u32> = (0..1 + rng.below(2)).map(|_| rng.below(9) as u32).collect();
                    w.set_capacity(&clusters[rng.below(2)], &free, Utc::now()).await;
                }
                3 | 4 if !jobs.is_empty() => {
                    // The agent answers a dispatched job (runs it or gives it back), or a
                    // waiting job is cancelled.
                    let job = w.job(jobs[rng.below(jobs.len())]).await;
                    match (job.state, job.cluster_id) {
                        (JobState::Dispatched, Some(c)) => {
                            w.agent_answers(job.id, job.epoch, &c, rng.below(2) == 0).await
                        }
                        (JobState::Admitted | JobState::Rejected, _) => {
                            let by = Cause { cause: "cancelled", actor: "user:test" };
                            seed::transition(w.pool(), job.id, JobState::Cancelled, by).await
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
            let now = Utc::now();
            let expected = planned_afresh(&w, now).await;
            let report = d.round(now).await.unwrap();
            let mut got: Vec<(i64, String, i64)> = report.dispatched.clone();
            got.sort();
            assert_eq!(got, expected, "seed {seed}, step {step}");
        }
    }
}

#[tokio::test]
async fn a_job_waiting_past_its_queues_max_wait_is_raised_one_class_per_period_and_served_first() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let start = Utc::now();
    let queue = db::get_queue(w.pool(), w.f.queue_id).await.unwrap();
    let service = ClassOfService { max_wait_s: Some(600), ..ClassOfService::default() };
    let settings = db::QueueSettings { service, ..db::QueueSettings::named(&queue.name) };
    db::update_queue(w.pool(), queue.id, &settings).await.unwrap();
    let first = w.submit("first", 1, 8, None, w.f.user_id).await;
    let later = w.submit("later", 1, 8, None, w.f.user_id).await;
    // `later` has waited since before `first` was submitted (a requeue would set this).
    sqlx::query("UPDATE jobs SET waiting_since = $2 WHERE id = $1")
        .bind(later)
        .bind(start - Duration::seconds(300))
        .execute(w.pool())
        .await
        .unwrap();
    let mut d = w.dispatcher().await;

    // Before a whole period: nothing is raised (no cluster yet, so nothing is dispatched).
    let r = d.round(start + Duration::seconds(290)).await.unwrap();
    assert!(r.aged.is_empty(), "{r:?}");

    // One period for `later` only: raised to high, with its event, and served first although
    // `first` is older by submission.
    let at = start + Duration::seconds(300);
    let cluster = w.cluster("one", &[8], "healthy", at).await;
    let r = d.round(at).await.unwrap();
    assert_eq!(r.aged, vec![(later, PriorityClass::High)]);
    assert_eq!(dispatched(&r), vec![(later, cluster.as_str(), 1)]);
    let row = w.job(later).await;
    assert_eq!((row.priority, row.priority_class.as_str()), (1000, "high"));
    let events = db::job_events(w.pool(), later).await.unwrap();
    let raised = events.iter().find(|e| e.cause.starts_with("priority raised")).expect("the raise's event");
    assert_eq!(
        raised.cause,
        "priority raised from normal to high: waited 10m (queue default raises waiting work every 10m)"
    );
    assert_eq!((raised.from_state.as_deref(), raised.to_state.as_str()), (Some("admitted"), "admitted"));
    assert_eq!(raised.actor, "system:allocator");
    let Command::Dispatch { job: spec, .. } = &w.commands(&cluster).await[0].message else { panic!("not a dispatch") };
    assert_eq!(spec.priority, 1000, "the Dispatch carries the raised priority");

    // `first` reaches its period later; its tenant allows up to `normal`, so it stays there.
    sqlx::query("UPDATE tenants SET max_priority_class = 'normal'").execute(w.pool()).await.unwrap();
    let r = d.round(start + Duration::seconds(700)).await.unwrap();
    assert!(r.aged.is_empty(), "the tenant's highest class caps aging: {r:?}");
    sqlx::query("UPDATE tenants SET max_priority_class = 'critical'").execute(w.pool()).await.unwrap();
    let r = d.round(start + Duration::seconds(705)).await.unwrap();
    assert_eq!(r.aged, vec![(first, PriorityClass::High)]);
    // High is the ceiling even when the tenant may use critical.
    let r = d.round(start + Duration::seconds(3000)).await.unwrap();
    assert!(r.aged.is_empty(), "{r:?}");
    assert_eq!(w.job(first).await.priority_class, "high");
}

#[tokio::test]
async fn a_spent_budget_that_suspends_borrowed_work_suspends_it_and_resumes_it_once_raised() {
    use grus_api::billing::budget::Budget;
    use grus_api::db::budgets::{month_of, set_budget, BudgetScope};
    use grus_api::domain::BudgetUnit;
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let cluster = w.cluster("one", &[8, 8], "healthy", now).await;
    let borrowed = w.submit("borrowed", 1, 8, None, w.f.user_id).await;
    let kept = w.submit("kept", 1, 8, None, w.f.user_id).await;
    sqlx::query("UPDATE jobs SET borrowed = (id = $1)").bind(borrowed).execute(w.pool()).await.unwrap();
    let mut d = w.dispatcher().await;
    d.round(now - Duration::seconds(3600)).await.unwrap();
    for job in [borrowed, kept] {
        w.agent_answers(job, 1, &cluster, true).await;
    }
    // The month has cost something: `kept` ran 8 GPUs for up to an hour of it.
    let (task, replica) =
        (db::tasks(w.pool(), kept).await.unwrap()[0].id, db::replicas(w.pool(), kept).await.unwrap()[0].id);
    let start = (now - Duration::hours(1)).max(month_of(now).start);
    sqlx::query(
        "INSERT INTO usage_ledger (project_id, queue_id, cluster_id, gpu_model, gpu_milli, started_at, ended_at,
                                   job_id, task_id, replica_id, user_id)
         VALUES ($1, $2, $3, 'A100-80GB', 8000, $4, $5, $6, $7, $8, $9)",
    )
    .bind(w.f.project_id)
    .bind(w.f.queue_id)
    .bind(&cluster)
    .bind(start)
    .bind(now - Duration::seconds(1))
    .bind(kept)
    .bind(task)
    .bind(replica)
    .bind(w.f.user_id)
    .execute(w.pool())
    .await
    .unwrap();
    let budget = |micros: i64, suspend_borrowed: bool| Budget {
        unit: BudgetUnit::GpuHours,
        amount_micros: micros,
        soft_percent: 80,
        hard: true,
        suspend_borrowed,
    };
    let scope = BudgetScope::Project(w.f.project_id);
    // A spent hard budget that does not ask for it suspends nothing.
    set_budget(w.pool(), scope, &budget(1, false)).await.unwrap();
    let r = d.round(now).await.unwrap();
    assert!(r.window_suspended.is_empty(), "{r:?}");

    set_budget(w.pool(), scope, &budget(1, true)).await.unwrap();
    let r = d.round(now + Duration::seconds(10)).await.unwrap();
    assert_eq!(r.window_suspended, vec![borrowed], "{r:?}");
    assert_eq!(w.job(borrowed).await.state, JobState::Preempting, "running: after its grace");
    assert_eq!(w.job(kept).await.state, JobState::Running, "work within its guarantee runs on");
    let cause = db::job_events(w.pool(), borrowed).await.unwrap().last().unwrap().cause.clone();
    assert!(cause.contains("the monthly budget of project") && cause.contains("is spent"), "{cause}");
    let agent = Cause { cause: "evicted", actor: "agent:one" };
    seed::transition(w.pool(), borrowed, JobState::Preempted, agent).await;
    seed::transition(w.pool(), borrowed, JobState::Suspended, agent).await;

    // Still spent: it stays suspended. Still spent but no longer suspending borrowed work:
    // the queue is not paused any more, yet the spent budget refuses the resume as it would a
    // submission. A larger budget: resumed.
    let r = d.round(now + Duration::seconds(20)).await.unwrap();
    assert!(r.window_resumed.is_empty(), "{r:?}");
    set_budget(w.pool(), scope, &budget(1, false)).await.unwrap();
    let r = d.round(now + Duration::seconds(25)).await.unwrap();
    assert!(r.window_resumed.is_empty(), "{r:?}");
    assert_eq!(w.job(borrowed).await.state, JobState::Suspended);
    set_budget(w.pool(), scope, &budget(1_000_000_000_000, true)).await.unwrap();
    let r = d.round(now + Duration::seconds(30)).await.unwrap();
    assert_eq!(r.window_resumed, vec![borrowed], "{r:?}");
}

#[tokio::test]
async fn a_queues_window_suspends_its_borrowed_work_while_open_and_resumes_it_after() {
    use chrono::Timelike;
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let minute = (now.hour() * 60 + now.minute()) as u16;
    let open = SuspendWindow { from_min: minute, until_min: (minute + 60) % DAY_MIN };
    let batch = db::create_queue(
        w.pool(),
        w.f.project_id,
        &db::QueueSettings {
            service: ClassOfService { borrowed_suspend: Some(open), ..ClassOfService::default() },
            ..db::QueueSettings::named("batch")
        },
    )
    .await
    .unwrap();
    let cluster = w.cluster("one", &[8, 8], "healthy", now).await;
    // Nothing guaranteed: both are borrowed work. One runs, one waits; a guaranteed job of the
    // fixture's queue is not touched.
    let running = w.submit("running", 1, 8, Some(batch.id), w.f.user_id).await;
    let kept = w.submit("kept", 1, 8, None, w.f.user_id).await;
    sqlx::query("UPDATE jobs SET borrowed = (id <> $1)").bind(kept).execute(w.pool()).await.unwrap();
    let mut d = w.dispatcher().await;
    let before = d.round(now - Duration::seconds(3600)).await.unwrap();
    assert!(before.window_suspended.is_empty(), "outside the window: {before:?}");
    for (job, epoch) in [(running, 1), (kept, 1)] {
        w.agent_answers(job, epoch, &cluster, true).await;
    }
    let waiting = w.submit("waiting", 1, 8, Some(batch.id), w.f.user_id).await;
    sqlx::query("UPDATE jobs SET borrowed = true WHERE id = $1").bind(waiting).execute(w.pool()).await.unwrap();

    let r = d.round(now).await.unwrap();
    assert_eq!(r.window_suspended, vec![running, waiting], "{r:?}");
    assert_eq!(w.job(waiting).await.state, JobState::Suspended, "a waiting one at once");
    assert_eq!(w.job(running).await.state, JobState::Preempting, "a running one after its grace");
    assert_eq!(w.job(kept).await.state, JobState::Running);
    let events = db::job_events(w.pool(), waiting).await.unwrap();
    let window = open.to_string();
    assert_eq!(
        events.last().unwrap().cause,
        format!("suspended by queue batch: its borrowed work pauses {window} UTC")
    );
    // Its cluster stops it; the eviction ends suspended (as ingestion records it).
    let agent = Cause { cause: "evicted", actor: "agent:one" };
    seed::transition(w.pool(), running, JobState::Preempted, agent).await;
    seed::transition(w.pool(), running, JobState::Suspended, agent).await;

    // Still open: nothing is resumed. Closed (the window moved): both are resumed.
    let r = d.round(now + Duration::seconds(10)).await.unwrap();
    assert!(r.window_resumed.is_empty(), "{r:?}");
    let closed = SuspendWindow { from_min: (minute + 120) % DAY_MIN, until_min: (minute + 180) % DAY_MIN };
    let settings = db::QueueSettings {
        service: ClassOfService { borrowed_suspend: Some(closed), ..ClassOfService::default() },
        ..db::QueueSettings::named("batch")
    };
    db::update_queue(w.pool(), batch.id, &settings).await.unwrap();
    let r = d.round(now + Duration::seconds(20)).await.unwrap();
    assert_eq!(r.window_resumed, vec![running, waiting], "{r:?}");
    for job in [running, waiting] {
        assert!(matches!(w.job(job).await.state, JobState::Admitted | JobState::Dispatched), "{job}");
    }
    // A job a person suspended is not resumed by the window.
    let mut tx = w.pool().begin().await.unwrap();
    db::suspend::suspend_job(&mut tx, kept, 0, Cause { cause: "by hand", actor: "user:1" }).await.unwrap();
    tx.commit().await.unwrap();
    let r = d.round(now + Duration::seconds(30)).await.unwrap();
    assert!(!r.window_resumed.contains(&kept), "{r:?}");
}

/// Once a suspension of a dispatched job was refused (CONFLICT) until the cluster answered.
/// Now it is kept: the placed job is evicted with the grace it was asked with, and the refused
/// one is suspended before any round could send it elsewhere.
#[tokio::test]
async fn a_suspension_asked_while_dispatched_is_carried_out_once_the_cluster_answers() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let cluster = w.cluster("one", &[8, 8], "healthy", now).await;
    let placed = w.submit("placed", 1, 8, None, w.f.user_id).await;
    let refused = w.submit("refused", 1, 8, None, w.f.user_id).await;
    let mut d = w.dispatcher().await;
    d.round(now).await.unwrap();
    for (job, grace) in [(placed, 7), (refused, 0)] {
        assert_eq!(w.job(job).await.state, JobState::Dispatched);
        let mut tx = w.pool().begin().await.unwrap();
        let by = Cause { cause: "suspended by dev:alice", actor: "dev:alice" };
        let s = db::suspend::suspend_job(&mut tx, job, grace, by).await.unwrap();
        assert_eq!(s, db::suspend::Suspension::Deferred { cluster: cluster.clone() });
        tx.commit().await.unwrap();
    }
    // Not answered yet: nothing changes.
    let r = d.round(now + Duration::seconds(1)).await.unwrap();
    assert!(r.deferred_suspended.is_empty(), "{r:?}");
    w.agent_answers(placed, 1, &cluster, true).await;
    w.agent_answers(refused, 1, &cluster, false).await;
    let r = d.round(now + Duration::seconds(2)).await.unwrap();
    assert_eq!(r.deferred_suspended, vec![placed, refused], "{r:?}");
    assert!(r.dispatched.is_empty(), "the refused job is not sent elsewhere: {r:?}");
    assert_eq!(w.job(placed).await.state, JobState::Preempting);
    assert_eq!(w.job(refused).await.state, JobState::Suspended);
    let (grace,): (Option<i32>,) =
        sqlx::query_as("SELECT evict_grace_s FROM dispatches WHERE job_id = $1 AND epoch = 1")
            .bind(placed)
            .fetch_one(w.pool())
            .await
            .unwrap();
    assert_eq!(grace, Some(7), "the grace it was asked with");
    // Done once: the next round leaves them be.
    let r = d.round(now + Duration::seconds(3)).await.unwrap();
    assert!(r.deferred_suspended.is_empty(), "{r:?}");
}

#[tokio::test]
async fn preemptible_work_dispatched_before_a_cluster_drain_is_evicted_once_placed() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let cluster = w.cluster("one", &[8, 8], "healthy", now).await;
    let preemptible = w.submit("preemptible", 1, 8, None, w.f.user_id).await;
    let pinned = w.submit("pinned", 1, 8, None, w.f.user_id).await;
    sqlx::query("UPDATE jobs SET preemptible = true WHERE id = $1").bind(preemptible).execute(w.pool()).await.unwrap();
    let mut d = w.dispatcher().await;
    d.round(now).await.unwrap();
    // Drained while both are on their way: the drain finds nothing placed to evict.
    let mut tx = w.pool().begin().await.unwrap();
    db::operations::set_cluster_cordon(&mut tx, &cluster, true, Some(9)).await.unwrap();
    let by = Cause { cause: "drained", actor: "dev:root" };
    assert!(db::operations::evict_preemptible(&mut tx, &cluster, None, 9, by).await.unwrap().is_empty());
    tx.commit().await.unwrap();
    for job in [preemptible, pinned] {
        assert_eq!(w.job(job).await.state, JobState::Dispatched);
        w.agent_answers(job, 1, &cluster, true).await;
    }
    let r = d.round(now + Duration::seconds(1)).await.unwrap();
    assert_eq!(r.drain_evicted, vec![preemptible], "{r:?}");
    assert_eq!(w.job(preemptible).await.state, JobState::Preempting);
    assert_eq!(w.job(pinned).await.state, JobState::Running, "work that is not preemptible runs to its end");
    let (grace,): (Option<i32>,) =
        sqlx::query_as("SELECT evict_grace_s FROM dispatches WHERE job_id = $1 AND epoch = 1")
            .bind(preemptible)
            .fetch_one(w.pool())
            .await
            .unwrap();
    assert_eq!(grace, Some(9), "the drain's grace");
    assert!(
        w.commands(&cluster).await.iter().any(|c| matches!(c.message, Command::Evict { .. })),
        "the agent is sent the Evict"
    );
    let r = d.round(now + Duration::seconds(2)).await.unwrap();
    assert!(r.drain_evicted.is_empty(), "evicted once: {r:?}");
}

#[tokio::test]
async fn a_dispatch_keeps_the_run_time_predicted_for_its_job() {
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    let cluster = w.cluster("one", &[8, 8], "healthy", now).await;
    // Three like it finished after 20, 30 and 40 minutes.
    for (n, minutes) in [20, 30, 40].into_iter().enumerate() {
        let id = w.submit(&format!("train-{n}"), 1, 8, None, w.f.user_id).await;
        let mut tx = w.pool().begin().await.unwrap();
        sqlx::query(
            "INSERT INTO job_events (job_id, from_state, to_state, cause, actor, at)
             SELECT $1, NULL, 'running', 'test', 'system:test', now() - make_interval(mins => $2 + 60)
             UNION ALL
             SELECT $1, state, 'succeeded', 'test', 'system:test', now() - make_interval(mins => 60) FROM jobs WHERE id = $1",
        )
        .bind(id)
        .bind(minutes)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "UPDATE jobs SET state = 'succeeded', updated_at = now() - make_interval(mins => 60) WHERE id = $1",
        )
        .bind(id)
        .execute(&mut *tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
    }
    let job = w.submit("train-3", 1, 8, None, w.f.user_id).await;
    let r = w.dispatcher().await.round(now).await.unwrap();
    assert_eq!(dispatched(&r), vec![(job, cluster.as_str(), 1)]);
    let (kept,): (Option<i64>,) = sqlx::query_as("SELECT predicted_runtime_s FROM dispatches WHERE job_id = $1")
        .bind(job)
        .fetch_one(w.pool())
        .await
        .unwrap();
    let sent = w.commands(&cluster).await.into_iter().find_map(|c| match c.message {
        Command::Dispatch { job, .. } => job.predicted_runtime_s,
        _ => None,
    });
    assert!(kept.is_some_and(|s| (600..=7200).contains(&s)), "about their 20 to 40 minutes: {kept:?}");
    assert_eq!(kept.map(|s| s as u64), sent, "what the agent was sent");
}

#[tokio::test]
async fn a_round_serves_tenants_by_fair_share_not_by_age() {
    // Tenant "alloc" waits with four 2-GPU jobs, all older than tenant "other"'s two; the
    // cluster has 8 GPUs. By age, "alloc" would take all 8; by fair share the tenants take
    // turns, and each gets half.
    let mut w = World::new(DispatcherConfig::default()).await;
    let now = Utc::now();
    w.cluster("c", &[8], "healthy", now).await;
    let other = fixture(w.pool(), "other").await;
    let mut alloc_jobs = Vec::new();
    for i in 0..4 {
        alloc_jobs.push(w.submit_to(&w.f, "alloc", &format!("a{i}"), 2).await);
    }
    let other_jobs = [w.submit_to(&other, "other", "b0", 2).await, w.submit_to(&other, "other", "b1", 2).await];
    let mut d = w.dispatcher().await;
    let r = d.round(now).await.unwrap();
    let sent: Vec<i64> = dispatched(&r).iter().map(|(j, _, _)| *j).collect();
    assert_eq!(sent.len(), 4, "{r:?}");
    assert!(other_jobs.iter().all(|j| sent.contains(j)), "tenant other gets its turns: {sent:?}");
    assert_eq!(sent.iter().filter(|j| alloc_jobs.contains(j)).count(), 2, "{sent:?}");

    // With weight 3 against 1 for "alloc", a second cluster's 8 GPUs go 3 : 1 ... as far as
    // demand goes: "other" asks for 4 more GPUs and gets them before "alloc"'s two jobs left.
    let root = db::get_user(w.pool(), seed::platform_admin(w.pool(), "root").await).await.unwrap();
    let set = "mutation($t: ID!) { setTenantShare(tenantId: $t, weight: 3) { share { weight } } }";
    let v = execute_as(&TestApi::new(w.pool()).schema(), &root, set, json!({ "t": other.tenant_id.to_string() })).await;
    assert_eq!(v["data"]["setTenantShare"]["share"]["weight"], 3.0, "{v}");
    let more = [w.submit_to(&other, "other", "b2", 2).await, w.submit_to(&other, "other", "b3", 2).await];
    w.cluster("c2", &[4], "healthy", now).await;
    let r = d.round(now + Duration::seconds(1)).await.unwrap();
    let sent: Vec<i64> = dispatched(&r).iter().map(|(j, _, _)| *j).collect();
    assert_eq!(sent.len(), 2, "{r:?}");
    assert!(more.iter().all(|j| sent.contains(j)), "the heavier tenant first: {sent:?}");
}

#[tokio::test]
async fn reclaim_to_fair_share_evicts_borrowed_work_of_a_queue_above_its_share_and_no_more() {
    // Queue lender runs two borrowed 4-GPU jobs on the only cluster (8 GPUs); queue owner, no
    // guarantee either, waits with a borrowed 4-GPU job. Their fair shares are 4 and 4: one of
    // lender's jobs is evicted, on the fair-share ground, and not the second.
    let mut w = World::new(DispatcherConfig::default()).await;
    let pool = w.pool().clone();
    let settings = db::QueueSettings::named;
    let lender = db::create_queue(&pool, w.f.project_id, &settings("lender")).await.unwrap();
    let owner = db::create_queue(&pool, w.f.project_id, &settings("owner")).await.unwrap();
    for q in [lender.id, owner.id] {
        db::set_quota(&pool, q, &Quota { resource: "gpu".into(), guaranteed: 0, limit: None }).await.unwrap();
    }
    let now = Utc::now();
    let c = w.cluster("c", &[8], "healthy", now).await;
    let mut d = w.dispatcher().await;
    let mut lent = Vec::new();
    for name in ["l1", "l2"] {
        let mut spec = spec(name, 1, 4);
        spec.queue = "lender".into();
        let mut new = seed::gpu_job(&w.f, name, 1, 4, &["A100"]);
        new.queue_id = lender.id;
        new.preemptible = true;
        new.spec = serde_json::to_value(&spec).unwrap();
        let by = Cause { cause: "submitted", actor: "user:test" };
        let Admission::Admitted { job, .. } = admission::admit(&pool, &new, by).await.unwrap() else { panic!() };
        lent.push(job.id);
    }
    let r = d.round(now).await.unwrap();
    assert_eq!(r.dispatched.len(), 2, "{r:?}");
    for job in &lent {
        w.agent_answers(*job, 1, &c, true).await;
    }
    let later = Utc::now() + Duration::seconds(1);
    w.set_capacity(&c, &[0], later).await;

    let mut spec = spec("o1", 1, 4);
    spec.queue = "owner".into();
    let mut new = seed::gpu_job(&w.f, "o1", 1, 4, &["A100"]);
    new.queue_id = owner.id;
    new.preemptible = true;
    new.spec = serde_json::to_value(&spec).unwrap();
    let by = Cause { cause: "submitted", actor: "user:test" };
    let Admission::Admitted { job: waiting, .. } = admission::admit(&pool, &new, by).await.unwrap() else { panic!() };
    assert!(waiting.borrowed, "no guarantee: it borrows");
    let r = d.round(later).await.unwrap();
    assert_eq!(r.evicted.len(), 1, "one of lender's jobs: {r:?}");
    let victim = r.evicted[0].0;
    assert!(lent.contains(&victim));
    let events = db::job_events(&pool, victim).await.unwrap();
    let cause = &events.last().unwrap().cause;
    assert!(cause.contains(&format!("job {}", waiting.id)) && cause.contains("fair share"), "{cause}");
    let r = d.round(later + Duration::seconds(1)).await.unwrap();
    assert!(r.evicted.is_empty(), "lender stays at its fair share: {r:?}");
}
