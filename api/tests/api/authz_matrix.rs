//! The role matrix of invariant 7, table-driven: every query and mutation × every kind of
//! caller × a target in tenant A or tenant B → the expected outcome (data, a list without the
//! target, or the exact `extensions.code`), through the real router against one fresh
//! database. A refused mutation must also leave the stored data unchanged.
//!
//! World: tenant A (`ta`, project `pa`) holds the roles of the first five callers — platform
//! admin (root, no membership), tenant admin of A, and project admin, member and viewer of
//! `pa`. Tenant B (`tb`, project `pb`) is foreign to them; the sixth caller is a member of
//! `pb` only. The seventh is anonymous.
//!
//! Adding another area's operation: a variant in [`Op`], its request in [`Op::request`] and
//! its row in [`MATRIX`].

use axum::Router;
use grus_api::db::{self, Scope};
use grus_api::domain::Role;
use grus_testkit::api::TestApi;
use grus_testkit::client::gql;
use grus_testkit::seed::{self, by_user, gpu_job, Fixture, TwoTenants};
use grus_testkit::TestDb;
use serde_json::{json, Value};
use sqlx::PgPool;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Caller {
    PlatformAdmin,
    TenantAdmin,
    ProjectAdmin,
    Member,
    Viewer,
    OtherTenantMember,
    Anonymous,
}

/// Column order of [`MATRIX`].
const CALLERS: [Caller; 7] = [
    Caller::PlatformAdmin,
    Caller::TenantAdmin,
    Caller::ProjectAdmin,
    Caller::Member,
    Caller::Viewer,
    Caller::OtherTenantMember,
    Caller::Anonymous,
];

