//! grus-protocol: the wire contract between grus-api and grus-agent.
//!
//! Owns the Redis stream envelope (`{ "v": 1, "id", "cluster", "epoch"?, "ts", "kind", "body" }`),
//! the command and event bodies, the key and stream names, and the rules for versions and
//! malformed input. It is the only crate that derives serde for the stream messages; the
//! agent and the api convert to and from their own domain types at the boundary.
//!
//! Decoding never drops a message silently: [`decode`] returns a known message, an
//! [`Decoded::UnknownKind`] (log it and acknowledge it), or a [`DecodeError`] whose
//! `reason` goes to the cluster's dead-letter stream.

pub mod capability;
pub mod codec;
pub mod command;
#[cfg(feature = "redis")]
pub mod connection;
pub mod event;
pub mod keys;
pub mod limits;
pub mod logs;
pub mod wire;

pub use codec::{decode, encode, DecodeError, Decoded, Envelope, Message, PROTOCOL_VERSION};
pub use command::Command;
pub use event::Event;
