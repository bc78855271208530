//! `grus services` and `grus service apply|show|scale|load|delete`: inference services; and
//! `grus workspaces`, the interactive workspaces with their address. The
//! YAML is read by `crate::servicespec` (structural errors per field before anything is
//! sent); the API's VALIDATION errors are printed per field by the client.

use serde_json::{json, Value};

use super::jobs::{text, workspace_rule};
use super::submit::read_input;
use super::Context;
use crate::cli::{ServiceAction, ServiceArgs, ServiceName, ServicesArgs, WorkspacesArgs};
use crate::client::Client;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, opt, print_data, short_time, Format, Table};
use crate::servicespec;

const LIST_FIELDS: &str = "name project queue state revision minReplicas maxReplicas desiredReplicas readyReplicas
    image condition autoscaling { metric target scaleDownDelaySeconds }";

const DETAIL_FIELDS: &str = "name project queue owner state condition revision minReplicas maxReplicas
    desiredReplicas readyReplicas image port readinessPath maxSurge maxUnavailable requestsPerSecond
    autoscaling { metric target scaleDownDelaySeconds }
    replicasByCluster { clusterId replicas ready }
    replicas { id state clusterId spec }
    scalingHistory(limit: 20) { at fromReplicas toReplicas signal reason }
    revisions { revision image createdAt }";

/// The rule as people read it: `request rate 20/s per replica`, `GPU busy 60%`.
fn rule(s: &Value) -> String {
    let a = &s["autoscaling"];
    let target = a["target"].as_f64().unwrap_or(0.0);
    match a["metric"].as_str() {
        Some("REQUEST_RATE") => format!("request rate {target}/s per replica"),
        Some("GPU_UTILIZATION") => format!("GPU busy {target}%"),
        _ => "-".into(),
    }
}

