//! A cluster's health, from its heartbeat key and the last time it was seen. `clusters.health`
//! stores it; a test checks that column's CHECK against [`Health::ALL`].

named_enum! {
    /// A cluster's health.
    pub enum Health("cluster health") {
        /// Registered, never heard from.
        Unknown = "unknown",
        Healthy = "healthy",
        /// Heartbeat key expired, but not yet for the loss timeout.
        Degraded = "degraded",
        /// Silent for longer than the loss timeout.
        Unreachable = "unreachable",
    }
}

/// `silent_ms`: milliseconds since the last heartbeat seen (`None`: never seen).
pub fn health(heartbeat_present: bool, silent_ms: Option<i64>, loss_timeout_ms: i64) -> Health {
    match (heartbeat_present, silent_ms) {
        (true, _) => Health::Healthy,
        (false, None) => Health::Unknown,
        (false, Some(ms)) if ms >= loss_timeout_ms => Health::Unreachable,
        (false, Some(_)) => Health::Degraded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_from_heartbeat_and_silence() {
        assert_eq!(health(true, Some(1_000_000), 60_000), Health::Healthy);
        assert_eq!(health(false, None, 60_000), Health::Unknown);
        assert_eq!(health(false, Some(20_000), 60_000), Health::Degraded);
        assert_eq!(health(false, Some(60_000), 60_000), Health::Unreachable);
    }
}
