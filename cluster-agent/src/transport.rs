//! The agent's Redis side: the command stream it consumes in group `agent`, the event stream
//! it appends to, the dead-letter stream and the heartbeat key.
//!
//! Reading uses its own connection, because XREADGROUP with BLOCK holds a connection;
//! everything else shares a multiplexed connection manager. After a restart the reader first
//! drains this consumer's pending entries (delivered before the crash, never acknowledged),
//! then reads new ones. If the group or stream disappears (Redis restarted empty, FLUSHALL)
//! the reader recreates them and reports a resync so the agent sends a full snapshot.

use std::time::Duration;

use grus_protocol::codec::{decode, DecodeError, Decoded};
use grus_protocol::connection::manager_config;
use grus_protocol::keys::{self, AGENT_GROUP, DLQ_REASON_FIELD, DLQ_SOURCE_ID_FIELD, PAYLOAD_FIELD};
use grus_protocol::logs::{LogReply, LOG_REPLY_TTL_S};
use grus_protocol::Command;
use redis::aio::ConnectionManager;
use redis::streams::{StreamReadOptions, StreamReadReply};
use redis::{AsyncCommands, RedisError};

/// Most events kept in a cluster's event stream (approximate trimming).
const EVENT_STREAM_MAXLEN: usize = 1_000_000;

/// One entry read from the command stream.
#[derive(Debug)]
pub struct Incoming {
    /// The Redis stream entry id, acknowledged once the command's effect is durable.
    pub stream_id: String,
    pub raw: Vec<u8>,
    pub decoded: Result<Decoded<Command>, DecodeError>,
}

/// What the reader hands to the agent.
#[derive(Debug)]
pub enum Inbound {
    Commands(Vec<Incoming>),
    /// The command stream or group was lost; the agent must resend a full snapshot.
    Resync,
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("redis: {0}")]
    Redis(#[from] RedisError),
    #[error("encode: {0}")]
    Encode(String),
}

/// Connection settings; `username`/`password` select the cluster's own ACL user.
#[derive(Clone, Debug)]
pub struct RedisSettings {
    pub url: String,
    pub username: Option<String>,
    pub password: Option<String>,
}

impl RedisSettings {
    pub fn client(&self) -> Result<redis::Client, RedisError> {
        let mut info: redis::ConnectionInfo = self.url.as_str().parse()?;
        if let Some(u) = &self.username {
            info.redis.username = Some(u.clone());
        }
        if let Some(p) = &self.password {
            info.redis.password = Some(p.clone());
        }
        redis::Client::open(info)
    }
}

/// Writes of the agent: events, dead letters, acknowledgements, heartbeat.
#[derive(Clone)]
pub struct Publisher {
    conn: ConnectionManager,
    cluster: String,
}

impl Publisher {
    pub async fn connect(settings: &RedisSettings, cluster: &str) -> Result<Publisher, TransportError> {
        let conn =
            ConnectionManager::new_with_config(settings.client()?, manager_config(Duration::from_secs(5))).await?;
        Ok(Publisher { conn, cluster: cluster.to_string() })
    }

    /// Appends events in one round trip, in order; returns their stream entry ids (whose time
    /// settles a placement's claim, `book::claims`).
    /// Appends encoded events (`codec::encode`) to the event stream, in order, in one round
    /// trip; returns their entry ids.
    pub async fn publish<'a>(
        &mut self,
        payloads: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<String>, TransportError> {
        let stream = keys::event_stream(&self.cluster);
        let mut pipe = redis::pipe();
        let mut any = false;
        for payload in payloads {
            any = true;
            pipe.cmd("XADD")
                .arg(&stream)
                .arg("MAXLEN")
                .arg("~")
                .arg(EVENT_STREAM_MAXLEN)
                .arg("*")
                .arg(PAYLOAD_FIELD)
                .arg(payload);
        }
        if !any {
            return Ok(Vec::new());
        }
        Ok(pipe.query_async::<Vec<String>>(&mut self.conn).await?)
    }

    pub async fn ack(&mut self, stream_ids: &[String]) -> Result<(), TransportError> {
        if stream_ids.is_empty() {
            return Ok(());
        }
        let _: i64 = self.conn.xack(keys::command_stream(&self.cluster), AGENT_GROUP, stream_ids).await?;
        Ok(())
    }

