//! `grus submit job.yaml [--wait | --dry-run]`: the YAML is read like the portal reads it
//! (`crate::jobspec`); structural errors are printed per field before anything is sent, and
//! the API's VALIDATION errors per field after.

use std::io::Read as _;

use serde_json::{json, Value};

use super::jobs::text;
use super::{wait, Context};
use crate::cli::SubmitArgs;
use crate::exit::{CliError, CliResult, Exit};
use crate::jobspec;
use crate::output::{self, opt, print_data, Format, Table};

const SUBMIT: &str = "mutation Submit($input: JobInput!) {
  submitJob(input: $input) { borrowed job { id name state priorityClass project { slug } queue { name } } }
}";

const DRY_RUN: &str = "mutation DryRun($input: JobInput!) {
  dryRunJob(input: $input) {
    admitted borrowed cluster
    quotaExceeded { queue resource used demand limit }
    whyPending { summary reasons { cluster stage reason } }
  }
}";

pub(super) fn read_input(path: &std::path::Path) -> CliResult<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| CliError::generic(format!("cannot read stdin: {e}")))?;
        return Ok(s);
    }
    std::fs::read_to_string(path).map_err(|e| {
        let exit = if e.kind() == std::io::ErrorKind::NotFound { Exit::NotFound } else { Exit::Generic };
        CliError::new(exit, format!("cannot read {}: {e}", path.display()))
    })
}

pub async fn submit(ctx: &mut Context, args: SubmitArgs) -> CliResult<Exit> {
    let yaml = read_input(&args.file)?;
    let input = jobspec::parse(&yaml).map_err(|errors| {
        CliError::new(Exit::Validation, format!("{}: invalid job file:", args.file.display()))
            .with_details(errors.into_iter().map(|e| format!("{}: {}", e.field, e.message)).collect())
    })?;
    let client = ctx.client().await?;
    let format = args.output.output;
    if args.dry_run {
        let data: Value = client.graphql(DRY_RUN, json!({ "input": input })).await?;
        let result = &data["dryRunJob"];
        if format != Format::Table {
            print_data(format, result)?;
        } else {
            output::write_stdout(render_dry_run(result).as_bytes())?;
        }
        return Ok(Exit::Ok);
    }
    let data: Value = client.graphql(SUBMIT, json!({ "input": input })).await?;
    let payload = &data["submitJob"];
    let job = &payload["job"];
    let id = text(job, "id").ok_or_else(|| CliError::generic("the API returned a job without an id"))?;
    let borrowed = if payload["borrowed"] == true { " (borrowing above the queue's guarantee)" } else { "" };
    let line = format!(
        "job {id} ({}) submitted to {}/{}: {}{borrowed}\n",
        opt(text(job, "name")),
        opt(text(job, "project.slug")),
        opt(text(job, "queue.name")),
        opt(text(job, "state")),
    );
    if format == Format::Table {
        output::write_stdout(line.as_bytes())?;
    } else if args.wait {
        // stdout carries only the final JSON/YAML; the id is worth knowing while waiting.
        eprint!("{line}");
    }
    if !args.wait {
        if format != Format::Table {
            print_data(format, payload)?;
        }
        return Ok(Exit::Ok);
    }
    let (exit, last) = wait::follow(&client, &id, args.timeout, format == Format::Table).await?;
    if format != Format::Table {
        print_data(format, &last)?;
    } else {
        let line = format!("job {id} ended {}\n", opt(text(&last, "state")));
        output::write_stdout(line.as_bytes())?;
    }
    Ok(exit)
}

fn render_dry_run(result: &Value) -> String {
    let mut out = String::new();
    if result["admitted"] == true {
        let borrowed = if result["borrowed"] == true { " (borrowing above the queue's guarantee)" } else { "" };
        out.push_str(&format!("admission: accepted{borrowed}\n"));
    } else if let Some(q) = result.get("quotaExceeded").filter(|q| !q.is_null()) {
        out.push_str(&format!(
            "admission: refused: queue {} {}: in use {} + demand {} > limit {}\n",
            opt(text(q, "queue")),
            opt(text(q, "resource")),
            opt(text(q, "used")),
            opt(text(q, "demand")),
            opt(text(q, "limit")),
        ));
    } else {
        out.push_str("admission: refused\n");
    }
    match text(result, "cluster") {
        Some(c) => out.push_str(&format!("cluster: {c}\n")),
        None => out.push_str("cluster: none can take it now\n"),
    }
    if let Some(why) = result.get("whyPending").filter(|w| !w.is_null()) {
        out.push_str(&format!("why: {}\n", opt(text(why, "summary"))));
        let mut t = Table::new(&["CLUSTER", "STAGE", "REASON"]);
        for r in why["reasons"].as_array().map(Vec::as_slice).unwrap_or_default() {
            t.row(vec![opt(text(r, "cluster")), opt(text(r, "stage")), opt(text(r, "reason"))]);
        }
        if !t.is_empty() {
            out.push_str(&t.render());
        }
    }
    out
}
