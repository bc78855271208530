#!/usr/bin/env bash
# CPU per `jobs(first: 100)` read (BENCHMARKS.md, "Control plane API", session 7): a fresh
# database, `grus-api serve --dev` in release, 5,000 submissions over 16 projects, then an
# open loop of reads at RATE/s for SECONDS; prints the server's, PostgreSQL's (all its
# processes) and the load generator's CPU time per read, from /proc.
#
# usage: scripts/api-read-cpu.sh [RATE=200] [SECONDS=10]
# The server is started by scripts/api-bench-server.sh (GRUS_BENCH_BIN: binaries to use
# instead of building; GRUS_BENCH_DB_OPTIONS, e.g. "?sslmode=prefer"; see there).
set -euo pipefail
rate="${1:-200}"
seconds="${2:-10}"
source "$(dirname "$0")/api-bench-server.sh"
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
