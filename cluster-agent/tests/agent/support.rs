//! Helpers for tests that run the real `grus-agent` binary against a real Redis and play the
//! api's part: commands go in with XADD, events are read back from the event stream.
//!
//! Every test gets its own cluster id (random suffix) and state directory, and deletes its
//! keys when done. `REDIS_URL` selects the Redis (default `redis://127.0.0.1:6379`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use grus_protocol::codec::{decode, encode, Decoded, Envelope};
use grus_protocol::keys;
use grus_protocol::wire::{DeviceRef, JobSpec, State};
use grus_protocol::{Command, Event};
use grus_testkit::env::{redis_url, unique};
use grus_testkit::process::Process;
use grus_testkit::streams::ClusterKeys;
use redis::streams::StreamRangeReply;
use redis::Commands;

pub const AGENT: &str = env!("CARGO_BIN_EXE_grus-agent");

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// One JobState event, flattened.
#[derive(Clone, Debug, PartialEq)]
pub struct JobEvent {
    pub job: u64,
    pub task: Option<String>,
    pub replica: Option<u32>,
    pub state: State,
    pub node: Option<String>,
    pub devices: Vec<DeviceRef>,
    pub at: i64,
    pub epoch: u64,
    pub reason: Option<String>,
    pub checkpoint: Option<String>,
}

impl JobEvent {
    pub fn is_job_level(&self) -> bool {
        self.task.is_none() && self.replica.is_none()
    }
}

/// One simulated cluster: its agent process, state directory and Redis keys.
pub struct Cluster {
    pub id: String,
    pub redis: String,
    pub nodes: String,
    pub dir: tempfile::TempDir,
    pub conn: redis::Connection,
    /// `RUST_LOG` of the agent.
    pub log_filter: String,
    agent: Option<Process>,
    /// Events read so far, in stream order.
    pub events: Vec<(String, Envelope<Event>)>,
    last: String,
    seq: u64,
}

impl Cluster {
    pub fn start(prefix: &str, nodes: &str) -> Cluster {
        Cluster::start_on(prefix, nodes, &redis_url())
    }

    pub fn start_on(prefix: &str, nodes: &str, redis: &str) -> Cluster {
        Cluster::start_with(prefix, nodes, redis, "info")
    }

    pub fn start_with(prefix: &str, nodes: &str, redis: &str, log_filter: &str) -> Cluster {
        let conn = redis::Client::open(redis)
            .and_then(|c| c.get_connection())
            .unwrap_or_else(|e| panic!("these tests need Redis at {redis} (start it with `redis-server`): {e}"));
        let mut c = Cluster {
            id: unique(&format!("t-{prefix}")),
            redis: redis.to_string(),
            nodes: nodes.to_string(),
            dir: tempfile::tempdir().expect("temp dir"),
            conn,
            log_filter: log_filter.into(),
            agent: None,
            events: Vec::new(),
            last: "-".into(),
            seq: 0,
        };
        c.spawn();
        c
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("agent.log")
    }

    /// Starts the agent (again, after a kill) with the same state directory.
    pub fn spawn(&mut self) {
        if let Some(agent) = &mut self.agent {
            assert!(!agent.is_started(), "agent already running");
            agent.start_again();
            return;
        }
        let args = ["--cluster", &self.id, "--redis", &self.redis, "--backend", "sim", "--sim-nodes", &self.nodes]
            .iter()
            .map(OsString::from)
            .chain([OsString::from("--state-dir"), self.state_dir().into_os_string()])
            .collect();
        let name = format!("grus-agent {}", self.id);
        self.agent = Some(Process::start_logging(&name, AGENT, args, self.log_path(), &self.log_filter));
    }

