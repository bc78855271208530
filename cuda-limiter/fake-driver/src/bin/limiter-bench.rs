//! Pacing accuracy of grus-cuda-limiter on the fake driver: for each SM share, greedy launchers
//! (`fake-cuda-app pace`) run under the limiter and the achieved share of the device is the
//! kernel time (the fake's deterministic clock) within the measured span over its length.
//! Three settings: one process alone on the GPU; two containers (separate accounting regions)
//! at that share each on one GPU; one container running two processes.
//!
//! Build both libraries first, with the same profile, then run:
//! `cargo build -p grus-cuda-limiter -p grus-fake-cuda && target/debug/limiter-bench`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// SM shares to measure, in percent.
    #[arg(long, value_delimiter = ',', default_value = "10,25,50,75,90")]
    shares: Vec<u32>,
    /// Measured seconds per run (after a one-second warm-up).
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Blocks per kernel (10 µs of fake device time each).
    #[arg(long, default_value_t = 100)]
    blocks: u32,
    /// Print JSON instead of a Markdown table.
    #[arg(long)]
    json: bool,
}

/// A library built next to this executable (target/<profile>/ or its deps/).
fn artifact(dir: &Path, name: &str) -> Result<PathBuf> {
    [dir.join(name), dir.join("deps").join(name)]
        .into_iter()
        .find(|p| p.exists())
        .with_context(|| format!("{name} not found in {} (build grus-cuda-limiter and grus-fake-cuda)", dir.display()))
}

struct Bench {
    app: PathBuf,
    limiter: PathBuf,
    work: PathBuf,
    args: Args,
}

impl Bench {
    fn spawn(&self, share: Option<u32>, region: &str, run: usize) -> Result<Child> {
        let mut cmd = Command::new(&self.app);
        cmd.arg(format!("pace:{}:{}", self.args.seconds, self.args.blocks))
            .env("LD_PRELOAD", &self.limiter)
            .env("LD_LIBRARY_PATH", &self.work)
            .env("GRUS_CUDA_SHM", self.work.join(format!("{region}-{run}")))
            .env("FAKE_CUDA_SHARED_DEVICES", self.work.join(format!("devices-{run}")))
            .env_remove("CUDA_DEVICE_MEMORY_LIMIT")
            .env_remove("CUDA_DEVICE_SM_LIMIT")
            .stdout(Stdio::piped());
        if let Some(share) = share {
            cmd.env("CUDA_DEVICE_SM_LIMIT", share.to_string());
        }
        cmd.spawn().context("run fake-cuda-app")
    }

    /// Achieved shares of processes started together; `regions` names each one's container.
    fn run(&self, share: Option<u32>, regions: &[&str], run: usize) -> Result<Vec<f64>> {
        let children: Vec<Child> = regions.iter().map(|r| self.spawn(share, r, run)).collect::<Result<_>>()?;
        let mut shares = Vec::new();
        for child in children {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!("fake-cuda-app failed: {}", out.status);
            }
            let text = String::from_utf8(out.stdout)?;
            let line = text.lines().find(|l| l.starts_with("pace ")).context("no pace line")?;
            let field = |name: &str| -> Result<f64> {
                Ok(line.split(' ').find_map(|kv| kv.strip_prefix(name)).context("field")?.parse()?)
            };
            shares.push(field("busy_ns=")? / field("elapsed_ns=")?);
        }
        Ok(shares)
    }
}

fn pct(x: f64) -> f64 {
    (x * 10_000.0).round() / 100.0
}

fn main() -> Result<()> {
    let args = Args::parse();
    let exe = std::env::current_exe()?;
    let dir = exe.parent().context("executable directory")?;
    let fake = artifact(dir, "libgrus_fake_cuda.so")?;
    let work = std::env::temp_dir().join(format!("grus-limiter-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    for name in ["libcuda.so.1", "libnvidia-ml.so.1"] {
        let link = work.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&fake, &link)?;
    }
    let bench =
        Bench { app: dir.join("fake-cuda-app"), limiter: artifact(dir, "libgrus_cuda_limiter.so")?, work, args };
    let mut rows = Vec::new();
    let mut run = 0;
    for share in bench.args.shares.iter().map(|s| Some(*s)).chain([None]) {
        for (setting, regions) in [
            ("alone", &["a"][..]),
            ("two containers", &["a", "b"][..]),
            ("one container, two processes", &["a", "a"][..]),
        ] {
            if share.is_none() && setting != "alone" {
                continue;
            }
            run += 1;
            let shares = bench.run(share, regions, run)?;
            // Per container: the sum of its processes.
            let per_container: Vec<f64> =
                if setting == "one container, two processes" { vec![shares.iter().sum()] } else { shares.clone() };
            let worst = share.map(|s| {
                per_container.iter().map(|a| (a * 100.0 / f64::from(s) - 1.0) * 100.0).fold(0.0f64, |w, e| {
                    if e.abs() > w.abs() {
                        e
                    } else {
                        w
                    }
                })
            });
            rows.push(serde_json::json!({
                "sm_limit_percent": share,
                "setting": setting,
                "achieved_percent_per_container": per_container.iter().map(|a| pct(*a)).collect::<Vec<_>>(),
                "achieved_percent_per_process": shares.iter().map(|a| pct(*a)).collect::<Vec<_>>(),
                "worst_relative_error_percent": worst.map(|w| (w * 100.0).round() / 100.0),
                "seconds": bench.args.seconds,
                "blocks_per_kernel": bench.args.blocks,
            }));
        }
    }
    let _ = std::fs::remove_dir_all(&bench.work);
    if bench.args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("| SM limit | setting | achieved per container | per process | worst relative error |");
        println!("|---:|---|---:|---:|---:|");
        for row in &rows {
            let limit = row["sm_limit_percent"].as_u64().map(|s| format!("{s} %")).unwrap_or("none".into());
            let list = |key: &str| {
                row[key].as_array().unwrap().iter().map(|v| format!("{v} %")).collect::<Vec<_>>().join(" + ")
            };
            let error =
                row["worst_relative_error_percent"].as_f64().map(|e| format!("{e:+.2} %")).unwrap_or("—".into());
            println!(
                "| {limit} | {} | {} | {} | {error} |",
                row["setting"].as_str().unwrap(),
                list("achieved_percent_per_container"),
                list("achieved_percent_per_process")
            );
        }
    }
    Ok(())
}
