//! What Redis tells the control plane about agents' answers to dispatches: Redis's clock, which
//! stamps every stream entry id and so decides whether an answer beat its dispatch's deadline
//! (for the agent, which reads its entry's id, and for the api alike), and which clusters'
//! event streams hold nothing this control plane has not ingested yet.
//!
//! Together they make giving a dispatch up safe (DESIGN.md invariant 2): once Redis's clock has
//! passed the deadline and the cluster's stream is fully ingested, no answer that beat the
//! deadline can still arrive, because later entries get later ids.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use grus_protocol::keys;
use redis::aio::ConnectionManager;
use redis::streams::StreamInfoGroupsReply;
use redis::{AsyncCommands, RedisResult};

/// Redis's clock now.
pub async fn redis_now(conn: &mut ConnectionManager) -> RedisResult<DateTime<Utc>> {
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query_async(conn).await?;
    Ok(DateTime::from_timestamp(secs, 0).unwrap_or_default() + chrono::Duration::microseconds(micros))
}

/// The clusters among `clusters` whose event stream has nothing left for consumer group `group`
/// to ingest: every entry appended so far was delivered to one of its consumers and
/// acknowledged (the ingester acknowledges after its transaction commits). A stream that does
/// not exist holds nothing; a stream without the group holds entries nobody read.
pub async fn fully_ingested<'a>(
    conn: &mut ConnectionManager,
    group: &str,
    clusters: impl IntoIterator<Item = &'a str>,
) -> RedisResult<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for cluster in clusters {
        let stream = keys::event_stream(cluster);
        let info: RedisResult<HashMap<String, redis::Value>> =
            redis::cmd("XINFO").arg("STREAM").arg(&stream).query_async(conn).await;
        let info = match info {
            Ok(info) => info,
            Err(e) if e.to_string().contains("no such key") => {
                out.insert(cluster.to_owned());
                continue;
            }
            Err(e) => return Err(e),
        };
        let last: Option<String> = info.get("last-generated-id").and_then(|v| redis::from_redis_value(v).ok());
        let groups: StreamInfoGroupsReply = conn.xinfo_groups(&stream).await?;
        let drained = groups.groups.iter().find(|g| g.name == group).is_some_and(|g| {
            g.pending == 0
                && match (last.as_deref().and_then(keys::stream_id_parts), keys::stream_id_parts(&g.last_delivered_id))
                {
                    (Some(last), Some(delivered)) => delivered >= last,
                    _ => false,
                }
        });
        if drained {
            out.insert(cluster.to_owned());
        }
    }
    Ok(out)
}