pub async fn list(ctx: &mut Context, args: ServicesArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let q = format!("query($p: String) {{ services(project: $p) {{ {LIST_FIELDS} }} }}");
    let data: Value = client.graphql(&q, json!({ "p": args.project })).await?;
    let services = data["services"].as_array().cloned().unwrap_or_default();
    if args.output.output != Format::Table {
        print_data(args.output.output, &services)?;
        return Ok(Exit::Ok);
    }
    if services.is_empty() {
        output::write_stdout(b"No services. Create one with `grus service apply -f service.yaml`.\n")?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::new(&["PROJECT", "NAME", "STATE", "READY", "REPLICAS", "REV", "IMAGE", "AUTOSCALING"]);
    for s in &services {
        let mut state = opt(text(s, "state"));
        if let Some(c) = text(s, "condition") {
            state = format!("{state} ({c})");
        }
        t.row(vec![
            opt(text(s, "project")),
            opt(text(s, "name")),
            state,
            format!("{}/{}", opt(text(s, "readyReplicas")), opt(text(s, "desiredReplicas"))),
            format!("{}-{}", opt(text(s, "minReplicas")), opt(text(s, "maxReplicas"))),
            opt(text(s, "revision")),
            opt(text(s, "image")),
            rule(s),
        ]);
    }
    output::write_stdout(t.render().as_bytes())?;
    Ok(Exit::Ok)
}

/// The project of the named service: the given one, or the only visible project with a live
/// service of that name.
async fn project_of(client: &Client, service: &ServiceName) -> CliResult<String> {
    if let Some(p) = &service.project {
        return Ok(p.clone());
    }
    let data: Value = client.graphql("{ services { name project } }", json!({})).await?;
    let projects: Vec<String> = data["services"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == service.name.as_str())
        .filter_map(|s| text(s, "project"))
        .collect();
    match projects.as_slice() {
        [one] => Ok(one.clone()),
        [] => {
            Err(CliError::new(Exit::NotFound, format!("service {:?} not found (or not visible to you)", service.name)))
        }
        many => Err(CliError::usage(format!(
            "service {:?} exists in several projects ({}): give --project",
            service.name,
            many.join(", ")
        ))),
    }
}

fn not_found(e: CliError, project: &str, name: &str) -> CliError {
    if e.exit == Exit::NotFound {
        CliError::new(
            Exit::NotFound,
            format!("service {name:?} not found in project {project} (or not visible to you)"),
        )
    } else {
        e
    }
}

pub async fn run(ctx: &mut Context, args: ServiceArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    match args.action {
        ServiceAction::Apply { file, output: out } => {
            let yaml = read_input(&file)?;
            let input = servicespec::parse(&yaml).map_err(|errors| {
                CliError::new(Exit::Validation, format!("{}: invalid service file:", file.display()))
                    .with_details(errors.into_iter().map(|e| format!("{}: {}", e.field, e.message)).collect())
            })?;
            let q = format!(
                "mutation($input: ServiceInput!) {{ applyService(input: $input) {{ applied service {{ {LIST_FIELDS} }} }} }}"
            );
            let data: Value = client.graphql(&q, json!({ "input": input })).await?;
            let payload = &data["applyService"];
            if out.output != Format::Table {
                print_data(out.output, payload)?;
                return Ok(Exit::Ok);
            }
            let s = &payload["service"];
            let (name, project, rev) = (opt(text(s, "name")), opt(text(s, "project")), opt(text(s, "revision")));
            let line = match payload["applied"].as_str() {
                Some("CREATED") => format!("service {name} created in {project} (revision {rev})\n"),
                Some("NEW_REVISION") => format!("service {name} in {project}: revision {rev}, rolling out\n"),
                _ => format!("service {name} in {project} updated (revision {rev} unchanged)\n"),
            };
            output::write_stdout(line.as_bytes())?;
        }
        ServiceAction::Show { service, output: out } => {
            let project = project_of(&client, &service).await?;
            let q =
                format!("query($p: String!, $n: String!) {{ service(project: $p, name: $n) {{ {DETAIL_FIELDS} }} }}");
            let data: Value = client
                .graphql(&q, json!({ "p": project, "n": service.name }))
                .await
                .map_err(|e| not_found(e, &project, &service.name))?;
            if out.output != Format::Table {
                print_data(out.output, &data["service"])?;
                return Ok(Exit::Ok);
            }
            output::write_stdout(render_service(&data["service"]).as_bytes())?;
        }
        ServiceAction::Scale { service, replicas, min, max } => {
            if replicas.is_none() && min.is_none() && max.is_none() {
                return Err(CliError::usage("give --replicas, --min or --max"));
            }
            let project = project_of(&client, &service).await?;
            let q = "mutation($p: String!, $n: String!, $r: Int, $min: Int, $max: Int) {
                scaleService(project: $p, name: $n, replicas: $r, minReplicas: $min, maxReplicas: $max) {
                  name desiredReplicas minReplicas maxReplicas } }";
            let vars = json!({ "p": project, "n": service.name, "r": replicas, "min": min, "max": max });
            let data: Value = client.graphql(q, vars).await.map_err(|e| not_found(e, &project, &service.name))?;
            let s = &data["scaleService"];
            let line = format!(
                "service {} in {project}: {} replicas (min {}, max {})\n",
                opt(text(s, "name")),
                opt(text(s, "desiredReplicas")),
                opt(text(s, "minReplicas")),
                opt(text(s, "maxReplicas"))
            );
            output::write_stdout(line.as_bytes())?;
        }
        ServiceAction::Load { service, requests_per_second } => {
            let project = project_of(&client, &service).await?;
            let q = "mutation($p: String!, $n: String!, $r: Float!) {
                setServiceLoad(project: $p, name: $n, requestsPerSecond: $r) { name requestsPerSecond } }";
            let vars = json!({ "p": project, "n": service.name, "r": requests_per_second });
            client.graphql::<Value>(q, vars).await.map_err(|e| not_found(e, &project, &service.name))?;
            let line = format!("service {} in {project}: {requests_per_second} requests/s\n", service.name);
            output::write_stdout(line.as_bytes())?;
        }
        ServiceAction::Delete { service } => {
            let project = project_of(&client, &service).await?;
            let q = "mutation($p: String!, $n: String!) { deleteService(project: $p, name: $n) { name } }";
            client
                .graphql::<Value>(q, json!({ "p": project, "n": service.name }))
                .await
                .map_err(|e| not_found(e, &project, &service.name))?;
            output::write_stdout(format!("service {} in {project} deleted\n", service.name).as_bytes())?;
        }
    }
    Ok(Exit::Ok)
}

