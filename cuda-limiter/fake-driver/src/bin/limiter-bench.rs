//! Pacing accuracy of grus-cuda-limiter on the fake driver: for each SM share, a greedy launcher
//! (`fake-cuda-app pace`) runs under the limiter and the achieved share of the device is the
//! completed kernel time (the fake's deterministic clock) over the measured span.
//!
//! Build both libraries first, with the same profile, then run:
//! `cargo build --release -p grus-cuda-limiter -p grus-fake-cuda && target/release/limiter-bench`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// SM shares to measure, in percent.
    #[arg(long, value_delimiter = ',', default_value = "10,25,50,75,90")]
    shares: Vec<u32>,
    /// Measured seconds per share (after a one-second warm-up).
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

fn main() -> Result<()> {
    let args = Args::parse();
    let exe = std::env::current_exe()?;
    let dir = exe.parent().context("executable directory")?;
    let app = dir.join("fake-cuda-app");
    let limiter = artifact(dir, "libgrus_cuda_limiter.so")?;
    let fake = artifact(dir, "libgrus_fake_cuda.so")?;
    let work = std::env::temp_dir().join(format!("grus-limiter-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    for name in ["libcuda.so.1", "libnvidia-ml.so.1"] {
        let link = work.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&fake, &link)?;
    }
    let mut rows = Vec::new();
    for share in args.shares.iter().map(|s| Some(*s)).chain([None]) {
        let mut cmd = Command::new(&app);
        cmd.arg(format!("pace:{}:{}", args.seconds, args.blocks))
            .env("LD_PRELOAD", &limiter)
            .env("LD_LIBRARY_PATH", &work)
            .env("GRUS_CUDA_SHM", work.join("region"))
            .env_remove("CUDA_DEVICE_MEMORY_LIMIT")
            .env_remove("CUDA_DEVICE_SM_LIMIT");
        if let Some(share) = share {
            cmd.env("CUDA_DEVICE_SM_LIMIT", share.to_string());
        }
        let out = cmd.output().context("run fake-cuda-app")?;
        if !out.status.success() {
            bail!("fake-cuda-app failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let text = String::from_utf8(out.stdout)?;
        let line = text.lines().find(|l| l.starts_with("pace ")).context("no pace line")?;
        let field = |name: &str| -> Result<f64> {
            Ok(line.split(' ').find_map(|kv| kv.strip_prefix(name)).context("field")?.parse()?)
        };
        let achieved = field("busy_ns=")? / field("elapsed_ns=")?;
        rows.push(serde_json::json!({
            "sm_limit_percent": share,
            "achieved_percent": (achieved * 10_000.0).round() / 100.0,
            "relative_error_percent": share.map(|s| ((achieved * 100.0 / f64::from(s) - 1.0) * 10_000.0).round() / 100.0),
            "launches": field("launches=")? as u64,
            "seconds": args.seconds,
        }));
    }
    let _ = std::fs::remove_dir_all(&work);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("| SM limit | achieved | relative error | launches |");
        println!("|---:|---:|---:|---:|");
        for row in &rows {
            let limit = row["sm_limit_percent"].as_u64().map(|s| format!("{s} %")).unwrap_or("none".into());
            let error = row["relative_error_percent"].as_f64().map(|e| format!("{e:+.2} %")).unwrap_or("—".into());
            println!("| {limit} | {} % | {error} | {} |", row["achieved_percent"], row["launches"]);
        }
    }
    Ok(())
}
