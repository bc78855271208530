//! A cluster's Redis keys in a test: deleted when the test ends ([`ClusterKeys`]), and the
//! commands the control plane sent it, decoded ([`commands`]).

use grus_protocol::codec::{decode, Decoded, Envelope};
use grus_protocol::command::Command;
use grus_protocol::keys;
use redis::aio::ConnectionLike;

/// Cluster `id`'s event, command and dead-letter streams and heartbeat key on `redis_url`,
/// deleted when this is dropped (also when the test panics).
pub struct ClusterKeys {
    pub id: String,
    redis_url: String,
}

impl ClusterKeys {
    pub fn new(id: &str, redis_url: &str) -> ClusterKeys {
        ClusterKeys { id: id.to_owned(), redis_url: redis_url.to_owned() }
    }

    /// Every key of the protocol for cluster `id`.
    pub fn names(id: &str) -> [String; 4] {
        [keys::event_stream(id), keys::command_stream(id), keys::dead_letter_stream(id), keys::heartbeat_key(id)]
    }
}

impl Drop for ClusterKeys {
    fn drop(&mut self) {
        let (names, url) = (ClusterKeys::names(&self.id), self.redis_url.clone());
        // On a thread of its own: the test's runtime may be the one dropping us.
        let _ = std::thread::spawn(move || {
            if let Ok(mut c) = redis::Client::open(url).and_then(|c| c.get_connection()) {
                let _: Result<(), _> = redis::cmd("DEL").arg(&names[..]).query(&mut c);
            }
        })
        .join();
    }
}

/// Every command in cluster `id`'s command stream, oldest first.
pub async fn commands(conn: &mut impl ConnectionLike, id: &str) -> Vec<Envelope<Command>> {
    let reply: redis::streams::StreamRangeReply =
        redis::cmd("XRANGE").arg(keys::command_stream(id)).arg("-").arg("+").query_async(conn).await.expect("XRANGE");
    reply
        .ids
        .iter()
        .map(|e| {
            let raw: Vec<u8> =
                redis::from_redis_value(e.map.get(keys::PAYLOAD_FIELD).expect("payload")).expect("bytes");
            match decode::<Command>(&raw, id).expect("decodes") {
                Decoded::Known(env) => env,
                other => panic!("unknown command {other:?}"),
            }
        })
        .collect()
}