impl Caller {
    /// The dev user name sent in `X-Grus-Dev-User`.
    fn name(self) -> Option<&'static str> {
        match self {
            Caller::PlatformAdmin => Some("root"),
            Caller::TenantAdmin => Some("tadmin"),
            Caller::ProjectAdmin => Some("padmin"),
            Caller::Member => Some("member"),
            Caller::Viewer => Some("viewer"),
            Caller::OtherTenantMember => Some("outsider"),
            Caller::Anonymous => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// Tenant `ta`, project `pa`.
    A,
    /// Tenant `tb`, project `pb`.
    B,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Me,
    Tenants,
    Projects,
    Project,
    Job,
    /// A page of a job's output (its replica has not run: an empty page, after the checks).
    JobLogs,
    /// A job's metrics: its history, its replicas' latest use and its aggregates.
    JobMetrics,
    Jobs,
    CreateTenant,
    /// A platform admin's: the tenant's rights over priority and preemption.
    SetTenantRights,
    /// A platform admin's: the tenant's weight and guarantees in fair share.
    SetTenantShare,
    /// A tenant admin's: the project's weight and guarantees among its tenant's projects.
    SetProjectShare,
    /// A tenant admin's: the project's monthly budget.
    SetBudget,
    CreateProject,
    AddMember,
    SetRole,
    RemoveMember,
    CreateQueue,
    UpdateQuota,
    SubmitJob,
    /// Cancel a job someone else submitted.
    CancelJob,
    /// Cancel a job the caller submitted.
    CancelOwnJob,
    /// Reprioritise a job someone else submitted.
    SetJobPriority,
    DryRunJob,
    /// Usage filtered to the target's project.
    Usage,
    /// A FOCUS export of the target's tenant (a closed month).
    ExportUsage,
    Clusters,
    RegisterCluster,
    PriceBook,
    SetPrice,
    CreateApiToken,
}

/// Expected outcomes, one cell per caller in [`CALLERS`] order, for target A then target B:
/// `ok` (data), `hidden` (a list answered without the target), or the `extensions.code`.
#[rustfmt::skip]
const MATRIX: &[(Op, [&str; 7], [&str; 7])] = &[
    //                     root  tadmin  padmin  member  viewer  outsider anonymous
    (Op::Me,              ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"],
                          ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"]),
    (Op::Tenants,         ["ok", "ok", "ok", "ok", "ok", "hidden", "UNAUTHENTICATED"],
                          ["ok", "hidden", "hidden", "hidden", "hidden", "ok", "UNAUTHENTICATED"]),
    (Op::Projects,        ["ok", "ok", "ok", "ok", "ok", "hidden", "UNAUTHENTICATED"],
                          ["ok", "hidden", "hidden", "hidden", "hidden", "ok", "UNAUTHENTICATED"]),
    (Op::Project,         ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::Job,             ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::JobLogs,         ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::JobMetrics,      ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::Jobs,            ["ok", "ok", "ok", "ok", "ok", "hidden", "UNAUTHENTICATED"],
                          ["ok", "hidden", "hidden", "hidden", "hidden", "ok", "UNAUTHENTICATED"]),
    (Op::CreateTenant,    ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"],
                          ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SetTenantRights, ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"],
                          ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SetTenantShare,  ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"],
                          ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SetProjectShare, ["ok", "ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SetBudget,       ["ok", "ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::CreateProject,   ["ok", "ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::AddMember,       ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SetRole,         ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::RemoveMember,    ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::CreateQueue,     ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::UpdateQuota,     ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::SubmitJob,       ["ok", "ok", "ok", "ok", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::CancelJob,       ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::CancelOwnJob,    ["ok", "ok", "ok", "ok", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::SetJobPriority,  ["ok", "ok", "ok", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::DryRunJob,       ["ok", "ok", "ok", "ok", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::Usage,           ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "ok", "UNAUTHENTICATED"]),
    (Op::ExportUsage,     ["ok", "ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND", "UNAUTHENTICATED"],
                          ["ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::Clusters,        ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"],
                          ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"]),
    (Op::RegisterCluster, ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"],
                          ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::PriceBook,       ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"],
                          ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"]),
    (Op::SetPrice,        ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"],
                          ["ok", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "UNAUTHENTICATED"]),
    (Op::CreateApiToken,  ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"],
                          ["ok", "ok", "ok", "ok", "ok", "ok", "UNAUTHENTICATED"]),
];

/// Every operation that exists must have a row.
const ALL_OPS: [Op; 29] = [
    Op::Me,
    Op::Tenants,
    Op::Projects,
    Op::Project,
    Op::Job,
    Op::Jobs,
    Op::CreateTenant,
    Op::SetTenantRights,
    Op::SetTenantShare,
    Op::SetProjectShare,
    Op::SetBudget,
    Op::CreateProject,
    Op::AddMember,
    Op::SetRole,
    Op::RemoveMember,
    Op::CreateQueue,
    Op::UpdateQuota,
    Op::SubmitJob,
    Op::CancelJob,
    Op::CancelOwnJob,
    Op::SetJobPriority,
    Op::DryRunJob,
    Op::Usage,
    Op::ExportUsage,
    Op::Clusters,
    Op::RegisterCluster,
    Op::PriceBook,
    Op::SetPrice,
    Op::CreateApiToken,
];

struct World {
    pool: PgPool,
    app: Router,
    a: Fixture,
    b: Fixture,
    /// A job of each project submitted by `submitter` (neither caller).
    job_a: i64,
    job_b: i64,
}

impl World {
    fn fixture(&self, t: Target) -> &Fixture {
        match t {
            Target::A => &self.a,
            Target::B => &self.b,
        }
    }

    fn slug(t: Target) -> (&'static str, &'static str) {
        match t {
            Target::A => ("ta", "pa"),
            Target::B => ("tb", "pb"),
        }
    }

    async fn user(&self, name: &str) -> i64 {
        seed::dev_user(&self.pool, name).await
    }

    /// A fresh job in the target project submitted by `user_id`.
    async fn job_by(&self, t: Target, user_id: i64, name: &str) -> i64 {
        let f = Fixture { user_id, ..*self.fixture(t) };
        let mut conn = self.pool.acquire().await.unwrap();
        db::insert_job(&mut conn, &gpu_job(&f, name, 1, 1, &[]), by_user("user:test")).await.unwrap().id
    }

    /// A digest of the tenant data a mutation could change (users are left out: the dev
    /// header signs users in).
    async fn snapshot(&self) -> String {
        let (s,): (String,) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM tenants) || '/' || (SELECT count(*) FROM projects) || '/' ||
                    (SELECT count(*) || ':' || coalesce(string_agg(role, ',' ORDER BY id), '') FROM memberships) || '/' ||
                    (SELECT count(*) FROM queues) || '/' ||
                    (SELECT count(*) || ':' || coalesce(sum(guaranteed), 0) FROM queue_quotas) || '/' ||
                    (SELECT count(*) || ':' || count(*) FILTER (WHERE state = 'cancelled') FROM jobs) || '/' ||
                    (SELECT count(*) FROM job_events) || '/' ||
                    (SELECT coalesce(sum(priority), 0) FROM jobs) || '/' ||
                    (SELECT count(*) FROM clusters) || '/' || (SELECT count(*) FROM price_book) || '/' ||
                    (SELECT count(*) FROM exports) || '/' || (SELECT count(*) FROM api_tokens)",
        )
        .fetch_one(&self.pool)
        .await
        .unwrap();
        s
    }
}

impl Op {
    /// The request for one cell, with whatever fresh rows it needs (created directly in the
    /// database), and the check that its data is the expected one.
    async fn request(self, w: &World, caller: Caller, t: Target, n: usize) -> (String, Value, Check) {
        let f = w.fixture(t);
        let (tenant_slug, project_slug) = World::slug(t);
        let pid = f.project_id.to_string();
        let q = |s: &str| s.to_owned();
        match self {
            Op::Me => (q("{ me { id } }"), json!({}), Check::NonNull("me")),
            Op::Tenants => {
                (q("{ tenants { slug } }"), json!({}), Check::ListHas("tenants", "slug", tenant_slug.into()))
            }
            Op::Projects => {
                (q("{ projects { slug } }"), json!({}), Check::ListHas("projects", "slug", project_slug.into()))
            }
            Op::Project => {
                (q("query($id: ID!) { project(id: $id) { slug } }"), json!({ "id": pid }), Check::NonNull("project"))
            }
            Op::Job => {
                let id = if t == Target::A { w.job_a } else { w.job_b };
                (q("query($id: ID!) { job(id: $id) { id } }"), json!({ "id": id.to_string() }), Check::NonNull("job"))
            }
            Op::JobLogs => {
                let id = if t == Target::A { w.job_a } else { w.job_b };
                let query = "query($id: ID!) { jobLogs(jobId: $id) { source lines { text } } }";
                (q(query), json!({ "id": id.to_string() }), Check::NonNull("jobLogs"))
            }
            Op::JobMetrics => {
                let id = if t == Target::A { w.job_a } else { w.job_b };
                let query = "query($id: ID!) { job(id: $id) { metricHistory { resolutionSeconds points { at } }
                    replicas { usage { cpuCores } } utilization { usageSamples } } }";
                (q(query), json!({ "id": id.to_string() }), Check::NonNull("job"))
            }
            Op::Jobs => (
                q("query($p: ID!) { jobs(filter: { projectId: $p }) { edges { node { id } } } }"),
                json!({ "p": pid }),
                Check::Edges,
            ),
            Op::CreateTenant => (
                q("mutation($s: String!) { createTenant(slug: $s, name: \"T\") { id } }"),
                json!({ "s": format!("nt{n}") }),
                Check::NonNull("createTenant"),
            ),
            Op::SetTenantRights => (
                q("mutation($t: ID!) { setTenantRights(tenantId: $t, mayPreempt: true) { id rights { mayPreempt } } }"),
                json!({ "t": f.tenant_id.to_string() }),
                Check::NonNull("setTenantRights"),
            ),
            Op::SetTenantShare => (
                q("mutation($t: ID!) { setTenantShare(tenantId: $t, weight: 2) { id share { weight } } }"),
                json!({ "t": f.tenant_id.to_string() }),
                Check::NonNull("setTenantShare"),
            ),
            Op::SetProjectShare => (
                q("mutation($p: ID!) { setProjectShare(projectId: $p, weight: 2) { id share { weight } } }"),
                json!({ "p": pid }),
                Check::NonNull("setProjectShare"),
            ),
            Op::SetBudget => (
                q("mutation($p: ID!) { setBudget(projectId: $p, unit: GPU_HOURS, amount: \"100\") { status } }"),
                json!({ "p": pid }),
                Check::NonNull("setBudget"),
            ),
            Op::CreateProject => (
                q("mutation($t: ID!, $s: String!) { createProject(tenantId: $t, slug: $s, name: \"P\") { id } }"),
                json!({ "t": f.tenant_id.to_string(), "s": format!("np{n}") }),
                Check::NonNull("createProject"),
            ),
            Op::AddMember => {
                w.user(&format!("fresh{n}")).await;
                (
                    q("mutation($p: ID!, $s: String!) { addMember(projectId: $p, subject: $s, role: VIEWER) }"),
                    json!({ "p": pid, "s": format!("dev:fresh{n}") }),
                    Check::True("addMember"),
                )
            }
            Op::SetRole | Op::RemoveMember => {
                let id = w.user(&format!("fresh{n}")).await;
                db::grant(&w.pool, id, Scope::Project(f.project_id), Role::Viewer).await.unwrap();
                if self == Op::SetRole {
                    (
                        q("mutation($p: ID!, $u: ID!) { setRole(projectId: $p, userId: $u, role: MEMBER) }"),
                        json!({ "p": pid, "u": id.to_string() }),
                        Check::True("setRole"),
                    )
                } else {
                    (
                        q("mutation($p: ID!, $u: ID!) { removeMember(projectId: $p, userId: $u) }"),
                        json!({ "p": pid, "u": id.to_string() }),
                        Check::True("removeMember"),
                    )
                }
            }
            Op::CreateQueue => (
                q("mutation($p: ID!, $n: String!) { createQueue(projectId: $p, name: $n) { id } }"),
                json!({ "p": pid, "n": format!("q{n}") }),
                Check::NonNull("createQueue"),
            ),
            Op::UpdateQuota => (
                q("mutation($q: ID!, $g: Int!) { updateQuota(queueId: $q, resource: \"gpu\", guaranteed: $g) { id } }"),
                json!({ "q": f.queue_id.to_string(), "g": 1000 + n }),
                Check::NonNull("updateQuota"),
            ),
            Op::SubmitJob => (
                q("mutation($i: JobInput!) { submitJob(input: $i) { job { id } } }"),
                json!({ "i": { "name": format!("sub{n}"), "project": project_slug,
                               "tasks": [{ "name": "main", "replicas": 1, "image": "busybox",
                                           "resources": { "gpus": 1 } }] } }),
                Check::NonNull("submitJob"),
            ),
            Op::CancelJob | Op::CancelOwnJob => {
                let owner = match (self, caller.name()) {
                    (Op::CancelOwnJob, Some(name)) => w.user(name).await,
                    _ => w.user("submitter").await,
                };
                let id = w.job_by(t, owner, &format!("c{n}")).await;
                (
                    q("mutation($id: ID!) { cancelJob(id: $id) { state } }"),
                    json!({ "id": id.to_string() }),
                    Check::Field("cancelJob", "state", "CANCELLED"),
                )
            }
            Op::SetJobPriority => {
                let owner = w.user("submitter").await;
                let id = w.job_by(t, owner, &format!("p{n}")).await;
                (
                    q("mutation($id: ID!) { setJobPriority(id: $id, priority: \"high\") { id } }"),
                    json!({ "id": id.to_string() }),
                    Check::NonNull("setJobPriority"),
                )
            }
            Op::DryRunJob => (
                q("mutation($i: JobInput!) { dryRunJob(input: $i) { admitted } }"),
                json!({ "i": { "name": format!("dry{n}"), "project": project_slug,
                               "tasks": [{ "name": "main", "replicas": 1, "image": "busybox",
                                           "resources": { "gpus": 1 } }] } }),
                Check::NonNull("dryRunJob"),
            ),
            Op::Usage => (
                q("query($p: ID!) { usage(period: { month: \"2026-10\" }, filter: { projectId: $p }) { __typename } }"),
                json!({ "p": pid }),
                Check::NonNull("usage"),
            ),
            Op::ExportUsage => (
                q("mutation($t: ID!) { exportUsage(period: { month: \"2026-09\" }, format: FOCUS_CSV, tenantId: $t) { id } }"),
                json!({ "t": f.tenant_id.to_string() }),
                Check::NonNull("exportUsage"),
            ),
            Op::Clusters => (q("{ clusters { id } }"), json!({}), Check::NonNull("clusters")),
            Op::RegisterCluster => (
                q("mutation($id: String!) { registerCluster(id: $id) { agentToken } }"),
                json!({ "id": format!("c{n}") }),
                Check::NonNull("registerCluster"),
            ),
            Op::PriceBook => (q("{ priceBook { id } }"), json!({}), Check::NonNull("priceBook")),
            Op::SetPrice => (
                q("mutation($m: String!) { setPrice(gpuModel: $m, listPricePerGpuHour: \"1.5\", effectiveFrom: \"2026-11-01T00:00:00Z\") { id } }"),
                json!({ "m": format!("model-{n}") }),
                Check::NonNull("setPrice"),
            ),
            Op::CreateApiToken => (
                q("mutation($n: String!) { createApiToken(name: $n, expiresInDays: 7) { secret } }"),
                json!({ "n": format!("token-{n}") }),
                Check::NonNull("createApiToken"),
            ),
        }
    }

    fn is_mutation(self) -> bool {
        !matches!(
            self,
            Op::Me
                | Op::Tenants
                | Op::Projects
                | Op::Project
                | Op::Job
                | Op::Jobs
                | Op::Usage
                | Op::Clusters
                | Op::PriceBook
        )
    }
}

/// What `ok` means for an operation's data.
enum Check {
    NonNull(&'static str),
    True(&'static str),
    Field(&'static str, &'static str, &'static str),
    /// `data[list]` contains an item whose `key` is the value; absent: `hidden`.
    ListHas(&'static str, &'static str, String),
    /// `data.jobs.edges` is non-empty; empty: `hidden`.
    Edges,
}

/// The outcome of one request, in the matrix's words.
fn outcome(v: &Value, check: &Check) -> String {
    if let Some(code) = v["errors"][0]["extensions"]["code"].as_str() {
        return code.to_owned();
    }
    if !v["errors"].is_null() {
        return format!("error without code: {}", v["errors"]);
    }
    let data = &v["data"];
    let ok = match check {
        Check::NonNull(f) => !data[f].is_null(),
        Check::True(f) => data[f] == json!(true),
        Check::Field(f, k, want) => data[f][k] == json!(want),
        Check::ListHas(f, k, want) => {
            let has = data[f].as_array().is_some_and(|l| l.iter().any(|i| i[k] == json!(want)));
            return if has { "ok".into() } else { "hidden".into() };
        }
        Check::Edges => {
            let n = data["jobs"]["edges"].as_array().map_or(0, |e| e.len());
            return if n > 0 { "ok".into() } else { "hidden".into() };
        }
    };
    if ok {
        "ok".into()
    } else {
        format!("unexpected data: {data}")
    }
}

/// [`TwoTenants`], and a seed job in each project submitted by `submitter`.
async fn world(t: &TestDb) -> World {
    let pool = t.pool.clone();
    let two = TwoTenants::seed(&pool).await;
    let mut w = World {
        pool: pool.clone(),
        app: TestApi::new(&pool).router(),
        a: Fixture { tenant_id: two.ta, project_id: two.pa, user_id: 0, queue_id: two.queue_pa },
        b: Fixture { tenant_id: two.tb, project_id: two.pb, user_id: 0, queue_id: two.queue_pb },
        job_a: 0,
        job_b: 0,
    };
    let submitter = w.user("submitter").await;
    w.job_a = w.job_by(Target::A, submitter, "seed-a").await;
    w.job_b = w.job_by(Target::B, submitter, "seed-b").await;
    w
}

#[tokio::test]
async fn every_operation_by_every_caller_on_both_tenants() {
    for op in ALL_OPS {
        assert!(MATRIX.iter().any(|(o, ..)| *o == op), "{op:?} has no row in MATRIX");
    }
    let t = TestDb::new().await;
    let w = world(&t).await;
    let mut failures = Vec::new();
    let mut n = 0;
    for (op, row_a, row_b) in MATRIX {
        for (target, row) in [(Target::A, row_a), (Target::B, row_b)] {
            for (caller, want) in CALLERS.iter().zip(row.iter()) {
                n += 1;
                let (query, vars, check) = op.request(&w, *caller, target, n).await;
                let before = w.snapshot().await;
                let v = gql(&w.app, caller.name(), &query, vars).await;
                let got = outcome(&v, &check);
                if got != *want {
                    failures.push(format!("{op:?} by {caller:?} on {target:?}: want {want}, got {got}"));
                }
                // A refused mutation changes nothing.
                if op.is_mutation() && *want != "ok" && w.snapshot().await != before {
                    failures.push(format!("{op:?} by {caller:?} on {target:?}: refused but changed data"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {n} cells differ:\n{}", failures.len(), failures.join("\n"));
}
