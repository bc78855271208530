//! What Redis tells the control plane about agents' answers to dispatches: Redis's clock, which
//! stamps every stream entry id and so decides whether an answer beat its dispatch's deadline
//! (for the agent, which reads its entry's id, and for the api alike), and which clusters'
//! event streams hold nothing this control plane has not ingested yet.
//!
//! Together they make giving a dispatch up safe (DESIGN.md invariant 2): once Redis's clock has
//! passed the deadline and every entry of the cluster's stream appended before it has been
//! ingested, no answer that beat the deadline can still arrive, because later entries get
//! later ids.

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

/// The clusters among `deadlines` (cluster, deadline) whose event stream holds nothing this
/// control plane's group `group` has not ingested among the entries appended before the
/// cluster's deadline: each such entry was delivered to a consumer and acknowledged (the
/// ingester acknowledges after its transaction commits). Entries appended later do not
/// count, so a busy stream never holds a timeout back for long. A stream that does not exist
/// holds nothing; a stream without the group holds entries nobody read.
pub async fn ingested_before(
    conn: &mut ConnectionManager,
    group: &str,
    deadlines: &[(String, DateTime<Utc>)],
) -> RedisResult<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for (cluster, deadline) in deadlines {
        let stream = keys::event_stream(cluster);
        let info: RedisResult<HashMap<String, redis::Value>> =
            redis::cmd("XINFO").arg("STREAM").arg(&stream).query_async(conn).await;
        let info = match info {
            Ok(info) => info,
            Err(e) if e.to_string().contains("no such key") => {
                out.insert(cluster.clone());
                continue;
            }
            Err(e) => return Err(e),
        };
        let last: Option<String> = info.get("last-generated-id").and_then(|v| redis::from_redis_value(v).ok());
        let last = last.as_deref().and_then(keys::stream_id_parts);
        let groups: StreamInfoGroupsReply = conn.xinfo_groups(&stream).await?;
        let Some(ours) = groups.groups.iter().find(|g| g.name == group) else {
            if last.is_none_or(|l| l == (0, 0)) {
                out.insert(cluster.clone());
            }
            continue;
        };
        let deadline_ms = deadline.timestamp_millis();
        // Delivery follows id order: all entries before the deadline were delivered once the
        // group has delivered the last entry, or one stamped at or after the deadline.
        let delivered = keys::stream_id_parts(&ours.last_delivered_id)
            .is_some_and(|d| last.is_none_or(|l| d >= l) || d.0 >= deadline_ms);
        if !delivered {
            continue;
        }
        let before = format!("{}-{}", deadline_ms - 1, u64::MAX);
        let pending: Vec<redis::Value> =
            redis::cmd("XPENDING").arg(&stream).arg(group).arg("-").arg(&before).arg(1).query_async(conn).await?;
        if pending.is_empty() {
            out.insert(cluster.clone());
        }
    }
    Ok(out)
}
