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

/// What a heartbeat says, as far as health is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heartbeat {
    Missing,
    /// Present, from an agent serving this control plane (or one that names none).
    Ours,
    /// Present, from an agent serving another control plane: it refuses our commands, so the
    /// cluster takes no work (degraded) although it is alive (never lost).
    Foreign,
}

/// `silent_ms`: milliseconds since the last heartbeat seen (`None`: never seen).
pub fn health(heartbeat: Heartbeat, silent_ms: Option<i64>, loss_timeout_ms: i64) -> Health {
    match (heartbeat, silent_ms) {
        (Heartbeat::Ours, _) => Health::Healthy,
        (Heartbeat::Foreign, _) => Health::Degraded,
        (Heartbeat::Missing, None) => Health::Unknown,
        (Heartbeat::Missing, Some(ms)) if ms >= loss_timeout_ms => Health::Unreachable,
        (Heartbeat::Missing, Some(_)) => Health::Degraded,
    }
}

/// A stored `healthy` whose heartbeat was last seen longer ago than this is stale: the monitor
/// has not been able to look (Redis away, the api's loops stalled), so it is not shown, nor
/// used, as healthy.
pub const HEARTBEAT_STALE_S: i64 = 30;

/// The health to show and act on: the stored one, except a `healthy` that is stale (see
/// [`HEARTBEAT_STALE_S`]), which is `degraded`. `heartbeat_age_ms`: since the last heartbeat seen.
pub fn current_health(stored: Health, heartbeat_age_ms: Option<i64>) -> Health {
    match stored {
        Health::Healthy if heartbeat_age_ms.is_none_or(|age| age > HEARTBEAT_STALE_S * 1000) => Health::Degraded,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_from_heartbeat_and_silence() {
        assert_eq!(health(Heartbeat::Ours, Some(1_000_000), 60_000), Health::Healthy);
        assert_eq!(health(Heartbeat::Missing, None, 60_000), Health::Unknown);
        assert_eq!(health(Heartbeat::Missing, Some(20_000), 60_000), Health::Degraded);
        assert_eq!(health(Heartbeat::Missing, Some(60_000), 60_000), Health::Unreachable);
        assert_eq!(health(Heartbeat::Foreign, Some(0), 60_000), Health::Degraded, "alive, but takes no work");
    }

    #[test]
    fn a_stale_healthy_is_not_shown_as_healthy() {
        assert_eq!(current_health(Health::Healthy, Some(5_000)), Health::Healthy);
        assert_eq!(current_health(Health::Healthy, Some(31_000)), Health::Degraded, "a frozen heartbeat");
        assert_eq!(current_health(Health::Healthy, None), Health::Degraded);
        assert_eq!(current_health(Health::Unreachable, Some(999_000)), Health::Unreachable);
    }
}
