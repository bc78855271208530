//! Redis key and stream names, and the consumer groups that read them.
//!
//! Every name puts the cluster id in braces, Redis Cluster's hash tag, so one cluster's keys
//! live in one slot and a per-cluster ACL user can be limited to the pattern `grus:{id}:*`.

/// Consumer group of the agent on its command stream.
pub const AGENT_GROUP: &str = "agent";
/// Consumer group of one control plane's api replicas on every event stream: named after its
/// incarnation, so two deployments sharing one Redis each read every event (and skip the other's)
/// instead of splitting the stream between them.
pub fn api_group(control_plane: &str) -> String {
    format!("api-{control_plane}")
}

/// The stream entry field that holds the JSON envelope.
pub const PAYLOAD_FIELD: &str = "m";
/// Dead-letter entry fields: the original payload and why it was refused.
pub const DLQ_REASON_FIELD: &str = "reason";
pub const DLQ_SOURCE_ID_FIELD: &str = "source_id";

/// Commands from the api to one cluster's agent.
pub fn command_stream(cluster: &str) -> String {
    format!("grus:{{{cluster}}}:cmd")
}

/// Events from one cluster's agent to the api.
pub fn event_stream(cluster: &str) -> String {
    format!("grus:{{{cluster}}}:evt")
}

/// The agent's heartbeat key (set with a TTL).
pub fn heartbeat_key(cluster: &str) -> String {
    format!("grus:{{{cluster}}}:hb")
}

/// The agent's answer to one `ReadLogs` request (`logs::LogReply` as JSON), set once with a
/// TTL (`logs::LOG_REPLY_TTL_S`): never routed through the event stream.
pub fn log_reply(cluster: &str, request: &str) -> String {
    format!("grus:{{{cluster}}}:logs:{request}")
}

/// Dead letters: messages that could not be decoded, with the reason.
pub fn dead_letter_stream(cluster: &str) -> String {
    format!("grus:{{{cluster}}}:dlq")
}

/// A key one control plane sets once and never deletes: missing, Redis has lost its data (a
/// restart without persistence) and commands it held must be sent again.
pub fn liveness_marker(control_plane: &str) -> String {
    format!("grus:control-plane:{control_plane}:marker")
}

/// A stream entry id (`<ms>-<seq>`) as its two numbers: the time Redis appended the entry, on
/// Redis's clock, and the sequence within that millisecond. Ids only grow within a stream, so
/// the pairs order entries. `None` for anything else.
pub fn stream_id_parts(id: &str) -> Option<(i64, u64)> {
    let (ms, seq) = id.split_once('-')?;
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

/// The key pattern a cluster's ACL user may touch (`~grus:{id}:*`).
pub fn acl_key_pattern(cluster: &str) -> String {
    format!("grus:{{{cluster}}}:*")
}

/// Cluster ids must be safe inside key names and ACL rules: 1..=63 of `[a-z0-9-]`, starting
/// with a letter or digit (the DNS label rule Kubernetes uses).
pub fn is_valid_cluster_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 63
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_split_into_time_and_sequence() {
        assert_eq!(stream_id_parts("1795642605254-3"), Some((1_795_642_605_254, 3)));
        assert!(stream_id_parts("1-9") < stream_id_parts("2-0"));
        for bad in ["", "12", "a-1", "1-b", "-1"] {
            assert_eq!(stream_id_parts(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_carry_the_hash_tag() {
        assert_eq!(command_stream("c1"), "grus:{c1}:cmd");
        assert_eq!(event_stream("c1"), "grus:{c1}:evt");
        assert_eq!(heartbeat_key("c1"), "grus:{c1}:hb");
        assert_eq!(dead_letter_stream("c1"), "grus:{c1}:dlq");
        assert_eq!(acl_key_pattern("c1"), "grus:{c1}:*");
    }

    #[test]
    fn cluster_ids_that_could_escape_a_key_are_refused() {
        assert!(is_valid_cluster_id("gpu-east-1"));
        for bad in ["", "a}b", "A", "x:y", "-a", "a-", "a*", &"x".repeat(64)] {
            assert!(!is_valid_cluster_id(bad), "{bad}");
        }
    }
}
