#!/usr/bin/env bash
# Replays the five Alibaba GPU v2023 traces under all seven policies (the FGD paper's
# experiment: seeds 42..51, tune 1.3) and prints a markdown table of our GPU allocation
# against the published means at 100 % and 130 % arrived demand, plus run times.
#
# Usage: scheduler/scripts/replay-table.sh [DATA_DIR]
#   DATA_DIR defaults to $DATA, else ../shared/data/alibaba-gpu-v2023 beside the repository.
#   SEEDS (default 42..51) and TUNE (default 1.3) override the protocol for experiments.
# Needs cargo and jq. Runs are sequential so that their timings do not disturb each other.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-${DATA:-$root/../shared/data/alibaba-gpu-v2023}}
seeds=${SEEDS:-42..51}
tune=${TUNE:-1.3}
traces=(default cpu050 gpushare40 gpuspec10 multigpu20)
policies=(random dotprod clustering packing bestfit fgd grus)

command -v jq >/dev/null || { echo "replay-table.sh needs jq" >&2; exit 1; }
[[ -f $data/openb_node_list_gpu_node.csv ]] || { echo "no trace data in $data (pass DATA_DIR)" >&2; exit 1; }

cargo build --quiet --release -p grus-scheduler --bin grus-replay --manifest-path "$root/Cargo.toml"
bin=${CARGO_TARGET_DIR:-$root/target}/release/grus-replay

# Published means over seeds 42..51 (data README): "at130 at100" per trace and policy.
declare -A published=(
  [default/random]="87.47 86.30" [default/dotprod]="90.85 90.62" [default/clustering]="91.88 91.65"
  [default/packing]="92.00 91.78" [default/bestfit]="93.08 92.86" [default/fgd]="95.39 95.23"
  [cpu050/random]="91.24 89.02" [cpu050/dotprod]="93.27 93.03" [cpu050/clustering]="93.79 93.52"
  [cpu050/packing]="93.72 93.46" [cpu050/bestfit]="93.79 93.56" [cpu050/fgd]="95.21 95.00"
  [gpushare40/random]="86.00 84.86" [gpushare40/dotprod]="89.56 89.30" [gpushare40/clustering]="90.02 89.76"
  [gpushare40/packing]="90.03 89.77" [gpushare40/bestfit]="91.69 91.44" [gpushare40/fgd]="94.15 93.96"
  [gpuspec10/random]="87.43 86.26" [gpuspec10/dotprod]="90.39 90.17" [gpuspec10/clustering]="92.18 91.96"
  [gpuspec10/packing]="92.46 92.24" [gpuspec10/bestfit]="93.31 93.10" [gpuspec10/fgd]="94.95 94.66"
  [multigpu20/random]="88.69 86.92" [multigpu20/dotprod]="92.06 91.85" [multigpu20/clustering]="93.56 93.34"
  [multigpu20/packing]="93.71 93.50" [multigpu20/bestfit]="93.93 93.73" [multigpu20/fgd]="95.65 95.53"
)

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for t in "${traces[@]}"; do
  for p in "${policies[@]}"; do
    "$bin" --nodes "$data/openb_node_list_gpu_node.csv" --pods "$data/openb_pod_list_$t.csv" \
      --policy "$p" --seeds "$seeds" --tune "$tune" --json >"$out/$t.$p.json"
  done
done

fmt() { jq -r "$1" "$2"; }
echo "| trace | policy | ours @100 | published @100 | Δ | ours @130 | published @130 | Δ | median run (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for t in "${traces[@]}"; do
  for p in "${policies[@]}"; do
    f=$out/$t.$p.json
    o100=$(fmt '.gpu_alloc_pct_at_100 // empty | . * 100 | round / 100' "$f")
    o130=$(fmt '.gpu_alloc_pct_at_130 // empty | . * 100 | round / 100' "$f")
    ms=$(fmt '[.runs[].elapsed_ms] | sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end | round' "$f")
    if [[ $p == grus ]]; then
      # No published figure: compare with our FGD instead.
      f100=$(fmt '.gpu_alloc_pct_at_100' "$out/$t.fgd.json")
      f130=$(fmt '.gpu_alloc_pct_at_130' "$out/$t.fgd.json")
      d100=$(jq -rn "($o100 - $f100) * 100 | round / 100")
      d130=$(jq -rn "($o130 - $f130) * 100 | round / 100")
      printf '| %s | **grus** | **%.2f** | (vs our FGD) | %+.2f | **%.2f** | (vs our FGD) | %+.2f | %s |\n' \
        "$t" "$o100" "$d100" "$o130" "$d130" "$ms"
    else
      read -r p130 p100 <<<"${published[$t/$p]}"
      printf '| %s | %s | %.2f | %.2f | %+.2f | %.2f | %.2f | %+.2f | %s |\n' "$t" "$p" "$o100" "$p100" \
        "$(jq -rn "$o100 - $p100")" "$o130" "$p130" "$(jq -rn "$o130 - $p130")" "$ms"
    fi
  done
done
fgd_all=$(jq -s '[.[].runs[].elapsed_ms] | sort | .[length / 2 | floor] | round' "$out"/*.fgd.json)
grus_all=$(jq -s '[.[].runs[].elapsed_ms] | sort | .[length / 2 | floor] | round' "$out"/*.grus.json)
echo
echo "Median run time over all traces and seeds: FGD ${fgd_all} ms, grus ${grus_all} ms (release build)."
