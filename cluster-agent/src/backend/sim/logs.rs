//! A simulated replica's output: deterministic lines from its launch record, its command and
//! the clock, so that the same replica reads the same at the same time on every agent.
//!
//! Lifecycle lines on placement, start and end (with the exit code: 0 on success, 1 on a
//! failure, 143 when stopped), and one progress line on stdout every [`STEP_MS`] while it runs
//! (`step N: <command> loss=...`). A failure also writes its reason to stderr.

use grus_protocol::logs::{select_lines, LogLine, LogQuery, LogReply, LogSource, LogStream};

use super::SimReplica;
use crate::backend::ReplicaPhase;

/// A running replica prints a progress line this often.
pub const STEP_MS: i64 = 5_000;

fn line(at_ms: i64, stream: LogStream, text: String) -> LogLine {
    LogLine { at_ms, stream, text }
}

/// When the replica ended and how, if it has by `now`.
fn end_of(r: &SimReplica, now: i64) -> Option<(i64, ReplicaPhase)> {
    let phase = r.phase_at(now);
    if !phase.is_terminal() {
        return None;
    }
    // The end is the earliest instant the phase is terminal; every candidate is one of these.
    let start = r.launched_at + r.start_delay_ms;
    let candidates = [
        r.stopped_at,
        r.failed.as_ref().map(|(t, _)| *t),
        r.fail_after_ms.map(|f| start + f),
        r.duration_ms.map(|d| start + d),
    ];
    let at = candidates.into_iter().flatten().filter(|t| *t <= now).min().unwrap_or(now);
    Some((at, phase))
}

/// What the replica has written by `now`, as `query` selects it.
pub fn read(r: &SimReplica, now: i64, query: &LogQuery) -> LogReply {
    let start = r.launched_at + r.start_delay_ms;
    let end = end_of(r, now);
    let until = end.as_ref().map_or(now, |(t, _)| *t);
    let mut lines = vec![line(
        r.launched_at,
        LogStream::Stdout,
        format!("[sim] replica {} of task {} placed on node {}", r.replica, r.task, r.node),
    )];
    let program = r.command.join(" ");
    let shown = if program.is_empty() { "main" } else { program.as_str() };
    let mut skipped = false;
    if until >= start && now >= start {
        let started = if program.is_empty() {
            "[sim] started (the image's entrypoint)".to_owned()
        } else {
            format!("[sim] started: {program}")
        };
        lines.push(line(start, LogStream::Stdout, started));
        // Only the steps a query can keep are generated: after `since`, and at most the tail.
        let steps = (until - start) / STEP_MS;
        let after_since = query.since_ms.map_or(1, |s| ((s - start) / STEP_MS + 1).max(1));
        let first = query.tail.map_or(after_since, |tail| after_since.max(steps - i64::from(tail) + 1));
        skipped = first > after_since;
        for n in first..=steps {
            let loss = 2.5 / (1.0 + 0.05 * n as f64) + ((r.job + u64::from(r.replica)) % 7) as f64 * 0.001;
            lines.push(line(start + n * STEP_MS, LogStream::Stdout, format!("step {n}: {shown} loss={loss:.4}")));
        }
    }
    if let Some((at, phase)) = &end {
        let code = match phase {
            ReplicaPhase::Failed { reason, exit } => {
                lines.push(line(*at, LogStream::Stderr, format!("error: {reason}")));
                exit.code
            }
            ReplicaPhase::Stopped => Some(143),
            _ => Some(0),
        };
        let last = match code {
            Some(code) => format!("[sim] exited with code {code}"),
            None => "[sim] ended without an exit code".to_owned(),
        };
        lines.push(line(*at, LogStream::Stdout, last));
    }
    let (lines, truncated) = select_lines(&lines, query);
    let truncated = truncated || skipped;
    LogReply {
        task: r.task.clone(),
        replica: r.replica,
        source: LogSource::Live,
        lines,
        truncated,
        ended: end.is_some(),
        error: None,
    }
}
