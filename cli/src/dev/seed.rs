//! The demo data of `grus dev`, created through the GraphQL API as the dev users would
//! (the same validation, authorization and events as any client), and idempotent: every item
//! is looked up first and created only when missing, so a restart on the same database adds
//! nothing. What a user changed afterwards (a quota, a price) is left alone.
//!
//! The only thing the API cannot do for a newcomer, making `dev:admin` platform admin, is
//! grus-api's `--platform-admin-subject`, which `grus dev` passes.

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use super::fleet::{Price, SimCluster};

/// Dev users (the `X-Grus-Dev-User` names; subjects are `dev:<name>`).
pub const ADMIN: &str = "admin";
pub const ALICE: &str = "alice";
pub const BOB: &str = "bob";

pub const TENANT: &str = "acme";
pub const PROJECT: &str = "demo";
pub const SECOND_PROJECT: &str = "vision";

/// A GraphQL client speaking as dev users (`X-Grus-Dev-User`).
pub struct Gql {
    http: reqwest::Client,
    url: String,
}

impl Gql {
    /// `base`: `http://127.0.0.1:8080`.
    pub fn new(base: &str) -> anyhow::Result<Gql> {
        let http = reqwest::Client::builder().build().context("build the HTTP client")?;
        Ok(Gql { http, url: format!("{base}/graphql") })
    }

    /// Runs one operation as `user`; GraphQL errors become an error naming their code.
    pub async fn run(&self, user: &str, query: &str, variables: Value) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(&self.url)
            .header(grus_api::graphql::auth::DEV_USER_HEADER, user)
            .json(&json!({ "query": query, "variables": variables }))
            .send()
            .await
            .with_context(|| format!("POST {}", self.url))?;
        let status = response.status();
        let body: Value = response.json().await.with_context(|| format!("read the answer of {}", self.url))?;
        if let Some(errors) = body.get("errors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
            let first = &errors[0];
            let message = first.get("message").and_then(Value::as_str).unwrap_or("?");
            let code = first.pointer("/extensions/code").and_then(Value::as_str).unwrap_or("?");
            bail!("GraphQL error {code} (HTTP {status}): {message}");
        }
        body.get("data").cloned().filter(|d| !d.is_null()).with_context(|| format!("no data (HTTP {status})"))
    }
}

/// What a seeding run created (for the log; empty on a restart).
#[derive(Debug, Default)]
pub struct Seeded {
    pub created: Vec<String>,
}

struct ProjectSeed {
    slug: &'static str,
    name: &'static str,
    member: &'static str,
    /// Queues besides `default` (which createProject makes): name, weight.
    extra_queues: &'static [(&'static str, f64)],
    /// Quotas set when the queue has none for the resource: queue, resource, guaranteed, limit.
    quotas: &'static [(&'static str, &'static str, i64, i64)],
}

const PROJECTS: [ProjectSeed; 2] = [
    ProjectSeed {
        slug: PROJECT,
        name: "Demo",
        member: ALICE,
        extra_queues: &[("batch", 0.5)],
        quotas: &[("default", "gpu", 16_000, 32_000), ("batch", "gpu", 0, 16_000)],
    },
    ProjectSeed {
        slug: SECOND_PROJECT,
        name: "Vision",
        member: BOB,
        extra_queues: &[],
        quotas: &[("default", "gpu", 8_000, 16_000)],
    },
];

/// Registers the clusters that are not registered yet (before their agents start, so that the
/// api reads their event streams from the first message).
pub async fn register_clusters(gql: &Gql, clusters: &[SimCluster], seeded: &mut Seeded) -> anyhow::Result<()> {
    gql.run(ADMIN, "{ me { platformAdmin } }", json!({}))
        .await?
        .pointer("/me/platformAdmin")
        .and_then(Value::as_bool)
        .filter(|admin| *admin)
        .context("dev:admin is not platform admin (grus-api was started without --platform-admin-subject)")?;
    let known = gql.run(ADMIN, "{ clusters { id } }", json!({})).await?;
    let known = ids(&known["clusters"], "id");
    for c in clusters.iter().filter(|c| !known.contains(&c.id)) {
        gql.run(
            ADMIN,
            "mutation($id: String!, $name: String, $labels: JSON) {
               registerCluster(id: $id, displayName: $name, labels: $labels) { cluster { id } } }",
            json!({
                "id": c.id,
                "name": format!("{} (simulated: {})", c.id, c.description),
                "labels": { "region": c.region, "grus.io/simulated": "true" },
            }),
        )
        .await
        .with_context(|| format!("register cluster {}", c.id))?;
        seeded.created.push(format!("cluster {}", c.id));
    }
    Ok(())
}

