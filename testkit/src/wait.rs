//! Waiting on conditions: poll, and fail with every process' log once a generous deadline
//! passes. Deadlines only bound a wait; no test asserts on how fast something happened.

use std::time::{Duration, Instant};

/// Default bound of one wait: the suite runs on loaded 2-core machines.
pub const PATIENCE: Duration = Duration::from_secs(120);

pub struct Deadline {
    what: String,
    until: Instant,
}

impl Deadline {
    pub fn new(what: impl Into<String>, within: Duration) -> Deadline {
        Deadline { what: what.into(), until: Instant::now() + within }
    }

    /// Sleeps a poll interval; panics with `diagnostics()` once the deadline has passed.
    pub async fn tick(&self, diagnostics: impl FnOnce() -> String) {
        if Instant::now() > self.until {
            panic!("timed out waiting for {}\n{}", self.what, diagnostics());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Polls `f` every 50 ms until it returns `Some`, or panics with `what` after `timeout` (for
/// tests without a runtime).
pub fn wait_for<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
