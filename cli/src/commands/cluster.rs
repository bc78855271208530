//! `grus clusters`: every registered cluster, its health, free GPUs per model and node pools;
//! `grus cluster cordon|drain|uncordon|retire`: a platform admin's operations on a cluster or
//! one of its nodes.

use serde_json::{json, Value};

use super::jobs::text;
use super::Context;
use crate::cli::{ClusterAction, ClusterArgs, OutputArgs};
use crate::exit::{CliResult, Exit};
use crate::output::{self, opt, print_data, short_time, Format, Table};

const QUERY: &str = "{ clusters { id displayName health cordoned lastHeartbeat agentVersion
  capacity { model totalGpus freeWholeGpus } pools { name nodes totalGpus freeWholeGpus } } }";

pub async fn list(ctx: &mut Context, args: OutputArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let data: Value = client.graphql(QUERY, json!({})).await?;
    let clusters = data["clusters"].as_array().cloned().unwrap_or_default();
    if args.output != Format::Table {
        print_data(args.output, &clusters)?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(clusters_table(&clusters).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// Carries out one operation and prints what the cluster (or node) is now.
pub async fn operate(ctx: &mut Context, args: ClusterArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let fields = "id cordoned draining retiredAt nodes { name cordoned draining }";
    let (mutation, vars, node) = match &args.action {
        ClusterAction::Cordon { target } | ClusterAction::Uncordon { target } => {
            let verb = if matches!(args.action, ClusterAction::Cordon { .. }) { "cordon" } else { "uncordon" };
            match &target.node {
                Some(node) => (
                    format!("{verb}Node(clusterId: $c, node: $n)"),
                    json!({ "c": target.cluster, "n": node }),
                    Some(node.clone()),
                ),
                None => (format!("{verb}Cluster(id: $c)"), json!({ "c": target.cluster }), None),
            }
        }
        ClusterAction::Drain { target, grace } => {
            let g = i64::try_from(grace.as_secs()).unwrap_or(i64::MAX);
            match &target.node {
                Some(node) => (
                    "drainNode(clusterId: $c, node: $n, graceSeconds: $g)".to_owned(),
                    json!({ "c": target.cluster, "n": node, "g": g }),
                    Some(node.clone()),
                ),
                None => {
                    ("drainCluster(id: $c, graceSeconds: $g)".to_owned(), json!({ "c": target.cluster, "g": g }), None)
                }
            }
        }
        ClusterAction::Retire { cluster } => ("retireCluster(id: $c)".to_owned(), json!({ "c": cluster }), None),
    };
    // Only the variables the mutation uses may be declared.
    let mut declared = vec!["$c: String!"];
    if vars.get("n").is_some() {
        declared.push("$n: String!");
    }
    if vars.get("g").is_some() {
        declared.push("$g: Int!");
    }
    let q = format!("mutation({}) {{ result: {mutation} {{ {fields} }} }}", declared.join(", "));
    let data: Value = client.graphql(&q, vars).await?;
    let c = &data["result"];
    let line = match &node {
        Some(node) => {
            let n = c["nodes"].as_array().and_then(|ns| ns.iter().find(|n| n["name"] == node.as_str()));
            let state = match n {
                Some(n) if n["draining"] == true => "cordoned, draining",
                Some(n) if n["cordoned"] == true => "cordoned",
                _ => "schedulable",
            };
            format!("node {node} of cluster {}: {state}\n", opt(text(c, "id")))
        }
        None => {
            let state = if c["retiredAt"].is_string() {
                "retired"
            } else if c["draining"] == true {
                "cordoned, draining"
            } else if c["cordoned"] == true {
                "cordoned"
            } else {
                "schedulable"
            };
            format!("cluster {}: {state}\n", opt(text(c, "id")))
        }
    };
    output::write_stdout(line.as_bytes())?;
    Ok(Exit::Ok)
}

/// One row per cluster; GPUS lists `model free/total` per model, POOLS `pool free/total`.
pub fn clusters_table(clusters: &[Value]) -> Table {
    let mut t = Table::new(&[
        "ID",
        "NAME",
        "HEALTH",
        "CORDONED",
        "GPUS (FREE/TOTAL)",
        "POOLS (FREE/TOTAL)",
        "HEARTBEAT",
        "AGENT",
    ]);
    for c in clusters {
        let pools = free_of_total(&c["pools"], "name");
        let gpus = free_of_total(&c["capacity"], "model");
        t.row(vec![
            opt(text(c, "id")),
            opt(text(c, "displayName")),
            opt(text(c, "health")),
            if c["cordoned"] == true { "yes" } else { "no" }.to_owned(),
            if gpus.is_empty() { "-".to_owned() } else { gpus.join(", ") },
            if pools.is_empty() { "-".to_owned() } else { pools.join(", ") },
            text(c, "lastHeartbeat").map(|t| short_time(&t)).unwrap_or_else(|| "-".into()),
            opt(text(c, "agentVersion")),
        ]);
    }
    t
}

/// `name free/total` for each entry of a list of capacities, named by `key`.
fn free_of_total(list: &Value, key: &str) -> Vec<String> {
    let entries = list.as_array().map(Vec::as_slice).unwrap_or_default();
    entries
        .iter()
        .map(|e| format!("{} {}/{}", opt(text(e, key)), opt(text(e, "freeWholeGpus")), opt(text(e, "totalGpus"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_per_model() {
        let clusters = [json!({ "id": "east", "displayName": null, "health": "healthy", "cordoned": false,
            "lastHeartbeat": "2026-11-02T10:00:00Z", "agentVersion": "0.1.0",
            "capacity": [{ "model": "A100-80GB", "totalGpus": 32, "freeWholeGpus": 24 },
                         { "model": "T4", "totalGpus": 4, "freeWholeGpus": 4 }],
            "pools": [{ "name": "a100-train", "nodes": 2, "totalGpus": 16, "freeWholeGpus": 8 }] })];
        let text = clusters_table(&clusters).render();
        assert!(text.lines().nth(1).unwrap().contains("A100-80GB 24/32, T4 4/4"), "{text}");
        assert!(text.lines().nth(1).unwrap().contains("a100-train 8/16"), "{text}");
    }
}
