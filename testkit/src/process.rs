//! Child processes of a test: started with their output appended to a log file, killed with
//! SIGKILL (`kill -9`: no shutdown step runs) on demand and on drop, restarted with the same
//! command line.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct Process {
    name: String,
    program: PathBuf,
    args: Vec<OsString>,
    log: PathBuf,
    /// `RUST_LOG` of the child.
    log_filter: String,
    /// The uid and gid the child runs as (a server that refuses root), or the test's own.
    owner: Option<(u32, u32)>,
    child: Option<Child>,
}

impl Process {
    /// Starts `program args`, appending stdout and stderr to `log`, with `RUST_LOG` from
    /// `GRUS_E2E_LOG` (default `info`).
    pub fn start(name: &str, program: impl Into<PathBuf>, args: Vec<OsString>, log: PathBuf) -> Process {
        let filter = std::env::var("GRUS_E2E_LOG").unwrap_or_else(|_| "info".into());
        Process::start_logging(name, program, args, log, &filter)
    }

    /// Like [`Process::start`], with `RUST_LOG=log_filter`.
    pub fn start_logging(
        name: &str,
        program: impl Into<PathBuf>,
        args: Vec<OsString>,
        log: PathBuf,
        log_filter: &str,
    ) -> Process {
        Process::launch(name, program.into(), args, log, log_filter, None)
    }

    /// Like [`Process::start`], run as `owner` (uid, gid) when given.
    pub fn start_as(
        name: &str,
        program: impl Into<PathBuf>,
        args: Vec<OsString>,
        log: PathBuf,
        owner: Option<(u32, u32)>,
    ) -> Process {
        let filter = std::env::var("GRUS_E2E_LOG").unwrap_or_else(|_| "info".into());
        Process::launch(name, program.into(), args, log, &filter, owner)
    }

    fn launch(
        name: &str,
        program: PathBuf,
        args: Vec<OsString>,
        log: PathBuf,
        log_filter: &str,
        owner: Option<(u32, u32)>,
    ) -> Process {
        let mut p = Process {
            name: name.to_owned(),
            program,
            args,
            log,
            log_filter: log_filter.to_owned(),
            owner,
            child: None,
        };
        p.spawn();
        p
    }

    fn spawn(&mut self) {
        let out = OpenOptions::new().create(true).append(true).open(&self.log).expect("open the log file");
        let mut command = Command::new(&self.program);
        if let Some((uid, gid)) = self.owner {
            use std::os::unix::process::CommandExt;
            command.uid(uid).gid(gid);
        }
        let child = command
            .args(&self.args)
            .env("RUST_LOG", &self.log_filter)
            // Settings of the developer's shell must not leak into the processes under test.
            .env_remove("GRUS_METRICS_ADDR")
            .env_remove("GRUS_STATE_DIR")
            .env_remove("REDIS_URL")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log handle"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {} ({}): {e}", self.name, self.program.display()));
        self.child = Some(child);
    }

    /// The arguments of the next start.
    pub fn set_args(&mut self, args: Vec<OsString>) {
        self.args = args;
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process runs (it was started and not killed; it may have exited by itself).
    pub fn is_started(&self) -> bool {
        self.child.is_some()
    }

    /// Starts it again after [`Process::kill9`] (a no-op while it runs).
    pub fn start_again(&mut self) {
        if self.child.is_none() {
            self.note(&format!("--- e2e: {} started again ---", self.name));
            self.spawn();
        }
    }

    /// SIGKILL and reap: nothing of the process' own shutdown runs.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            self.note(&format!("--- e2e: {} killed with SIGKILL ---", self.name));
        }
    }

    /// Sends SIG`name` and waits for the process to exit by itself (a server's own shutdown
    /// path, e.g. PostgreSQL's immediate shutdown on SIGQUIT); SIGKILL after 30 s.
    pub fn signal_and_reap(&mut self, name: &str) {
        if self.child.is_none() {
            return;
        }
        self.signal(name);
        let started = std::time::Instant::now();
        while self.exited().is_none() && started.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            self.note(&format!("--- e2e: {} stopped by SIG{name} ---", self.name));
        }
    }

    /// SIGSTOP: the process stays, silent, until [`Process::resume`] (a paused VM, a long GC,
    /// a partition as the rest of the system sees it).
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// SIGCONT after [`Process::pause`].
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let Some(pid) = self.pid() else { return };
        let status = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name} {pid}");
        self.note(&format!("--- e2e: {} sent SIG{name} ---", self.name));
    }

    /// Starts it again with the same (or the newly set) arguments.
    pub fn restart(&mut self) {
        self.kill9();
        self.note(&format!("--- e2e: {} restarted ---", self.name));
        self.spawn();
    }

    /// `Some(status)` when the process has exited by itself.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    fn note(&self, line: &str) {
        use std::io::Write;
        if let Ok(mut f) = OpenOptions::new().append(true).open(&self.log) {
            let _ = writeln!(f, "{line}");
        }
    }

    /// The last `lines` lines of the log, headed by the process name.
    pub fn tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        let from = all.len().saturating_sub(lines);
        format!("===== {} ({}) =====\n{}", self.name, self.log.display(), all[from..].join("\n"))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
