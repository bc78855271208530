//! The heartbeat key (`grus:{cluster}:hb`), written from a thread of its own with its own
//! Redis connection, so that no amount of scheduling, command or backend work in the agent's
//! loop can delay it (a job of thousands of tasks once pinned the loop and its cluster was
//! declared lost).
//!
//! A beating heart must still mean a working agent: the loop reports its progress
//! ([`LoopProgress::tick`]), each beat carries how long ago that was (`loop_lag_ms`), and a
//! loop stalled for longer than `max_stall` stops the beats, so the control plane sees a hung
//! agent as silent.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::transport::{Publisher, RedisSettings};

/// The loop's last sign of progress, shared with the heartbeat thread.
#[derive(Clone, Debug)]
pub struct LoopProgress {
    origin: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Default for LoopProgress {
    fn default() -> Self {
        LoopProgress { origin: Instant::now(), last_ms: Arc::new(AtomicU64::new(0)) }
    }
}

impl LoopProgress {
    /// The loop made progress now.
    pub fn tick(&self) {
        self.last_ms.store(self.origin.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long ago the loop last made progress.
    pub fn lag(&self) -> Duration {
        let now = self.origin.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last_ms.load(Ordering::Relaxed)))
    }
}

/// The control plane the agent serves, as its heartbeat reports it (the api shows an agent
/// that serves another one on its cluster, and sends it nothing).
#[derive(Clone, Debug, Default)]
pub struct ServedControlPlane(Arc<Mutex<Option<String>>>);

impl ServedControlPlane {
    pub fn set(&self, incarnation: Option<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = incarnation;
    }

    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// What the heartbeat says and how often.
#[derive(Clone, Debug)]
pub struct HeartbeatSettings {
    pub every: Duration,
    /// The key's TTL: a few periods, so one lost write is harmless.
    pub ttl: Duration,
    /// A loop without progress for this long is hung: the beats stop.
    pub max_stall: Duration,
    pub version: String,
    /// The agent process's start, ms since the Unix epoch (tells restarts apart).
    pub boot: i64,
    pub serves: ServedControlPlane,
}

/// The running heartbeat thread; dropping it stops the beats (within one period).
pub struct Heartbeat {
    stop: Arc<AtomicBool>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The value of one beat.
pub fn beat_value(settings: &HeartbeatSettings, lag: Duration) -> String {
    serde_json::json!({
        "ts": wall_ms(),
        "version": settings.version,
        "boot": settings.boot,
        "loop_lag_ms": lag.as_millis() as u64,
        "control_plane": settings.serves.get(),
    })
    .to_string()
}

/// Starts beating for `cluster` until the returned handle is dropped.
pub fn spawn(
    redis: RedisSettings,
    cluster: String,
    settings: HeartbeatSettings,
    progress: LoopProgress,
) -> std::io::Result<Heartbeat> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new().name(format!("heartbeat-{cluster}")).spawn(move || {
        runtime.block_on(beat(redis, cluster, settings, progress, stopped));
    })?;
    Ok(Heartbeat { stop })
}

async fn beat(
    redis: RedisSettings,
    cluster: String,
    settings: HeartbeatSettings,
    progress: LoopProgress,
    stop: Arc<AtomicBool>,
) {
    let mut publisher: Option<Publisher> = None;
    let mut stalled = false;
    while !stop.load(Ordering::Relaxed) {
        let lag = progress.lag();
        if lag > settings.max_stall {
            if !stalled {
                tracing::error!(lag = ?lag, "the agent loop made no progress; heartbeats stop until it does");
            }
            stalled = true;
        } else {
            stalled = false;
            if publisher.is_none() {
                publisher = Publisher::connect(&redis, &cluster)
                    .await
                    .map_err(|e| tracing::warn!(error = %e, "heartbeat: cannot reach Redis"))
                    .ok();
            }
            if let Some(p) = publisher.as_mut() {
                if let Err(e) = p.heartbeat(&beat_value(&settings, lag), settings.ttl).await {
                    tracing::warn!(error = %e, "heartbeat failed");
                }
            }
        }
        // Sleep in slices, so a dropped handle stops the thread promptly.
        let until = Instant::now() + settings.every;
        while !stop.load(Ordering::Relaxed) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(100).min(settings.every)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lag_grows_until_the_next_tick() {
        let p = LoopProgress::default();
        p.tick();
        std::thread::sleep(Duration::from_millis(20));
        assert!(p.lag() >= Duration::from_millis(20));
        p.clone().tick();
        assert!(p.lag() < Duration::from_millis(20), "clones share the progress");
    }

    #[test]
    fn a_beat_says_who_and_how_late_the_loop_is() {
        let s = HeartbeatSettings {
            every: Duration::from_secs(5),
            ttl: Duration::from_secs(15),
            max_stall: Duration::from_secs(120),
            version: "1.0".into(),
            boot: 42,
            serves: ServedControlPlane::default(),
        };
        s.serves.set(Some("cp-a".into()));
        let v: serde_json::Value = serde_json::from_str(&beat_value(&s, Duration::from_millis(1500))).unwrap();
        assert_eq!(
            (v["version"].as_str(), v["boot"].as_i64(), v["loop_lag_ms"].as_u64(), v["control_plane"].as_str()),
            (Some("1.0"), Some(42), Some(1500), Some("cp-a"))
        );
    }
}
