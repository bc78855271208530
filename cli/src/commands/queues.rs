//! `grus queues [QUEUE --project P] [--weight --borrow --max-wait --default-runtime
//! --max-runtime --workspace-reserve] [--project-weight --project-guarantee --project-limit]`: each queue with its
//! weight, fair share of the fleet's GPUs, borrowing, class of service, quotas and what its admitted jobs hold
//! now; with a queue and flags, a project admin changes its settings (`updateQueue`); with
//! project flags, a tenant admin changes the project's weight, guarantees and limits
//! (`setProjectShare`). GPU amounts (`gpu`, `gpu/<model>`, `pool/<pool>`) are shown in GPUs,
//! not milli.

use serde_json::{json, Value};

use super::jobs::text;
use super::Context;
use crate::cli::{amounts_var, DurationOrNone, QueuesArgs};
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, gpus_from_milli, opt, print_data, Format, Table};

const QUEUE_FIELDS: &str = "id name weight canBorrow maxWaitSeconds defaultRuntimeSeconds maxRuntimeSeconds
    suspendBorrowedDuring interactiveReserveGpus fairShare { fairGpus heldGpus } poolWeights { pool weight }
    quotas { resource guaranteed limit } usage { resource amount }";

const PROJECT_FIELDS: &str = "id slug name share { weight guarantees { resource amount } limits { resource amount } }";

/// A resource amount as people read it: GPUs for `gpu`, `gpu/<model>` and `pool/<pool>`, else
/// the number.
pub fn amount(resource: &str, value: i64) -> String {
    if resource == "gpu" || resource.starts_with("gpu/") || resource.starts_with("pool/") {
        gpus_from_milli(value)
    } else {
        value.to_string()
    }
}

