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
  [go]=golang-go # test/yamlv3: rendered otelcol YAML decoded by Go's yaml.v3, as the collector does
)

# source directory → Debian package that provides it (libraries have no command)
declare -A NEEDED_DIRS=(
  [/usr/share/gocode/src/gopkg.in/yaml.v3]=golang-gopkg-yaml.v3-dev # test/yamlv3, built offline from this GOPATH
  [/usr/share/gocode/src/github.com/prometheus/common/model]=golang-github-prometheus-common-dev # test/upstream/durations: Prometheus' own duration parser
)

missing=()
for cmd in "${!NEEDED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEEDED[$cmd]}")
done
for dir in "${!NEEDED_DIRS[@]}"; do
  [ -d "$dir" ] || missing+=("${NEEDED_DIRS[$dir]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]}; install them with your package manager (as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
