//! Seed builders: the rows a test starts from, written straight to the database (no events
//! beyond what the storage layer writes): tenants, projects with their default queue, dev
//! users with roles, clusters, jobs; and [`TwoTenants`], the world most API tests share.

use grus_api::auth::web::hash_token;
use grus_api::db::{self, Cause, NewJob, NewTask, QueueSettings, Scope, UserProfile};
use grus_api::domain::{JobState, Role};
use grus_protocol::wire::ResourcesSpec;
use serde_json::json;
use sqlx::PgPool;

/// The actor of rows a test writes as the system.
pub const SYSTEM: Cause<'static> = Cause { cause: "test setup", actor: "system:test" };

/// A tenant, a project, a user and a queue: the minimum a job needs.
pub struct Fixture {
    pub tenant_id: i64,
    pub project_id: i64,
    pub user_id: i64,
    pub queue_id: i64,
}

pub async fn fixture(pool: &PgPool, slug: &str) -> Fixture {
    let tenant = db::create_tenant(pool, &format!("t-{slug}"), "Tenant").await.expect("tenant");
    let project = db::create_project(pool, tenant.id, slug, "Project").await.expect("project");
    let subject = format!("sub-{slug}");
    let user = db::upsert_user(pool, &db::UserProfile { subject: &subject, email: None, display_name: None })
        .await
        .expect("user");
    let queue = db::create_queue(pool, project.id, &db::QueueSettings::named("default")).await.expect("queue");
    Fixture { tenant_id: tenant.id, project_id: project.id, user_id: user.id, queue_id: queue.id }
}

pub fn gpu_job(f: &Fixture, name: &str, replicas: u32, gpus: u32, models: &[&str]) -> NewJob {
    NewJob {
        project_id: f.project_id,
        queue_id: f.queue_id,
        name: name.into(),
        priority: 100,
        priority_class: "normal".into(),
        preemptible: false,
        spec: serde_json::json!({ "name": name }),
        pools: Vec::new(),
        tasks: vec![NewTask {
            name: "main".into(),
            replicas,
            resources: ResourcesSpec {
                gpus,
                gpu_models: models.iter().map(|m| m.to_string()).collect(),
                cpu_milli: 1000,
                memory_mib: 1024,
                ..Default::default()
            },
            spec: serde_json::json!({ "image": "busybox" }),
        }],
        submitted_by: f.user_id,
    }
}

pub fn by_user(actor: &str) -> Cause<'_> {
    Cause { cause: "submitted", actor }
}

/// The user `dev:<name>` (what the `x-grus-dev-user: <name>` header signs in as).
pub async fn dev_user(pool: &PgPool, name: &str) -> i64 {
    let subject = format!("dev:{name}");
    db::upsert_user(pool, &UserProfile { subject: &subject, email: None, display_name: None }).await.expect("user").id
}

/// [`dev_user`] with `name` as its display name too (as a dev sign-in records it).
pub async fn named_dev_user(pool: &PgPool, name: &str) -> i64 {
    let subject = format!("dev:{name}");
    let profile = UserProfile { subject: &subject, email: None, display_name: Some(name) };
    db::upsert_user(pool, &profile).await.expect("user").id
}

/// `dev:<name>` with `role` in `project`.
pub async fn member(pool: &PgPool, project_id: i64, name: &str, role: Role) -> i64 {
    let id = dev_user(pool, name).await;
    db::grant(pool, id, Scope::Project(project_id), role).await.expect("grant");
    id
}

/// `dev:<name>`, platform admin.
pub async fn platform_admin(pool: &PgPool, name: &str) -> i64 {
    let id = dev_user(pool, name).await;
    db::set_platform_admin(pool, id, true).await.expect("platform admin");
    id
}

pub async fn tenant(pool: &PgPool, slug: &str, name: &str) -> i64 {
    db::create_tenant(pool, slug, name).await.expect("tenant").id
}

