#!/usr/bin/env bash
# What the jobs cache costs in memory and start-up (BENCHMARKS.md, "Control plane API", session
# 8): a fresh database, `grus-api serve --dev --no-allocator` in release, SUBMISSIONS jobs over
# 16 projects; prints the server's RSS at start and after the submissions, then restarts it on
# the same database and prints the time until the cache is loaded and the RSS then. Extra
# arguments go to `grus-api serve` (e.g. `--jobs-cache-per-project 0` for the figures without
# the cache).
#
# usage: scripts/api-jobs-cache-memory.sh [SUBMISSIONS=50000] [serve flags...]
# The server is started by scripts/api-bench-server.sh (GRUS_BENCH_BIN: binaries to use
# instead of building; see there).
set -euo pipefail
submissions="${1:-50000}"
shift || true
GRUS_BENCH_DEFER_START=1
# The load's log line says when the cache is ready.
export RUST_LOG="${RUST_LOG:-info,sqlx=warn}"
source "$(dirname "$0")/api-bench-server.sh"
log=$(mktemp)
trap 'cleanup; rm -f "$log"' EXIT
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }

start_server --no-allocator "$@" >"$log" 2>&1
echo "RSS at start: $(rss)"
"$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" --projects 16 --clients 32 \
  --submissions "$submissions" --read-seconds 0
sleep 2
echo "RSS after $submissions submissions: $(rss)"
stop_server

t0=$(date +%s%N)
start_server --no-allocator "$@" >"$log" 2>&1
# Up to 30 s for the load (none without the cache).
for _ in $(seq 1500); do
  grep -q "jobs cache: loaded" "$log" && break
  case " $* " in *" --jobs-cache-per-project 0 "*) break ;; esac
  sleep 0.02
done
t1=$(date +%s%N)
loaded=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -o "jobs cache: loaded.*" || echo "no jobs cache")
echo "restart: $loaded, $(( (t1 - t0) / 1000000 )) ms after the start; RSS: $(rss)"
