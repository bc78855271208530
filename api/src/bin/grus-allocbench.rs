//! `grus-allocbench`: times allocator rounds at scale against the real PostgreSQL and Redis.
//!
//! Creates a scratch database (dropped at the end unless `--keep`), `--clusters` clusters
//! with `--nodes` nodes of 8 A100s each and `--jobs` admitted jobs of a seeded mix (1, 2, 4
//! and 8 GPUs, and 2 x 8 gangs), then measures: the pure `plan_round` on the same inputs,
//! the first full round (load, plan, one transaction per dispatch, XADD, whyPending for the
//! rest), and a steady-state round (nothing changed: load and plan, no writes). Command
//! streams are deleted afterwards.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use chrono::Utc;
use clap::Parser;
use grus_api::allocator::{plan_round, plan_round_afresh, Action, AllocatorConfig};
use grus_api::commands::CommandPublisher;
use grus_api::db::{self, dispatch as store};
use grus_api::dispatcher::AllocatorMetrics;
use grus_api::dispatcher::{views, Dispatcher, DispatcherConfig};
use grus_protocol::keys;
use grus_protocol::wire::{CapacitySummary, GangSpec, JobSpec, ModelCapacity, ResourcesSpec, TaskSpec};
use sqlx::Connection as _;

#[derive(Debug, Parser)]
#[command(name = "grus-allocbench", about = "Time allocator rounds at scale")]
struct Args {
    /// PostgreSQL server URL (a scratch database is created on it).
    #[arg(long, env = "GRUS_BENCH_DATABASE_URL", default_value = "postgres://postgres@127.0.0.1:5432")]
    database_url: String,
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    #[arg(long, default_value_t = 10_000)]
    jobs: usize,
    #[arg(long, default_value_t = 100)]
    clusters: usize,
    /// Nodes per cluster (8 A100s each).
    #[arg(long, default_value_t = 16)]
    nodes: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Keep the scratch database.
    #[arg(long)]
    keep: bool,
}

/// Where the bench's jobs are admitted.
struct Admitted {
    project: i64,
    queue: i64,
    user: i64,
}

impl Admitted {
    /// Inserts jobs admitted (each with its `admitted` event, as admission would leave them).
    async fn insert(&self, pool: &sqlx::PgPool, specs: &[JobSpec]) -> anyhow::Result<()> {
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let prios: Vec<i32> = specs.iter().map(|s| s.priority).collect();
        let jsons: Vec<String> = specs.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
        sqlx::query(
            "WITH j AS (
               INSERT INTO jobs (project_id, queue_id, name, priority, priority_class, spec, state, submitted_by, submitted_at)
               SELECT $1, $2, n, p, 'normal', s::jsonb, 'admitted', $3, now() + (o * interval '1 ms')
               FROM UNNEST($4::text[], $5::int[], $6::text[]) WITH ORDINALITY AS u(n, p, s, o)
               RETURNING id)
             INSERT INTO job_events (job_id, to_state, cause, actor) SELECT id, 'admitted', 'bench', 'system:bench' FROM j",
        )
        .bind(self.project)
        .bind(self.queue)
        .bind(self.user)
        .bind(&names)
        .bind(&prios)
        .bind(&jsons)
        .execute(pool)
        .await?;
        Ok(())
    }
}

/// xorshift64*: a seeded job mix without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn job_spec(i: usize, rng: &mut Rng) -> JobSpec {
    let (replicas, gpus) = match rng.next() % 10 {
        0..=3 => (1, 1),
        4..=5 => (1, 2),
        6..=7 => (1, 4),
        8 => (1, 8),
        _ => (2, 8),
    };
    JobSpec {
        id: 0,
        name: format!("bench-{i}"),
        project: "bench".into(),
        queue: "default".into(),
        priority: [0, 100, 1000][(rng.next() % 3) as usize],
        preemptible: false,
        may_preempt: true,
        tasks: vec![TaskSpec {
            name: "main".into(),
            replicas,
            image: "busybox".into(),
            command: vec![],
            env: BTreeMap::new(),
            resources: ResourcesSpec {
                gpus,
                gpu_models: vec!["A100".into()],
                cpu_milli: 1000,
                memory_mib: 4096,
                ..Default::default()
            },
            topology: None,
        }],
        gang: (replicas > 1).then_some(GangSpec { min_members: replicas }),
        elastic: None,
        policies: vec![],
        max_runtime_s: None,
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels: BTreeMap::new(),
        node_selector: BTreeMap::new(),
        pools: Vec::new(),
        submitted_by: "bench".into(),
        submitted_at_ms: 0,
        checkpoint: None,
        workspace: None,
        service: None,
    }
}

