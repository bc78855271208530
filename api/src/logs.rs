//! Reading a replica's output from the agent of the cluster that runs (or ran) it: a `ReadLogs`
//! command on the cluster's command stream, then the agent's reply on the request's own key
//! (`keys::log_reply`, set with a TTL), polled until it comes or the timeout passes. The control
//! plane stores no output, and none of it travels on the event stream.

use std::time::Duration;

use grus_protocol::command::Command;
use grus_protocol::keys;
use grus_protocol::logs::{LogQuery, LogReply};
use rand::Rng;

use crate::commands::CommandPublisher;

/// How long a request waits for the agent's reply by default.
pub const DEFAULT_LOG_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the reply key is looked at while waiting.
const POLL: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum LogReadError {
    #[error("the agent of cluster {cluster} did not answer within {} s; is it running?", .waited.as_secs_f32())]
    Timeout { cluster: String, waited: Duration },
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("the agent's reply could not be read: {0}")]
    Reply(String),
}

/// Sends log requests and waits for their replies.
#[derive(Clone)]
pub struct LogReader {
    publisher: CommandPublisher,
    timeout: Duration,
}

impl LogReader {
    pub fn new(publisher: CommandPublisher, timeout: Duration) -> LogReader {
        LogReader { publisher, timeout }
    }

    /// Asks `cluster`'s agent for job `job`'s output as `query` selects it.
    pub async fn read(&self, cluster: &str, job: u64, query: LogQuery) -> Result<LogReply, LogReadError> {
        let request = format!("{job}-{:016x}", rand::thread_rng().gen::<u64>());
        let now_ms = chrono::Utc::now().timestamp_millis();
        let command = Command::ReadLogs { request: request.clone(), job, query };
        self.publisher.send(cluster, &format!("logs-{request}"), now_ms, command).await?;
        let key = keys::log_reply(cluster, &request);
        let mut conn = self.publisher.connection();
        let started = tokio::time::Instant::now();
        loop {
            let reply: Option<String> = redis::cmd("GETDEL").arg(&key).query_async(&mut conn).await?;
            if let Some(body) = reply {
                return serde_json::from_str(&body).map_err(|e| LogReadError::Reply(e.to_string()));
            }
            if started.elapsed() >= self.timeout {
                return Err(LogReadError::Timeout { cluster: cluster.to_owned(), waited: self.timeout });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
