//! Run time prediction from history: how long a job will run, judged from the finished jobs
//! most like it.
//!
//! A finished run is remembered under several keys, from the most specific (same project,
//! user, name pattern and shape) to the least (every job). A prediction uses the most specific
//! key with at least [`MIN_SAMPLES`] runs and gives the 50th and 90th percentiles of its recent
//! runs ([`WINDOW`] per key: behaviour drifts, and the estimate must not cost more as history
//! grows). A job like nothing seen before gets `None`: the caller falls back to the job's
//! maximum runtime or its queue's default (a user-given maximum always wins over a prediction,
//! see [`Prediction::bounded_by`]).
//!
//! Pure and deterministic: the same runs observed in the same order give the same answers.

pub mod trace_eval;

use std::collections::{HashMap, VecDeque};

/// Runs a key needs before its quantiles are trusted.
pub const MIN_SAMPLES: usize = 3;
/// Recent runs kept per key.
pub const WINDOW: usize = 64;

/// What the predictor knows of a job. Empty strings are "unknown" (the Alibaba trace has no
/// projects, users, names or images).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFeatures {
    pub project: String,
    pub user: String,
    /// The name less its run-specific suffix ([`name_pattern`]).
    pub name_pattern: String,
    pub image: String,
    /// Priority class or QoS.
    pub class: String,
    /// GPU demand of the whole job, in milli-GPUs.
    pub gpu_milli: u64,
    pub gpu_model: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub replicas: u32,
}

/// Which runs a prediction was made from, most specific first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Basis {
    /// Same project, user, name pattern and shape.
    SameNameAndShape,
    /// Same project and name pattern.
    SameName,
    /// Same project, image and shape.
    SameImageAndShape,
    /// Same project, user and shape.
    SameUserAndShape,
    /// Same shape (GPUs, model, CPU and memory sizes, class), any project.
    SameShape,
    /// Same project.
    SameProject,
    /// Every finished job.
    Everything,
}

impl Basis {
    pub const ALL: [Basis; 7] = [
        Basis::SameNameAndShape,
        Basis::SameName,
        Basis::SameImageAndShape,
        Basis::SameUserAndShape,
        Basis::SameShape,
        Basis::SameProject,
        Basis::Everything,
    ];

    /// How the basis reads to a user: "12 similar runs (same name)".
    pub fn describe(self) -> &'static str {
        match self {
            Basis::SameNameAndShape => "same name and shape",
            Basis::SameName => "same name",
            Basis::SameImageAndShape => "same image and shape",
            Basis::SameUserAndShape => "same user and shape",
            Basis::SameShape => "same shape",
            Basis::SameProject => "same project",
            Basis::Everything => "all finished jobs",
        }
    }

    /// The key of `f` at this level; `None` when a field it needs is unknown.
    fn key(self, f: &RunFeatures) -> Option<String> {
        let shape = || {
            format!(
                "{}m/{}/{}x/c{}/m{}/{}",
                f.gpu_milli,
                f.gpu_model,
                f.replicas,
                log2_bucket(f.cpu_milli),
                log2_bucket(f.memory_mib),
                f.class
            )
        };
        let known = |s: &str| !s.is_empty();
        match self {
            Basis::SameNameAndShape if known(&f.name_pattern) => {
                Some(format!("ns|{}|{}|{}|{}", f.project, f.user, f.name_pattern, shape()))
            }
            Basis::SameName if known(&f.name_pattern) => Some(format!("n|{}|{}", f.project, f.name_pattern)),
            Basis::SameImageAndShape if known(&f.image) => Some(format!("is|{}|{}|{}", f.project, f.image, shape())),
            Basis::SameUserAndShape if known(&f.user) => Some(format!("us|{}|{}|{}", f.project, f.user, shape())),
            Basis::SameShape => Some(format!("s|{}", shape())),
            Basis::SameProject if known(&f.project) => Some(format!("p|{}", f.project)),
            Basis::Everything => Some("*".to_owned()),
            _ => None,
        }
    }
}

/// Sizes within a factor of two share a bucket (a 6-CPU and an 8-CPU job are alike).
fn log2_bucket(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// A job's name less what changes from run to run: trailing digits, dates and hashes after
/// the last `-`, `_` or `.` (`train-llama-0042` and `train-llama-0043` are `train-llama`).
pub fn name_pattern(name: &str) -> String {
    let mut rest = name.trim();
    while let Some(cut) = rest.rfind(['-', '_', '.']) {
        let tail = &rest[cut + 1..];
        let varying = !tail.is_empty()
            && (tail.chars().all(|c| c.is_ascii_digit())
                || (tail.len() >= 6
                    && tail.chars().all(|c| c.is_ascii_hexdigit())
                    && tail.chars().any(|c| c.is_ascii_digit())));
        if !varying || cut == 0 {
            break;
        }
        rest = &rest[..cut];
    }
    rest.trim_end_matches(|c: char| c.is_ascii_digit()).to_owned()
}

/// A predicted run time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// The median run time, seconds.
    pub p50_s: u64,
    /// The 90th percentile, seconds: what backfill trusts.
    pub p90_s: u64,
    /// How many runs it was made from.
    pub samples: usize,
    pub basis: Basis,
}

impl Prediction {
    /// A user-given maximum runtime wins: the job is stopped then, whatever its history says.
    pub fn bounded_by(self, max_runtime_s: Option<u64>) -> Prediction {
        match max_runtime_s {
            Some(max) => Prediction { p50_s: self.p50_s.min(max), p90_s: self.p90_s.min(max), ..self },
            None => self,
        }
    }
}

