#!/usr/bin/env bash
# The test command of the README: format check, clippy with warnings as errors, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"

# The api's OIDC tests run a real provider (npm oidc-provider); install it once per checkout.
if [ ! -d api/tests/oidc/node_modules ]; then
    npm ci --prefix api/tests/oidc --no-audit --no-fund
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked --features grus-api/e2e -- -D warnings

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The api's end-to-end tests run the agent binary: build it before the test binaries run.
cargo build -p grus-agent --locked
cargo test --workspace --locked --features grus-api/e2e 2>&1 | tee "$log"
# One closing line for the whole workspace (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