/// The `grus service show` detail view.
pub fn render_service(s: &Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let field = |out: &mut String, name: &str, value: String| {
        let _ = writeln!(out, "{:<13}{value}", format!("{name}:"));
    };
    field(&mut out, "Service", format!("{} / {}", opt(text(s, "project")), opt(text(s, "name"))));
    let mut state = opt(text(s, "state"));
    if let Some(c) = text(s, "condition") {
        state = format!("{state} ({c})");
    }
    field(&mut out, "State", state);
    field(
        &mut out,
        "Replicas",
        format!(
            "{} ready of {} (min {}, max {})",
            opt(text(s, "readyReplicas")),
            opt(text(s, "desiredReplicas")),
            opt(text(s, "minReplicas")),
            opt(text(s, "maxReplicas"))
        ),
    );
    field(&mut out, "Revision", format!("{} ({})", opt(text(s, "revision")), opt(text(s, "image"))));
    let readiness = text(s, "readinessPath").map(|p| format!(", ready when GET {p} answers")).unwrap_or_default();
    field(&mut out, "Port", format!("{}{readiness}", opt(text(s, "port"))));
    field(&mut out, "Autoscaling", rule(s));
    if let Some(rps) = s["requestsPerSecond"].as_f64() {
        field(&mut out, "Load", format!("{rps} requests/s"));
    }
    field(
        &mut out,
        "Rollout",
        format!("max surge {}, max unavailable {}", opt(text(s, "maxSurge")), opt(text(s, "maxUnavailable"))),
    );
    field(&mut out, "Owner", opt(text(s, "owner")));
    let mut by_cluster = Table::new(&["CLUSTER", "REPLICAS", "READY"]);
    for c in s["replicasByCluster"].as_array().into_iter().flatten() {
        let cluster = text(c, "clusterId").unwrap_or_else(|| "(not placed)".into());
        by_cluster.row(vec![cluster, opt(text(c, "replicas")), opt(text(c, "ready"))]);
    }
    if !by_cluster.is_empty() {
        out.push('\n');
        out.push_str(&by_cluster.render());
    }
    let mut replicas = Table::new(&["JOB", "STATE", "CLUSTER", "REVISION"]);
    for r in s["replicas"].as_array().into_iter().flatten() {
        replicas.row(vec![
            opt(text(r, "id")),
            opt(text(r, "state")),
            opt(text(r, "clusterId")),
            opt(r["spec"]["service"]["revision"].as_i64()),
        ]);
    }
    if !replicas.is_empty() {
        out.push('\n');
        out.push_str(&replicas.render());
    }
    let mut history = Table::new(&["AT", "FROM", "TO", "SIGNAL", "REASON"]);
    for e in s["scalingHistory"].as_array().into_iter().flatten() {
        history.row(vec![
            text(e, "at").map(|t| short_time(&t)).unwrap_or_default(),
            opt(text(e, "fromReplicas")),
            opt(text(e, "toReplicas")),
            e["signal"].as_f64().map(|v| format!("{v}")).unwrap_or_else(|| "-".into()),
            opt(text(e, "reason")),
        ]);
    }
    if !history.is_empty() {
        out.push_str("\nScaling history:\n");
        out.push_str(&history.render());
    }
    out
}

/// `grus workspaces`: the interactive workspaces that have not ended, with their idle rule and
/// address, in the projects you see (one with `--project`).
pub async fn workspaces(ctx: &mut Context, args: WorkspacesArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let projects: Vec<String> = match &args.project {
        Some(p) => vec![p.clone()],
        None => {
            let data: Value = client.graphql("{ projects { slug } }", json!({})).await?;
            data["projects"].as_array().into_iter().flatten().filter_map(|p| text(p, "slug")).collect()
        }
    };
    let q = "query($p: String!) { workloads(project: $p) { workloadType
        ... on Job { id name state projectSlug ownerSubject endpoint submittedAt
                     workspace { port idleTimeoutSeconds idleAction } } } }";
    let mut rows: Vec<Value> = Vec::new();
    for p in &projects {
        let data: Value = client.graphql(q, json!({ "p": p })).await.map_err(|e| {
            if e.exit == Exit::NotFound {
                CliError::new(Exit::NotFound, format!("project {p:?} not found (or not visible to you)"))
            } else {
                e
            }
        })?;
        rows.extend(
            data["workloads"].as_array().into_iter().flatten().filter(|w| w["workloadType"] == "WORKSPACE").cloned(),
        );
    }
    if args.output.output != Format::Table {
        print_data(args.output.output, &rows)?;
        return Ok(Exit::Ok);
    }
    if rows.is_empty() {
        output::write_stdout(b"No workspaces. Submit one with `grus submit examples/jobs/workspace.yaml`.\n")?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::new(&["ID", "NAME", "PROJECT", "STATE", "USER", "RULE", "ADDRESS"]);
    for w in &rows {
        t.row(vec![
            opt(text(w, "id")),
            opt(text(w, "name")),
            opt(text(w, "projectSlug")),
            opt(text(w, "state")),
            opt(text(w, "ownerSubject")),
            workspace_rule(&w["workspace"]),
            text(w, "endpoint").unwrap_or_else(|| "-".into()),
        ]);
    }
    output::write_stdout(t.render().as_bytes())?;
    Ok(Exit::Ok)
}