    /// Moves a command that cannot be decoded to the dead-letter stream, with the reason.
    pub async fn dead_letter(&mut self, stream_id: &str, raw: &[u8], reason: &str) -> Result<(), TransportError> {
        let _: String = self
            .conn
            .xadd(
                keys::dead_letter_stream(&self.cluster),
                "*",
                &[
                    (PAYLOAD_FIELD, raw),
                    (DLQ_REASON_FIELD, reason.as_bytes()),
                    (DLQ_SOURCE_ID_FIELD, stream_id.as_bytes()),
                ],
            )
            .await?;
        Ok(())
    }

    /// Sets the reply of log request `request` (`keys::log_reply`), readable for
    /// `logs::LOG_REPLY_TTL_S`.
    pub async fn reply_logs(&mut self, request: &str, reply: &LogReply) -> Result<(), TransportError> {
        let body = serde_json::to_string(reply).map_err(|e| TransportError::Encode(e.to_string()))?;
        let key = keys::log_reply(&self.cluster, request);
        let _: () = self.conn.set_ex(key, body, LOG_REPLY_TTL_S).await?;
        Ok(())
    }

    /// Sets the heartbeat key with a TTL; its value says who and when.
    pub async fn heartbeat(&mut self, value: &str, ttl: Duration) -> Result<(), TransportError> {
        let _: () = self.conn.set_ex(keys::heartbeat_key(&self.cluster), value, ttl.as_secs().max(1)).await?;
        Ok(())
    }
}

/// The command reader: one consumer of group `agent`, on its own connection, which is
/// re-established after Redis restarts (the group is then gone: NOGROUP, resync).
pub struct CommandReader {
    conn: ConnectionManager,
    cluster: String,
    consumer: String,
    /// Still draining entries delivered before a restart.
    draining_pending: bool,
    batch: usize,
}

impl CommandReader {
    pub async fn connect(
        settings: &RedisSettings,
        cluster: &str,
        consumer: &str,
        batch: usize,
    ) -> Result<CommandReader, TransportError> {
        // BLOCK holds the connection up to `next`'s block time; the timeout only has to exceed it.
        let conn =
            ConnectionManager::new_with_config(settings.client()?, manager_config(Duration::from_secs(30))).await?;
        let mut reader = CommandReader {
            conn,
            cluster: cluster.to_string(),
            consumer: consumer.to_string(),
            draining_pending: true,
            batch,
        };
        reader.ensure_group().await?;
        Ok(reader)
    }

    /// Creates the stream and group if needed; an existing group is kept as it is.
    async fn ensure_group(&mut self) -> Result<(), TransportError> {
        let created: Result<(), RedisError> =
            self.conn.xgroup_create_mkstream(keys::command_stream(&self.cluster), AGENT_GROUP, "0").await;
        match created {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Waits up to `block` for commands.
    pub async fn next(&mut self, block: Duration) -> Result<Inbound, TransportError> {
        let stream = keys::command_stream(&self.cluster);
        let start = if self.draining_pending { "0" } else { ">" };
        let mut opts = StreamReadOptions::default().group(AGENT_GROUP, &self.consumer).count(self.batch);
        if !self.draining_pending {
            opts = opts.block(block.as_millis() as usize);
        }
        let reply: Result<Option<StreamReadReply>, RedisError> =
            self.conn.xread_options(&[&stream], &[start], &opts).await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) if e.code() == Some("NOGROUP") => {
                tracing::warn!(stream, "command stream or group is gone (Redis restarted or flushed); recreating it");
                self.ensure_group().await?;
                self.draining_pending = false;
                return Ok(Inbound::Resync);
            }
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for key in reply.map(|r| r.keys).unwrap_or_default() {
            for entry in key.ids {
                let raw: Vec<u8> = match entry.map.get(PAYLOAD_FIELD) {
                    Some(v) => redis::from_redis_value(v).unwrap_or_default(),
                    None => Vec::new(),
                };
                let decoded = if raw.is_empty() {
                    Err(DecodeError::NotAnEnvelope(format!("stream entry has no `{PAYLOAD_FIELD}` field")))
                } else {
                    decode::<Command>(&raw, &self.cluster)
                };
                out.push(Incoming { stream_id: entry.id, raw, decoded });
            }
        }
        if self.draining_pending && out.is_empty() {
            self.draining_pending = false;
        }
        Ok(Inbound::Commands(out))
    }
}
