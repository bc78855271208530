//! A pod's output through the API server (`GET .../pods/<name>/log?timestamps=true`): the
//! request's parameters from a [`LogQuery`], and its answer as lines. The API server does not
//! tell stdout from stderr; every line is reported as stdout.

use grus_protocol::logs::{LogLine, LogQuery, LogStream, MAX_TAIL_LINES};
use kube::api::LogParams;

/// The most the agent reads of one pod log at once (the reply keeps the newest lines that fit
/// the query's bound; this only bounds the agent's memory).
pub const MAX_READ_BYTES: i64 = 8 << 20;

/// The parameters for `query`, `now_ms` being the agent's clock. A read without a cursor or a
/// tail asks for the last [`MAX_TAIL_LINES`] lines (a pod log has no byte bound from the end).
pub fn params(query: &LogQuery, now_ms: i64) -> LogParams {
    let tail = match (query.tail, query.since_ms) {
        (Some(t), _) => Some(t),
        (None, None) => Some(MAX_TAIL_LINES),
        (None, Some(_)) => None,
    };
    LogParams {
        timestamps: true,
        tail_lines: tail.map(i64::from),
        // Whole seconds, rounded so that nothing after the cursor is missed; the lines are then
        // filtered to the millisecond.
        since_seconds: query.since_ms.map(|s| ((now_ms - s) / 1000 + 1).max(1)),
        limit_bytes: Some(MAX_READ_BYTES),
        ..LogParams::default()
    }
}

/// An RFC 3339 instant (fractions to the nanosecond) in ms since the Unix epoch.
fn instant_ms(text: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339(text).ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64)
}

/// The lines of a log read with timestamps (`<RFC 3339> <text>`); a line without one (a partial
/// last line cut by the byte limit) keeps the previous line's time.
pub fn parse(text: &str) -> Vec<LogLine> {
    let mut out = Vec::new();
    let mut last = 0;
    for raw in text.lines() {
        let (at_ms, body) = match raw.split_once(' ') {
            Some((ts, rest)) => instant_ms(ts).map_or((last, raw), |t| (t, rest)),
            None => instant_ms(raw).map_or((last, raw), |t| (t, "")),
        };
        last = at_ms;
        out.push(LogLine { at_ms, stream: LogStream::Stdout, text: body.to_owned() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_time_to_the_millisecond() {
        let text = "2026-11-27T10:00:00.123456789Z epoch 1 loss=2.1\n2026-11-27T10:00:01Z \nnot stamped\n";
        let lines = parse(text);
        let got: Vec<(i64, &str)> = lines.iter().map(|l| (l.at_ms % 100_000, l.text.as_str())).collect();
        assert_eq!(got, [(123, "epoch 1 loss=2.1"), (1_000, ""), (1_000, "not stamped")]);
    }

    #[test]
    fn a_cursor_becomes_whole_seconds_back_and_a_plain_read_a_tail() {
        let q = |tail, since_ms| LogQuery { task: None, replica: None, tail, since_ms, max_bytes: 100 };
        let p = params(&q(None, Some(10_500)), 12_000);
        assert_eq!((p.since_seconds, p.tail_lines, p.timestamps), (Some(2), None, true));
        assert_eq!(params(&q(None, None), 0).tail_lines, Some(i64::from(MAX_TAIL_LINES)));
        assert_eq!(params(&q(Some(5), None), 0).tail_lines, Some(5));
    }
}
