//! A started `grus-agent --backend sim` process and its state directory (book and sim
//! journal): killed with `kill -9` on demand and on drop, restarted over the same or other
//! simulated nodes, with the sim's fault-injection API.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{free_port, workspace_binary};
use crate::process::Process;
use crate::wait::{Deadline, PATIENCE};

/// One `grus-agent --backend sim` process and its state directory (book and sim journal).
pub struct Agent {
    process: Process,
    pub cluster: String,
    pub nodes: String,
    pub state_dir: PathBuf,
    /// Base URL of its HTTP surface (`/sim/*` fault injection).
    pub control: String,
    redis_url: String,
    flags: BTreeMap<String, String>,
}

/// The agent's command line.
fn agent_args(
    cluster: &str,
    nodes: &str,
    state_dir: &Path,
    control: &str,
    redis_url: &str,
    flags: &BTreeMap<String, String>,
) -> Vec<OsString> {
    let mut args: Vec<String> = vec![
        "--cluster".into(),
        cluster.to_owned(),
        "--redis".into(),
        redis_url.to_owned(),
        "--backend".into(),
        "sim".into(),
        "--sim-nodes".into(),
        nodes.to_owned(),
        "--state-dir".into(),
        state_dir.display().to_string(),
        "--metrics-addr".into(),
        control.trim_start_matches("http://").to_owned(),
        // Stable across restarts, so its pending commands come back to it.
        "--consumer".into(),
        format!("{cluster}-agent"),
    ];
    for (k, v) in flags {
        args.push(k.clone());
        args.push(v.clone());
    }
    args.into_iter().map(OsString::from).collect()
}

impl Agent {
    /// Starts the workspace's `grus-agent` for `cluster` over `nodes` (`2x4xA100-80GB,...`)
    /// with its book in `state_dir`, `flags` added, its output appended to `log`.
    pub fn start(
        cluster: &str,
        nodes: &str,
        state_dir: PathBuf,
        redis_url: &str,
        flags: BTreeMap<String, String>,
        log: PathBuf,
    ) -> Agent {
        let control = format!("http://127.0.0.1:{}", free_port());
        let args = agent_args(cluster, nodes, &state_dir, &control, redis_url, &flags);
        let process = Process::start(&format!("grus-agent {cluster}"), workspace_binary("grus-agent"), args, log);
        Agent {
            process,
            cluster: cluster.to_owned(),
            nodes: nodes.to_owned(),
            state_dir,
            control,
            redis_url: redis_url.to_owned(),
            flags,
        }
    }

    fn args(&self) -> Vec<OsString> {
        agent_args(&self.cluster, &self.nodes, &self.state_dir, &self.control, &self.redis_url, &self.flags)
    }

    /// `kill -9`: no shutdown step runs (the book and the journal are as the crash left them).
    pub fn kill9(&mut self) {
        self.process.kill9();
    }

    /// SIGSTOP: silent (no heartbeat, no events) until [`Agent::resume`].
    pub fn pause(&self) {
        self.process.pause();
    }

    pub fn resume(&self) {
        self.process.resume();
    }

    /// Starts it again (after [`Agent::kill9`], or kills it first) with the same state directory.
    pub fn restart(&mut self) {
        self.process.restart();
    }

    /// Restarts it with `flag value` added (an operator's change of its settings).
    pub fn restart_with_flag(&mut self, flag: &str, value: &str) {
        self.process.kill9();
        self.flags.insert(flag.to_owned(), value.to_owned());
        let args = self.args();
        self.process.set_args(args);
        self.process.restart();
    }

    /// Restarts it over different simulated nodes: the cluster's capacity changed.
    pub fn restart_with_nodes(&mut self, nodes: &str) {
        self.process.kill9();
        self.nodes = nodes.to_owned();
        let args = self.args();
        self.process.set_args(args);
        self.process.restart();
    }

    /// `POST /sim/...` (fault injection), retried while the agent's HTTP server starts.
    pub async fn sim(&self, path: &str) -> String {
        let http = reqwest::Client::new();
        let deadline = Deadline::new(format!("POST {path} on agent {}", self.cluster), PATIENCE);
        loop {
            if let Ok(r) = http.post(format!("{}{path}", self.control)).send().await {
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                assert!(status.is_success(), "POST {path}: {status} {body}");
                return body;
            }
            deadline.tick(|| self.process.tail(40)).await;
        }
    }

    /// The simulator's journal: every launch, stop and fault since the agent last started
    /// (a restart compacts it to the replicas it still holds).
    pub fn journal(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.state_dir.join("sim-journal.jsonl")).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The agent's book, as `grus-agent book` prints it (snapshot and journal).
    pub fn book(&self) -> Value {
        let out = std::process::Command::new(workspace_binary("grus-agent"))
            .arg("book")
            .arg("--state-dir")
            .arg(&self.state_dir)
            .output()
            .expect("run grus-agent book");
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    pub fn tail(&self, lines: usize) -> String {
        self.process.tail(lines)
    }
}