fn capacity(nodes: usize) -> CapacitySummary {
    let gpus = (nodes * 8) as u32;
    CapacitySummary {
        models: vec![ModelCapacity {
            model: "A100".into(),
            total_gpus: gpus,
            free_whole_per_node: vec![8; nodes],
            free_milli_per_device: vec![],
            movable_per_node: vec![],
            largest_gang_gpus: BTreeMap::from([
                ("node".into(), 8),
                ("nvlink".into(), 8),
                ("rack".into(), gpus),
                ("any".into(), gpus),
            ]),
            mig_free: Default::default(),
        }],
        cpu_free_milli: nodes as u64 * 128_000,
        memory_free_mib: nodes as u64 * 1_048_576,
        pending_jobs: 0,
        pools: vec![],
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    // Its old name still works, with a warning, as in grus-api (one thread so far: the runtime
    // is this one).
    grus_api::config::adopt_renamed_env(&[("GRUS_REDIS_URL", "REDIS_URL")]);
    let args = Args::parse();
    let tag = format!("{:08x}", std::process::id() ^ (Utc::now().timestamp_subsec_nanos()));
    let name = format!("grus_allocbench_{tag}");
    let server = args.database_url.trim_end_matches('/').to_owned();
    let mut admin =
        sqlx::PgConnection::connect(&format!("{server}/postgres")).await.context("connect to PostgreSQL")?;
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.context("create scratch database")?;
    let outcome = run(&args, &format!("{server}/{name}"), &tag).await;
    if !args.keep {
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await?;
    }
    outcome
}

async fn run(args: &Args, url: &str, tag: &str) -> anyhow::Result<()> {
    let pool = db::connect(url).await.context("connect to the scratch database")?;
    db::migrate(&pool).await.context("migrate")?;
    let tenant = db::create_tenant(&pool, "bench", "Bench").await?;
    let project = db::create_project(&pool, tenant.id, "bench", "Bench").await?;
    let user = db::upsert_user(&pool, &db::UserProfile { subject: "bench", email: None, display_name: None }).await?;
    let queue = db::create_queue(&pool, project.id, &db::QueueSettings::named("default")).await?;

    let now = Utc::now();
    let cluster_ids: Vec<String> = (0..args.clusters).map(|i| format!("ab{tag}-{i}")).collect();
    let cap = serde_json::to_value(capacity(args.nodes))?;
    sqlx::query(
        "INSERT INTO clusters (id, health, last_heartbeat, capacity)
         SELECT id, 'healthy', $2, $3 FROM UNNEST($1::text[]) AS id",
    )
    .bind(&cluster_ids)
    .bind(now)
    .bind(&cap)
    .execute(&pool)
    .await?;

    // Jobs admitted in bulk (each with its `admitted` event, as admission would leave them).
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let specs: Vec<JobSpec> = (0..args.jobs).map(|i| job_spec(i, &mut rng)).collect();
    let admitted = Admitted { project: project.id, queue: queue.id, user: user.id };
    admitted.insert(&pool, &specs).await?;
    sqlx::query("ANALYZE").execute(&pool).await?;

    // The pure plan alone, on the inputs a round loads.
    let cfg = DispatcherConfig::default();
    let clusters = db::list_clusters(&pool).await?;
    let ids: Vec<i64> = store::waiting_heads(&pool).await?.iter().map(|h| h.id).collect();
    let waiting = store::waiting_jobs(&pool, &ids).await?;
    let pending: Vec<_> = waiting.iter().filter_map(|j| views::pending_job(j, &[])).collect();
    let cviews: Vec<_> =
        clusters.iter().map(|c| views::cluster_view(c, &[], now, cfg.heartbeat_stale, cfg.reservation_ttl)).collect();
    let acfg = AllocatorConfig { reservation_ttl: cfg.reservation_ttl };
    let t = Instant::now();
    let actions = plan_round(&pending, &cviews, now, &acfg);
    let plan_ms = t.elapsed().as_secs_f64() * 1e3;
    // The same plan with every job fitted on every cluster afresh (no shape memo): the baseline.
    let t = Instant::now();
    let afresh = plan_round_afresh(&pending, &cviews, now, &acfg);
    let afresh_ms = t.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(afresh == actions, "the memoized plan differs from the plan made afresh");
    let planned = actions.iter().filter(|a| matches!(a, Action::Dispatch { .. })).count();

    let client = redis::Client::open(args.redis_url.as_str())?;
    let publisher = CommandPublisher::connect(&client).await.context("connect to Redis")?;
    let mut d = Dispatcher::new(pool.clone(), publisher, cfg, Arc::new(AllocatorMetrics::default()));
    let t = Instant::now();
    let first = d.round(Utc::now()).await?;
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let steady = d.round(Utc::now()).await?;
    let steady_ms = t.elapsed().as_secs_f64() * 1e3;

    // Little changes: none (the plan memo answers), one job admitted, one cluster's capacity
    // freed (its view changes: every waiting shape is fitted on it again).
    let t = Instant::now();
    d.round(Utc::now()).await?;
    let unchanged_ms = t.elapsed().as_secs_f64() * 1e3;
    admitted.insert(&pool, &[job_spec(args.jobs, &mut rng)]).await?;
    let t = Instant::now();
    let one_job = d.round(Utc::now()).await?;
    let one_job_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut freed = capacity(args.nodes);
    freed.cpu_free_milli += 1;
    sqlx::query("UPDATE clusters SET capacity = $2 WHERE id = $1")
        .bind(&cluster_ids[0])
        .bind(serde_json::to_value(&freed)?)
        .execute(&pool)
        .await?;
    let t = Instant::now();
    let capacity_round = d.round(Utc::now()).await?;
    let capacity_ms = t.elapsed().as_secs_f64() * 1e3;

    let mut conn = client.get_multiplexed_async_connection().await?;
    let streams: Vec<String> = cluster_ids.iter().map(|c| keys::command_stream(c)).collect();
    let _: () = redis::cmd("DEL").arg(&streams).query_async(&mut conn).await?;

    let total_gpus = args.clusters * args.nodes * 8;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "jobs": args.jobs, "clusters": args.clusters, "gpus": total_gpus,
                "planned_dispatches": planned, "plan_ms": plan_ms, "plan_afresh_ms": afresh_ms,
                "round_ms": first_ms, "dispatched": first.dispatched.len(), "waiting": first.waiting,
                "commands_sent": first.sent,
                "steady_round_ms": steady_ms, "steady_dispatched": steady.dispatched.len(),
                "unchanged_round_ms": unchanged_ms,
                "one_job_round_ms": one_job_ms, "one_job_dispatched": one_job.dispatched.len(),
                "capacity_round_ms": capacity_ms, "capacity_dispatched": capacity_round.dispatched.len(),
            })
        );
    } else {
        println!("{} jobs x {} clusters ({total_gpus} GPUs)", args.jobs, args.clusters);
        println!("plan_round (pure):   {plan_ms:.1} ms, {planned} dispatches planned ({afresh_ms:.1} ms afresh)");
        println!(
            "first round:         {first_ms:.1} ms, {} dispatched (+ XADD each), {} waiting (whyPending written)",
            first.dispatched.len(),
            first.waiting
        );
        println!("steady-state round:  {steady_ms:.1} ms, {} dispatched", steady.dispatched.len());
        println!("unchanged round:     {unchanged_ms:.1} ms");
        println!("one job admitted:    {one_job_ms:.1} ms, {} dispatched", one_job.dispatched.len());
        println!("capacity changed:    {capacity_ms:.1} ms, {} dispatched", capacity_round.dispatched.len());
    }
    Ok(())
}
