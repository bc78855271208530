//! A private PostgreSQL server per test (its own `initdb` cluster on a free port), for faults
//! the machine's shared server must never see: a crash and restart of the database under a
//! running control plane. Data lives in a temporary directory removed with the server.
//!
//! PostgreSQL refuses to run as root; when the test runs as root the server runs as the
//! `postgres` user of the machine's PostgreSQL package, which owns the data directory.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::env::free_port;
use crate::process::Process;

pub struct PostgresServer {
    process: Process,
    bin: PathBuf,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// Why no private server could be started (the test says so and skips its fault).
#[derive(Debug, thiserror::Error)]
pub enum PostgresUnavailable {
    #[error("no PostgreSQL server binaries (initdb, postgres) under /usr/lib/postgresql/*/bin")]
    NoBinaries,
    #[error("running as root and the machine has no `postgres` user to run the server as")]
    NoUser,
    #[error("initdb failed: {0}")]
    Initdb(String),
}

impl PostgresServer {
    /// `initdb` into a fresh directory and start the server on a free loopback port; waits
    /// until it accepts connections.
    pub fn start() -> Result<PostgresServer, PostgresUnavailable> {
        let bin = server_binaries().ok_or(PostgresUnavailable::NoBinaries)?;
        let owner = if is_root() { Some(postgres_user().ok_or(PostgresUnavailable::NoUser)?) } else { None };
        let dir = tempfile::Builder::new().prefix("grus-pg-").tempdir().map_err(|e| init_error(&e))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).map_err(|e| init_error(&e))?;
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb.args(["-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale", "C", "-D"]).arg(&data);
        let out = as_owner(&mut initdb, owner).output().map_err(|e| init_error(&e))?;
        if !out.status.success() {
            return Err(PostgresUnavailable::Initdb(String::from_utf8_lossy(&out.stderr).into_owned()));
        }
        let port = free_port();
        let args: Vec<OsString> = [
            "-D",
            &data.display().to_string(),
            "-p",
            &port.to_string(),
            "-k",
            &dir.path().display().to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            // No fsync: a crash here is the server's, never the kernel's, so WAL written to the
            // kernel survives it. Commits still wait for that write (synchronous_commit stays
            // on): with it off, the soak's crashes lost commits the api had acknowledged (a
            // submitted job gone, an agent's event acknowledged and its effect lost).
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let log = dir.path().join("postgres.log");
        let process = Process::start_as("postgres", bin.join("postgres"), args, log, owner);
        let mut server = PostgresServer { process, bin, port, _dir: dir };
        server.wait_ready();
        Ok(server)
    }

    /// The server's URL without a database (`postgres://postgres@127.0.0.1:<port>`).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    /// An immediate shutdown (SIGQUIT): every session is cut at once, nothing is flushed, and
    /// the next start runs crash recovery, as after a power loss. No server until
    /// [`PostgresServer::start_again`].
    pub fn crash(&mut self) {
        self.process.signal_and_reap("QUIT");
    }

    /// Starts it again on the same port and data, and waits until it accepts connections.
    pub fn start_again(&mut self) {
        self.process.start_again();
        self.wait_ready();
    }

    pub fn tail(&self, lines: usize) -> String {
        self.process.tail(lines)
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            if let Some(status) = self.process.exited() {
                panic!("postgres exited ({status}):\n{}", self.tail(40));
            }
            assert!(started.elapsed() < Duration::from_secs(60), "postgres did not start:\n{}", self.tail(40));
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for PostgresServer {
    /// An immediate shutdown, so the server's backends go with it (a SIGKILL of the postmaster
    /// alone would leave them behind).
    fn drop(&mut self) {
        self.process.signal_and_reap("QUIT");
    }
}

fn init_error(e: &std::io::Error) -> PostgresUnavailable {
    PostgresUnavailable::Initdb(e.to_string())
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `postgres`.
fn server_binaries() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists() && bin.join("postgres").exists())
        .collect();
    found.sort_by_key(|p| p.parent().and_then(Path::file_name).and_then(|v| v.to_str()?.parse::<u32>().ok()));
    found.pop()
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The `postgres` user's uid and gid, from /etc/passwd.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&"postgres") && fields.len() > 3)
            .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
            .flatten()
    })
}

fn as_owner(command: &mut Command, owner: Option<(u32, u32)>) -> &mut Command {
    use std::os::unix::process::CommandExt;
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    command
}
