//! The limiter loaded with LD_PRELOAD into real processes that drive the fake CUDA driver
//! (`libgrus_fake_cuda.so`, symlinked as `libcuda.so.1` and `libnvidia-ml.so.1`). Each test gets
//! its own directory for the libraries and its own shared accounting region.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

struct Setup {
    dir: tempfile::TempDir,
    limiter: PathBuf,
    app: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let app = PathBuf::from(env!("CARGO_BIN_EXE_fake-cuda-app"));
        // cargo puts the cdylibs of this package and of its dev-dependency grus-cuda-limiter next
        // to the test executable (target/<profile>/deps).
        let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
        let find = |name: &str| {
            let path = deps.join(name);
            assert!(path.exists(), "{} not built (expected next to the test executable)", path.display());
            path
        };
        let limiter = find("libgrus_cuda_limiter.so");
        let fake = find("libgrus_fake_cuda.so");
        let dir = tempfile::tempdir().unwrap();
        for name in ["libcuda.so.1", "libnvidia-ml.so.1"] {
            std::os::unix::fs::symlink(&fake, dir.path().join(name)).unwrap();
        }
        Setup { dir, limiter, app }
    }

    fn region(&self) -> PathBuf {
        self.dir.path().join("region")
    }

    fn command(&self, env: &[(&str, &str)], ops: &[&str]) -> Command {
        let mut cmd = Command::new(&self.app);
        cmd.args(ops)
            .env("LD_PRELOAD", &self.limiter)
            .env("LD_LIBRARY_PATH", self.dir.path())
            .env("GRUS_CUDA_SHM", self.region())
            .env("GRUS_CUDA_LOG", "warn")
            .env_remove("CUDA_DEVICE_MEMORY_LIMIT")
            .env_remove("CUDA_DEVICE_SM_LIMIT")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        cmd
    }

    /// Runs the app to completion and returns its output lines.
    fn run(&self, env: &[(&str, &str)], ops: &[&str]) -> Vec<String> {
        let out = self.command(env, ops).output().unwrap();
        assert!(out.status.success(), "app {ops:?} failed: {:?}", out.status);
        String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
    }

    /// Starts the app and waits for the line `marker` (it then stays alive).
    fn start(&self, env: &[(&str, &str)], ops: &[&str], marker: &str) -> (Child, Vec<String>) {
        let mut child = self.command(env, ops).spawn().unwrap();
        let mut lines = Vec::new();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        while lines.last().is_none_or(|l: &String| l != marker) {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                let status = child.wait().unwrap();
                panic!("app {ops:?} exited ({status}) before {marker:?}: {lines:?}");
            }
            lines.push(line.trim_end().to_string());
        }
        (child, lines)
    }
}

fn kill(mut child: Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
}

/// The `rc` of each allocation-like line.
fn rcs(lines: &[String]) -> Vec<i32> {
    lines.iter().filter_map(|l| l.split("rc=").nth(1)).map(|v| v.split(' ').next().unwrap().parse().unwrap()).collect()
}

fn info(lines: &[String]) -> (u64, u64) {
    let line = lines.iter().find(|l| l.starts_with("info ")).expect("an info line");
    let field = |name: &str| -> u64 { line.split(' ').find_map(|kv| kv.strip_prefix(name)).unwrap().parse().unwrap() };
    assert_eq!(field("rc="), 0);
    (field("free="), field("total="))
}

const GIB_LIMIT: (&str, &str) = ("CUDA_DEVICE_MEMORY_LIMIT", "1g");

#[test]
fn memory_limit_holds_across_two_processes() {
    let s = Setup::new();
    let (holder, lines) = s.start(&[GIB_LIMIT], &["alloc:600m", "ready", "sleep"], "ready");
    assert_eq!(rcs(&lines), vec![0]);
    // 600 MiB held by the other process: 500 more do not fit in 1 GiB, 400 do.
    let lines = s.run(&[GIB_LIMIT], &["alloc:500m", "alloc:400m", "info"]);
    assert_eq!(rcs(&lines)[..2], [2, 0], "{lines:?}");
    assert_eq!(info(&lines), (24 * MIB, 1024 * MIB));
    kill(holder);
}