/// The tenant, projects, members, queues, quotas and prices.
pub async fn seed_tenancy(gql: &Gql, prices: &[Price], seeded: &mut Seeded) -> anyhow::Result<()> {
    // addMember needs users that signed in once: a first request does that.
    for user in [ALICE, BOB] {
        gql.run(user, "{ me { id } }", json!({})).await.with_context(|| format!("sign in dev:{user}"))?;
    }
    let tenants = gql.run(ADMIN, "{ tenants { id slug } }", json!({})).await?;
    let tenant_id = match find(&tenants["tenants"], "slug", TENANT) {
        Some(t) => t["id"].clone(),
        None => {
            let t = gql
                .run(
                    ADMIN,
                    "mutation($slug: String!) { createTenant(slug: $slug, name: \"Acme Research\") { id } }",
                    json!({ "slug": TENANT }),
                )
                .await
                .context("create the demo tenant")?;
            seeded.created.push(format!("tenant {TENANT}"));
            t["createTenant"]["id"].clone()
        }
    };
    for p in &PROJECTS {
        seed_project(gql, &tenant_id, p, seeded).await.with_context(|| format!("seed project {}", p.slug))?;
    }
    let book = gql.run(ADMIN, "{ priceBook { gpuModel } }", json!({})).await?;
    let priced = ids(&book["priceBook"], "gpuModel");
    // From the start of this year: the demo's usage (now) is priced, and no past export
    // period of a fresh database is touched.
    let from = format!("{}-01-01T00:00:00Z", chrono::Utc::now().format("%Y"));
    for p in prices.iter().filter(|p| !priced.iter().any(|m| m == p.gpu_model)) {
        gql.run(
            ADMIN,
            "mutation($m: String!, $l: String!, $c: String!, $from: DateTime!) {
               setPrice(gpuModel: $m, listPricePerGpuHour: $l, contractedPricePerGpuHour: $c, effectiveFrom: $from)
               { gpuModel } }",
            json!({ "m": p.gpu_model, "l": p.list, "c": p.contracted, "from": from }),
        )
        .await
        .with_context(|| format!("price {}", p.gpu_model))?;
        seeded.created.push(format!("price {}", p.gpu_model));
    }
    Ok(())
}

async fn seed_project(gql: &Gql, tenant_id: &Value, p: &ProjectSeed, seeded: &mut Seeded) -> anyhow::Result<()> {
    const PROJECT_FIELDS: &str = "id members { user { subject } } queues { id name quotas { resource } }";
    let projects = gql.run(ADMIN, &format!("{{ projects {{ slug {PROJECT_FIELDS} }} }}"), json!({})).await?;
    let mut project = match find(&projects["projects"], "slug", p.slug) {
        Some(project) => project.clone(),
        None => {
            let created = gql
                .run(
                    ADMIN,
                    &format!(
                        "mutation($t: ID!, $slug: String!, $name: String!) {{
                           createProject(tenantId: $t, slug: $slug, name: $name) {{ {PROJECT_FIELDS} }} }}"
                    ),
                    json!({ "t": tenant_id, "slug": p.slug, "name": p.name }),
                )
                .await?;
            seeded.created.push(format!("project {}", p.slug));
            created["createProject"].clone()
        }
    };
    let project_id = project["id"].clone();
    let subject = format!("dev:{}", p.member);
    let members = project["members"].as_array().cloned().unwrap_or_default();
    if !members.iter().any(|m| m["user"]["subject"] == subject.as_str()) {
        gql.run(
            ADMIN,
            "mutation($p: ID!, $s: String!) { addMember(projectId: $p, subject: $s, role: MEMBER) }",
            json!({ "p": project_id, "s": subject }),
        )
        .await?;
        seeded.created.push(format!("member {subject} of {}", p.slug));
    }
    for (name, weight) in p.extra_queues {
        if find(&project["queues"], "name", name).is_none() {
            let q = gql
                .run(
                    ADMIN,
                    "mutation($p: ID!, $n: String!, $w: Float!) {
                       createQueue(projectId: $p, name: $n, weight: $w) { id name quotas { resource } } }",
                    json!({ "p": project_id, "n": name, "w": weight }),
                )
                .await?;
            if let Some(queues) = project["queues"].as_array_mut() {
                queues.push(q["createQueue"].clone());
            }
            seeded.created.push(format!("queue {}/{name}", p.slug));
        }
    }
    for (queue, resource, guaranteed, limit) in p.quotas {
        let q = find(&project["queues"], "name", queue).with_context(|| format!("queue {queue} is missing"))?;
        let quotas = q["quotas"].as_array().cloned().unwrap_or_default();
        if !quotas.iter().any(|x| x["resource"] == *resource) {
            gql.run(
                ADMIN,
                "mutation($q: ID!, $r: String!, $g: Int!, $l: Int) {
                   updateQuota(queueId: $q, resource: $r, guaranteed: $g, limit: $l) { id } }",
                json!({ "q": q["id"], "r": resource, "g": guaranteed, "l": limit }),
            )
            .await?;
            seeded.created.push(format!("quota {resource} of {}/{queue}", p.slug));
        }
    }
    Ok(())
}

