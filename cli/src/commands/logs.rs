//! `grus logs <job> [--task T] [--replica N] [--tail N] [--timestamps] [-f]`: a replica's
//! output, read through `jobLogs`. With `--follow`, new lines are asked for every second
//! (`jobLogs(since: cursor)`, the same POST as every command) until the replica ends; the exit
//! code is then the job's, as `grus submit --wait` gives it.

use std::time::Duration;

use serde_json::{json, Value};

use super::wait::final_exit;
use super::Context;
use crate::cli::LogsArgs;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, short_time};

const QUERY: &str = "query Logs($id: ID!, $task: String, $replica: Int, $tail: Int, $since: DateTime) {
  jobLogs(jobId: $id, task: $task, replica: $replica, tail: $tail, since: $since) {
    task replica clusterId source truncated ended cursor lines { at stream text } } }";

const STATE: &str = "query State($id: ID!) { job(id: $id) { state } }";

/// How often a follower asks for new lines.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);
/// Consecutive failed reads tolerated while following (an agent restarting).
const MAX_FAILED_READS: u32 = 10;

/// A page's lines as printed: the text, after its time with `--timestamps`; stderr lines
/// marked so that they can be told apart in one stream.
pub fn render(page: &Value, timestamps: bool) -> String {
    let mut out = String::new();
    for line in page["lines"].as_array().map(Vec::as_slice).unwrap_or_default() {
        if timestamps {
            out.push_str(&short_time(line["at"].as_str().unwrap_or_default()));
            out.push(' ');
        }
        if line["stream"] == "STDERR" {
            out.push_str("[stderr] ");
        }
        out.push_str(line["text"].as_str().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// What a page says on stderr besides its lines (where they came from, what was left out).
fn notes(page: &Value, first: bool) -> Vec<String> {
    let mut out = Vec::new();
    match page["source"].as_str() {
        Some("KEPT") if first => out.push("(the replica is gone: these are the lines its agent kept)".to_owned()),
        Some("GONE") if first => out.push(match page["clusterId"].as_str() {
            Some(c) => format!("(no output on cluster {c}: the replica has not started, or is gone)"),
            None => "(no output: the job has not been sent to a cluster yet)".to_owned(),
        }),
        _ => {}
    }
    if first && page["truncated"] == true {
        out.push("(older lines left out: ask for more with --tail)".to_owned());
    }
    out
}

pub async fn logs(ctx: &mut Context, args: LogsArgs) -> CliResult<Exit> {
    let client = ctx.client().await?;
    let vars = |since: &Value, tail: Option<u32>| json!({ "id": args.id, "task": args.task, "replica": args.replica, "tail": tail, "since": since });
    let first: Value = client.graphql(QUERY, vars(&Value::Null, args.tail)).await.map_err(|e| {
        if e.exit == Exit::NotFound {
            CliError::new(Exit::NotFound, format!("job {} not found (or not visible to you)", args.id))
        } else {
            e
        }
    })?;
    let mut page = first["jobLogs"].clone();
    for note in notes(&page, true) {
        eprintln!("{note}");
    }
    output::write_stdout(render(&page, args.timestamps).as_bytes())?;
    if !args.follow {
        return Ok(Exit::Ok);
    }
    let mut cursor = page["cursor"].clone();
    let mut failures = 0;
    while page["ended"] != true {
        tokio::time::sleep(FOLLOW_EVERY).await;
        match client.graphql::<Value>(QUERY, vars(&cursor, None)).await {
            Ok(data) => {
                failures = 0;
                page = data["jobLogs"].clone();
                if !page["cursor"].is_null() {
                    cursor = page["cursor"].clone();
                }
                output::write_stdout(render(&page, args.timestamps).as_bytes())?;
            }
            Err(e) if e.exit == Exit::NotFound || failures >= MAX_FAILED_READS => return Err(e),
            Err(e) => {
                failures += 1;
                eprintln!("(reading failed, trying again: {})", e.message);
            }
        }
    }
    // The replica ended; the job's end says how the command ends.
    for _ in 0..MAX_FAILED_READS {
        let data: Value = client.graphql(STATE, json!({ "id": args.id })).await?;
        if let Some(exit) = final_exit(data["job"]["state"].as_str().unwrap_or_default()) {
            return Ok(exit);
        }
        tokio::time::sleep(FOLLOW_EVERY).await;
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_print_as_written_with_stderr_marked() {
        let page = json!({ "source": "LIVE", "lines": [
            { "at": "2026-11-27T10:00:00.250Z", "stream": "STDOUT", "text": "step 1" },
            { "at": "2026-11-27T10:00:01Z", "stream": "STDERR", "text": "warning: slow" } ] });
        assert_eq!(render(&page, false), "step 1\n[stderr] warning: slow\n");
        assert_eq!(render(&page, true), "2026-11-27 10:00:00 step 1\n2026-11-27 10:00:01 [stderr] warning: slow\n");
        assert!(notes(&page, true).is_empty());
        let kept = json!({ "source": "KEPT", "truncated": true, "lines": [] });
        assert_eq!(notes(&kept, true).len(), 2);
        assert!(notes(&kept, false).is_empty());
        let pending = json!({ "source": "GONE", "clusterId": null, "lines": [] });
        assert_eq!(notes(&pending, true), ["(no output: the job has not been sent to a cluster yet)"]);
    }
}