/// Project `slug` of `tenant_id` with its `default` queue: (project, queue) ids.
pub async fn project(pool: &PgPool, tenant_id: i64, slug: &str, name: &str) -> (i64, i64) {
    let project = db::create_project(pool, tenant_id, slug, name).await.expect("project");
    let settings = QueueSettings::named("default");
    let queue = db::create_queue(pool, project.id, &settings).await.expect("queue");
    (project.id, queue.id)
}

/// Registers cluster `id` (no labels) with the agent token whose hash is `[token_byte; 32]`.
pub async fn cluster(pool: &PgPool, id: &str, token_byte: u8) {
    cluster_with_labels(pool, id, json!({}), token_byte).await;
}

/// [`cluster`] with `labels`.
pub async fn cluster_with_labels(pool: &PgPool, id: &str, labels: serde_json::Value, token_byte: u8) {
    db::register_cluster(pool, id, &labels, &[token_byte; 32]).await.expect("register cluster");
}

/// Registers cluster `id` with the agent token `token`.
pub async fn cluster_with_token(pool: &PgPool, id: &str, token: &str) {
    db::register_cluster(pool, id, &json!({}), &hash_token(token)).await.expect("register cluster");
}

/// Inserts `job` (state `pending`) in a transaction of its own; returns its id.
pub async fn insert_job(pool: &PgPool, job: &NewJob, actor: &str) -> i64 {
    let mut tx = pool.begin().await.expect("begin");
    let id = db::insert_job(&mut tx, job, by_user(actor)).await.expect("insert job").id;
    tx.commit().await.expect("commit");
    id
}

/// A job of `replicas` replicas of `gpus` A100-80GB GPUs each, admitted and dispatched to
/// `cluster` (epoch 1).
pub async fn dispatched_job(pool: &PgPool, f: &Fixture, cluster: &str, replicas: u32, gpus: u32) -> i64 {
    let mut tx = pool.begin().await.expect("begin");
    let actor = format!("user:{}", f.user_id);
    let job = gpu_job(f, "train", replicas, gpus, &["A100-80GB"]);
    let id = db::insert_job(&mut tx, &job, by_user(&actor)).await.expect("insert job").id;
    db::transition_job(&mut tx, id, JobState::Admitted, SYSTEM).await.expect("admitted");
    db::insert_dispatch(&mut tx, id, cluster).await.expect("dispatch");
    db::transition_job(&mut tx, id, JobState::Dispatched, SYSTEM).await.expect("dispatched");
    tx.commit().await.expect("commit");
    id
}

/// Moves job `id` to `to` in a transaction of its own, recorded as `by`.
pub async fn transition(pool: &PgPool, id: i64, to: JobState, by: Cause<'_>) {
    let mut tx = pool.begin().await.expect("begin");
    db::transition_job(&mut tx, id, to, by).await.expect("transition");
    tx.commit().await.expect("commit");
}

/// Tenant `ta` (`A`) with project `pa` and tenant `tb` (`B`) with project `pb`, each with its `default`
/// queue; dev users `viewer`, `member` and `padmin` (project admin) of `pa`, `tadmin` (tenant
/// admin of `ta`), `outsider` (member of `pb`) and `root` (platform admin).
pub struct TwoTenants {
    pub ta: i64,
    pub tb: i64,
    pub pa: i64,
    pub pb: i64,
    pub queue_pa: i64,
    pub queue_pb: i64,
}

impl TwoTenants {
    pub async fn seed(pool: &PgPool) -> TwoTenants {
        let (ta, tb) = (tenant(pool, "ta", "A").await, tenant(pool, "tb", "B").await);
        let (pa, queue_pa) = project(pool, ta, "pa", "PA").await;
        let (pb, queue_pb) = project(pool, tb, "pb", "PB").await;
        for (name, role) in [("viewer", Role::Viewer), ("member", Role::Member), ("padmin", Role::ProjectAdmin)] {
            member(pool, pa, name, role).await;
        }
        let tadmin = dev_user(pool, "tadmin").await;
        db::grant(pool, tadmin, Scope::Tenant(ta), Role::TenantAdmin).await.expect("grant");
        member(pool, pb, "outsider", Role::Member).await;
        platform_admin(pool, "root").await;
        TwoTenants { ta, tb, pa, pb, queue_pa, queue_pb }
    }
}