/// The demo jobs, submitted by the projects' members when a project has no job yet: in `demo`
/// a gang and a small job that succeed, a fractional-GPU notebook, and one that fits no node
/// (it stays pending and says why); in `vision` a gang.
pub async fn seed_jobs(gql: &Gql, clusters: &[SimCluster], seeded: &mut Seeded) -> anyhow::Result<()> {
    let big = clusters[0].gpu_model;
    let small = clusters.get(1).unwrap_or(&clusters[0]).gpu_model;
    let task = |name: &str, replicas: u32, gpus: u32, model: &str| {
        json!({ "name": name, "replicas": replicas, "image": format!("ghcr.io/example/{name}:1"),
                "resources": { "gpus": gpus, "gpuModels": [model], "cpuMilli": 4000 * gpus.max(1),
                               "memoryMib": 16384 * gpus.max(1) } })
    };
    let duration = |s: u32| json!([{ "key": grus_agent::backend::sim::LABEL_DURATION, "value": s.to_string() }]);
    let demo = vec![
        json!({ "name": "resnet50-train", "project": PROJECT, "gang": { "minMembers": 2 }, "labels": duration(20),
                "tasks": [task("worker", 2, 4, big)] }),
        json!({ "name": "bert-eval", "project": PROJECT, "labels": duration(10),
                "tasks": [task("eval", 1, 1, small)] }),
        json!({ "name": "notebook", "project": PROJECT, "queue": "batch", "labels": duration(45),
                "tasks": [{ "name": "jupyter", "image": "jupyter/base-notebook", "resources":
                    { "gpus": 1, "gpuMilli": 250, "gpuModels": [small], "cpuMilli": 2000, "memoryMib": 8192 } }] }),
        // 16 GPUs in one replica: no simulated node has that many, so it waits with a reason.
        json!({ "name": "llm-pretrain", "project": PROJECT, "labels": duration(3600),
                "tasks": [task("trainer", 1, 16, big)] }),
    ];
    let vision = vec![json!({ "name": "detector-finetune", "project": SECOND_PROJECT, "gang": { "minMembers": 2 },
        "labels": duration(30), "tasks": [task("worker", 2, 2, small)] })];
    for (slug, user, jobs) in [(PROJECT, ALICE, demo), (SECOND_PROJECT, BOB, vision)] {
        let existing = gql
            .run(
                user,
                "query($s: String!) { project(slug: $s) { jobs(first: 1) { nodes { id } } } }",
                json!({ "s": slug }),
            )
            .await?;
        if existing.pointer("/project/jobs/nodes/0").is_some() {
            continue;
        }
        for job in jobs {
            let name = job["name"].as_str().unwrap_or("?").to_owned();
            gql.run(user, "mutation($j: JobInput!) { submitJob(input: $j) { job { id } } }", json!({ "j": job }))
                .await
                .with_context(|| format!("submit {name} in {slug}"))?;
            seeded.created.push(format!("job {slug}/{name}"));
        }
    }
    Ok(())
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|item| item[key] == value)
}

fn ids(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .map(|items| items.iter().filter_map(|i| i[key].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}
