//! Owns the compute pacing: a token bucket whose tokens are thread blocks (a launch costs its
//! grid size) and a controller that sets the bucket's refill rate from measured utilization.
//! Pure: every function takes the time (nanoseconds, any monotonic origin) as an argument.
//!
//! Why blocks and a learned rate: the GPU time of a block is unknown to the limiter, so the
//! rate in blocks per second that yields the share is learned. Over a control window the
//! process consumed `c` blocks/s and the device reported our utilization `u`; while the cost of
//! a block is steady, `c * share / u` blocks/s gives the share. This holds whether or not other
//! tenants are on the GPU: the utilization is our own, not the device's spare capacity.

/// How long a control window lasts.
pub const WINDOW_NS: u64 = 100_000_000;
/// How much time's worth of tokens the bucket may bank (a burst after an idle spell).
pub const BURST_NS: u64 = 50_000_000;

/// A token bucket that allows debt: a launch proceeds whenever the balance is not negative and
/// then pays its whole cost, so a kernel larger than the bucket never waits forever.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    /// Tokens (blocks) per second. `None`: not calibrated yet, nothing is paced.
    pub rate: Option<f64>,
    pub tokens: f64,
    pub last_ns: u64,
}

impl TokenBucket {
    pub fn new(now_ns: u64) -> Self {
        TokenBucket { rate: None, tokens: 0.0, last_ns: now_ns }
    }

    fn refill(&mut self, now_ns: u64) {
        let elapsed = now_ns.saturating_sub(self.last_ns) as f64 / 1e9;
        self.last_ns = self.last_ns.max(now_ns);
        if let Some(rate) = self.rate {
            let cap = rate * BURST_NS as f64 / 1e9;
            self.tokens = (self.tokens + rate * elapsed).min(cap.max(0.0));
        }
    }

    /// Takes `cost` tokens, or says how many nanoseconds to wait before trying again.
    pub fn take(&mut self, cost: f64, now_ns: u64) -> Result<(), u64> {
        self.refill(now_ns);
        let Some(rate) = self.rate else { return Ok(()) };
        if self.tokens >= 0.0 {
            self.tokens -= cost;
            return Ok(());
        }
        // At least a microsecond so a caller sleeping on this never spins.
        Err(((-self.tokens / rate * 1e9).ceil() as u64).max(1_000))
    }
}

/// The rate controller of one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Controller {
    /// Target share of the device, 0 < share <= 1.
    pub share: f64,
    pub window_start_ns: u64,
    /// Blocks launched in the current window.
    pub consumed: f64,
}

impl Controller {
    pub fn new(share: f64, now_ns: u64) -> Self {
        Controller { share, window_start_ns: now_ns, consumed: 0.0 }
    }

    pub fn window_over(&self, now_ns: u64) -> bool {
        now_ns.saturating_sub(self.window_start_ns) >= WINDOW_NS
    }

    /// A window that went ten times its length without a utilization sample: closed anyway
    /// (keeping the rate) so an old count never meets a new sample.
    pub fn window_stale(&self, now_ns: u64) -> bool {
        now_ns.saturating_sub(self.window_start_ns) >= 10 * WINDOW_NS
    }

    /// Closes the window with the measured utilization of our processes over it (0..=1, `None`
    /// when no sample was available) and returns the new refill rate for the bucket.
    pub fn close_window(&mut self, now_ns: u64, utilization: Option<f64>, current: Option<f64>) -> Option<f64> {
        let seconds = now_ns.saturating_sub(self.window_start_ns) as f64 / 1e9;
        let consumed = std::mem::take(&mut self.consumed);
        self.window_start_ns = now_ns;
        next_rate(self.share, consumed, seconds, utilization, current)
    }
}

/// The refill rate for the next window. Kept when there is nothing to learn from (no sample,
/// an idle window); otherwise moved half-way to `consumed/s * share / utilization`, which
/// damps measurement noise while still converging geometrically.
pub fn next_rate(
    share: f64,
    consumed: f64,
    seconds: f64,
    utilization: Option<f64>,
    current: Option<f64>,
) -> Option<f64> {
    let Some(u) = utilization else { return current };
    if seconds <= 0.0 || consumed <= 0.0 || u < 0.005 {
        return current;
    }
    let target = consumed / seconds * share / u.min(1.0);
    Some(match current {
        None => target,
        Some(rate) => 0.5 * rate + 0.5 * target,
    })
}

