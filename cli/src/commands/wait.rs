//! `--wait`: follow a job to a final state by polling `job(id)` with backoff, printing each
//! new job-level event. Polling (not the websocket) because it needs nothing but the same
//! POST /graphql every other command uses, works through any proxy, and cannot miss the end:
//! the state is read, not inferred from a stream. The delay starts at 500 ms, grows by half
//! up to 5 s while nothing changes, and drops back when something does.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use grus_api::domain::JobState;
use serde_json::{json, Value};

use super::jobs::text;
use crate::client::Client;
use crate::exit::{CliError, CliResult, Exit};
use crate::output::{self, short_time};

const FIRST_DELAY: Duration = Duration::from_millis(500);
const MAX_DELAY: Duration = Duration::from_secs(5);
/// Consecutive failed polls (server restarting, network blip) tolerated before giving up.
const MAX_FAILED_POLLS: u32 = 10;

const QUERY: &str = "query Follow($id: ID!) {
  job(id: $id) { id name state whyPending { summary } events { id at fromState toState cause taskId replicaId } }
}";

/// The exit code of a final job state (as the API names it); `None` while the job can still
/// change.
pub fn final_exit(state: &str) -> Option<Exit> {
    let state = JobState::from_api_name(state).filter(|s| s.is_terminal())?;
    Some(match state {
        JobState::Succeeded => Exit::Ok,
        JobState::Failed => Exit::JobFailed,
        JobState::Cancelled => Exit::JobCancelled,
        // A final state without an exit code of its own.
        _ => Exit::Generic,
    })
}

/// The next poll delay: back to the start after a change, else 1.5x up to the cap.
pub fn next_delay(current: Duration, changed: bool) -> Duration {
    if changed {
        FIRST_DELAY
    } else {
        (current + current / 2).min(MAX_DELAY)
    }
}

/// Follows job `id` until it ends (or `timeout` passes); progress lines go to stdout when
/// `progress` is set. Returns the job's exit code and its last answer.
pub async fn follow(client: &Client, id: &str, timeout: Option<Duration>, progress: bool) -> CliResult<(Exit, Value)> {
    let started = Instant::now();
    let mut seen: HashSet<String> = HashSet::new();
    let mut delay = FIRST_DELAY;
    let mut failures = 0;
    let mut last_summary: Option<String> = None;
    loop {
        let data: Value = match client.graphql(QUERY, json!({ "id": id })).await {
            Ok(d) => {
                failures = 0;
                d
            }
            Err(e) if e.exit == Exit::Unreachable && failures < MAX_FAILED_POLLS => {
                failures += 1;
                tracing::warn!(error = %e, "poll failed; retrying");
                delay = next_delay(delay, false);
                tokio::time::sleep(delay).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let job = data["job"].clone();
        let mut changed = false;
        let events = job["events"].as_array().map(Vec::as_slice).unwrap_or_default();
        for e in events {
            let Some(eid) = text(e, "id") else { continue };
            if !seen.insert(eid) {
                continue;
            }
            changed = true;
            if progress && e["taskId"].is_null() && e["replicaId"].is_null() {
                let line = format!(
                    "{}  {} -> {}  ({})\n",
                    text(e, "at").map(|t| short_time(&t)).unwrap_or_default(),
                    text(e, "fromState").unwrap_or_else(|| "-".into()),
                    text(e, "toState").unwrap_or_default(),
                    text(e, "cause").unwrap_or_default(),
                );
                output::write_stdout(line.as_bytes())?;
            }
        }
        let summary = text(&job, "whyPending.summary");
        if progress && summary.is_some() && summary != last_summary {
            let line = format!("waiting: {}\n", summary.clone().unwrap_or_default());
            output::write_stdout(line.as_bytes())?;
        }
        last_summary = summary;
        let state = text(&job, "state").unwrap_or_default();
        if let Some(exit) = final_exit(&state) {
            return Ok((exit, job));
        }
        if let Some(limit) = timeout {
            let elapsed = started.elapsed();
            if elapsed >= limit {
                return Err(CliError::new(
                    Exit::WaitTimeout,
                    format!("job {id} is still {state} after {}; it keeps going", humantime::format_duration(limit)),
                ));
            }
            delay = delay.min(limit - elapsed);
        }
        tokio::time::sleep(delay).await;
        delay = next_delay(delay, changed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_final_states_end_the_wait() {
        assert_eq!(final_exit("SUCCEEDED"), Some(Exit::Ok));
        assert_eq!(final_exit("FAILED").map(Exit::code), Some(10));
        assert_eq!(final_exit("CANCELLED").map(Exit::code), Some(11));
        for s in ["PENDING", "ADMITTED", "REJECTED", "RUNNING", "PREEMPTED", "UNKNOWN"] {
            assert_eq!(final_exit(s), None, "{s}");
        }
    }

    #[test]
    fn backoff_grows_to_the_cap_and_resets_on_change() {
        let mut d = FIRST_DELAY;
        for _ in 0..20 {
            d = next_delay(d, false);
        }
        assert_eq!(d, MAX_DELAY);
        assert_eq!(next_delay(d, true), FIRST_DELAY);
        assert_eq!(next_delay(FIRST_DELAY, false), Duration::from_millis(750));
    }
}
