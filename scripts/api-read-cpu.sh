#!/usr/bin/env bash
# CPU per `jobs(first: 100)` read (BENCHMARKS.md, "Control plane API", session 7): a fresh
# database, `grus-api serve --dev` in release, 5,000 submissions over 16 projects, then an
# open loop of reads at RATE/s for SECONDS; prints the server's, PostgreSQL's (all its
# processes) and the load generator's CPU time per read, from /proc.
#
# usage: scripts/api-read-cpu.sh [RATE=200] [SECONDS=10]
# GRUS_BENCH_BIN: a directory holding grus-api and grus-apiload to use instead of building;
# GRUS_BENCH_DB_OPTIONS: a query string for the server's database URL (e.g. "?sslmode=prefer").
set -euo pipefail
cd "$(dirname "$0")/.."
rate="${1:-200}"
seconds="${2:-10}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"
server="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432}"
redis="${REDIS_URL:-redis://127.0.0.1:6379}"
addr="${GRUS_LOAD_ADDR:-127.0.0.1:18082}"
db="grus_cpu_$(date +%s)_$$"
bin="${GRUS_BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --locked -p grus-api --bins
  bin="$CARGO_TARGET_DIR/release"
fi

psql "$server/postgres" -qc "CREATE DATABASE $db"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
}
trap cleanup EXIT

RUST_LOG=warn "$bin/grus-api" serve --dev --listen "$addr" \
  --database-url "$server/$db${GRUS_BENCH_DB_OPTIONS:-}" --redis-url "$redis" &
pid=$!
for _ in $(seq 100); do
  curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "grus-api exited" >&2; exit 1; }
  sleep 0.1
done
"$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" --projects 16 --clients 32 \
  --submissions 5000 --read-seconds 0 >/dev/null
sleep 2

# utime + stime in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() { for p in $(pgrep -x postgres); do ticks "$p"; done | awk '{s += $1} END {print s + 0}'; }
s0=$(ticks "$pid"); p0=$(postgres_ticks)
load=$( { /usr/bin/time -f "%U %S" "$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" \
  --submissions 0 --rate "$rate" --read-seconds "$seconds" --warmup 0 >/dev/null; } 2>&1 | tail -1)
s1=$(ticks "$pid"); p1=$(postgres_ticks)
python3 - "$s0" "$s1" "$p0" "$p1" "$(getconf CLK_TCK)" "$rate" "$seconds" $load <<'PY'
import sys
s0, s1, p0, p1, tick, rate, secs, lu, ls = map(float, sys.argv[1:])
n = rate * secs
ms = lambda t: t / tick * 1000 / n
print(f"{int(n)} reads: server {ms(s1 - s0):.2f} ms/read, postgres {ms(p1 - p0):.2f} ms/read, "
      f"load generator {(lu + ls) * 1000 / n:.2f} ms/read")
PY
