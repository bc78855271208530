//! The last lines of replicas that ended, kept by the agent for a while after their pod (or
//! simulated replica) is gone, so that a finished job's output can still be read. Bounded:
//! at most [`KEEP_LINES`] lines and [`KEEP_BYTES`] of text per replica, [`KEEP_REPLICAS`]
//! replicas (the oldest dropped first), each for [`KeptLogs::keep_ms`]. In memory: an agent
//! restart forgets them (the backend's own copy, while it lasts, is still read first).

use std::collections::BTreeMap;

use grus_protocol::logs::{select_lines, LogLine, LogQuery, LogReply, LogSource};

use crate::backend::ReplicaKey;

/// Lines kept per replica.
pub const KEEP_LINES: u32 = 1_000;
/// Bytes of text kept per replica.
pub const KEEP_BYTES: u32 = 256 << 10;
/// Replicas kept at once.
pub const KEEP_REPLICAS: usize = 2_000;

/// The query that reads what is kept of a replica as it ends.
pub fn keep_query() -> LogQuery {
    LogQuery { task: None, replica: None, tail: Some(KEEP_LINES), since_ms: None, max_bytes: KEEP_BYTES }
}

/// Kept lines per replica, with when they were kept.
#[derive(Debug, Default)]
pub struct KeptLogs {
    keep_ms: i64,
    replicas: BTreeMap<ReplicaKey, (i64, Vec<LogLine>)>,
}

impl KeptLogs {
    pub fn new(keep_ms: i64) -> KeptLogs {
        KeptLogs { keep_ms, replicas: BTreeMap::new() }
    }

    /// Keeps `lines` of an ended replica at `now` (replacing what was kept of it), dropping
    /// what expired and, past the bound, the oldest kept.
    pub fn keep(&mut self, key: ReplicaKey, lines: Vec<LogLine>, now: i64) {
        self.expire(now);
        self.replicas.insert(key, (now, lines));
        while self.replicas.len() > KEEP_REPLICAS {
            let oldest = self.replicas.iter().min_by_key(|(k, (at, _))| (*at, (*k).clone())).map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.replicas.remove(&k),
                None => break,
            };
        }
    }

    /// Whether the replica's lines are kept now.
    pub fn has(&self, key: &ReplicaKey, now: i64) -> bool {
        self.replicas.get(key).is_some_and(|(at, _)| now - at <= self.keep_ms)
    }

    /// What is kept of the replica, as `query` selects it; `None` when nothing is (any more).
    pub fn read(&self, key: &ReplicaKey, query: &LogQuery, now: i64) -> Option<LogReply> {
        let (at, lines) = self.replicas.get(key)?;
        if now - at > self.keep_ms {
            return None;
        }
        let (lines, truncated) = select_lines(lines, query);
        Some(LogReply {
            task: key.task.clone(),
            replica: key.replica,
            source: LogSource::Kept,
            lines,
            truncated,
            ended: true,
            error: None,
        })
    }

    fn expire(&mut self, now: i64) {
        let keep_ms = self.keep_ms;
        self.replicas.retain(|_, (at, _)| now - *at <= keep_ms);
    }

    pub fn len(&self) -> usize {
        self.replicas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.replicas.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::logs::LogStream;

    use super::*;

    fn key(replica: u32) -> ReplicaKey {
        ReplicaKey { job: 1, task: "main".into(), replica }
    }

    fn lines(n: i64) -> Vec<LogLine> {
        (0..n).map(|i| LogLine { at_ms: i, stream: LogStream::Stdout, text: format!("line {i}") }).collect()
    }

    #[test]
    fn kept_lines_are_read_as_queried_until_they_expire() {
        let mut kept = KeptLogs::new(1_000);
        kept.keep(key(0), lines(5), 100);
        let q = LogQuery { task: None, replica: None, tail: Some(2), since_ms: None, max_bytes: 100 };
        let reply = kept.read(&key(0), &q, 1_100).expect("kept");
        assert_eq!((reply.source, reply.ended, reply.truncated), (LogSource::Kept, true, true));
        assert_eq!(reply.lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["line 3", "line 4"]);
        assert!(kept.read(&key(0), &q, 1_101).is_none(), "expired");
        assert!(kept.read(&key(1), &q, 200).is_none(), "never kept");
        kept.keep(key(1), lines(1), 5_000);
        assert_eq!(kept.len(), 1, "keeping drops what expired");
    }

    #[test]
    fn past_the_bound_the_oldest_kept_go_first() {
        let mut kept = KeptLogs::new(i64::MAX / 2);
        for r in 0..=KEEP_REPLICAS as u32 {
            kept.keep(key(r), lines(1), i64::from(r));
        }
        assert_eq!(kept.len(), KEEP_REPLICAS);
        assert!(!kept.has(&key(0), 10) && kept.has(&key(1), 10));
    }
}