/// Finished runs by key; see the module doc.
#[derive(Clone, Debug, Default)]
pub struct RuntimePredictor {
    runs: HashMap<(Basis, String), VecDeque<u64>>,
}

impl RuntimePredictor {
    pub fn new() -> RuntimePredictor {
        RuntimePredictor::default()
    }

    /// Remembers a finished run of `runtime_s` seconds (oldest first: the window keeps the
    /// latest).
    pub fn observe(&mut self, f: &RunFeatures, runtime_s: u64) {
        for basis in Basis::ALL {
            if let Some(key) = basis.key(f) {
                let ring = self.runs.entry((basis, key)).or_default();
                if ring.len() == WINDOW {
                    ring.pop_front();
                }
                ring.push_back(runtime_s);
            }
        }
    }

    /// The run time of a job like `f`, from the most specific key with enough runs.
    pub fn predict(&self, f: &RunFeatures) -> Option<Prediction> {
        Basis::ALL.into_iter().find_map(|basis| {
            let ring = self.runs.get(&(basis, basis.key(f)?))?;
            (ring.len() >= MIN_SAMPLES).then(|| {
                let mut sorted: Vec<u64> = ring.iter().copied().collect();
                sorted.sort_unstable();
                Prediction {
                    p50_s: quantile(&sorted, 0.5),
                    p90_s: quantile(&sorted, 0.9),
                    samples: sorted.len(),
                    basis,
                }
            })
        })
    }
}

/// The `q` quantile of sorted values (nearest rank, rounding up: never below the true one).
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn job(project: &str, name: &str, gpus: u64) -> RunFeatures {
        RunFeatures {
            project: project.into(),
            user: "alice".into(),
            name_pattern: name_pattern(name),
            gpu_milli: gpus * 1000,
            gpu_model: "A100".into(),
            cpu_milli: 8000,
            memory_mib: 32768,
            replicas: 1,
            ..RunFeatures::default()
        }
    }

    #[test]
    fn names_lose_their_run_numbers_dates_and_hashes() {
        assert_eq!(name_pattern("train-llama-0042"), "train-llama");
        assert_eq!(name_pattern("sweep_lr_3e-4_run7"), "sweep_lr_3e-4_run");
        assert_eq!(name_pattern("eval.20261128.a3f9c2d1"), "eval");
        assert_eq!(name_pattern("resnet50"), "resnet");
        assert_eq!(name_pattern("bert-large"), "bert-large");
        assert_eq!(name_pattern("42"), "");
    }

    #[test]
    fn the_most_specific_history_with_enough_runs_wins() {
        let mut p = RuntimePredictor::new();
        for i in 0..10 {
            p.observe(&job("vision", &format!("other-{i}"), 1), 100);
        }
        let first = p.predict(&job("vision", "train-7", 1)).unwrap();
        assert_eq!((first.basis, first.p50_s), (Basis::SameUserAndShape, 100), "no runs of its name yet");
        for (i, secs) in [3600, 3000, 4200].into_iter().enumerate() {
            p.observe(&job("vision", &format!("train-{i}"), 1), secs);
        }
        let got = p.predict(&job("vision", "train-7", 1)).unwrap();
        assert_eq!((got.basis, got.samples, got.p50_s, got.p90_s), (Basis::SameNameAndShape, 3, 3600, 4200));
        let other_project = p.predict(&job("nlp", "train-7", 1)).unwrap();
        assert_eq!(other_project.basis, Basis::SameShape, "another project's runs of the name do not count");
        assert!(RuntimePredictor::new().predict(&job("vision", "x", 1)).is_none(), "no history: no prediction");
    }

    #[test]
    fn a_user_given_maximum_runtime_wins_over_history() {
        let p = Prediction { p50_s: 500, p90_s: 900, samples: 5, basis: Basis::SameName };
        assert_eq!(p.bounded_by(Some(600)), Prediction { p50_s: 500, p90_s: 600, ..p });
        assert_eq!(p.bounded_by(None), p);
    }

    #[test]
    fn the_window_follows_recent_runs() {
        let mut p = RuntimePredictor::new();
        let f = job("vision", "train", 1);
        for _ in 0..WINDOW {
            p.observe(&f, 10);
        }
        for _ in 0..WINDOW {
            p.observe(&f, 1000);
        }
        assert_eq!(p.predict(&f).unwrap().p90_s, 1000);
        assert_eq!(p.predict(&f).unwrap().p50_s, 1000);
    }

    proptest! {
        #[test]
        fn quantiles_are_ordered_and_within_the_runs(runs in prop::collection::vec(1u64..100_000, 1..200)) {
            let mut p = RuntimePredictor::new();
            let f = job("p", "n", 2);
            for r in &runs {
                p.observe(&f, *r);
            }
            match p.predict(&f) {
                None => prop_assert!(runs.len() < MIN_SAMPLES),
                Some(pred) => {
                    let recent = &runs[runs.len().saturating_sub(WINDOW)..];
                    prop_assert!(pred.p50_s <= pred.p90_s);
                    prop_assert!(recent.contains(&pred.p50_s) && recent.contains(&pred.p90_s));
                    let covered = recent.iter().filter(|r| **r <= pred.p90_s).count();
                    prop_assert!(covered * 10 >= recent.len() * 9, "p90 covers at least 90 % of the window");
                }
            }
        }
    }
}
