//! Where a test finds its services and how it names what it creates: the PostgreSQL server
//! and Redis of the machine (`DATABASE_URL`, `REDIS_URL`), unique names, free ports and the
//! workspace's binaries.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The PostgreSQL server of `DATABASE_URL` without a database name (the test chooses its
/// own), default `postgres://postgres@127.0.0.1:5432`.
pub fn database_server() -> String {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    match url.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| (url.len() - rest.len()) + i)) {
        Some(i) => url[..i].to_owned(),
        None => url,
    }
}

/// The socket address of [`database_server`] (for a proxy in front of it).
pub fn database_addr() -> std::net::SocketAddr {
    let server = database_server();
    let host = server.split("://").nth(1).unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or(host);
    let host = if host.contains(':') { host.to_owned() } else { format!("{host}:5432") };
    host.replace("localhost", "127.0.0.1").parse().expect("DATABASE_URL host:port")
}

/// The shared Redis (`REDIS_URL`, default `redis://127.0.0.1:6379`). Tests that restart or
/// kill Redis start their own ([`crate::redis_server::RedisServer`]).
pub fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// A name no other test of any process uses: `prefix-<pid>-<nanos>-<counter>`.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{prefix}-{}-{nanos:x}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// 16 random hex digits (a fresh `RandomState` per call, mixed with a counter and the pid).
pub fn random_hex() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A free TCP port on 127.0.0.1 (bound, then released for a server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind a free port").local_addr().expect("local addr").port()
}

/// A workspace binary (`grus-api`, `grus-agent`) next to the running test binary's `deps/`
/// directory. Cargo holds the target directory's lock while tests run, so a test cannot build
/// them: `cargo build -p grus-api -p grus-agent` first (scripts/test.sh does).
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let bin = exe.parent().and_then(Path::parent).expect("target directory").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p grus-api -p grus-agent` before these tests",
        bin.display()
    );
    bin
}

/// A directory of the workspace (`testkit/oidc`), wherever the test runs from.
pub fn workspace_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testkit sits in the workspace").join(relative)
}
