//! `grus jobs` (list with filters), `grus job <id>` (detail, why pending) and `grus cancel`.

use serde_json::{json, Value};

use super::Context;
use crate::cli::{CancelArgs, JobArgs, JobsArgs, OutputArgs, SuspendArgs};
use crate::client::Client;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, about, gpus_from_milli, opt, print_data, short_time, Format, Table};

/// The largest page asked for (the API allows 500; smaller pages keep the complexity low).
const PAGE: u32 = 100;

const LIST_QUERY: &str = "query Jobs($filter: JobsFilter, $first: Int!, $after: String) {
  jobs(filter: $filter, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id name state priorityClass priority preemptible borrowed clusterId submittedAt updatedAt spec
      project { slug } queue { name } submitter { subject }
    }
  }
}";

/// A dotted path into a JSON value (`project.slug`), as a string cell.
pub(crate) fn text(v: &Value, path: &str) -> Option<String> {
    let mut cur = v;
    for part in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match cur {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// GPU milli a job asks for in all: replicas x GPUs x share, from its wire spec.
pub(crate) fn job_gpu_milli(spec: &Value) -> i64 {
    let tasks = spec.get("tasks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    tasks
        .iter()
        .map(|t| {
            let replicas = t.get("replicas").and_then(Value::as_i64).unwrap_or(0);
            let r = t.get("resources");
            let gpus = r.and_then(|r| r.get("gpus")).and_then(Value::as_i64).unwrap_or(0);
            let milli = r.and_then(|r| r.get("gpu_milli")).and_then(Value::as_i64).unwrap_or(1000);
            replicas * gpus * milli
        })
        .sum()
}

/// The project id (and the queue's, when named) of a project slug.
async fn project_ids(client: &Client, slug: &str, queue: Option<&str>) -> CliResult<(String, Option<String>)> {
    let data: Value = client
        .graphql("query P($slug: String) { project(slug: $slug) { id queues { id name } } }", json!({ "slug": slug }))
        .await
        .map_err(|e| not_found_as(e, format!("project {slug:?} not found (or not visible to you)")))?;
    let project = &data["project"];
    let id = text(project, "id").ok_or_else(|| CliError::generic("the API returned a project without an id"))?;
    let queue_id = match queue {
        None => None,
        Some(name) => {
            let queues = project["queues"].as_array().map(Vec::as_slice).unwrap_or_default();
            let found = queues.iter().find(|q| q["name"] == name).and_then(|q| text(q, "id"));
            Some(found.ok_or_else(|| {
                let names: Vec<_> = queues.iter().filter_map(|q| text(q, "name")).collect();
                CliError::new(
                    Exit::NotFound,
                    format!("queue {name:?} not found in project {slug} (its queues: {})", names.join(", ")),
                )
            })?)
        }
    };
    Ok((id, queue_id))
}

/// `me`, a numeric user id, or a subject looked up among the members of visible projects.
async fn user_id(client: &Client, user: &str) -> CliResult<String> {
    if user == "me" {
        let data: Value = client.graphql("{ me { id } }", json!({})).await?;
        return text(&data, "me.id").ok_or_else(|| CliError::generic("the API returned no user id"));
    }
    if !user.is_empty() && user.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(user.to_owned());
    }
    let data: Value =
        client.graphql("{ me { id subject } projects { members { user { id subject } } } }", json!({})).await?;
    if data["me"]["subject"] == user {
        return text(&data, "me.id").ok_or_else(|| CliError::generic("the API returned no user id"));
    }
    let projects = data["projects"].as_array().map(Vec::as_slice).unwrap_or_default();
    projects
        .iter()
        .flat_map(|p| p["members"].as_array().map(Vec::as_slice).unwrap_or_default())
        .find(|m| m["user"]["subject"] == user)
        .and_then(|m| text(m, "user.id"))
        .ok_or_else(|| {
            CliError::new(
                Exit::NotFound,
                format!("user {user:?} not found among the members of your projects (use `me`, an id or a subject)"),
            )
        })
}

fn not_found_as(e: CliError, message: String) -> CliError {
    if e.exit == Exit::NotFound {
        CliError::new(Exit::NotFound, message)
    } else {
        e
    }
}

pub async fn list(ctx: &mut Context, args: JobsArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let mut filter = serde_json::Map::new();
    if let Some(slug) = &args.project {
        let (project, queue) = project_ids(&client, slug, args.queue.as_deref()).await?;
        filter.insert("projectId".into(), json!(project));
        if let Some(q) = queue {
            filter.insert("queueId".into(), json!(q));
        }
    }
    if !args.state.is_empty() {
        filter.insert("states".into(), json!(args.state.iter().map(|s| s.api_name()).collect::<Vec<_>>()));
    }
    if let Some(user) = &args.user {
        filter.insert("userId".into(), json!(user_id(&client, user).await?));
    }
    if let Some(cluster) = &args.cluster {
        filter.insert("clusterId".into(), json!(cluster));
    }
    if let Some(search) = &args.search {
        filter.insert("search".into(), json!(search));
    }
    let mut jobs: Vec<Value> = Vec::new();
    let mut after: Option<String> = None;
    while (jobs.len() as u32) < args.limit {
        let first = PAGE.min(args.limit - jobs.len() as u32);
        let data: Value = client
            .graphql(LIST_QUERY, json!({ "filter": Value::Object(filter.clone()), "first": first, "after": after }))
            .await?;
        let page = &data["jobs"];
        jobs.extend(page["nodes"].as_array().cloned().unwrap_or_default());
        after = text(page, "pageInfo.endCursor");
        if page["pageInfo"]["hasNextPage"] != true || after.is_none() {
            break;
        }
    }
    if args.output.output != Format::Table {
        print_data(args.output.output, &jobs)?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(jobs_table(&jobs).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// A workspace's port and idle rule: `port 8888, stopped after 30m idle`.
pub fn workspace_rule(w: &Value) -> String {
    let idle = w["idleTimeoutSeconds"].as_u64().map(|s| humantime::format_duration(std::time::Duration::from_secs(s)));
    let action = if w["idleAction"] == "SUSPEND" { "suspended" } else { "stopped" };
    format!("port {}, {action} after {} idle", opt(text(w, "port")), opt(idle))
}

/// The `grus jobs` table.
pub fn jobs_table(jobs: &[Value]) -> Table {
    let mut table =
        Table::new(&["ID", "NAME", "PROJECT", "QUEUE", "STATE", "PRIORITY", "GPUS", "CLUSTER", "USER", "SUBMITTED"]);
    for j in jobs {
        let mut state = text(j, "state").unwrap_or_default();
        if j["borrowed"] == true {
            state.push_str(" (borrowed)");
        }
        table.row(vec![
            opt(text(j, "id")),
            opt(text(j, "name")),
            opt(text(j, "project.slug")),
            opt(text(j, "queue.name")),
            state,
            opt(text(j, "priorityClass")),
            gpus_from_milli(job_gpu_milli(&j["spec"])),
            opt(text(j, "clusterId")),
            opt(text(j, "submitter.subject")),
            text(j, "submittedAt").map(|t| short_time(&t)).unwrap_or_default(),
        ]);
    }
    table
}

const JOB_QUERY: &str = "query Job($id: ID!) {
  job(id: $id) {
    id name state priorityClass priority preemptible borrowed clusterId epoch submittedAt updatedAt spec
    workloadType endpoint workspace { port idleTimeoutSeconds idleAction } queuePosition
    estimatedStart { at jobsAhead } predictedRuntime { p50Seconds p90Seconds samples basis }
    project { slug } queue { name } submitter { subject }
    whyPending { summary reasons { cluster stage reason } }
    tasks { name replicaCount state replicas { index state node clusterId exitCode termination usage { cpuCores memoryMib } } }
    dispatches { epoch clusterId dispatchedAt outcome reason }
    utilization { avgBusyPct maxBusyPct lastBusyPct usageSamples avgCpuCores maxCpuCores maxMemoryMib }
    events { at fromState toState cause actor taskId replicaId }
  }
}";

pub async fn show(ctx: &mut Context, args: JobArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let data: Value = client
        .graphql(JOB_QUERY, json!({ "id": args.id }))
        .await
        .map_err(|e| not_found_as(e, format!("job {} not found (or not visible to you)", args.id)))?;
    let job = &data["job"];
    if args.output.output != Format::Table {
        print_data(args.output.output, job)?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(render_job(job).as_bytes())?;
    Ok(Exit::Ok)
}

/// An amount of memory as people read it: `512 MiB`, `3.2 GiB`.
pub fn mebibytes(mib: i64) -> String {
    if mib < 1024 {
        format!("{mib} MiB")
    } else {
        format!("{:.1} GiB", mib as f64 / 1024.0)
    }
}

/// How a replica ended, as `kubectl get pods` words it: `OOMKilled (137)`, `Completed (0)`,
/// `Lost`; empty while it has not.
pub fn replica_exit(replica: &Value) -> String {
    let Some(termination) = replica["termination"].as_str() else { return String::new() };
    let word = match termination {
        "OOM_KILLED" => "OOMKilled".to_owned(),
        "DEADLINE_EXCEEDED" => "DeadlineExceeded".to_owned(),
        "CANNOT_START" => "CannotStart".to_owned(),
        other => {
            let lower = other.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        }
    };
    match replica["exitCode"].as_i64() {
        Some(code) => format!("{word} ({code})"),
        None => word,
    }
}

/// The `grus job` detail view.
pub fn render_job(job: &Value) -> String {
    render_job_at(job, chrono::Utc::now())
}

/// [`render_job`] as seen at `now` (estimates read relative to it).
pub fn render_job_at(job: &Value, now: chrono::DateTime<chrono::Utc>) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let field = |out: &mut String, name: &str, value: String| {
        let _ = writeln!(out, "{:<12}{value}", format!("{name}:"));
    };
    field(&mut out, "Job", format!("{} {}", opt(text(job, "id")), opt(text(job, "name"))));
    field(&mut out, "Project", format!("{} / queue {}", opt(text(job, "project.slug")), opt(text(job, "queue.name"))));
    let mut state = opt(text(job, "state"));
    if job["borrowed"] == true {
        state.push_str(" (borrowed: preemptible by other queues)");
    }
    field(&mut out, "State", state);
    if let Some(position) = job["queuePosition"].as_i64() {
        let queue = format!("{}/{}", opt(text(job, "project.slug")), opt(text(job, "queue.name")));
        let start = text(job, "estimatedStart.at")
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|at| (at.with_timezone(&chrono::Utc) - now).num_seconds());
        let estimate = match start {
            Some(s) if s <= 0 => ", estimated start: now".to_owned(),
            Some(s) => format!(", estimated start in {}", about(s)),
            None => ", no estimated start".to_owned(),
        };
        field(&mut out, "Position", format!("{position} in {queue} (1: next){estimate}"));
    }
    if let Some(p) = job.get("predictedRuntime").filter(|p| !p.is_null()) {
        let secs = |k: &str| p[k].as_i64().map(about).unwrap_or_else(|| "-".into());
        field(
            &mut out,
            "Run time",
            format!(
                "{} expected (p90 {}; from {} finished jobs: {})",
                secs("p50Seconds"),
                secs("p90Seconds"),
                opt(text(p, "samples")),
                opt(text(p, "basis"))
            ),
        );
    }
    field(
        &mut out,
        "Priority",
        format!(
            "{} ({}){}",
            opt(text(job, "priorityClass")),
            opt(text(job, "priority")),
            if job["preemptible"] == true { ", preemptible" } else { "" }
        ),
    );
    field(&mut out, "GPUs", gpus_from_milli(job_gpu_milli(&job["spec"])));
    if let Some(w) = job.get("workspace").filter(|w| !w.is_null()) {
        field(&mut out, "Workspace", workspace_rule(w));
    }
    if let Some(url) = text(job, "endpoint") {
        field(&mut out, "Address", url);
    }
    field(&mut out, "Cluster", format!("{} (epoch {})", opt(text(job, "clusterId")), opt(text(job, "epoch"))));
    field(
        &mut out,
        "Submitted",
        format!(
            "{} by {}",
            text(job, "submittedAt").map(|t| short_time(&t)).unwrap_or_default(),
            opt(text(job, "submitter.subject"))
        ),
    );
    if let Some(u) = job.get("utilization").filter(|u| !u.is_null()) {
        let pct = |k: &str| u[k].as_f64().map(|v| format!("{v:.0}%")).unwrap_or_else(|| "-".into());
        field(
            &mut out,
            "GPU busy",
            format!("avg {}, max {}, last {}", pct("avgBusyPct"), pct("maxBusyPct"), pct("lastBusyPct")),
        );
        if u["usageSamples"].as_i64().unwrap_or(0) > 0 {
            let cores = |k: &str| u[k].as_f64().map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into());
            field(
                &mut out,
                "CPU, memory",
                format!(
                    "avg {} cores, max {}; memory max {}",
                    cores("avgCpuCores"),
                    cores("maxCpuCores"),
                    u["maxMemoryMib"].as_i64().map(mebibytes).unwrap_or_else(|| "-".into())
                ),
            );
        }
    }
    if let Some(why) = job.get("whyPending").filter(|w| !w.is_null()) {
        out.push_str("\nWhy pending:\n");
        let _ = writeln!(out, "  {}", opt(text(why, "summary")));
        let reasons = why["reasons"].as_array().map(Vec::as_slice).unwrap_or_default();
        if !reasons.is_empty() {
            let mut t = Table::new(&["CLUSTER", "STAGE", "REASON"]);
            for r in reasons {
                t.row(vec![opt(text(r, "cluster")), opt(text(r, "stage")), opt(text(r, "reason"))]);
            }
            indent(&mut out, &t.render());
        }
    }
    let tasks = job["tasks"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !tasks.is_empty() {
        out.push_str("\nTasks:\n");
        let mut t = Table::new(&["TASK", "REPLICA", "STATE", "CLUSTER", "NODE", "CPU", "MEMORY", "EXIT"]);
        for task in tasks {
            t.row(vec![
                opt(text(task, "name")),
                format!("({} replicas)", opt(text(task, "replicaCount"))),
                opt(text(task, "state")),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            for r in task["replicas"].as_array().map(Vec::as_slice).unwrap_or_default() {
                t.row(vec![
                    String::new(),
                    opt(text(r, "index")),
                    opt(text(r, "state")),
                    opt(text(r, "clusterId")),
                    opt(text(r, "node")),
                    r["usage"]["cpuCores"].as_f64().map(|c| format!("{c:.2}")).unwrap_or_default(),
                    r["usage"]["memoryMib"].as_i64().map(mebibytes).unwrap_or_default(),
                    replica_exit(r),
                ]);
            }
        }
        indent(&mut out, &t.render());
    }
    let dispatches = job["dispatches"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !dispatches.is_empty() {
        out.push_str("\nDispatches:\n");
        let mut t = Table::new(&["EPOCH", "CLUSTER", "AT", "OUTCOME", "REASON"]);
        for d in dispatches {
            t.row(vec![
                opt(text(d, "epoch")),
                opt(text(d, "clusterId")),
                text(d, "dispatchedAt").map(|t| short_time(&t)).unwrap_or_default(),
                opt(text(d, "outcome")),
                text(d, "reason").unwrap_or_default(),
            ]);
        }
        indent(&mut out, &t.render());
    }
    let events: Vec<&Value> = job["events"]
        .as_array()
        .map(|a| a.iter().filter(|e| e["taskId"].is_null() && e["replicaId"].is_null()).collect())
        .unwrap_or_default();
    if !events.is_empty() {
        out.push_str("\nEvents:\n");
        let mut t = Table::new(&["AT", "FROM", "TO", "CAUSE", "ACTOR"]);
        for e in events {
            t.row(vec![
                text(e, "at").map(|t| short_time(&t)).unwrap_or_default(),
                opt(text(e, "fromState")),
                opt(text(e, "toState")),
                opt(text(e, "cause")),
                opt(text(e, "actor")),
            ]);
        }
        indent(&mut out, &t.render());
    }
    out
}

fn indent(out: &mut String, block: &str) {
    for line in block.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}

pub async fn cancel(ctx: &mut Context, args: CancelArgs) -> CliResult<Exit> {
    let query = "mutation Cancel($id: ID!) { cancelJob(id: $id) { id name state } }";
    change_job(ctx, &args.id, &args.output, query, json!({ "id": args.id }), "cancelJob").await
}

pub async fn suspend(ctx: &mut Context, args: SuspendArgs) -> CliResult<Exit> {
    let grace = i64::try_from(args.grace.as_secs()).unwrap_or(i64::MAX);
    if args.grace.subsec_nanos() != 0 || grace > 3600 {
        return Err(CliError::usage("--grace must be whole seconds, at most 1h"));
    }
    let query =
        "mutation Suspend($id: ID!, $grace: Int!) { suspendJob(id: $id, graceSeconds: $grace) { id name state } }";
    change_job(ctx, &args.id, &args.output, query, json!({ "id": args.id, "grace": grace }), "suspendJob").await
}

pub async fn resume(ctx: &mut Context, args: CancelArgs) -> CliResult<Exit> {
    let query = "mutation Resume($id: ID!) { resumeJob(id: $id) { id name state } }";
    change_job(ctx, &args.id, &args.output, query, json!({ "id": args.id }), "resumeJob").await
}

/// Runs a mutation on one job and prints the job as it is now.
async fn change_job(
    ctx: &mut Context,
    id: &str,
    format: &OutputArgs,
    query: &str,
    vars: Value,
    field: &str,
) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let data: Value = client
        .graphql(query, vars)
        .await
        .map_err(|e| not_found_as(e, format!("job {id} not found (or not visible to you)")))?;
    let job = &data[field];
    if format.output != Format::Table {
        print_data(format.output, job)?;
    } else {
        let line =
            format!("job {} ({}) is {}\n", opt(text(job, "id")), opt(text(job, "name")), opt(text(job, "state")));
        output::write_stdout(line.as_bytes())?;
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_demand_counts_replicas_and_shares() {
        let spec = json!({ "tasks": [
            { "replicas": 4, "resources": { "gpus": 8 } },
            { "replicas": 2, "resources": { "gpus": 1, "gpu_milli": 250 } },
            { "replicas": 3, "resources": { "cpu_milli": 1000 } }
        ]});
        assert_eq!(job_gpu_milli(&spec), 32_500);
        assert_eq!(job_gpu_milli(&Value::Null), 0);
    }

    #[test]
    fn jobs_table_shows_borrowed_and_missing_cells() {
        let jobs = [json!({
            "id": "7", "name": "train", "state": "RUNNING", "borrowed": true, "priorityClass": "high",
            "clusterId": null, "submittedAt": "2026-11-02T10:04:05Z", "spec": { "tasks": [] },
            "project": { "slug": "demo" }, "queue": { "name": "default" }, "submitter": { "subject": "dev:alice" }
        })];
        let text = jobs_table(&jobs).render();
        let row = text.lines().nth(1).unwrap();
        assert_eq!(
            row.split("  ").filter(|c| !c.is_empty()).map(str::trim).collect::<Vec<_>>(),
            [
                "7",
                "train",
                "demo",
                "default",
                "RUNNING (borrowed)",
                "high",
                "0",
                "-",
                "dev:alice",
                "2026-11-02 10:04:05"
            ]
        );
    }

    #[test]
    fn detail_lists_why_pending_per_cluster() {
        let job = json!({
            "id": "9", "name": "big", "state": "ADMITTED", "spec": {}, "project": { "slug": "demo" },
            "queue": { "name": "default" }, "queuePosition": 3,
            "whyPending": { "summary": "no cluster has 64 free A100", "reasons": [
                { "cluster": "east", "stage": "capacity", "reason": "largest gang 32 GPUs" },
                { "cluster": "west", "stage": "gpu_model", "reason": "no A100-80GB" }
            ]},
            "tasks": [], "dispatches": [], "events": []
        });
        let text = render_job(&job);
        assert!(text.contains("Why pending:\n  no cluster has 64 free A100\n"), "{text}");
        assert!(text.contains("  west     gpu_model  no A100-80GB\n"), "{text}");
        assert!(text.contains("Position:   3 in demo/default (1: next), no estimated start\n"), "{text}");
    }

    #[test]
    fn detail_shows_how_each_replica_ended() {
        let job = json!({
            "id": "4", "name": "t", "state": "FAILED", "spec": {}, "project": { "slug": "demo" },
            "queue": { "name": "default" }, "dispatches": [], "events": [],
            "tasks": [{ "name": "main", "replicaCount": 3, "state": "failed", "replicas": [
                { "index": 0, "state": "failed", "exitCode": 137, "termination": "OOM_KILLED" },
                { "index": 1, "state": "evicted", "exitCode": null, "termination": "STOPPED" },
                { "index": 2, "state": "running", "exitCode": null, "termination": null }
            ]}]
        });
        let text = render_job(&job);
        assert!(text.contains("OOMKilled (137)"), "{text}");
        assert!(text.contains("Stopped\n"), "{text}");
        let running = text.lines().find(|l| l.contains("running")).unwrap();
        assert!(running.ends_with("running") || !running.contains('('), "no exit while it runs: {running}");
    }

    #[test]
    fn detail_shows_each_running_replicas_cpu_and_memory_and_the_jobs_peaks() {
        let job = json!({
            "id": "4", "name": "t", "state": "RUNNING", "spec": {}, "project": { "slug": "demo" },
            "queue": { "name": "default" }, "dispatches": [], "events": [],
            "utilization": { "avgBusyPct": 80.0, "maxBusyPct": 95.0, "lastBusyPct": 90.0, "usageSamples": 4,
                             "avgCpuCores": 3.46, "maxCpuCores": 4.0, "maxMemoryMib": 12288 },
            "tasks": [{ "name": "main", "replicaCount": 2, "state": "running", "replicas": [
                { "index": 0, "state": "running", "usage": { "cpuCores": 1.75, "memoryMib": 6144 } },
                { "index": 1, "state": "running", "usage": { "cpuCores": 0.5, "memoryMib": 700 } }
            ]}]
        });
        let text = render_job(&job);
        assert!(text.contains("avg 3.5 cores, max 4.0; memory max 12.0 GiB"), "{text}");
        let first = text.lines().find(|l| l.contains("1.75")).expect("replica 0's CPU");
        assert!(first.contains("6.0 GiB"), "{text}");
        assert!(text.lines().any(|l| l.contains("0.50") && l.contains("700 MiB")), "{text}");
    }

    #[test]
    fn detail_shows_the_estimated_start_and_the_predicted_run_time() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-28T10:00:00Z").unwrap().with_timezone(&chrono::Utc);
        let job = json!({
            "id": "9", "name": "train-8", "state": "ADMITTED", "spec": {}, "project": { "slug": "demo" },
            "queue": { "name": "default" }, "queuePosition": 3,
            "estimatedStart": { "at": "2026-11-28T10:14:10Z", "jobsAhead": 5 },
            "predictedRuntime": { "p50Seconds": 1800, "p90Seconds": 2400, "samples": 12, "basis": "same name" },
            "tasks": [], "dispatches": [], "events": []
        });
        let text = render_job_at(&job, now);
        assert!(text.contains("Position:   3 in demo/default (1: next), estimated start in ~14 min\n"), "{text}");
        assert!(
            text.contains("Run time:   ~30 min expected (p90 ~40 min; from 12 finished jobs: same name)\n"),
            "{text}"
        );
    }
}