    /// SIGKILL: no shutdown path runs.
    pub fn kill9(&mut self) {
        if let Some(agent) = &mut self.agent {
            agent.kill9();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Sends a command with a fresh message id; returns the id.
    pub fn send(&mut self, command: Command) -> String {
        self.seq += 1;
        let id = format!("api-{}-{}", self.id, self.seq);
        self.send_with_id(&id, command);
        id
    }

    pub fn send_with_id(&mut self, id: &str, command: Command) {
        let env = Envelope::new(id, self.id.as_str(), now_ms(), command);
        self.xadd_raw(encode(&env).as_bytes());
    }

    /// Appends an entry with field `m` = `payload` to the command stream.
    pub fn xadd_raw(&mut self, payload: &[u8]) -> String {
        self.conn.xadd(keys::command_stream(&self.id), "*", &[(keys::PAYLOAD_FIELD, payload)]).expect("XADD command")
    }

    pub fn dispatch(&mut self, spec: JobSpec, epoch: u64) -> String {
        self.send(Command::Dispatch { job: Box::new(spec), epoch, answer_by_ms: None })
    }

    /// Reads new events from the stream.
    pub fn poll(&mut self) -> usize {
        let key = keys::event_stream(&self.id);
        let start = if self.last == "-" { "-".to_string() } else { format!("({}", self.last) };
        let reply: StreamRangeReply = self.conn.xrange_count(&key, start, "+", 10_000).expect("XRANGE events");
        let n = reply.ids.len();
        for entry in reply.ids {
            self.last = entry.id.clone();
            let raw: Vec<u8> = entry.get(keys::PAYLOAD_FIELD).expect("event has a payload");
            match decode::<Event>(&raw, &self.id) {
                Ok(Decoded::Known(env)) => self.events.push((entry.id, env)),
                other => panic!("agent wrote an event that does not decode: {other:?}"),
            }
        }
        n
    }

    /// Opens a new connection (after the Redis server was restarted).
    pub fn reconnect(&mut self) {
        self.conn = redis::Client::open(self.redis.as_str()).and_then(|c| c.get_connection()).expect("reconnect");
    }

    /// Forgets what was read (after a FLUSHALL the stream starts over).
    pub fn reset_events(&mut self) {
        self.events.clear();
        self.last = "-".into();
    }

    pub fn job_events(&self) -> Vec<JobEvent> {
        self.events
            .iter()
            .filter_map(|(_, e)| match &e.message {
                Event::JobState { job, task, replica, state, node, devices, at, epoch, reason, checkpoint, .. } => {
                    Some(JobEvent {
                        job: *job,
                        task: task.clone(),
                        replica: *replica,
                        state: *state,
                        node: node.clone(),
                        devices: devices.clone(),
                        at: *at,
                        epoch: *epoch,
                        reason: reason.clone(),
                        checkpoint: checkpoint.clone(),
                    })
                }
                _ => None,
            })
            .collect()
    }

    pub fn events_of(&self, job: u64) -> Vec<JobEvent> {
        self.job_events().into_iter().filter(|e| e.job == job).collect()
    }

    /// Job-level states of `job`, in order.
    pub fn job_states(&self, job: u64) -> Vec<State> {
        self.events_of(job).into_iter().filter(JobEvent::is_job_level).map(|e| e.state).collect()
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|(_, e)| e.message.kind()).collect()
    }

    /// Waits until the job-level state `state` of `job` shows up.
    pub fn wait_job_state(&mut self, job: u64, state: State, timeout: Duration) -> JobEvent {
        let what = format!("job {job} of {} to report {state:?}", self.id);
        let found =
            self.try_wait(timeout, |c| c.events_of(job).into_iter().find(|e| e.is_job_level() && e.state == state));
        found.unwrap_or_else(|| self.fail(&what))
    }

    /// Polls until `f` returns `Some`, or returns `None` after `timeout`.
    pub fn try_wait<T>(&mut self, timeout: Duration, mut f: impl FnMut(&Cluster) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + timeout;
        loop {
            self.poll();
            if let Some(v) = f(self) {
                return Some(v);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait<T>(&mut self, timeout: Duration, what: &str, f: impl FnMut(&Cluster) -> Option<T>) -> T {
        match self.try_wait(timeout, f) {
            Some(v) => v,
            None => self.fail(&format!("{what} (timed out after {timeout:?})")),
        }
    }

    /// Panics with the agent's log and the events it wrote.
    pub fn fail(&self, what: &str) -> ! {
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        let events: Vec<String> = self.job_events().iter().map(|e| format!("{e:?}")).collect();
        panic!(
            "{what}\n--- job events of {} ---\n{}\n--- agent log (tail) ---\n{}",
            self.id,
            events.join("\n"),
            tail.join("\n")
        )
    }

    /// Delivers up to `n` new command entries to the agent's consumer (named after the
    /// cluster) without acknowledging them: what an agent killed between XREADGROUP and XACK
    /// leaves behind.
    pub fn deliver_without_ack(&mut self, n: usize) -> usize {
        let reply: redis::streams::StreamReadReply = self
            .conn
            .xread_options(
                &[keys::command_stream(&self.id)],
                &[">"],
                &redis::streams::StreamReadOptions::default().group(keys::AGENT_GROUP, &self.id).count(n),
            )
            .expect("XREADGROUP");
        reply.keys.iter().map(|k| k.ids.len()).sum()
    }

    /// Entries delivered to the agent group and not acknowledged.
    pub fn pending_commands(&mut self) -> i64 {
        let reply: redis::Value = redis::cmd("XPENDING")
            .arg(keys::command_stream(&self.id))
            .arg(keys::AGENT_GROUP)
            .query(&mut self.conn)
            .expect("XPENDING");
        match reply {
            redis::Value::Array(v) => v.first().and_then(|n| redis::from_redis_value::<i64>(n).ok()).unwrap_or(0),
            _ => 0,
        }
    }

    fn delete_keys(&mut self) {
        let _: Result<i64, _> = self.conn.del(&ClusterKeys::names(&self.id)[..]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.kill9();
        self.delete_keys();
    }
}

/// Launch records of the sim journal: (job, task, replica) -> launch times.
pub fn journal_launches(path: &Path) -> BTreeMap<(u64, String, u32), Vec<i64>> {
    let mut out: BTreeMap<(u64, String, u32), Vec<i64>> = BTreeMap::new();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v["op"] != "launch" {
            continue;
        }
        let r = &v["replica"];
        let key = (
            r["job"].as_u64().unwrap_or_default(),
            r["task"].as_str().unwrap_or_default().to_string(),
            r["replica"].as_u64().unwrap_or_default() as u32,
        );
        let at = r["launched_at"].as_i64().unwrap_or_default();
        let times = out.entry(key).or_default();
        if !times.contains(&at) {
            times.push(at);
        }
    }
    out
}
