//! End-to-end replay on a small synthetic trace: through the library (every policy) and
//! through the `grus-replay` binary (JSON output, error messages, exit status).

use std::path::PathBuf;
use std::process::Command;

use grus_scheduler::replay::{self, PolicyKind, Trace};
use grus_scheduler::trace::{parse_nodes, parse_pods};

/// 12 nodes of three kinds (40 GPUs) and 41 pods (44.3 k GPU milli) mixing CPU-only pods,
/// shares, whole GPUs, multi-GPU pods and model constraints, in the full CSV layout.
fn synthetic() -> (String, String) {
    let mut nodes = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for i in 0..4 {
        nodes += &format!("node-a{i},96000,786432,8,G2\n");
    }
    for i in 0..6 {
        nodes += &format!("node-t{i},32000,262144,1,T4\n");
    }
    nodes += "node-p0,16000,131072,2,P100\nnode-p1,16000,131072,0,\n";
    let mut pods = String::from(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
    );
    let shapes = [
        (4000, 0, 0, ""),
        (6000, 1, 460, ""),
        (8000, 1, 1000, ""),
        (3000, 1, 250, "T4"),
        (12000, 2, 1000, "G2|P100"),
        (16000, 2, 1000, ""),
        (2000, 1, 810, "P100|T4"),
    ];
    for i in 0..40 {
        let (cpu, gpus, milli, spec) = shapes[i % shapes.len()];
        pods += &format!("pod-{i:03},{cpu},8192,{gpus},{milli},{spec},LS,Running,{i},,{i}\n");
    }
    pods += "pod-040,64000,262144,8,1000,,LS,Running,40,,40\n";
    (nodes, pods)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grus-replay-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    dir
}

#[test]
fn every_policy_replays_the_synthetic_trace_deterministically() {
    let (nodes, pods) = synthetic();
    let trace = Trace::new(&parse_nodes(&nodes).unwrap(), &parse_pods(&pods).unwrap()).unwrap();
    assert_eq!(trace.capacity_milli(), 40_000);
    for policy in PolicyKind::ALL {
        let a = replay::run(&trace, policy, 42, 1.3).unwrap();
        assert_eq!(a, replay::run(&trace, policy, 42, 1.3).unwrap(), "{policy:?} is a function of its seed");
        assert_eq!(a.pods_placed + a.pods_failed, a.pods_arrived);
        assert_eq!(a.gpu_alloc_pct.len(), 131);
        assert!(a.pods_arrived > 41, "tuned up from 44.3 k to 52 k milli");
        let last = a.gpu_alloc_pct.iter().rev().find_map(|v| *v).expect("some column is reached");
        assert!(last > 50.0 && last <= 100.0, "{policy:?}: {last}");
        // Allocation never exceeds what arrived: a column (or the neighbours it falls back
        // on) is at most its arrived level plus rounding.
        for (k, v) in a.gpu_alloc_pct.iter().enumerate() {
            if let Some(v) = v {
                assert!(*v <= k as f64 + 2.0, "{policy:?} column {k}: {v}");
            }
        }
    }
    let other = replay::run(&trace, PolicyKind::Fgd, 43, 1.3).unwrap();
    assert_eq!(other.seed, 43);
}

#[test]
fn tune_below_the_trace_drops_pods() {
    let (nodes, pods) = synthetic();
    let trace = Trace::new(&parse_nodes(&nodes).unwrap(), &parse_pods(&pods).unwrap()).unwrap();
    // The trace asks for 44.3 k milli; 0.5 · 40 k = 20 k keeps about half of the pods.
    let r = replay::run(&trace, PolicyKind::BestFit, 7, 0.5).unwrap();
    assert!(r.pods_arrived < 41);
    assert_eq!(r.gpu_alloc_pct[100], None, "nothing arrives near 100 %");
    assert!(replay::run(&trace, PolicyKind::BestFit, 7, f64::NAN).is_err());
}