/// The cost of a launch: its grid size in blocks (at least one).
pub fn launch_cost(grid: [u32; 3]) -> f64 {
    grid.iter().map(|&d| f64::from(d.max(1))).product()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn uncalibrated_bucket_never_waits() {
        let mut bucket = TokenBucket::new(0);
        for t in 0..100 {
            assert_eq!(bucket.take(1e9, t), Ok(()));
        }
    }

    #[test]
    fn debt_is_paid_back_at_the_rate() {
        let mut bucket = TokenBucket::new(0);
        bucket.rate = Some(1000.0); // blocks per second
        assert_eq!(bucket.take(500.0, 0), Ok(()));
        // 500 blocks of debt at 1000/s: half a second.
        assert_eq!(bucket.take(1.0, 0), Err(500_000_000));
        assert_eq!(bucket.take(1.0, 250_000_000), Err(250_000_000));
        assert_eq!(bucket.take(1.0, 500_000_000), Ok(()));
    }

    #[test]
    fn idle_time_banks_only_a_burst() {
        let mut bucket = TokenBucket::new(0);
        bucket.rate = Some(1000.0);
        bucket.take(0.0, 10_000_000_000).unwrap();
        assert!(bucket.tokens <= 1000.0 * BURST_NS as f64 / 1e9 + 1e-9);
    }

    /// A simulated device where a block costs a fixed GPU time and a greedy launcher: the
    /// controller must bring the utilization to the share whatever the (unknown) block cost.
    /// Fake clock, so exact.
    fn simulate(share: f64, block_ns: f64, blocks_per_launch: u32, windows: usize) -> f64 {
        let mut now = 0u64;
        let mut bucket = TokenBucket::new(now);
        let mut ctl = Controller::new(share, now);
        let mut device_free_at = 0.0f64;
        let mut last_util = 0.0;
        for _ in 0..windows {
            let start = now;
            let mut busy = 0.0;
            while now < start + WINDOW_NS {
                let cost = launch_cost([blocks_per_launch, 1, 1]);
                match bucket.take(cost, now) {
                    Ok(()) => {
                        ctl.consumed += cost;
                        let kernel = cost * block_ns;
                        // One kernel at a time; the launch returns when the kernel starts.
                        let begin = device_free_at.max(now as f64);
                        device_free_at = begin + kernel;
                        busy += kernel;
                        now = now.max(begin as u64);
                    }
                    Err(wait) => now += wait,
                }
            }
            last_util = (busy / (now - start) as f64).min(1.0);
            bucket.rate = ctl.close_window(now, Some(last_util), bucket.rate);
        }
        last_util
    }

    #[test]
    fn controller_converges_to_the_share() {
        for share in [0.1, 0.25, 0.5, 0.75] {
            let achieved = simulate(share, 10_000.0, 100, 40);
            assert!((achieved - share).abs() <= 0.05 * share, "share {share}: achieved {achieved}");
        }
    }

    #[test]
    fn no_sample_keeps_the_rate() {
        assert_eq!(next_rate(0.5, 100.0, 0.1, None, Some(7.0)), Some(7.0));
        assert_eq!(next_rate(0.5, 0.0, 0.1, Some(0.3), Some(7.0)), Some(7.0));
        assert_eq!(next_rate(0.5, 100.0, 0.1, Some(0.5), None), Some(1000.0));
    }

    proptest! {
        #[test]
        fn converges_for_any_block_cost(share in 0.05f64..0.95, block_ns in 1_000.0f64..200_000.0, blocks in 1u32..64) {
            let achieved = simulate(share, block_ns, blocks, 60);
            prop_assert!((achieved - share).abs() <= 0.1 * share, "achieved {}", achieved);
        }

        #[test]
        fn waits_are_finite_and_positive(rate in 1.0f64..1e9, cost in 0.0f64..1e9, t in 0u64..1_000_000_000) {
            let mut bucket = TokenBucket::new(0);
            bucket.rate = Some(rate);
            bucket.take(cost, t).unwrap();
            if let Err(wait) = bucket.take(cost, t) {
                prop_assert!(wait >= 1_000);
                prop_assert!(bucket.take(cost, t.saturating_add(wait + 1_000)).is_ok());
            }
        }
    }
}
