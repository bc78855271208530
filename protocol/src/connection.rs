//! How both ends hold their Redis connections: one reconnect policy, so that a Redis restart
//! costs each of them seconds.
//!
//! The redis crate's defaults (no connect or response timeout; six retries whose backoff,
//! without a maximum delay, waits 1–2 s and then 60–120 s) stalled the api for two minutes
//! after a Redis restart while every call waited on the reconnection. Here: each wait is 1–2 s
//! (the backoff's minimum; `factor` multiplies it and `max_delay` caps it, in ms), a connect
//! gives up after 2 s, and a reply must come within the caller's `response_timeout` (longer
//! than any blocking read it makes).

use std::time::Duration;

use redis::aio::ConnectionManagerConfig;

/// Reconnection: a few tries, then the call fails and the caller's loop carries on (and the
/// next call tries again).
pub fn manager_config(response_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_number_of_retries(3)
        .set_factor(2)
        .set_max_delay(1_000)
        .set_connection_timeout(Duration::from_secs(2))
        .set_response_timeout(response_timeout)
}
