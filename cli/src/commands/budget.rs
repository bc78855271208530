//! `grus budget --project P | --tenant T [--set AMOUNT --unit --warn-at --soft-only | --remove]`:
//! a monthly budget and where the month stands against it (spent, committed by running work,
//! status); setting or removing one is for tenant admins (projects) and platform admins
//! (tenants).

use serde_json::{json, Value};

use super::jobs::text;
use super::Context;
use crate::cli::BudgetArgs;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, print_data, Format, Table};

const FIELDS: &str =
    "unit unitLabel amount amountValue softPercent hard suspendBorrowed periodStart periodEnd spent spentValue
    committed committedValue status";

/// The budget's owner as `setBudget` names it: (`projectId` | `tenantId`, id).
async fn owner(client: &crate::client::Client, args: &BudgetArgs) -> CliResult<(&'static str, String)> {
    if let Some(slug) = &args.project {
        let data: Value =
            client.graphql("query($s: String!) { project(slug: $s) { id } }", json!({ "s": slug })).await?;
        return Ok(("projectId", text(&data["project"], "id").unwrap_or_default()));
    }
    let slug = args.tenant.as_deref().unwrap_or_default();
    let data: Value = client.graphql("{ tenants { id slug } }", json!({})).await?;
    let tenants = data["tenants"].as_array().cloned().unwrap_or_default();
    let id =
        tenants.iter().find(|t| t["slug"] == slug).and_then(|t| text(t, "id")).ok_or_else(|| {
            CliError::new(Exit::NotFound, format!("tenant {slug:?} not found (or not visible to you)"))
        })?;
    Ok(("tenantId", id))
}

pub async fn run(ctx: &mut Context, args: BudgetArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let (key, id) = owner(&client, &args).await?;
    let budget = if let Some(amount) = &args.set {
        let q = format!(
            "mutation($id: ID!, $u: BudgetUnit!, $a: String!, $s: Int!, $h: Boolean!, $b: Boolean!) {{
               setBudget({key}: $id, unit: $u, amount: $a, softPercent: $s, hard: $h, suspendBorrowed: $b) {{ {FIELDS} }} }}"
        );
        let vars = json!({ "id": id, "u": args.unit.api_name(), "a": amount, "s": args.warn_at, "h": !args.soft_only,
            "b": args.suspend_borrowed });
        client.graphql::<Value>(&q, vars).await?["setBudget"].clone()
    } else if args.remove {
        let q = format!("mutation($id: ID!) {{ removeBudget({key}: $id) }}");
        let removed = client.graphql::<Value>(&q, json!({ "id": id })).await?["removeBudget"] == true;
        eprintln!("{}", if removed { "budget removed" } else { "there was no budget" });
        return Ok(Exit::Ok);
    } else {
        let q = match key {
            "projectId" => format!("query($id: ID!) {{ project(id: $id) {{ budget {{ {FIELDS} }} }} }}"),
            _ => format!("{{ tenants {{ id budget {{ {FIELDS} }} }} }}"),
        };
        let data: Value = client.graphql(&q, json!({ "id": id })).await?;
        match key {
            "projectId" => data["project"]["budget"].clone(),
            _ => data["tenants"]
                .as_array()
                .and_then(|ts| ts.iter().find(|t| text(t, "id").as_deref() == Some(id.as_str())))
                .map(|t| t["budget"].clone())
                .unwrap_or(Value::Null),
        }
    };
    if args.output.output != Format::Table {
        print_data(args.output.output, &budget)?;
        return Ok(Exit::Ok);
    }
    if budget.is_null() {
        output::write_stdout(b"no budget set\n")?;
        return Ok(Exit::Ok);
    }
    output::write_stdout(budget_table(&budget).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// One row: the month's budget, what it spent and committed, in the unit, and its status.
pub fn budget_table(b: &Value) -> Table {
    let mut t = Table::new(&["MONTH", "BUDGET", "SPENT", "COMMITTED", "USED", "WARN AT", "ON REACHING", "STATUS"]);
    let amount = b["amountValue"].as_f64().unwrap_or(0.0);
    let used = b["spentValue"].as_f64().unwrap_or(0.0) + b["committedValue"].as_f64().unwrap_or(0.0);
    let unit = text(b, "unitLabel").unwrap_or_default();
    let money = |v: f64| format!("{v:.2} {unit}");
    t.row(vec![
        text(b, "periodStart").map(|s| s.chars().take(7).collect()).unwrap_or_default(),
        money(amount),
        money(b["spentValue"].as_f64().unwrap_or(0.0)),
        money(b["committedValue"].as_f64().unwrap_or(0.0)),
        if amount > 0.0 { format!("{:.0}%", used / amount * 100.0) } else { "-".into() },
        format!("{}%", b["softPercent"].as_i64().unwrap_or(0)),
        if b["suspendBorrowed"] == true {
            "refuse, suspend borrowed"
        } else if b["hard"] == true {
            "refuse new jobs"
        } else {
            "warn only"
        }
        .to_owned(),
        text(b, "status").unwrap_or_default().to_lowercase(),
    ]);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_in_the_unit_with_two_decimals() {
        let b = json!({ "unit": "GPU_HOURS", "unitLabel": "GPU-hours", "amountValue": 100.0, "softPercent": 80,
            "hard": true, "periodStart": "2026-11-01T00:00:00Z", "spentValue": 70.25, "committedValue": 12.5,
            "status": "WARNING" });
        let text = budget_table(&b).render();
        let row = text.lines().nth(1).unwrap();
        for want in [
            "2026-11",
            "100.00 GPU-hours",
            "70.25 GPU-hours",
            "12.50 GPU-hours",
            "83%",
            "80%",
            "refuse new jobs",
            "warning",
        ] {
            assert!(row.contains(want), "{want} in {row}");
        }
    }
}
