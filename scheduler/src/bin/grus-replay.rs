//! grus-replay: replays the Alibaba GPU trace v2023 under one placement policy, as in the
//! FGD paper's published experiment, and reports the GPU allocation curve.
//!
//! ```text
//! grus-replay --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv \
//!     --policy fgd --seeds 42..51 --tune 1.3 --json
//! ```
//!
//! With `--runtimes` it measures the run time predictor on the trace's times instead
//! (`grus_scheduler::predict::trace_eval`); `--nodes` is not read then.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use grus_scheduler::predict::trace_eval;
use grus_scheduler::replay::timeline;
use grus_scheduler::replay::variants::{self, VariantSpec};
use grus_scheduler::replay::{self, PolicyKind, RunResult, Trace};
use grus_scheduler::trace;
use serde_json::json;

/// Replay a GPU cluster trace under a placement policy and report the GPU allocation at each
/// level of arrived demand.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Node list CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(long, required_unless_present = "runtimes")]
    nodes: Option<PathBuf>,

    /// Measure the run time predictor on the pods' creation, scheduling and deletion times
    /// (median error, how often a run outlasts its p90) instead of replaying placement.
    #[arg(long)]
    runtimes: bool,

    /// Run the interference experiment instead (`grus_scheduler::replay::sharing`): synthetic
    /// GPU load, each policy with the sharing limit off and at this percent; reports allocation
    /// and the busy % of the GPUs holding shares. With `--timeline`: synthetic load, shares
    /// placed under this limit.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    sharing_limit: Option<u8>,

    /// Replay in time instead (`grus_scheduler::replay::timeline`): pods arrive at their
    /// creation time, leave at their deletion time and wait in the scheduling cycle's queue;
    /// random, bestfit, fgd and grus at each `--load`. Reports time-averaged allocation and
    /// fragmentation and queueing delays.
    #[arg(long, conflicts_with = "runtimes")]
    timeline: bool,

    /// Policies a `--timeline` replay compares (comma list of random, bestfit, fgd, grus,
    /// grus-blind).
    #[arg(long, value_delimiter = ',', default_value = "random,bestfit,fgd,grus", requires = "timeline")]
    policies: Vec<timeline::TimelinePolicy>,

    /// Synthetic per-pod GPU load in `--timeline` (each pod drives its devices at 20–100 % of
    /// its booking), so that the utilization term and the sharing limit have measurements.
    #[arg(long, requires = "timeline")]
    synthetic_load: bool,

    /// Offered GPU loads for `--timeline`, as fractions of capacity (comma list).
    #[arg(long, value_delimiter = ',', default_value = "0.8,1.0,1.3", requires = "timeline")]
    load: Vec<f64>,

    /// Seconds of replay time between scheduling cycles in `--timeline`.
    #[arg(long, default_value_t = 10, requires = "timeline")]
    cycle_s: u64,

    /// Length of a `--timeline` replay, in seconds of replay time.
    #[arg(long, default_value_t = 43_200, requires = "timeline")]
    horizon_s: u64,

    /// Seconds of a `--timeline` replay before anything is measured (default: a quarter of
    /// the horizon).
    #[arg(long, requires = "timeline")]
    warmup_s: Option<u64>,

    /// Preemption on in `--timeline` (qos gives the priority; only BE pods are evicted).
    #[arg(long, requires = "timeline")]
    preemption: bool,

    /// Pod list CSV (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]`).
    #[arg(long)]
    pods: PathBuf,

    /// Replay a variant of `--pods` instead, made by resampling its pods
    /// (`grus_scheduler::replay::variants`): stresses like `cpu30+share60+multi30+spec20`.
    #[arg(long)]
    variant: Option<VariantSpec>,

    /// Seed of the variant's resampling (the replay's own seeds are `--seeds`).
    #[arg(long, default_value_t = 1, requires = "variant")]
    variant_seed: u64,

    /// Pod list whose model constraints (`gpu_spec`) a variant's `specX` draws from; by default
    /// `--pods` itself.
    #[arg(long, requires = "variant")]
    spec_from: Option<PathBuf>,

    /// Placement policy: random, dotprod, clustering, packing, bestfit, fgd or grus.
    #[arg(long, default_value = "fgd", conflicts_with = "all_policies")]
    policy: PolicyKind,

    /// Run every policy in turn (with --json: one JSON object per line, one per policy).
    #[arg(long)]
    all_policies: bool,

    /// Seeds: an inclusive range `42..51`, a comma list `42,43,50`, or one seed.
    #[arg(long, default_value = "42..51", value_parser = parse_seeds)]
    seeds: Seeds,

    /// Total GPU demand to replay, as a multiple of the cluster's GPU capacity.
    #[arg(long, default_value_t = 1.3)]
    tune: f64,

    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,

    /// Seeds to run at once (each run is timed on its own; 1 keeps timings undisturbed).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

