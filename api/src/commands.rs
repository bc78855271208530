//! Sending commands to agents: one XADD of an encoded envelope to `grus:{cluster}:cmd`.
//!
//! Shared by the allocator loop (Dispatch, Evict) and the event ingestion (Cancel of a job an
//! agent still runs under a fenced-off epoch). The message id is chosen by the caller so that
//! a command re-sent after a crash carries the same id and the agent's idempotency holds.

use grus_protocol::codec::{encode, Envelope};
use grus_protocol::command::Command;
use std::time::Duration;

use grus_protocol::connection::manager_config;
use grus_protocol::keys::{self, PAYLOAD_FIELD};
use redis::aio::ConnectionManager;

/// Upper bound on each command stream; agents read far faster than the api writes, so only
/// acknowledged history is ever trimmed.
pub const COMMAND_STREAM_MAXLEN: usize = 100_000;

/// A cheap clonable handle on the Redis connection used for commands.
#[derive(Clone)]
pub struct CommandPublisher {
    conn: ConnectionManager,
    /// This control plane's incarnation, carried by every command (`db::control_plane`).
    control_plane: Option<String>,
}

impl CommandPublisher {
    pub fn new(conn: ConnectionManager) -> CommandPublisher {
        CommandPublisher { conn, control_plane: None }
    }

    /// Every command sent from here on carries `incarnation`: agents serving another control
    /// plane refuse them.
    pub fn stamped(mut self, incarnation: &str) -> CommandPublisher {
        self.control_plane = Some(incarnation.to_owned());
        self
    }

    /// The control plane's incarnation the commands carry, if stamped.
    pub fn control_plane(&self) -> Option<&str> {
        self.control_plane.as_deref()
    }

    /// The connection, for the reads that go with sending (`event_streams`).
    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    pub async fn connect(client: &redis::Client) -> redis::RedisResult<CommandPublisher> {
        let config = manager_config(Duration::from_secs(5));
        Ok(CommandPublisher::new(ConnectionManager::new_with_config(client.clone(), config).await?))
    }

    /// Whether Redis lost its data since this control plane last looked: a marker key of the
    /// control plane's (never expiring) is missing, and is set again. True on the very first
    /// look at a new Redis too, which costs one round of resent (and deduplicated) commands.
    pub async fn redis_lost_data(&self) -> redis::RedisResult<bool> {
        let key = keys::liveness_marker(self.control_plane.as_deref().unwrap_or("unstamped"));
        let mut conn = self.conn.clone();
        let set: Option<String> = redis::cmd("SET").arg(key).arg("1").arg("NX").query_async(&mut conn).await?;
        Ok(set.is_some())
    }

    /// Appends `command` to the cluster's command stream; returns the stream entry id.
    /// `message_id` goes into the envelope (`id`), `now_ms` into `ts`.
    pub async fn send(
        &self,
        cluster: &str,
        message_id: &str,
        now_ms: i64,
        command: Command,
    ) -> redis::RedisResult<String> {
        let mut conn = self.conn.clone();
        self.xadd(cluster, message_id, now_ms, command).query_async(&mut conn).await
    }

    /// Appends each `(cluster, message_id, command)` to its cluster's stream, in order, in one
    /// pipeline (one round trip instead of one per command: a round's thousands of Dispatches
    /// waited on as many round trips). All or nothing as far as the caller knows: on an error
    /// every command is owed again and re-sent under the same message id, which agents
    /// recognise.
    pub async fn send_all(&self, commands: Vec<(String, String, Command)>, now_ms: i64) -> redis::RedisResult<()> {
        if commands.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (cluster, message_id, command) in commands {
            pipe.add_command(self.xadd(&cluster, &message_id, now_ms, command)).ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async(&mut conn).await
    }

    fn xadd(&self, cluster: &str, message_id: &str, now_ms: i64, command: Command) -> redis::Cmd {
        let envelope = Envelope::new(message_id, cluster, now_ms, command);
        let payload = encode(&envelope.with_control_plane(self.control_plane.as_deref()));
        let mut cmd = redis::cmd("XADD");
        cmd.arg(keys::command_stream(cluster))
            .arg("MAXLEN")
            .arg("~")
            .arg(COMMAND_STREAM_MAXLEN)
            .arg("*")
            .arg(PAYLOAD_FIELD)
            .arg(payload);
        cmd
    }
}