#[test]
fn frees_return_quota_for_every_allocation_family() {
    let s = Setup::new();
    // Each family takes 768 MiB of the 1 GiB share; a second 512 MiB must then fail until freed.
    let families: &[&str] = &[
        "alloc:768m",
        "managed:768m",
        "async:768m",
        "pool:768m",
        "pitch:4096:196608", // 4 KiB rows x 192 Ki rows = 768 MiB
        "array:65536:3072",  // 64 Ki x 3 Ki float texels = 768 MiB
        "array3d:1024:1024:192",
        "create:768m",
    ];
    for family in families {
        let lines = s.run(&[GIB_LIMIT], &[family, "alloc:512m", "free", "alloc:512m"]);
        assert_eq!(rcs(&lines), vec![0, 2, 0, 0], "{family}: {lines:?}");
    }
    // A pitched allocation counts its padded rows (1000-byte rows padded to 1024 by the device):
    // 768 MiB, not the 750 asked; and when the padding does not fit, it is refused.
    let lines = s.run(&[GIB_LIMIT], &["pitch:1000:786432", "info"]);
    assert_eq!(info(&lines), (256 * MIB, 1024 * MIB));
    let lines = s.run(&[("CUDA_DEVICE_MEMORY_LIMIT", "760m")], &["pitch:1000:786432", "info"]);
    assert_eq!(rcs(&lines)[0], 2, "{lines:?}");
    assert_eq!(info(&lines), (760 * MIB, 760 * MIB));
    // A mipmapped array counts all its levels: 4096² floats is 64 MiB, the chain ~85 MiB.
    let lines = s.run(&[("CUDA_DEVICE_MEMORY_LIMIT", "80m")], &["mipmap:4096:4096:1", "free", "mipmap:4096:4096:13"]);
    assert_eq!(rcs(&lines), vec![0, 0, 2], "{lines:?}");
}

#[test]
fn mem_get_info_reports_the_limit() {
    let s = Setup::new();
    let lines = s.run(&[("CUDA_DEVICE_MEMORY_LIMIT", "2g")], &["info", "alloc:512m", "info"]);
    let infos: Vec<&String> = lines.iter().filter(|l| l.starts_with("info")).collect();
    assert_eq!(info(&[infos[0].clone()]), (2048 * MIB, 2048 * MIB));
    assert_eq!(info(&[infos[1].clone()]), (1536 * MIB, 2048 * MIB));
    // cuDeviceTotalMem agrees, through either lookup.
    for via in ["dlsym", "procaddr"] {
        let lines = s.run(&[("CUDA_DEVICE_MEMORY_LIMIT", "2g")], &["--via", via, "total"]);
        assert_eq!(lines, vec![format!("total rc=0 bytes={}", 2048 * MIB)]);
    }
    // Without a limit the device's own figures pass through (the fake has 16 GiB).
    let lines = s.run(&[], &["info", "total"]);
    assert_eq!(info(&lines), (16 << 30, 16 << 30));
    assert_eq!(lines[1], format!("total rc=0 bytes={}", 16u64 << 30));
}

#[test]
fn every_device_is_limited_by_its_own_variable() {
    let s = Setup::new();
    let env = [("CUDA_DEVICE_MEMORY_LIMIT_0", "1g"), ("CUDA_DEVICE_MEMORY_LIMIT_1", "256m")];
    let lines = s.run(&env, &["dev:1", "alloc:300m", "alloc:200m", "info", "dev:0", "alloc:900m"]);
    assert_eq!(rcs(&lines), vec![2, 0, 0, 0], "{lines:?}");
    assert_eq!(info(&lines), (56 * MIB, 256 * MIB));
}

#[test]
fn a_killed_process_memory_is_reclaimed() {
    let s = Setup::new();
    let (holder, _) = s.start(&[GIB_LIMIT], &["alloc:900m", "ready", "sleep"], "ready");
    assert_eq!(rcs(&s.run(&[GIB_LIMIT], &["alloc:900m"])), vec![2]);
    kill(holder);
    assert_eq!(rcs(&s.run(&[GIB_LIMIT], &["alloc:900m"])), vec![0]);
}

#[test]
fn symbols_reached_through_cu_get_proc_address_are_limited() {
    let s = Setup::new();
    let lines = s.run(&[GIB_LIMIT], &["--via", "procaddr", "alloc:800m", "array:65536:1024", "alloc:200m", "info"]);
    // 800 MiB, then a 256 MiB array is refused; the 200 MiB fit after it.
    assert_eq!(rcs(&lines), vec![0, 2, 0, 0], "{lines:?}");
    assert_eq!(info(&lines), (24 * MIB, 1024 * MIB));
}

#[test]
fn symbols_found_in_the_global_scope_are_limited() {
    // As in a program linked to libcuda: LD_PRELOAD's exports come first, the driver's are
    // found with RTLD_NEXT.
    let s = Setup::new();
    let lines = s.run(&[GIB_LIMIT], &["--via", "global", "alloc:800m", "alloc:300m", "free", "alloc:300m", "info"]);
    assert_eq!(rcs(&lines), vec![0, 2, 0, 0, 0], "{lines:?}");
    assert_eq!(info(&lines), (724 * MIB, 1024 * MIB));
}

#[test]
fn the_off_switch_passes_everything_through() {
    let s = Setup::new();
    let lines = s.run(&[GIB_LIMIT, ("GRUS_CUDA_LIMITER", "off")], &["alloc:2g", "info"]);
    assert_eq!(rcs(&lines)[0], 0);
    assert_eq!(info(&lines), (14 << 30, 16 << 30));
}

#[test]
fn a_bad_limit_fails_closed() {
    let s = Setup::new();
    let lines = s.run(&[("CUDA_DEVICE_MEMORY_LIMIT", "lots")], &["alloc:1m"]);
    assert_eq!(rcs(&lines), vec![2]);
}

