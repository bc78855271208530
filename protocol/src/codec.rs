//! The envelope and its encoding:
//! `{ "v": 1, "id", "cluster", "epoch"?, "ts", "control_plane"?, "kind", "body" }`.
//!
//! `v` is the protocol's major version. Within a major version, newer minors only add fields
//! and kinds: extra fields are ignored, and an unknown kind decodes to
//! [`Decoded::UnknownKind`] so that the reader logs and acknowledges it. Anything else that
//! does not decode is a [`DecodeError`], whose text is the dead-letter reason.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command::Command;
use crate::event::Event;
use crate::limits::{self, OutOfBounds};

/// The major protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// A message kind family: [`Command`] or [`Event`].
pub trait Message: Serialize + DeserializeOwned {
    /// Every kind this version knows.
    fn kinds() -> &'static [&'static str];
    fn kind(&self) -> &'static str;
    /// The epoch the message is fenced on, if any (must equal the envelope's).
    fn fencing_epoch(&self) -> Option<u64>;
    /// Field-specific bounds (`limits`), on top of those every message keeps.
    fn check_bounds(&self) -> Result<(), OutOfBounds>;
}

impl Message for Command {
    fn kinds() -> &'static [&'static str] {
        Command::KINDS
    }
    fn kind(&self) -> &'static str {
        Command::kind(self)
    }
    fn fencing_epoch(&self) -> Option<u64> {
        self.job_epoch().map(|(_, e)| e)
    }
    /// A dispatched job beyond `limits::check_job` is the agent's to reject (with its reason),
    /// not a malformed message.
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        Ok(())
    }
}

impl Message for Event {
    fn kinds() -> &'static [&'static str] {
        Event::KINDS
    }
    fn kind(&self) -> &'static str {
        Event::kind(self)
    }
    fn fencing_epoch(&self) -> Option<u64> {
        self.epoch()
    }
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        limits::check_event(self)
    }
}

/// A decoded message with its envelope fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope<M> {
    pub v: u32,
    /// Unique per message; handlers are idempotent on it.
    pub id: String,
    pub cluster: String,
    pub epoch: Option<u64>,
    /// Milliseconds since the Unix epoch, when the sender wrote it.
    pub ts: i64,
    /// The control plane's incarnation (created once with its database): a command carries the one
    /// that sent it, an event the one its agent serves. `None` from senders that predate it.
    pub control_plane: Option<String>,
    pub message: M,
}

impl<M: Message> Envelope<M> {
    pub fn new(id: impl Into<String>, cluster: impl Into<String>, ts: i64, message: M) -> Envelope<M> {
        Envelope {
            v: PROTOCOL_VERSION,
            id: id.into(),
            cluster: cluster.into(),
            epoch: message.fencing_epoch(),
            ts,
            control_plane: None,
            message,
        }
    }

    /// The same message, stamped with the control plane's incarnation.
    pub fn with_control_plane(mut self, incarnation: Option<&str>) -> Envelope<M> {
        self.control_plane = incarnation.map(str::to_owned);
        self
    }
}

#[derive(Debug, PartialEq)]
pub enum Decoded<M> {
    Known(Envelope<M>),
    /// A kind from a newer minor version: log it, acknowledge it, do nothing else.
    UnknownKind {
        id: String,
        kind: String,
    },
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("not a JSON envelope: {0}")]
    NotAnEnvelope(String),
    #[error("protocol version {0} is not supported (this reader speaks {PROTOCOL_VERSION})")]
    UnsupportedVersion(u32),
    #[error("body of `{kind}` does not decode: {error}")]
    BadBody { kind: String, error: String },
    #[error("envelope epoch {envelope:?} disagrees with the body's epoch {body:?}")]
    EpochMismatch { envelope: Option<u64>, body: Option<u64> },
    #[error("message is for cluster `{got}`, this stream belongs to `{expected}`")]
    WrongCluster { expected: String, got: String },
    #[error("message is {0} bytes, at most {max}", max = limits::MAX_MESSAGE_BYTES)]
    TooLarge(usize),
    #[error("out of bounds: {0}")]
    OutOfBounds(#[from] OutOfBounds),
}

#[derive(Serialize, Deserialize)]
struct RawEnvelope {
    v: u32,
    id: String,
    cluster: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    epoch: Option<u64>,
    ts: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    control_plane: Option<String>,
    kind: String,
    #[serde(default)]
    body: Value,
}

/// Encodes a message as the JSON envelope.
pub fn encode<M: Message>(envelope: &Envelope<M>) -> String {
    let tagged = serde_json::to_value(&envelope.message).expect("wire types always serialize");
    let (kind, body) = match tagged {
        Value::Object(mut map) => (
            map.remove("kind").and_then(|k| k.as_str().map(str::to_owned)).expect("adjacently tagged enum"),
            map.remove("body").unwrap_or(Value::Null),
        ),
        _ => unreachable!("commands and events serialize to objects"),
    };
    let raw = RawEnvelope {
        v: envelope.v,
        id: envelope.id.clone(),
        cluster: envelope.cluster.clone(),
        epoch: envelope.epoch,
        ts: envelope.ts,
        control_plane: envelope.control_plane.clone(),
        kind,
        body,
    };
    serde_json::to_string(&raw).expect("envelope always serializes")
}

/// Decodes an envelope read from `expected_cluster`'s stream.
pub fn decode<M: Message>(bytes: &[u8], expected_cluster: &str) -> Result<Decoded<M>, DecodeError> {
    if bytes.len() > limits::MAX_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge(bytes.len()));
    }
    let raw: RawEnvelope = serde_json::from_slice(bytes).map_err(|e| DecodeError::NotAnEnvelope(e.to_string()))?;
    let short = [("id", Some(&raw.id)), ("control_plane", raw.control_plane.as_ref())];
    for (path, value) in short {
        if let Some(why) = value.and_then(|v| limits::text_problem(v, limits::MAX_NAME_BYTES)) {
            return Err(DecodeError::OutOfBounds(OutOfBounds { path: path.into(), why }));
        }
    }
    if raw.v != PROTOCOL_VERSION {
        return Err(DecodeError::UnsupportedVersion(raw.v));
    }
    if raw.cluster != expected_cluster {
        return Err(DecodeError::WrongCluster { expected: expected_cluster.to_string(), got: raw.cluster });
    }
    if !M::kinds().contains(&raw.kind.as_str()) {
        return Ok(Decoded::UnknownKind { id: raw.id, kind: raw.kind });
    }
    limits::check_value(&raw.body)?;
    let tagged = serde_json::json!({ "kind": raw.kind, "body": raw.body });
    let message: M = serde_json::from_value(tagged)
        .map_err(|e| DecodeError::BadBody { kind: raw.kind.clone(), error: e.to_string() })?;
    if message.fencing_epoch().is_some() && message.fencing_epoch() != raw.epoch {
        return Err(DecodeError::EpochMismatch { envelope: raw.epoch, body: message.fencing_epoch() });
    }
    message.check_bounds()?;
    Ok(Decoded::Known(Envelope {
        v: raw.v,
        id: raw.id,
        cluster: raw.cluster,
        epoch: raw.epoch,
        ts: raw.ts,
        control_plane: raw.control_plane,
        message,
    }))
}
