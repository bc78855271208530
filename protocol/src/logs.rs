//! Replica output on request: what the control plane asks (`Command::ReadLogs` with a
//! [`LogQuery`]) and what the agent answers ([`LogReply`]) on the request's own key
//! (`keys::log_reply`, set once with a TTL). Output never travels on the event stream: a reply is
//! bounded by [`LogQuery::max_bytes`] (at most [`MAX_LOG_REPLY_BYTES`]) and gone after its TTL.

use serde::{Deserialize, Serialize};

/// The most a reply may carry, bytes of line text.
pub const MAX_LOG_REPLY_BYTES: u32 = 1 << 20;
/// The most lines a `tail` may ask for.
pub const MAX_TAIL_LINES: u32 = 10_000;
/// How long a reply stays readable on its key.
pub const LOG_REPLY_TTL_S: u64 = 60;

/// Which replica's output, and how much of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogQuery {
    /// The task; absent: the job's first task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The replica index within the task; absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
    /// Only the last this many lines (of those after `since_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<u32>,
    /// Only lines written after this instant, ms since the Unix epoch (a follower's cursor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<i64>,
    /// The reply holds at most this many bytes of text: the newest lines that fit.
    pub max_bytes: u32,
}

/// Which output a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogStream {
    Stdout,
    Stderr,
}

/// One line of output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// When it was written, ms since the Unix epoch.
    pub at_ms: i64,
    pub stream: LogStream,
    pub text: String,
}

/// Where the lines of a reply came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogSource {
    /// The replica as it runs (or its container, still on its node).
    Live,
    /// The last lines the agent kept after the replica was gone.
    Kept,
    /// Nothing is left of it here: never run here, or gone longer than the agent keeps lines.
    Gone,
}

/// The agent's answer to one `ReadLogs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogReply {
    pub task: String,
    pub replica: u32,
    pub source: LogSource,
    /// Oldest first.
    pub lines: Vec<LogLine>,
    /// Older lines matched but did not fit in `max_bytes` (or the tail).
    pub truncated: bool,
    /// The replica has ended: no more lines will come.
    pub ended: bool,
    /// Why nothing could be read, when the backend failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LogQuery {
    /// The bounds the agent applies whatever was asked.
    pub fn bounded(mut self) -> LogQuery {
        self.max_bytes = self.max_bytes.clamp(1, MAX_LOG_REPLY_BYTES);
        self.tail = self.tail.map(|t| t.min(MAX_TAIL_LINES));
        self
    }
}

/// The lines of `lines` (oldest first) a query keeps: after `since_ms`, the last `tail`, then
/// the newest that fit in `max_bytes`; and whether any matching line was left out.
pub fn select_lines(lines: &[LogLine], query: &LogQuery) -> (Vec<LogLine>, bool) {
    let after: Vec<&LogLine> = lines.iter().filter(|l| query.since_ms.is_none_or(|s| l.at_ms > s)).collect();
    let from = query.tail.map_or(0, |t| after.len().saturating_sub(t as usize));
    let mut truncated = from > 0;
    let (mut kept, mut bytes) = (Vec::new(), 0usize);
    for line in after[from..].iter().rev() {
        bytes += line.text.len();
        if bytes > query.max_bytes as usize {
            truncated = true;
            break;
        }
        kept.push((*line).clone());
    }
    kept.reverse();
    (kept, truncated)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn line(at_ms: i64, text: &str) -> LogLine {
        LogLine { at_ms, stream: LogStream::Stdout, text: text.into() }
    }

    fn query(tail: Option<u32>, since_ms: Option<i64>, max_bytes: u32) -> LogQuery {
        LogQuery { task: None, replica: None, tail, since_ms, max_bytes }
    }

    #[test]
    fn since_then_tail_then_the_newest_that_fit() {
        let lines = [line(1, "aa"), line(2, "bb"), line(3, "cc"), line(4, "dd")];
        let texts = |(v, t): (Vec<LogLine>, bool)| (v.into_iter().map(|l| l.text).collect::<Vec<_>>(), t);
        assert_eq!(
            texts(select_lines(&lines, &query(None, None, 100))),
            (["aa", "bb", "cc", "dd"].map(String::from).to_vec(), false)
        );
        assert_eq!(
            texts(select_lines(&lines, &query(None, Some(2), 100))),
            (vec!["cc".to_string(), "dd".into()], false)
        );
        assert_eq!(texts(select_lines(&lines, &query(Some(1), None, 100))), (vec!["dd".to_string()], true));
        assert_eq!(texts(select_lines(&lines, &query(None, None, 5))), (vec!["cc".to_string(), "dd".into()], true));
    }

    #[test]
    fn bounds_apply_whatever_was_asked() {
        let q = query(Some(u32::MAX), None, u32::MAX).bounded();
        assert_eq!((q.tail, q.max_bytes), (Some(MAX_TAIL_LINES), MAX_LOG_REPLY_BYTES));
        assert_eq!(query(None, None, 0).bounded().max_bytes, 1);
    }

    proptest! {
        /// A reply never passes its byte bound, keeps order, and is a suffix of what matched.
        #[test]
        fn a_reply_is_a_bounded_suffix_of_the_matching_lines(
            texts in prop::collection::vec("[a-z]{0,20}", 0..50),
            tail in prop::option::of(0u32..60),
            since in prop::option::of(0i64..50),
            max_bytes in 1u32..400,
        ) {
            let lines: Vec<LogLine> = texts.iter().enumerate().map(|(i, t)| line(i as i64, t)).collect();
            let q = query(tail, since, max_bytes);
            let (kept, truncated) = select_lines(&lines, &q);
            prop_assert!(kept.iter().map(|l| l.text.len()).sum::<usize>() <= max_bytes as usize);
            let matching: Vec<&LogLine> = lines.iter().filter(|l| since.is_none_or(|s| l.at_ms > s)).collect();
            let suffix = &matching[matching.len() - kept.len()..];
            prop_assert!(kept.iter().zip(suffix).all(|(a, b)| a == *b));
            prop_assert_eq!(truncated, kept.len() < matching.len());
        }
    }
}
