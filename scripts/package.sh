#!/usr/bin/env bash
# Builds the svc packages (`bun run package`) from binaries compiled here:
#   svc-agent_<version>_<arch>.deb, svc-agent-<version>.<rpmarch>.rpm and their SHA256SUMS,
#   svc-server_<version>_<arch>.deb and svc-server-<version>.<rpmarch>.rpm, which carry those
#   agent packages and SHA256SUMS in /usr/share/svc-server/downloads/ so the server can hand
#   them out under /downloads/.
# Options:
#   --arch amd64|arm64|all   the architectures to build (default all)
#   --out DIR                where the packages go (default dist/packages)
#   --no-server              the agent packages only
# The version is package.json's unless SVC_PACKAGE_VERSION is set (package metadata only:
# the binaries report package.json's). Needs dpkg-deb and rpmbuild (scripts/system-deps.sh
# installs them). packaging/README.md describes the packages.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BUN=$REPO/node_modules/.bin/bun
MAINTAINER="svc maintainers <maintainers@svc.invalid>"
# gzip at level 6 on both: every dpkg and rpm reads it, and a 100 MB binary packs in
# seconds (xz and zstd -19 take over a minute for a few MB less).
DEB_COMPRESSION=(-Zgzip -z6)
RPM_PAYLOAD=w6.gzdio

die() {
  echo "package.sh: $*" >&2
  exit 1
}

arches=(amd64 arm64)
outdir=dist/packages
server=true
while [ $# -gt 0 ]; do
  case "$1" in
    --arch)
      case "${2:-}" in
        amd64 | arm64) arches=("$2") ;;
        all) arches=(amd64 arm64) ;;
        *) die "--arch takes amd64, arm64 or all, not '${2:-}'" ;;
      esac
      shift 2
      ;;
    --out) outdir="${2:?--out needs a directory}"; shift 2 ;;
    --no-server) server=false; shift ;;
    *) die "unknown argument $1 (use --arch amd64|arm64|all, --out DIR, --no-server)" ;;
  esac
done

version=${SVC_PACKAGE_VERSION:-$("$BUN" -e 'console.log(require("./package.json").version)')}
# One version string both formats accept as is: no '-' (rpm forbids it, dpkg reads a revision).
[[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
  die "version '$version' must start with a digit and hold only letters, digits, '.', '+' and '~'"
for tool in dpkg-deb rpmbuild sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing; install it with: bash scripts/system-deps.sh"
done

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/svc-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

bun_target() { case $1 in amd64) echo bun-linux-x64 ;; arm64) echo bun-linux-arm64 ;; esac; }
rpm_arch() { case $1 in amd64) echo x86_64 ;; arm64) echo aarch64 ;; esac; }

# Prints what was built ($1, or the label $3), its size and the time since $2 (epoch ms).
built() {
  local size
  size=$(stat -c %s "$1")
  echo "package.sh: built ${3:-${1#"$REPO"/}} ($((size / 1048576)) MiB, $(($(date +%s%3N) - $2)) ms)"
}

# A maintainer script with packaging/unit-helpers.sh spliced in at #UNIT_HELPERS#.
maintainer_script() {
  sed -e "/^#UNIT_HELPERS#\$/{r packaging/unit-helpers.sh" -e "d}" "$1" >"$2"
  chmod 0755 "$2"
}

# deb from a staged tree: control fields filled in, maintainer scripts, dpkg-deb.
build_deb() {
  local name=$1 arch=$2 tree=$3 start
  start=$(date +%s%3N)
  mkdir -p "$tree/DEBIAN"
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$MAINTAINER/" \
    -e "s/@INSTALLED_SIZE@/$(du -sk --exclude=DEBIAN "$tree" | cut -f1)/" \
    "packaging/deb/$name/control" >"$tree/DEBIAN/control"
  for script in preinst postinst prerm postrm; do
    maintainer_script "packaging/deb/$name/$script" "$tree/DEBIAN/$script"
  done
  local deb="$outdir/${name}_${version}_${arch}.deb"
  dpkg-deb --root-owner-group "${DEB_COMPRESSION[@]}" --build "$tree" "$deb" >/dev/null
  built "$deb" "$start"
}