#[derive(Clone, Debug)]
struct Seeds(Vec<u64>);

fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let bad = |part: &str| format!("`{part}` is not a seed, an inclusive range `a..b` or a comma list");
    let mut seeds = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once("..") {
            let b = b.strip_prefix('=').unwrap_or(b);
            let (a, b): (u64, u64) =
                (a.trim().parse().map_err(|_| bad(part))?, b.trim().parse().map_err(|_| bad(part))?);
            if a > b {
                return Err(format!("empty seed range `{part}`"));
            }
            seeds.extend(a..=b);
        } else {
            seeds.push(part.parse().map_err(|_| bad(part))?);
        }
    }
    if seeds.is_empty() {
        return Err("no seeds given".into());
    }
    Ok(Seeds(seeds))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The trace's name: the pod file's stem without `openb_pod_list_`.
fn trace_name(pods: &Path) -> String {
    let stem = pods.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    stem.strip_prefix("openb_pod_list_").map(str::to_string).unwrap_or(stem)
}

struct Timed {
    result: RunResult,
    elapsed_ms: f64,
}

fn run_seeds(trace: &Trace, policy: PolicyKind, seeds: &[u64], tune: f64, threads: usize) -> Result<Vec<Timed>> {
    let one = |seed: u64| -> Result<Timed> {
        let start = Instant::now();
        let result = replay::run(trace, policy, seed, tune)?;
        Ok(Timed { result, elapsed_ms: start.elapsed().as_secs_f64() * 1000.0 })
    };
    if threads <= 1 {
        return seeds.iter().map(|&s| one(s)).collect();
    }
    let mut out = Vec::with_capacity(seeds.len());
    for chunk in seeds.chunks(threads) {
        let batch: Vec<Result<Timed>> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk.iter().map(|&s| scope.spawn(move || one(s))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("a replay thread panicked")))).collect()
        });
        for r in batch {
            out.push(r?);
        }
    }
    Ok(out)
}

