//! Synthetic CPU, memory, disk and network use of the sim's running replicas: a pure
//! function of the replica's launch record and the clock, so charts and tests see plausible
//! numbers that move and replay the same after a restart.
//!
//! A replica uses about as much of what it asked for as its job keeps its GPUs busy
//! (`grus.io/sim-busy-pct`, default 90), its working set grows to 80 % of its memory request
//! over its first ten minutes, and its disk reads and network traffic alternate with a
//! one-minute period (an input pipeline that reads, then a step that exchanges gradients).

use grus_protocol::wire::ReplicaUsage;

use super::SimReplica;

/// What a replica uses with no request of its own: one core, 1 GiB.
const DEFAULT_CPU_MILLI: u64 = 1_000;
const DEFAULT_MEMORY_MIB: u64 = 1_024;
/// The wave's period, and how long the working set takes to grow.
const PERIOD_S: i64 = 60;
const WARM_UP_S: f64 = 600.0;
/// Peak rates at full load, bytes per second.
const DISK_READ_PEAK: f64 = 200.0 * 1024.0 * 1024.0;
const DISK_WRITE_PEAK: f64 = 16.0 * 1024.0 * 1024.0;
const NET_RX_PEAK: f64 = 400.0 * 1024.0 * 1024.0;

/// `r`'s use at `now_ms`, when it has been running since `started_ms`.
pub(super) fn at(r: &SimReplica, busy_pct: f32, started_ms: i64, now_ms: i64) -> ReplicaUsage {
    let load = f64::from(busy_pct.clamp(0.0, 100.0)) / 100.0;
    // A triangle wave in 0..=1, offset per job so replicas of different jobs do not move in step.
    let phase = (now_ms.div_euclid(1000) + (r.job as i64 % PERIOD_S) * 7).rem_euclid(PERIOD_S) as f64 / PERIOD_S as f64;
    let wave = 1.0 - (2.0 * phase - 1.0).abs();
    let cpu_request = if r.cpu_milli > 0 { r.cpu_milli } else { DEFAULT_CPU_MILLI };
    let memory_request = if r.memory_mib > 0 { r.memory_mib } else { DEFAULT_MEMORY_MIB };
    let running_s = (now_ms - started_ms).max(0) as f64 / 1000.0;
    let grown = (0.3 + 0.7 * running_s / WARM_UP_S).min(1.0);
    let scale = |x: f64| x.max(0.0).round() as u64;
    ReplicaUsage {
        job: r.job,
        task: r.task.clone(),
        replica: r.replica,
        cpu_milli: scale(cpu_request as f64 * (0.05 + 0.85 * load) * (0.9 + 0.2 * wave)),
        memory_mib: scale(memory_request as f64 * 0.8 * grown),
        disk_read_bps: scale(DISK_READ_PEAK * load * (1.0 - wave)),
        disk_write_bps: scale(DISK_WRITE_PEAK * load * wave * wave),
        net_rx_bps: scale(NET_RX_PEAK * load * wave),
        net_tx_bps: scale(NET_RX_PEAK * load * wave * 0.9),
    }
}
