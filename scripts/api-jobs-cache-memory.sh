#!/usr/bin/env bash
# What the jobs cache costs in memory and start-up (BENCHMARKS.md, "Control plane API", session
# 8): a fresh database, `grus-api serve --dev --no-allocator` in release, SUBMISSIONS jobs over
# 16 projects; prints the server's RSS at start and after the submissions, then restarts it on
# the same database and prints the time until the cache is loaded and the RSS then. Extra
# arguments go to `grus-api serve` (e.g. `--jobs-cache-per-project 0` for the figures without
# the cache).
#
# usage: scripts/api-jobs-cache-memory.sh [SUBMISSIONS=50000] [serve flags...]
# GRUS_BENCH_BIN: binaries to use instead of building (see scripts/api-bench-server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
submissions="${1:-50000}"
shift || true
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"
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
log=$(mktemp)
psql "$server/postgres" -qc "CREATE DATABASE $db"
pid=""
stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=""
}
cleanup() {
  stop
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
  rm -f "$log"
}
trap cleanup EXIT

start() {
  RUST_LOG=info,sqlx=warn "$bin/grus-api" serve --dev --no-allocator --listen "$addr" \
    --database-url "$server/$db" --redis-url "$redis" "$@" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && return
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "grus-api exited" >&2; exit 1; }
    sleep 0.1
  done
}
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }

start "$@"
echo "RSS at start: $(rss)"
"$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" --projects 16 --clients 32 \
  --submissions "$submissions" --read-seconds 0
sleep 2
echo "RSS after $submissions submissions: $(rss)"
stop

t0=$(date +%s%N)
start "$@"
# Up to 30 s for the load (none without the cache).
for _ in $(seq 1500); do
  grep -q "jobs cache: loaded" "$log" && break
  case " $* " in *" --jobs-cache-per-project 0 "*) break ;; esac
  sleep 0.02
done
t1=$(date +%s%N)
loaded=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -o "jobs cache: loaded.*" || echo "no jobs cache")
echo "restart: $loaded, $(( (t1 - t0) / 1000000 )) ms after the start; RSS: $(rss)"
