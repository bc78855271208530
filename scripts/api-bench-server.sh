# Sourced by the control plane API benchmarks (api-bench.sh, api-read-cpu.sh,
# api-jobs-cache-memory.sh): builds grus-api and grus-apiload in release (or takes them from
# GRUS_BENCH_BIN), creates a fresh database, starts `grus-api serve --dev` on $addr and drops
# the database at exit. Leaves $bin, $server, $db, $addr and $pid, and the functions
# start_server [flags] and stop_server, for the caller.
#
# Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432) and Redis
# (REDIS_URL, default redis://127.0.0.1:6379). GRUS_BENCH_SERVER_ARGS adds flags to
# `grus-api serve` (e.g. "--no-allocator"); GRUS_BENCH_DB_OPTIONS adds a query string to the
# server's database URL (e.g. "?sslmode=prefer").
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"
# No debug info: the figures do not need it and it doubles the build on disk.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-0}"
server="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432}"
redis="${REDIS_URL:-redis://127.0.0.1:6379}"
addr="${GRUS_LOAD_ADDR:-127.0.0.1:18080}"
db="grus_bench_$(date +%s)_$$"

bin="${GRUS_BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --locked -p grus-api --bins
  bin="$CARGO_TARGET_DIR/release"
fi

psql "$server/postgres" -qc "CREATE DATABASE $db"
pid=""
# Starts the server (extra arguments are more `grus-api serve` flags) and waits until it answers.
start_server() {
  # shellcheck disable=SC2086 # GRUS_BENCH_SERVER_ARGS is a list of flags.
  RUST_LOG="${RUST_LOG:-warn}" "$bin/grus-api" serve --dev --listen "$addr" \
    --database-url "$server/$db${GRUS_BENCH_DB_OPTIONS:-}" --redis-url "$redis" ${GRUS_BENCH_SERVER_ARGS:-} "$@" &
  pid=$!
  for _ in $(seq 100); do
    curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && return
    kill -0 "$pid" 2>/dev/null || { echo "grus-api exited" >&2; exit 1; }
    sleep 0.1
  done
}
stop_server() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=""
}
cleanup() {
  stop_server
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
}
trap cleanup EXIT

# GRUS_BENCH_DEFER_START=1: the caller starts (and restarts) the server itself.
if [ "${GRUS_BENCH_DEFER_START:-0}" != 1 ]; then
  start_server
fi