pub async fn list(ctx: &mut Context, args: QueuesArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let mut projects: Vec<Value> = match &args.project {
        Some(slug) => {
            let q = format!(
                "query P($slug: String) {{ project(slug: $slug) {{ {PROJECT_FIELDS} queues {{ {QUEUE_FIELDS} }} }} }}"
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
            let q = format!("{{ projects {{ {PROJECT_FIELDS} queues {{ {QUEUE_FIELDS} }} }} }}");
            let data: Value = client.graphql(&q, json!({})).await?;
            data["projects"].as_array().cloned().unwrap_or_default()
        }
    };
    if args.project_weight.is_some() || !args.project_guarantee.is_empty() || !args.project_limit.is_empty() {
        let q = format!(
            "mutation($p: ID!, $w: Float, $g: [ResourceAmountInput!], $l: [ResourceAmountInput!]) {{
               setProjectShare(projectId: $p, weight: $w, guarantees: $g, limits: $l) {{ {PROJECT_FIELDS} }} }}"
        );
        let vars = json!({
            "p": projects[0]["id"],
            "w": args.project_weight,
            "g": amounts_var(&args.project_guarantee),
            "l": amounts_var(&args.project_limit),
        });
        let data: Value = client.graphql(&q, vars).await?;
        projects[0]["share"] = data["setProjectShare"]["share"].clone();
    }
    if let Some(name) = &args.queue {
        let project = &mut projects[0];
        let queues = project["queues"].as_array().cloned().unwrap_or_default();
        let Some(mut queue) = queues.into_iter().find(|q| q["name"] == name.as_str()) else {
            let slug = opt(text(project, "slug"));
            return Err(CliError::new(Exit::NotFound, format!("queue {name:?} not found in project {slug}")));
        };
        if let Some(vars) = changes(&args, &queue)? {
            let q = format!(
                "mutation($q: ID!, $weight: Float, $borrow: Boolean, $wait: Int, $def: Int, $max: Int,
                          $window: String, $pools: [PoolWeightInput!], $reserve: Float) {{
                   updateQueue(queueId: $q, weight: $weight, canBorrow: $borrow, maxWaitSeconds: $wait,
                               defaultRuntimeSeconds: $def, maxRuntimeSeconds: $max,
                               suspendBorrowedDuring: $window, poolWeights: $pools,
                               interactiveReserveGpus: $reserve) {{ {QUEUE_FIELDS} }} }}"
            );
            let data: Value = client.graphql(&q, vars).await?;
            queue = data["updateQueue"].clone();
        }
        project["queues"] = json!([queue]);
    }
    if args.output.output != Format::Table {
        print_data(args.output.output, &projects)?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(queues_table(&projects).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// The variables of `updateQueue` for the flags given, every setting not named kept as
/// `queue` has it (a variable left out would read as null); `None` when no flag asks for a change.
fn changes(args: &QueuesArgs, queue: &Value) -> CliResult<Option<Value>> {
    let durations = [
        ("maxWaitSeconds", args.max_wait),
        ("defaultRuntimeSeconds", args.default_runtime),
        ("maxRuntimeSeconds", args.max_runtime),
    ];
    let unchanged = args.weight.is_none()
        && args.borrow.is_none()
        && args.suspend_borrowed_during.is_none()
        && args.workspace_reserve.is_none()
        && args.pool_weight.is_empty();
    if unchanged && durations.iter().all(|(_, d)| d.is_none()) {
        return Ok(None);
    }
    let mut secs = Vec::new();
    for (field, flag) in durations {
        secs.push(match flag {
            None => queue[field].clone(),
            Some(DurationOrNone(None)) => Value::Null,
            Some(DurationOrNone(Some(d))) => {
                let whole = i32::try_from(d.as_secs()).ok().filter(|_| d.subsec_nanos() == 0);
                let Some(s) = whole else {
                    return Err(CliError::usage(format!("{field}: whole seconds up to about 68 years")));
                };
                json!(s)
            }
        });
    }
    Ok(Some(json!({
        "q": queue["id"],
        "weight": args.weight.map_or(queue["weight"].clone(), |w| json!(w)),
        "borrow": args.borrow.map_or(queue["canBorrow"].clone(), |b| json!(b)),
        "wait": secs[0], "def": secs[1], "max": secs[2],
        "window": match args.suspend_borrowed_during.as_deref() {
            None => queue["suspendBorrowedDuring"].clone(),
            Some("none") => Value::Null,
            Some(w) => json!(w),
        },
        // Left out (null): kept as it is.
        "reserve": args.workspace_reserve,
        // Left out (null): kept as they are.
        "pools": if args.pool_weight.is_empty() {
            Value::Null
        } else {
            args.pool_weight.iter().filter_map(|p| p.0.as_ref()).map(|(pool, w)| json!({ "pool": pool, "weight": w })).collect()
        },
    })))
}

/// A class-of-service duration as people read it (`-` when unset).
fn duration(q: &Value, field: &str) -> String {
    match q[field].as_u64() {
        Some(s) => humantime::format_duration(std::time::Duration::from_secs(s)).to_string(),
        None => "-".into(),
    }
}

/// A tenant's or project's guarantees or limits (`which`) as people read them
/// (`gpu=8, cpu_milli=4000`; `-`).
pub fn amounts(share: &Value, which: &str) -> String {
    let list = share[which].as_array().map(Vec::as_slice).unwrap_or_default();
    if list.is_empty() {
        return "-".into();
    }
    let each = list.iter().map(|g| {
        let resource = text(g, "resource").unwrap_or_default();
        format!("{resource}={}", amount(&resource, g["amount"].as_i64().unwrap_or(0)))
    });
    each.collect::<Vec<_>>().join(", ")
}

/// A project's slug, with its fair-share settings where they are not the defaults.
fn project_name(p: &Value) -> String {
    let mut name = opt(text(p, "slug"));
    let share = &p["share"];
    if share["weight"].as_f64().is_some_and(|w| w != 1.0) {
        name.push_str(&format!(" (weight {})", opt(text(share, "weight"))));
    }
    if share["guarantees"].as_array().is_some_and(|g| !g.is_empty()) {
        name.push_str(&format!(" (guaranteed {})", amounts(share, "guarantees")));
    }
    if share["limits"].as_array().is_some_and(|l| !l.is_empty()) {
        name.push_str(&format!(" (limit {})", amounts(share, "limits")));
    }
    name
}

/// A queue's weight, and its weights per node pool where they differ (`1.0 (train 3.0)`).
fn queue_weight(q: &Value) -> String {
    let pools: Vec<String> = q["poolWeights"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| format!("{} {}", opt(text(p, "pool")), opt(text(p, "weight"))))
        .collect();
    let weight = opt(text(q, "weight"));
    if pools.is_empty() {
        weight
    } else {
        format!("{weight} ({})", pools.join(", "))
    }
}

/// "4 of 8 GPUs": what the queue's work holds of its fair share.
fn fair_share(f: &Value) -> String {
    match (f["heldGpus"].as_f64(), f["fairGpus"].as_f64()) {
        (Some(held), Some(fair)) => {
            let gpus = |x: f64| gpus_from_milli((x * 1000.0).round() as i64);
            format!("{} of {}", gpus(held), gpus(fair))
        }
        _ => "-".into(),
    }
}

/// One row per queue and resource (a queue without quotas gets one row of dashes).
pub fn queues_table(projects: &[Value]) -> Table {
    let mut t = Table::new(&[
        "PROJECT",
        "QUEUE",
        "WEIGHT",
        "FAIR SHARE",
        "BORROW",
        "MAX WAIT",
        "RUNTIME",
        "MAX RUNTIME",
        "PAUSE BORROWED",
        "FOR WORKSPACES",
        "RESOURCE",
        "GUARANTEED",
        "LIMIT",
        "IN USE",
    ]);
    for p in projects {
        for q in p["queues"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let usage = q["usage"].as_array().map(Vec::as_slice).unwrap_or_default();
            let used = |resource: &str| {
                usage.iter().find(|u| u["resource"] == resource).and_then(|u| u["amount"].as_i64()).unwrap_or(0)
            };
            let head = vec![
                project_name(p),
                opt(text(q, "name")),
                queue_weight(q),
                fair_share(&q["fairShare"]),
                if q["canBorrow"] == true { "yes" } else { "no" }.to_owned(),
                duration(q, "maxWaitSeconds"),
                duration(q, "defaultRuntimeSeconds"),
                duration(q, "maxRuntimeSeconds"),
                text(q, "suspendBorrowedDuring").unwrap_or_else(|| "-".into()),
                match q["interactiveReserveGpus"].as_f64() {
                    Some(g) if g > 0.0 => gpus_from_milli((g * 1000.0).round() as i64),
                    _ => "-".into(),
                },
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
        let projects = [json!({ "slug": "demo", "share": { "weight": 2.0, "guarantees": [] }, "queues": [
            { "name": "default", "weight": 1.0, "canBorrow": true, "maxWaitSeconds": 3600, "maxRuntimeSeconds": 90000,
              "suspendBorrowedDuring": "09:00-18:00", "interactiveReserveGpus": 1.5, "fairShare": { "fairGpus": 6.5, "heldGpus": 2.5 },
              "quotas": [{ "resource": "gpu", "guaranteed": 8000, "limit": 16000 },
                         { "resource": "cpu_milli", "guaranteed": 0, "limit": null }],
              "usage": [{ "resource": "gpu", "amount": 2500 }] },
            { "name": "empty", "weight": 2.0, "canBorrow": false, "quotas": [], "usage": [] }
        ]})];
        let text = queues_table(&projects).render();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(
            lines[1],
            "demo (weight 2.0)  default  1.0     2.5 of 6.5  yes     1h        -        1day 1h      09:00-18:00     1.5             gpu        8           16     2.5"
        );
        assert_eq!(
            lines[2],
            "demo (weight 2.0)  default  1.0     2.5 of 6.5  yes     1h        -        1day 1h      09:00-18:00     1.5             cpu_milli  0           none   0"
        );
        assert_eq!(
            lines[3],
            "demo (weight 2.0)  empty    2.0     -           no      -         -        -            -               -               -          -           -      -"
        );
        assert_eq!(amount("pool/a100-train", 16_000), amount("gpu", 16_000), "a pool's quota is in GPUs too");
        assert_eq!(amount("memory_mib", 16_000), "16000");
        let pools = json!({ "weight": 2.0, "poolWeights": [{ "pool": "train", "weight": 3.0 }, { "pool": "infer", "weight": 0.5 }] });
        assert_eq!(queue_weight(&pools), "2.0 (train 3.0, infer 0.5)");
    }
}
