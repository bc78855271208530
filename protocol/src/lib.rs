//! grus-protocol: the wire contract between grus-api and grus-agent.
//!
//! Will own the Redis stream envelope (`{ "v": 1, "id", "cluster", "epoch"?, "ts", "kind", "body" }`),
//! the command and event bodies, the key and stream names (`grus:{cluster}:cmd`, `:evt`, `:hb`,
//! `:dlq`) and the version rules. It is the only crate that derives serde for the wire.
//! Not built yet: see the cluster-agent issue.