fn mean_at(runs: &[Timed], column: usize) -> Option<f64> {
    let values: Vec<f64> = runs.iter().filter_map(|r| r.result.gpu_alloc_pct.get(column).copied().flatten()).collect();
    (!values.is_empty() && values.len() == runs.len()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn report(name: &str, policy: PolicyKind, seeds: &[u64], runs: &[Timed], as_json: bool) {
    let (at100, at130) = (mean_at(runs, 100), mean_at(runs, 130));
    if as_json {
        let runs: Vec<_> = runs
            .iter()
            .map(|r| {
                json!({
                    "seed": r.result.seed,
                    "pods_arrived": r.result.pods_arrived,
                    "pods_placed": r.result.pods_placed,
                    "pods_failed": r.result.pods_failed,
                    "gpu_alloc_pct": r.result.gpu_alloc_pct,
                    "gpu_frag_pct": r.result.gpu_frag_pct,
                    "elapsed_ms": (r.elapsed_ms * 1000.0).round() / 1000.0,
                })
            })
            .collect();
        let out = json!({
            "trace": name,
            "policy": policy.name(),
            "seeds": seeds,
            "gpu_alloc_pct_at_100": at100,
            "gpu_alloc_pct_at_130": at130,
            "runs": runs,
        });
        println!("{out}");
        return;
    }
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
    println!("trace {name}, policy {} ({})", policy.name(), policy.paper_name());
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "seed", "arrived", "placed", "failed", "alloc@100", "alloc@130", "ms"
    );
    for r in runs {
        let res = &r.result;
        println!(
            "{:>6} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10.1}",
            res.seed,
            res.pods_arrived,
            res.pods_placed,
            res.pods_failed,
            pct(res.gpu_alloc_pct.get(100).copied().flatten()),
            pct(res.gpu_alloc_pct.get(130).copied().flatten()),
            r.elapsed_ms
        );
    }
    println!("{:>6} {:>8} {:>8} {:>8} {:>9} {:>9}", "mean", "", "", "", pct(at100), pct(at130));
    println!();
}

/// The interference experiment: per policy, the sharing limit off and at `limit`, means over
/// the seeds of allocation at 100 % / 130 % arrived and of the shared GPUs' busy %.
fn report_sharing(
    trace: &Trace,
    name: &str,
    policies: &[PolicyKind],
    seeds: &[u64],
    tune: f64,
    limit: u8,
    as_json: bool,
) -> Result<()> {
    if !as_json {
        println!(
            "{name}: synthetic load (each pod drives 20-100 % of what it booked), means over {} seeds",
            seeds.len()
        );
        println!(
            "{:<10}{:>7}{:>10}{:>10}{:>9}{:>8}{:>8}{:>8}{:>9}",
            "policy", "limit", "alloc100", "alloc130", "shared", "p50", "p90", "max", ">70 %"
        );
    }
    for &policy in policies {
        for limit_pct in [None, Some(limit)] {
            let mut rows = Vec::new();
            for &seed in seeds {
                let (run, busy) = replay::run_with_load(
                    trace,
                    policy,
                    seed,
                    tune,
                    Some(replay::sharing::SyntheticLoad { limit_pct }),
                )?;
                rows.push((run, busy.context("the load's statistics")?));
            }
            let n = rows.len() as f64;
            let mean =
                |f: &dyn Fn(&(RunResult, replay::sharing::SharedBusy)) -> f64| rows.iter().map(f).sum::<f64>() / n;
            let at = |c: usize| mean(&|r| r.0.gpu_alloc_pct.get(c).copied().flatten().unwrap_or(0.0));
            let (a100, a130) = (at(100), at(130));
            let (shared, p50, p90, max, over) = (
                mean(&|r| r.1.devices as f64),
                mean(&|r| r.1.p50),
                mean(&|r| r.1.p90),
                mean(&|r| r.1.max),
                mean(&|r| r.1.over_70_pct),
            );
            let limit_text = limit_pct.map_or("off".to_owned(), |l| format!("{l} %"));
            if as_json {
                println!(
                    "{}",
                    json!({ "trace": name, "policy": policy.name(), "sharing_limit_pct": limit_pct,
                        "alloc_pct_100": a100, "alloc_pct_130": a130, "shared_gpus": shared,
                        "shared_busy_p50": p50, "shared_busy_p90": p90, "shared_busy_max": max,
                        "shared_over_70_pct": over })
                );
            } else {
                println!(
                    "{:<10}{:>7}{:>10.2}{:>10.2}{:>9.0}{:>8.1}{:>8.1}{:>8.1}{:>8.1}%",
                    policy.name(),
                    limit_text,
                    a100,
                    a130,
                    shared,
                    p50,
                    p90,
                    max,
                    over
                );
            }
        }
    }
    Ok(())
}

/// The time replay: every policy at every load, one line (or JSON object) per run.
fn report_timeline(trace: &Trace, name: &str, args: &Args) -> Result<()> {
    let config = |load| timeline::TimelineConfig {
        load,
        cycle_s: args.cycle_s,
        preemption: args.preemption,
        horizon_s: args.horizon_s,
        warmup_s: args.warmup_s.unwrap_or(args.horizon_s / 4),
        synthetic: (args.synthetic_load || args.sharing_limit.is_some())
            .then_some(replay::sharing::SyntheticLoad { limit_pct: args.sharing_limit }),
    };
    if !args.json {
        println!(
            "{name}: replay in time over {} s (measured after {} s), a cycle every {} s, preemption {}, synthetic load {}",
            args.horizon_s,
            args.warmup_s.unwrap_or(args.horizon_s / 4),
            args.cycle_s,
            if args.preemption { "on" } else { "off" },
            match (args.synthetic_load, args.sharing_limit) {
                (_, Some(l)) => format!("on, sharing limit {l} %"),
                (true, None) => "on, no sharing limit".to_string(),
                (false, None) => "off".to_string(),
            }
        );
        println!(
            "{:<6}{:<12}{:>6}{:>9}{:>8}{:>8}{:>9}{:>9}{:>9}{:>10}{:>10}{:>10}{:>7}{:>7}{:>8}{:>7}",
            "load",
            "policy",
            "seed",
            "alloc %",
            "frag %",
            "started",
            "waiting",
            "wait p50",
            "wait p99",
            "multi p50",
            "multi p99",
            "share p99",
            "evict",
            "moves",
            "shared",
            "hot %"
        );
    }
    for &load in &args.load {
        for &policy in &args.policies {
            for &seed in &args.seeds.0 {
                let start = Instant::now();
                let r = timeline::run(trace, policy, seed, &config(load))?;
                let ms = start.elapsed().as_secs_f64() * 1000.0;
                if args.json {
                    println!(
                        "{}",
                        json!({ "trace": name, "load": load, "policy": r.policy, "seed": r.seed,
                            "compression": r.compression, "passes": r.passes, "cycles": r.cycles,
                            "horizon_s": args.horizon_s,
                            "cycle_s": args.cycle_s, "preemption": args.preemption,
                            "pods_arrived": r.pods_arrived, "pods_started": r.pods_started,
                            "pods_waiting_at_end": r.pods_waiting_at_end, "evictions": r.evictions,
                            "gpu_alloc_pct": r.gpu_alloc_pct, "gpu_frag_pct": r.gpu_frag_pct,
                            "wait_p50_s": r.wait_p50_s, "wait_p99_s": r.wait_p99_s,
                            "multi_gpu_pods": r.multi_gpu_pods, "multi_wait_p50_s": r.multi_wait_p50_s,
                            "multi_wait_p99_s": r.multi_wait_p99_s, "multi_waiting_at_end": r.multi_waiting_at_end,
                            "moves": r.moves, "share_pods": r.share_pods, "share_wait_p50_s": r.share_wait_p50_s,
                            "share_wait_p99_s": r.share_wait_p99_s, "synthetic_load": config(load).synthetic.is_some(),
                            "sharing_limit_pct": args.sharing_limit, "shared_gpus": r.shared_gpus,
                            "shared_hot_pct": r.shared_hot_pct,
                            "wait_p99_by_priority_s": { "be": r.wait_p99_by_priority_s[0],
                                "burstable": r.wait_p99_by_priority_s[1], "ls": r.wait_p99_by_priority_s[2] },
                            "elapsed_ms": ms.round() })
                    );
                } else {
                    println!(
                        "{:<6}{:<12}{:>6}{:>9.2}{:>8.2}{:>8}{:>9}{:>9}{:>9}{:>10}{:>10}{:>10}{:>7}{:>7}{:>8.0}{:>7.1}",
                        load,
                        r.policy,
                        r.seed,
                        r.gpu_alloc_pct,
                        r.gpu_frag_pct,
                        r.pods_started,
                        r.pods_waiting_at_end,
                        r.wait_p50_s,
                        r.wait_p99_s,
                        r.multi_wait_p50_s,
                        r.multi_wait_p99_s,
                        r.share_wait_p99_s,
                        r.evictions,
                        r.moves,
                        r.shared_gpus,
                        r.shared_hot_pct
                    );
                }
            }
        }
    }
    Ok(())
}

/// Prints the run time predictor's error on one trace against the all-jobs baseline.
fn report_runtimes(name: &str, e: &trace_eval::TraceEvaluation, as_json: bool) {
    let row = |who: &str, p: &trace_eval::PredictionError| {
        json!({
            "predictor": who,
            "pods": p.pods,
            "predicted": p.predicted,
            "median_abs_error_s": p.median_abs_error_s,
            "median_rel_error": (p.median_rel_error * 1000.0).round() / 1000.0,
            "over_p90": (p.over_p90 * 1000.0).round() / 1000.0,
        })
    };
    if as_json {
        println!(
            "{}",
            json!({ "trace": name, "runtimes": [row("history", &e.predictor), row("all-jobs median", &e.baseline)] })
        );
        return;
    }
    println!("{name}: run time prediction, online (each pod from the pods ended before it was created)");
    println!(
        "{:<18}{:>7}{:>11}{:>18}{:>16}{:>12}",
        "predictor", "pods", "predicted", "median |error| s", "median rel err", "over p90"
    );
    for (who, p) in [("history", &e.predictor), ("all-jobs median", &e.baseline)] {
        println!(
            "{who:<18}{:>7}{:>11}{:>18}{:>15.0}%{:>11.1}%",
            p.pods,
            p.predicted,
            p.median_abs_error_s,
            p.median_rel_error * 100.0,
            p.over_p90 * 100.0
        );
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.tune.is_finite() && args.tune > 0.0) {
        bail!("--tune must be a positive number, got {}", args.tune);
    }
    let parse = |path: &Path| trace::parse_pods(&read(path)?).map_err(|e| anyhow!("{}: {e}", path.display()));
    let mut pods = parse(&args.pods)?;
    let mut name = trace_name(&args.pods);
    if args.runtimes {
        report_runtimes(&name, &trace_eval::evaluate(&pods), args.json);
        return Ok(());
    }
    let nodes_path = args.nodes.as_deref().context("--nodes is required")?;
    let nodes = trace::parse_nodes(&read(nodes_path)?).map_err(|e| anyhow!("{}: {e}", nodes_path.display()))?;
    if let Some(spec) = &args.variant {
        let pool = match &args.spec_from {
            Some(path) => variants::spec_pool(&parse(path)?),
            None => variants::spec_pool(&pods),
        };
        pods = variants::generate(&pods, &pool, spec, args.variant_seed)?;
        name = format!("{name}~{spec}#{}", args.variant_seed);
    }
    let trace = Trace::new(&nodes, &pods).with_context(|| format!("cannot replay {}", nodes_path.display()))?;
    if args.timeline {
        return report_timeline(&trace, &name, &args);
    }
    if let Some(limit) = args.sharing_limit {
        let policies: Vec<PolicyKind> = if args.all_policies { PolicyKind::ALL.to_vec() } else { vec![args.policy] };
        return report_sharing(&trace, &name, &policies, &args.seeds.0, args.tune, limit, args.json);
    }
    let policies: Vec<PolicyKind> = if args.all_policies { PolicyKind::ALL.to_vec() } else { vec![args.policy] };
    for policy in policies {
        let runs = run_seeds(&trace, policy, &args.seeds.0, args.tune, args.threads)?;
        report(&name, policy, &args.seeds.0, &runs, args.json);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_as_inclusive_ranges_and_lists() {
        assert_eq!(parse_seeds("42..51").unwrap().0, (42..=51).collect::<Vec<_>>());
        assert_eq!(parse_seeds("1,3, 5..6").unwrap().0, vec![1, 3, 5, 6]);
        assert_eq!(parse_seeds("7").unwrap().0, vec![7]);
        assert!(parse_seeds("9..3").is_err());
        assert!(parse_seeds("x").is_err());
        assert!(parse_seeds("").is_err());
    }

    #[test]
    fn trace_names_drop_the_prefix() {
        assert_eq!(trace_name(Path::new("/d/openb_pod_list_gpushare40.csv")), "gpushare40");
        assert_eq!(trace_name(Path::new("pods.csv")), "pods");
    }
}
