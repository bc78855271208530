//! `grus queues [--project]`: each queue with its weight, borrowing, quotas and what its
//! admitted jobs hold now. GPU amounts (`gpu`, `gpu/<model>`) are shown in GPUs, not milli.

use serde_json::{json, Value};

use super::jobs::text;
use super::Context;
use crate::cli::QueuesArgs;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, gpus_from_milli, opt, print_data, Format, Table};

const QUEUE_FIELDS: &str = "id name weight canBorrow quotas { resource guaranteed limit } usage { resource amount }";

/// A resource amount as people read it: GPUs for `gpu` and `gpu/<model>`, else the number.
pub fn amount(resource: &str, value: i64) -> String {
    if resource == "gpu" || resource.starts_with("gpu/") {
        gpus_from_milli(value)
    } else {
        value.to_string()
    }
}

pub async fn list(ctx: &mut Context, args: QueuesArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let projects: Vec<Value> = match &args.project {
        Some(slug) => {
            let q = format!(
                "query P($slug: String) {{ project(slug: $slug) {{ slug name queues {{ {QUEUE_FIELDS} }} }} }}"
            );
            let data: Value = client.graphql(&q, json!({ "slug": slug })).await.map_err(|e| {
                if e.exit == Exit::NotFound {
                    CliError::new(Exit::NotFound, format!("project {slug:?} not found (or not visible to you)"))
                } else {
                    e
                }
            })?;
            vec![data["project"].clone()]
        }
        None => {
            let q = format!("{{ projects {{ slug name queues {{ {QUEUE_FIELDS} }} }} }}");
            let data: Value = client.graphql(&q, json!({})).await?;
            data["projects"].as_array().cloned().unwrap_or_default()
        }
    };
    if args.output.output != Format::Table {
        print_data(args.output.output, &projects)?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(queues_table(&projects).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// One row per queue and resource (a queue without quotas gets one row of dashes).
pub fn queues_table(projects: &[Value]) -> Table {
    let mut t = Table::new(&["PROJECT", "QUEUE", "WEIGHT", "BORROW", "RESOURCE", "GUARANTEED", "LIMIT", "IN USE"]);
    for p in projects {
        for q in p["queues"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let usage = q["usage"].as_array().map(Vec::as_slice).unwrap_or_default();
            let used = |resource: &str| {
                usage.iter().find(|u| u["resource"] == resource).and_then(|u| u["amount"].as_i64()).unwrap_or(0)
            };
            let head = vec![
                opt(text(p, "slug")),
                opt(text(q, "name")),
                opt(text(q, "weight")),
                if q["canBorrow"] == true { "yes" } else { "no" }.to_owned(),
            ];
            let quotas = q["quotas"].as_array().map(Vec::as_slice).unwrap_or_default();
            if quotas.is_empty() {
                t.row(head.iter().cloned().chain(["-", "-", "-", "-"].map(String::from)).collect());
            }
            for quota in quotas {
                let resource = text(quota, "resource").unwrap_or_default();
                let limit = match quota["limit"].as_i64() {
                    Some(l) => amount(&resource, l),
                    None => "none".into(),
                };
                let mut row = head.clone();
                row.extend([
                    resource.clone(),
                    amount(&resource, quota["guaranteed"].as_i64().unwrap_or(0)),
                    limit,
                    amount(&resource, used(&resource)),
                ]);
                t.row(row);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_quotas_are_in_gpus() {
        let projects = [json!({ "slug": "demo", "queues": [
            { "name": "default", "weight": 1.0, "canBorrow": true,
              "quotas": [{ "resource": "gpu", "guaranteed": 8000, "limit": 16000 },
                         { "resource": "cpu_milli", "guaranteed": 0, "limit": null }],
              "usage": [{ "resource": "gpu", "amount": 2500 }] },
            { "name": "empty", "weight": 2.0, "canBorrow": false, "quotas": [], "usage": [] }
        ]})];
        let text = queues_table(&projects).render();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines[1], "demo     default  1.0     yes     gpu        8           16     2.5");
        assert_eq!(lines[2], "demo     default  1.0     yes     cpu_milli  0           none   0");
        assert_eq!(lines[3], "demo     empty    2.0     no      -          -           -      -");
    }
}