#[test]
fn the_binary_prints_one_json_object() {
    let (nodes, pods) = synthetic();
    let dir = temp_dir("json");
    let (n, p) = (dir.join("openb_node_list_gpu_node.csv"), dir.join("openb_pod_list_tiny.csv"));
    std::fs::write(&n, nodes).unwrap();
    std::fs::write(&p, pods).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grus-replay"))
        .args(["--nodes", n.to_str().unwrap(), "--pods", p.to_str().unwrap()])
        .args(["--policy", "grus", "--seeds", "42..44", "--tune", "1.3", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["trace"], "tiny");
    assert_eq!(v["policy"], "grus");
    assert_eq!(v["seeds"], serde_json::json!([42, 43, 44]));
    // One GPU is 2.5 % of this cluster: the last columns may be out of reach, column 100 is not.
    assert!(v["gpu_alloc_pct_at_100"].as_f64().unwrap() > 50.0);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        assert_eq!(r["gpu_alloc_pct"].as_array().unwrap().len(), 131);
        let arrived = r["pods_arrived"].as_u64().unwrap();
        assert_eq!(r["pods_placed"].as_u64().unwrap() + r["pods_failed"].as_u64().unwrap(), arrived);
        assert!(r["elapsed_ms"].as_f64().unwrap() >= 0.0);
    }
    // The readable table mentions every seed.
    let table = Command::new(env!("CARGO_BIN_EXE_grus-replay"))
        .args(["--nodes", n.to_str().unwrap(), "--pods", p.to_str().unwrap(), "--policy", "fgd", "--seeds", "5,9"])
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("06-FGD") && text.contains("     5 ") && text.contains("     9 "), "{text}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_binary_names_the_file_and_line_of_a_bad_row() {
    let (nodes, pods) = synthetic();
    let dir = temp_dir("bad");
    let (n, p) = (dir.join("nodes.csv"), dir.join("pods.csv"));
    std::fs::write(&n, nodes).unwrap();
    std::fs::write(&p, pods.replacen("pod-002,8000,8192", "pod-002,8000,lots", 1)).unwrap();
    let run = |pods: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_grus-replay"))
            .args(["--nodes", n.to_str().unwrap(), "--pods", pods.to_str().unwrap(), "--seeds", "1"])
            .output()
            .unwrap()
    };
    let out = run(&p);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pods.csv: line 4: column `memory_mib`: `lots`"), "{err}");
    let out = run(&dir.join("missing.csv"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"), "missing file");
    std::fs::remove_dir_all(dir).ok();
}

/// The interference experiment: under synthetic load, with the limit no GPU shared by two pods
/// or more ends above it, for every policy; with the limit off the placement is the plain
/// replay's (the load only reports); runs are deterministic.
#[test]
fn the_sharing_limit_keeps_every_shared_gpu_under_it_for_every_policy() {
    use replay::sharing::SyntheticLoad;
    let (nodes, pods) = synthetic();
    let trace = Trace::new(&parse_nodes(&nodes).unwrap(), &parse_pods(&pods).unwrap()).unwrap();
    let mut hottest_without = 0.0f64;
    for policy in PolicyKind::ALL {
        for seed in [1, 7] {
            let (_, off) =
                replay::run_with_load(&trace, policy, seed, 1.3, Some(SyntheticLoad { limit_pct: None })).unwrap();
            hottest_without = hottest_without.max(off.unwrap().max);
            let (limited, busy) =
                replay::run_with_load(&trace, policy, seed, 1.3, Some(SyntheticLoad { limit_pct: Some(40) })).unwrap();
            let busy = busy.unwrap();
            assert!(busy.max <= 40.0 + 1e-9, "{} seed {seed}: {busy:?}", policy.name());
            let again = replay::run_with_load(&trace, policy, seed, 1.3, Some(SyntheticLoad { limit_pct: Some(40) }));
            assert_eq!(again.unwrap().0, limited, "deterministic");
            if policy != PolicyKind::Grus {
                // The live load feeds only grus's utilization term: the others place as in the
                // published protocol when the limit is off.
                let (off, _) =
                    replay::run_with_load(&trace, policy, seed, 1.3, Some(SyntheticLoad { limit_pct: None })).unwrap();
                assert_eq!(off, replay::run(&trace, policy, seed, 1.3).unwrap(), "{}", policy.name());
            }
        }
    }
    assert!(hottest_without > 40.0, "without the limit some shared GPU goes above it: {hottest_without}");
}
