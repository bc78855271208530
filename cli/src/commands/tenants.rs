//! `grus tenants [TENANT] [--max-priority --may-preempt --reclaim-from --reclaim-from-any
//! --weight --guarantee --limit]`: the tenants the caller sees with their rights and fair-share
//! settings; with a tenant and flags, a platform admin changes that tenant's rights
//! (`setTenantRights`) or its weight, guarantees and limits (`setTenantShare`).

use serde_json::{json, Value};

use super::jobs::text;
use super::queues::amounts;
use super::Context;
use crate::cli::{amounts_var, TenantsArgs};
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, opt, print_data, Format, Table};

const FIELDS: &str = "id slug name rights { maxPriorityClass mayPreempt reclaimFromAny reclaimFrom }
    share { weight guarantees { resource amount } limits { resource amount } }";

pub async fn run(ctx: &mut Context, args: TenantsArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let data: Value = client.graphql(&format!("{{ tenants {{ {FIELDS} }} }}"), json!({})).await?;
    let mut tenants = data["tenants"].as_array().cloned().unwrap_or_default();
    let id_of =
        |tenants: &[Value], slug: &str| -> CliResult<String> {
            tenants.iter().find(|t| t["slug"] == slug).and_then(|t| text(t, "id")).ok_or_else(|| {
                CliError::new(Exit::NotFound, format!("tenant {slug:?} not found (or not visible to you)"))
            })
        };
    if let Some(slug) = &args.tenant {
        let id = id_of(&tenants, slug)?;
        let rights = args.max_priority.is_some()
            || args.may_preempt.is_some()
            || args.reclaim_from.is_some()
            || args.reclaim_from_any;
        if rights {
            let from = match &args.reclaim_from {
                Some(slugs) => Some(
                    slugs
                        .iter()
                        .filter(|s| !s.is_empty())
                        .map(|s| id_of(&tenants, s))
                        .collect::<CliResult<Vec<_>>>()?,
                ),
                None => None,
            };
            let q = format!(
                "mutation($t: ID!, $class: String, $may: Boolean, $any: Boolean, $from: [ID!]) {{
                   setTenantRights(tenantId: $t, maxPriorityClass: $class, mayPreempt: $may,
                                   reclaimFromAny: $any, reclaimFrom: $from) {{ {FIELDS} }} }}"
            );
            let vars = json!({
                "t": id,
                "class": args.max_priority,
                "may": args.may_preempt,
                "any": args.reclaim_from_any.then_some(true),
                "from": from,
            });
            let data: Value = client.graphql(&q, vars).await?;
            tenants = vec![data["setTenantRights"].clone()];
        } else {
            tenants.retain(|t| t["slug"] == slug.as_str());
        }
        if args.weight.is_some() || !args.guarantee.is_empty() || !args.limit.is_empty() {
            let q = format!(
                "mutation($t: ID!, $w: Float, $g: [ResourceAmountInput!], $l: [ResourceAmountInput!]) {{
                   setTenantShare(tenantId: $t, weight: $w, guarantees: $g, limits: $l) {{ {FIELDS} }} }}"
            );
            let vars =
                json!({ "t": id, "w": args.weight, "g": amounts_var(&args.guarantee), "l": amounts_var(&args.limit) });
            let data: Value = client.graphql(&q, vars).await?;
            tenants = vec![data["setTenantShare"].clone()];
        }
    }
    if args.output.output != Format::Table {
        print_data(args.output.output, &tenants)?;
        return Ok(Exit::Ok);
    }
    let all = data["tenants"].as_array().cloned().unwrap_or_default();
    output::write_stdout(tenants_table(&tenants, &all).render().as_bytes())?;
    Ok(Exit::Ok)
}

/// One row per tenant; RECLAIM FROM names tenants by slug where `all` has them.
pub fn tenants_table(tenants: &[Value], all: &[Value]) -> Table {
    let slug_of = |id: &Value| {
        all.iter()
            .find(|t| t["id"] == *id)
            .and_then(|t| text(t, "slug"))
            .unwrap_or_else(|| format!("#{}", opt(id.as_str().map(str::to_owned))))
    };
    let mut t =
        Table::new(&["TENANT", "NAME", "MAX PRIORITY", "MAY PREEMPT", "RECLAIM FROM", "WEIGHT", "GUARANTEED", "LIMIT"]);
    for tenant in tenants {
        let r = &tenant["rights"];
        let from = if r["reclaimFromAny"] == true {
            "any tenant".to_owned()
        } else {
            let named: Vec<String> =
                r["reclaimFrom"].as_array().map(Vec::as_slice).unwrap_or_default().iter().map(slug_of).collect();
            std::iter::once("own".to_owned()).chain(named).collect::<Vec<_>>().join(", ")
        };
        t.row(vec![
            opt(text(tenant, "slug")),
            opt(text(tenant, "name")),
            opt(text(r, "maxPriorityClass")),
            if r["mayPreempt"] == true { "yes" } else { "no" }.to_owned(),
            from,
            opt(text(&tenant["share"], "weight")),
            amounts(&tenant["share"], "guarantees"),
            amounts(&tenant["share"], "limits"),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_read_as_people_say_them() {
        let all = [
            json!({ "id": "1", "slug": "acme", "name": "Acme", "rights": {
                "maxPriorityClass": "high", "mayPreempt": true, "reclaimFromAny": true, "reclaimFrom": [] },
                "share": { "weight": 2.0, "guarantees": [{ "resource": "gpu", "amount": 8500 }],
                           "limits": [{ "resource": "gpu", "amount": 0 }] } }),
            json!({ "id": "2", "slug": "lab", "name": "Lab", "rights": {
                "maxPriorityClass": "normal", "mayPreempt": false, "reclaimFromAny": false, "reclaimFrom": ["1", "9"] } }),
        ];
        let text = tenants_table(&all, &all).render();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines[1], "acme    Acme  high          yes          any tenant     2.0     gpu=8.5     gpu=0");
        assert_eq!(lines[2], "lab     Lab   normal        no           own, acme, #9  -       -           -");
    }
}
