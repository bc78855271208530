#!/usr/bin/env bash
# Control plane API benchmark (BENCHMARKS.md, "Control plane API"): release build, a fresh
# database, `grus-api serve --dev` on localhost (scripts/api-bench-server.sh, which lists the
# environment it reads), then `grus-apiload` (seed, submitJob closed loop, jobs(first: 100)
# open loop at a fixed rate), then the server is stopped and the database dropped. Extra
# arguments go to grus-apiload (e.g. --clients 64 --rate 500 --json).
set -euo pipefail
source "$(dirname "$0")/api-bench-server.sh"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$bin/grus-apiload" --addr "$addr" --database-url "$server/$db" "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