# The files both agent packages ship; $2 is the systemd unit directory of the format.
stage_agent() {
  local tree=$1 unitdir=$2 binary=$3
  install -D -m 0755 "$binary" "$tree/usr/local/bin/svc-agent"
  install -D -m 0644 systemd/svc-agent.service "$tree$unitdir/svc-agent.service"
  install -D -m 0644 installer/templates/agent-config.yaml "$tree/usr/share/svc-agent/config.yaml.example"
  install -m 0644 installer/templates/otelcol-bootstrap.yaml installer/templates/supervisor.yaml \
    installer/templates/alloy-bootstrap.alloy "$tree/usr/share/svc-agent/"
  install -D -m 0644 packaging/copyright "$tree/usr/share/doc/svc-agent/copyright"
}

# rpm from a staged tree and packaging/rpm/<name>.spec.
build_rpm() {
  local name=$1 arch=$2 tree=$3 start
  start=$(date +%s%3N)
  local rpm="$outdir/$name-$version.$(rpm_arch "$arch").rpm"
  rpmbuild -bb --quiet --target "$(rpm_arch "$arch")" \
    --define "_topdir $work/rpmbuild" --define "_sourcedir $REPO/packaging" \
    --define "_rpmdir $outdir" --define "_build_name_fmt %%{NAME}-%%{VERSION}.%%{ARCH}.rpm" \
    --define "_binary_payload $RPM_PAYLOAD" \
    --define "pkgversion $version" --define "stage $tree" \
    "packaging/rpm/$name.spec" >"$work/rpmbuild-$name-$arch.log" 2>&1 ||
    die "rpmbuild failed for $name $arch:
$(cat "$work/rpmbuild-$name-$arch.log")"
  built "$rpm" "$start"
}

agent_packages=()
for arch in "${arches[@]}"; do
  start=$(date +%s%3N)
  binary="$work/svc-agent-$arch"
  bash scripts/build-agent.sh --target "$(bun_target "$arch")" --outfile "$binary" >/dev/null
  built "$binary" "$start" "svc-agent binary for $arch"
  stage_agent "$work/deb-agent-$arch" /lib/systemd/system "$binary"
  stage_agent "$work/rpm-agent-$arch" /usr/lib/systemd/system "$binary"
  # Compression is single-threaded: the deb and the rpm pack side by side.
  build_deb svc-agent "$arch" "$work/deb-agent-$arch" &
  deb_job=$!
  build_rpm svc-agent "$arch" "$work/rpm-agent-$arch"
  wait "$deb_job"
  agent_packages+=("svc-agent_${version}_$arch.deb" "svc-agent-$version.$(rpm_arch "$arch").rpm")
done
(cd "$outdir" && sha256sum "${agent_packages[@]}" >SHA256SUMS)
echo "package.sh: wrote ${outdir#"$REPO"/}/SHA256SUMS"

$server || exit 0

# The files both server packages ship; $2 is the systemd unit directory of the format.
stage_server() {
  local tree=$1 unitdir=$2 binary=$3 file
  install -D -m 0755 "$binary" "$tree/usr/local/bin/svc-server"
  install -D -m 0644 systemd/svc-server.service "$tree$unitdir/svc-server.service"
  install -D -m 0644 packaging/svc-server.sysusers.conf "$tree/usr/lib/sysusers.d/svc-server.conf"
  install -D -m 0644 packaging/copyright "$tree/usr/share/doc/svc-server/copyright"
  mkdir -p "$tree/usr/share/svc-server/downloads"
  for file in "${agent_packages[@]}" SHA256SUMS; do
    install -m 0644 "$outdir/$file" "$tree/usr/share/svc-server/downloads/"
  done
}

for arch in "${arches[@]}"; do
  start=$(date +%s%3N)
  # The flags of package.json's "build" script, for this architecture.
  "$BUN" build --compile --minify --sourcemap --target "$(bun_target "$arch")" server/main.ts server/ottl/dryrun-worker.ts server/rollout/drift-worker.ts server/rollout/render-worker.ts \
    --outfile "$work/svc-server-$arch" >/dev/null
  built "$work/svc-server-$arch" "$start" "svc-server binary for $arch"
  stage_server "$work/deb-server-$arch" /lib/systemd/system "$work/svc-server-$arch"
  stage_server "$work/rpm-server-$arch" /usr/lib/systemd/system "$work/svc-server-$arch"
  build_deb svc-server "$arch" "$work/deb-server-$arch" &
  deb_job=$!
  build_rpm svc-server "$arch" "$work/rpm-server-$arch"
  wait "$deb_job"
done
