#!/usr/bin/env bash
# Control plane API benchmark (BENCHMARKS.md, "Control plane API"): release build, a fresh
# database, `grus-api serve --dev` on localhost, then `grus-apiload` (seed, submitJob closed
# loop, jobs(first: 100) open loop at a fixed rate), then the server is stopped and the
# database dropped. Extra arguments go to grus-apiload (e.g. --clients 64 --rate 500 --json).
#
# Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432) and Redis
# (REDIS_URL, default redis://127.0.0.1:6379) running. GRUS_BENCH_SERVER_ARGS adds flags to
# `grus-api serve` (e.g. "--admission-shards 2"); GRUS_BENCH_DB_OPTIONS adds a query string
# to the server's database URL (e.g. "?sslmode=disable": libpq's default `prefer` encrypts
# even on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"
# No debug info: the figures do not need it and it doubles the build on disk.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-0}"
server="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432}"
redis="${REDIS_URL:-redis://127.0.0.1:6379}"
addr="${GRUS_LOAD_ADDR:-127.0.0.1:18080}"
db="grus_bench_$(date +%s)_$$"

cargo build --release --locked -p grus-api --bins
bin="$CARGO_TARGET_DIR/release"

psql "$server/postgres" -qc "CREATE DATABASE $db"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
}
trap cleanup EXIT

RUST_LOG="${RUST_LOG:-warn}" "$bin/grus-api" serve --dev --listen "$addr" \
  --database-url "$server/$db${GRUS_BENCH_DB_OPTIONS:-}" --redis-url "$redis" ${GRUS_BENCH_SERVER_ARGS:-} &
pid=$!
for _ in $(seq 100); do
  curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "grus-api exited" >&2; exit 1; }
  sleep 0.1
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
