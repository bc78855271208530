#!/usr/bin/env bash
# The test command of the README: format check, clippy with warnings as errors, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"

# The api's OIDC tests run a real provider (npm oidc-provider); install it once per checkout.
if [ ! -d testkit/oidc/node_modules ]; then
    npm ci --prefix testkit/oidc --no-audit --no-fund
fi

# The Helm CLI for the chart checks (helm/): installed into a cache once, so the Rust chart test
# (grus-helm-tests) never skips here.
HELM=$(scripts/get-helm.sh | tail -n 1)
export HELM

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked --features grus-api/e2e,grus-e2e/e2e -- -D warnings

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The end-to-end tests (e2e/, and the api's ingest_agent) run the api and agent binaries, and the
# chart test both binaries' --help: build them before the test binaries run (cargo holds the
# target directory while tests run).
cargo build -p grus-api -p grus-agent --locked
cargo test --workspace --locked --features grus-api/e2e,grus-e2e/e2e 2>&1 | tee "$log"

# The charts' CLI checks (helm lint --strict, helm template, schemas): one more `test result:` line.
helm_failed=0
scripts/helm-check.sh 2>&1 | tee -a "$log" || helm_failed=1

# The web portal (portal/): install, codegen check, typecheck, component tests, build, and the
# browser test against a real grus-api when chromium is there. Its counts join cargo's below as
# one more `test result:` line.
portal_failed=0
if [ "${GRUS_SKIP_PORTAL:-0}" != 1 ]; then
  portal_log=$(mktemp)
  trap 'rm -f "$log" "$portal_log"' EXIT
  # `set -e` does not hold inside a subshell tested with || or if: run it plainly.
  set +e
  (
    set -euo pipefail
    cd portal
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      # npm 11's `npm ci` refuses this lock file over rollup's optional per-platform packages
      # ("Missing: @rollup/rollup-android-arm64@"); `npm install` installs the locked versions.
      npm install --no-audit --no-fund
    fi
    npm run --silent codegen >/dev/null
    git diff --exit-code -- src/gql || { echo "portal: src/gql is stale: run npm run codegen and commit" >&2; exit 1; }
    npm run --silent typecheck
    npx vitest run --reporter=default --reporter=json --outputFile="$portal_log"
    npm run --silent build
  )
  [ $? = 0 ] || portal_failed=1
  set -e
  read -r p f s < <(node -e '
    try { const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests) }
    catch { console.log(0, 1, 0) }' "$portal_log")
  # The browser test (portal/e2e/run.mjs, see portal/README.md): the issue's scenario against a
  # real grus-api in OIDC mode, oidc-provider, PostgreSQL, Redis and a sim agent, in chromium.
  # Runs by default; skipped, with the reason, when chromium, redis-server or PostgreSQL is missing
  # (GRUS_PORTAL_BROWSER=0 skips it too).
  browser_skip=""
  if [ "${GRUS_PORTAL_BROWSER:-1}" = 0 ]; then browser_skip="GRUS_PORTAL_BROWSER=0"
  elif [ ! -x /usr/bin/chromium ]; then browser_skip="no /usr/bin/chromium (apt-get install -y chromium)"
  elif ! command -v redis-server >/dev/null; then browser_skip="no redis-server"
  elif ! psql -h 127.0.0.1 -U postgres -qAtc 'SELECT 1' >/dev/null 2>&1; then browser_skip="no PostgreSQL on 127.0.0.1:5432"
  elif [ "$portal_failed" != 0 ]; then browser_skip="the portal's build failed"
  fi
  if [ -z "$browser_skip" ]; then
    cargo build -p grus-api -p grus-agent --locked --features grus-api/e2e
    if (cd portal && node e2e/run.mjs); then p=$((p + 1)); else f=$((f + 1)); portal_failed=1; fi
  else
    echo "portal: browser test skipped: $browser_skip"
    s=$((s + 1))
  fi
  echo "test result: portal. $p passed; $f failed; $s ignored; 0 measured; 0 filtered out" | tee -a "$log"
  [ "$f" = 0 ] || portal_failed=1
fi
# One closing line for the whole workspace (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
[ "$helm_failed" = 0 ] || exit 1
exit "$portal_failed"
