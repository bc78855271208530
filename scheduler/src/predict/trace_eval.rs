//! How well [`RuntimePredictor`] predicts the Alibaba trace's run times, measured online: pods
//! are taken in creation order, each predicted from the pods that had ended by its creation
//! (no look-ahead), then its own run is remembered when it ends.
//!
//! A pod's run time is `deletion_time - scheduled_time` (seconds); pods never scheduled (phase
//! `Pending`) or without times are left out. The trace has no projects, users, job names or
//! images: predictions there come from the shape (GPUs, model, CPU and memory sizes, QoS), so
//! this measures the predictor's weakest case. The baseline predicts every pod from all
//! ended pods (`Basis::Everything`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{quantile, RunFeatures, RuntimePredictor};
use crate::trace::PodRow;

/// The error of one predictor over a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionError {
    /// Pods with a run time.
    pub pods: usize,
    /// Pods that got a prediction (the first ones have no history).
    pub predicted: usize,
    /// Median |p50 − actual|, seconds.
    pub median_abs_error_s: u64,
    /// Median |p50 − actual| / actual.
    pub median_rel_error: f64,
    /// Share of predicted pods that ran longer than their p90 (backfill's risk).
    pub over_p90: f64,
}

/// The predictor against the baseline on the same pods.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvaluation {
    pub predictor: PredictionError,
    pub baseline: PredictionError,
}

/// What the trace says of a pod, as the predictor sees it.
pub fn features(pod: &PodRow) -> RunFeatures {
    RunFeatures {
        class: pod.qos.clone().unwrap_or_default(),
        gpu_milli: u64::from(pod.num_gpu) * u64::from(pod.gpu_milli),
        gpu_model: pod.gpu_spec.clone(),
        cpu_milli: pod.cpu_milli,
        memory_mib: pod.memory_mib,
        replicas: 1,
        ..RunFeatures::default()
    }
}

/// A pod's (creation, end, run time), when it ran.
fn run_of(pod: &PodRow) -> Option<(u64, u64, u64)> {
    let start = pod.scheduled_time?;
    let end = pod.deletion_time?;
    Some((pod.creation_time?, end, end.checked_sub(start)?))
}

/// Evaluates the predictor and the baseline on `pods` (any order; see the module doc).
pub fn evaluate(pods: &[PodRow]) -> TraceEvaluation {
    let mut runs: Vec<(u64, u64, u64, RunFeatures)> =
        pods.iter().filter_map(|p| run_of(p).map(|(c, e, r)| (c, e, r, features(p)))).collect();
    runs.sort_by_key(|r| r.0);
    let mut predictor = RuntimePredictor::new();
    let mut baseline = RuntimePredictor::new();
    let everything = RunFeatures::default();
    // Runs not yet ended, by end time.
    let mut ending: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for (i, (created, end, runtime, f)) in runs.iter().enumerate() {
        while let Some(Reverse((t, j))) = ending.peek().copied() {
            if t > *created {
                break;
            }
            ending.pop();
            predictor.observe(&runs[j].3, runs[j].2);
            baseline.observe(&everything, runs[j].2);
        }
        if let Some(p) = predictor.predict(f) {
            ours.push((p.p50_s, p.p90_s, *runtime));
        }
        if let Some(p) = baseline.predict(&everything) {
            base.push((p.p50_s, p.p90_s, *runtime));
        }
        ending.push(Reverse((*end, i)));
    }
    TraceEvaluation { predictor: error_of(runs.len(), &ours), baseline: error_of(runs.len(), &base) }
}

fn error_of(pods: usize, predictions: &[(u64, u64, u64)]) -> PredictionError {
    let mut abs: Vec<u64> = predictions.iter().map(|(p50, _, actual)| p50.abs_diff(*actual)).collect();
    abs.sort_unstable();
    let mut rel: Vec<f64> =
        predictions.iter().map(|(p50, _, actual)| p50.abs_diff(*actual) as f64 / (*actual).max(1) as f64).collect();
    rel.sort_by(f64::total_cmp);
    let over = predictions.iter().filter(|(_, p90, actual)| actual > p90).count();
    PredictionError {
        pods,
        predicted: predictions.len(),
        median_abs_error_s: quantile(&abs, 0.5),
        median_rel_error: rel.get(rel.len().saturating_sub(1) / 2).copied().unwrap_or(0.0),
        over_p90: if predictions.is_empty() { 0.0 } else { over as f64 / predictions.len() as f64 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, gpus: u32, created: u64, runtime: u64) -> PodRow {
        PodRow {
            line: 0,
            name: name.into(),
            cpu_milli: 4000,
            memory_mib: 8192,
            num_gpu: gpus,
            gpu_milli: 1000,
            gpu_spec: String::new(),
            qos: Some("LS".into()),
            pod_phase: Some("Succeeded".into()),
            creation_time: Some(created),
            deletion_time: Some(created + runtime),
            scheduled_time: Some(created),
        }
    }

    #[test]
    fn shape_history_beats_the_global_median_when_shapes_differ_and_nothing_looks_ahead() {
        // 1-GPU pods run 100 s, 8-GPU pods 10,000 s, interleaved.
        let pods: Vec<PodRow> = (0..200u64)
            .map(|i| if i % 2 == 0 { pod("a", 1, i * 200, 100) } else { pod("b", 8, i * 200, 10_000) })
            .collect();
        let e = evaluate(&pods);
        assert_eq!(e.predictor.pods, 200);
        assert!(e.predictor.median_abs_error_s < e.baseline.median_abs_error_s, "{e:?}");
        assert_eq!(e.predictor.median_abs_error_s, 0);
        // The first pods have nothing that ended before them.
        assert!(e.predictor.predicted < 200);
    }

    #[test]
    fn pods_that_never_ran_are_left_out() {
        let mut never = pod("p", 1, 0, 10);
        never.scheduled_time = None;
        assert_eq!(evaluate(&[never]).predictor.pods, 0);
    }
}
