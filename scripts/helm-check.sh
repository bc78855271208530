#!/usr/bin/env bash
# The Helm charts' CLI checks (scripts/test.sh runs this): `helm lint --strict` and
# `helm template` of each chart with its required values and with its example values, and the
# schemas refusing bad values. Ends with one `test result: helm. ...` line, like cargo's.
# The manifests' types and flags are checked by the Rust test `grus-helm-tests` (helm/tests).
set -uo pipefail
cd "$(dirname "$0")/.."
helm="${HELM:-$(scripts/get-helm.sh | tail -n 1)}" || { echo "test result: helm. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out"; exit 1; }

passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# check NAME EXPECTED COMMAND...: runs the command, which must succeed (EXPECTED=ok) or fail
# with PATTERN in its output (EXPECTED=fail:PATTERN), so it fails for the reason tested.
check() {
  local name=$1 expect=${2%%:*} pattern=${2#*:}
  shift 2
  if "$@" >"$out" 2>&1; then got=ok; else got=fail; fi
  if [ "$got" = fail ] && ! grep -qF -- "$pattern" "$out"; then got="fail without \`$pattern\`"; fi
  if [ "$got" = "$expect" ]; then
    passed=$((passed + 1))
    echo "helm: $name ... ok"
  else
    failed=$((failed + 1))
    echo "helm: $name ... FAILED (expected $expect)"
    sed 's/^/    /' "$out" | tail -n 30
  fi
}

cp_required=(--set oidc.issuer=https://sso.example.com/realms/research --set oidc.audience=grus
             --set database.existingSecret=grus-postgres --set redis.existingSecret=grus-redis)
agent_required=(--set cluster.id=east --set redis.url=redis://redis.example.com:6379)

for chart in grus-control-plane grus-agent; do
  dir=helm/$chart
  if [ "$chart" = grus-control-plane ]; then
    required=("${cp_required[@]}") missing=/oidc/issuer
  else
    required=("${agent_required[@]}") missing=/cluster/id
  fi
  example=$(ls "$dir"/examples/*.yaml | head -n 1)
  check "$chart lint --strict (required values)" ok "$helm" lint --strict "$dir" "${required[@]}"
  check "$chart lint --strict ($example)" ok "$helm" lint --strict "$dir" -f "$example"
  check "$chart template (required values)" ok "$helm" template grus "$dir" --include-crds "${required[@]}"
  check "$chart template ($example)" ok "$helm" template grus "$dir" --include-crds -f "$example"
  # Fails closed: the defaults alone lack the required values.
  check "$chart template (defaults only) is refused" "fail:$missing" "$helm" template grus "$dir"
  check "$chart schema refuses an unknown key" "fail:additional properties 'no' not allowed" "$helm" template grus "$dir" "${required[@]}" --set no.such.key=1
done
check "grus-control-plane schema refuses a wrong type" "fail:/replicaCount" \
  "$helm" template grus helm/grus-control-plane "${cp_required[@]}" --set replicaCount=two
check "grus-agent schema refuses a wrong type" "fail:/node/enabled" \
  "$helm" template grus helm/grus-agent "${agent_required[@]}" --set node.enabled=maybe

echo "test result: helm. $passed passed; $failed failed; 0 ignored; 0 measured; 0 filtered out"
[ "$failed" = 0 ]