/// Waits for a child, failing (instead of hanging the suite) if it has not exited in `limit`.
fn wait_at_most(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < limit, "process still blocked after {limit:?}: the lock hangs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_process_killed_holding_the_lock_does_not_hang_the_others() {
    let s = Setup::new();
    // Create the region, then have a process take its lock the way the limiter does and die.
    assert_eq!(rcs(&s.run(&[GIB_LIMIT], &["alloc:1m"])), vec![0]);
    let region = s.region();
    let (holder, _) = s.start(&[], &[&format!("lock:{}", region.display())], "locked");
    let mut blocked = s.command(&[GIB_LIMIT], &["alloc:100m"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(blocked.try_wait().unwrap().is_none(), "the allocation did not wait for the lock holder");
    kill(holder);
    let status = wait_at_most(&mut blocked, Duration::from_secs(60));
    assert!(status.success());
    let mut out = String::new();
    std::io::Read::read_to_string(blocked.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert_eq!(out.trim(), "alloc rc=0");
}

/// Achieved share of the device: completed kernel time (deterministic fake clock) over the
/// measured span, for a greedy launcher under `CUDA_DEVICE_SM_LIMIT=percent`.
fn achieved_share(s: &Setup, env: &[(&str, &str)]) -> f64 {
    let lines = s.run(env, &["pace:3:100"]);
    let line = lines.iter().find(|l| l.starts_with("pace ")).unwrap();
    let field = |name: &str| -> f64 { line.split(' ').find_map(|kv| kv.strip_prefix(name)).unwrap().parse().unwrap() };
    let share = field("busy_ns=") / field("elapsed_ns=");
    println!("{env:?}: achieved {share:.4} ({line})");
    share
}

#[test]
fn launch_throughput_follows_the_sm_share() {
    let s = Setup::new();
    for percent in ["25", "50"] {
        let share = achieved_share(&s, &[("CUDA_DEVICE_SM_LIMIT", percent)]);
        let target = percent.parse::<f64>().unwrap() / 100.0;
        assert!((share - target).abs() <= 0.1 * target, "SM limit {percent}%: achieved {share:.3}");
    }
    // The same launcher saturates the device without a limit: the pacing above is the limiter's.
    let share = achieved_share(&s, &[]);
    assert!(share > 0.8, "unlimited: achieved {share:.3}");
}

#[test]
fn the_sm_limit_of_the_second_device_applies() {
    let s = Setup::new();
    let lines = s.run(&[("CUDA_DEVICE_SM_LIMIT_1", "30")], &["dev:1", "pace:2:100"]);
    let line = lines.iter().find(|l| l.starts_with("pace ")).unwrap();
    let field = |name: &str| -> f64 { line.split(' ').find_map(|kv| kv.strip_prefix(name)).unwrap().parse().unwrap() };
    let share = field("busy_ns=") / field("elapsed_ns=");
    assert!((share - 0.3).abs() <= 0.03, "device 1 at 30%: achieved {share:.3}");
}

/// The share of the device a finished `pace` run achieved.
fn pace_share(out: std::process::Output) -> f64 {
    assert!(out.status.success(), "{:?}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("pace ")).expect("a pace line").to_string();
    let field = |name: &str| -> f64 { line.split(' ').find_map(|kv| kv.strip_prefix(name)).unwrap().parse().unwrap() };
    field("busy_ns=") / field("elapsed_ns=")
}

/// Runs one `pace` process per environment at once, all on the same (fake) GPU.
fn pace_together(s: &Setup, envs: &[Vec<(&str, &str)>]) -> Vec<f64> {
    let devices = s.dir.path().join("devices");
    let devices = devices.to_str().unwrap();
    let children: Vec<Child> = envs
        .iter()
        .map(|env| {
            let mut env = env.clone();
            env.push(("FAKE_CUDA_SHARED_DEVICES", devices));
            s.command(&env, &["pace:3:100"]).spawn().unwrap()
        })
        .collect();
    let shares: Vec<f64> = children.into_iter().map(|c| pace_share(c.wait_with_output().unwrap())).collect();
    println!("{envs:?}: achieved {shares:.4?}");
    shares
}

#[test]
fn two_processes_of_one_container_share_its_sm_limit() {
    let s = Setup::new();
    let env = vec![("CUDA_DEVICE_SM_LIMIT", "50")];
    let shares = pace_together(&s, &[env.clone(), env]);
    let total: f64 = shares.iter().sum();
    assert!((total - 0.5).abs() <= 0.05, "container at 50%: its two processes achieved {shares:.3?}");
}

#[test]
fn two_containers_on_one_gpu_each_get_their_share() {
    let s = Setup::new();
    let other_region = s.dir.path().join("other-region");
    let a = vec![("CUDA_DEVICE_SM_LIMIT", "40")];
    let b = vec![("CUDA_DEVICE_SM_LIMIT", "40"), ("GRUS_CUDA_SHM", other_region.to_str().unwrap())];
    let shares = pace_together(&s, &[a, b]);
    for share in &shares {
        assert!((share - 0.4).abs() <= 0.04, "two containers at 40%: achieved {shares:.3?}");
    }
}
