//! A private `redis-server` per test, on a free port, keeping nothing on disk: killing it and
//! starting it again on the same port is a Redis restart that lost every stream, group and key
//! (DESIGN.md invariant 1 says that loses nothing). The shared instance on 6379 is never touched.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::env::free_port;
use crate::process::Process;

pub struct RedisServer {
    process: Process,
    pub port: u16,
    /// The data and log directory when the server made its own.
    _dir: Option<tempfile::TempDir>,
}

impl RedisServer {
    /// Starts `redis-server` in `dir` and waits until it answers PING.
    pub fn start(dir: &Path) -> RedisServer {
        let port = free_port();
        let args: Vec<OsString> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            &dir.display().to_string(),
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let process = Process::start("redis-server", "redis-server", args, dir.join("redis.log"));
        let mut r = RedisServer { process, port, _dir: None };
        r.wait_ready();
        r
    }

    /// Like [`RedisServer::start`], in a temporary directory of its own.
    pub fn start_temporary() -> RedisServer {
        let dir = tempfile::Builder::new().prefix("grus-redis-").tempdir().expect("temp dir");
        let mut r = RedisServer::start(dir.path());
        r._dir = Some(dir);
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `kill -9` and start again on the same port, empty.
    pub fn restart_empty(&mut self) {
        self.process.restart();
        self.wait_ready();
    }

    /// `kill -9`: Redis is gone until [`RedisServer::start_again`].
    pub fn kill9(&mut self) {
        self.process.kill9();
    }

    /// Starts it again on the same port, empty (streams, groups and keys are gone).
    pub fn start_again(&mut self) {
        self.restart_empty();
    }

    pub fn tail(&self, lines: usize) -> String {
        self.process.tail(lines)
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            let pong: Result<String, _> = redis::Client::open(self.url())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                .and_then(|mut c| redis::cmd("PING").query(&mut c));
            if pong.is_ok() {
                return;
            }
            if let Some(status) = self.process.exited() {
                panic!("redis-server exited ({status}):\n{}", self.tail(40));
            }
            assert!(started.elapsed() < Duration::from_secs(30), "redis-server did not start:\n{}", self.tail(40));
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
