//! The allocation curve of one run, binned as the published `analysis_allo_discrete.csv`:
//! after every pod event, `arrive_e = round(A_e / (C / 100))` (percent of capacity, Python
//! `round`: exact halves go to even) and `alloc_e = round(U_e / (C / 100), 2)`; column `k`
//! is the mean of `alloc_e` over the events with `arrive_e = k`, rounded to 2 decimals, or,
//! when there are none, over the events with `k − 1 ≤ arrive_e ≤ k + 1`.
//!
//! The fragmentation curve (`analysis_frag_discrete.csv`) uses the same bins for the cluster's
//! fragmentation `F_e = Σ_n F(n)`: column `k` is `round(100 · mean(F_e) / C, 2)`.

/// `round(num / den)` with exact halves to even (Python's `round` on an exact ratio).
pub fn round_half_even(num: u128, den: u128) -> u128 {
    let (q, r) = (num / den, num % den);
    match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

/// Python's `round(x, 2)`: decimal rounding of the exact binary value, halves to even. Rust's
/// fixed-precision formatting rounds the exact value the same way.
pub fn py_round2(x: f64) -> f64 {
    format!("{x:.2}").parse().expect("a formatted float parses")
}

/// Per-column sums of `alloc_e` (in hundredths of a percent) and event counts.
#[derive(Clone, Debug)]
pub struct AllocationCurve {
    capacity_milli: u64,
    sums: Vec<u128>,
    counts: Vec<u64>,
}

impl AllocationCurve {
    /// Columns `0..=max_column` for a cluster of `capacity_milli` GPU milli (a positive
    /// multiple of 100).
    pub fn new(capacity_milli: u64, max_column: usize) -> AllocationCurve {
        AllocationCurve { capacity_milli, sums: vec![0; max_column + 1], counts: vec![0; max_column + 1] }
    }

    /// Records one event: `arrived` GPU milli requested so far (failed pods included) and
    /// `allocated` GPU milli held now.
    pub fn record(&mut self, arrived: u64, allocated: u64) {
        let c = self.capacity_milli as u128;
        let column = column_of(arrived, self.capacity_milli);
        if column >= self.sums.len() {
            return;
        }
        let num = allocated as u128 * 10_000;
        let hundredths = if 2 * (num % c) == c {
            // An exact tie in hundredths: Python rounds the binary value of the division,
            // which lies on one side of it.
            (py_round2(allocated as f64 / (self.capacity_milli / 100) as f64) * 100.0).round() as u128
        } else {
            round_half_even(num, c)
        };
        self.sums[column] += hundredths;
        self.counts[column] += 1;
    }

    /// The binned curve: one value per column, `None` where no event is near.
    pub fn columns(&self) -> Vec<Option<f64>> {
        binned(&self.counts, |k| self.sums[k] as f64 / 100.0)
    }
}

/// `arrive_e`: the column of an event, in percent of capacity, exact halves to even.
fn column_of(arrived: u64, capacity_milli: u64) -> usize {
    round_half_even(arrived as u128 * 100, capacity_milli as u128) as usize
}

/// Means per column (with the ±1 fallback), rounded to 2 decimals. `sum(k)` is the sum of
/// the values recorded in column `k`.
fn binned(counts: &[u64], sum: impl Fn(usize) -> f64) -> Vec<Option<f64>> {
    let n = counts.len();
    (0..n)
        .map(|k| {
            let (mut total, mut count) = (sum(k), counts[k]);
            if count == 0 {
                let near = k.saturating_sub(1)..=(k + 1).min(n - 1);
                total = near.clone().map(&sum).sum();
                count = counts[near].iter().sum();
            }
            (count > 0).then(|| py_round2(total / count as f64))
        })
        .collect()
}

/// Per-column sums of the cluster fragmentation `F_e` (milli) and event counts.
#[derive(Clone, Debug)]
pub struct FragmentationCurve {
    capacity_milli: u64,
    sums: Vec<f64>,
    counts: Vec<u64>,
}

impl FragmentationCurve {
    pub fn new(capacity_milli: u64, max_column: usize) -> FragmentationCurve {
        FragmentationCurve { capacity_milli, sums: vec![0.0; max_column + 1], counts: vec![0; max_column + 1] }
    }

    /// Records one event: `arrived` GPU milli so far and the cluster's fragmentation now.
    pub fn record(&mut self, arrived: u64, fragmented: f64) {
        let column = column_of(arrived, self.capacity_milli);
        if column < self.sums.len() {
            self.sums[column] += fragmented;
            self.counts[column] += 1;
        }
    }

    /// Mean fragmented GPU milli per column as a percent of capacity, 2 decimals.
    pub fn columns(&self) -> Vec<Option<f64>> {
        let scale = 100.0 / self.capacity_milli as f64;
        binned(&self.counts, |k| self.sums[k] * scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_to_even() {
        assert_eq!(round_half_even(5, 2), 2); // 2.5
        assert_eq!(round_half_even(7, 2), 4); // 3.5
        assert_eq!(round_half_even(26, 10), 3);
        assert_eq!(round_half_even(24, 10), 2);
        assert_eq!(py_round2(0.125), 0.12);
        assert_eq!(py_round2(0.375), 0.38);
        assert_eq!(py_round2(2.675), 2.67, "2.675 is 2.67499999… in binary");
        assert_eq!(py_round2(95.235), 95.23, "95.235 is below the half in binary");
    }

    #[test]
    fn binning_matches_the_published_analysis() {
        // Capacity 6,212,000 milli: one percent is 62,120 milli.
        let mut c = AllocationCurve::new(6_212_000, 130);
        // 31,060 milli arrived is exactly 0.5 % -> column 0 (half to even); 93,180 is 1.5 % -> 2.
        c.record(31_060, 31_060);
        c.record(93_180, 62_120);
        c.record(93_180, 93_180);
        let cols = c.columns();
        assert_eq!(cols[0], Some(0.5));
        assert_eq!(cols[2], Some(1.25), "mean of 1.00 and 1.50");
        // Column 1 has no event: the mean over columns 0..=2 is (0.5 + 1 + 1.5) / 3 = 1.
        assert_eq!(cols[1], Some(1.0));
        assert_eq!(cols[3], Some(1.25), "from column 2 alone");
        assert_eq!(cols[4], None);
        // Beyond the last column events are ignored.
        c.record(6_212_000 * 2, 0);
        assert_eq!(c.columns().len(), 131);
    }

    #[test]
    fn fragmentation_is_a_percent_of_capacity() {
        let mut f = FragmentationCurve::new(6_212_000, 130);
        f.record(0, 347_872.0); // 5.6 % of capacity
        f.record(62_120, 62_120.0);
        f.record(62_120, 124_240.0);
        let cols = f.columns();
        assert_eq!(cols[0], Some(5.6));
        assert_eq!(cols[1], Some(1.5));
        assert_eq!(cols[2], Some(1.5), "falls back on column 1");
    }

    #[test]
    fn allocation_rounds_to_hundredths_of_a_percent() {
        let mut c = AllocationCurve::new(6_212_000, 130);
        c.record(0, 5_917_551); // 95.2599806… %
        assert_eq!(c.columns()[0], Some(95.26));
    }
}
