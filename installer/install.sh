#!/bin/sh
# svc installer: what the install snippet runs on a host.
#
#   curl -fsSL https://svc.example.com/downloads/install.sh | sudo sh -s -- \
#     --endpoint https://svc.example.com --agent-token svcen_... [--token svcen_... --mode opamp]
#
# With --agent-token it installs the svc-agent package for this host (deb or rpm,
# checked against the server's SHA256SUMS), writes /etc/svc/config.yaml (mode 0600)
# unless one exists, and enables and starts the svc-agent unit. With --token and
# --mode it installs the collector from its upstream release packages (checked
# against their published SHA-256) and writes its bootstrap files as the server
# renders them: opamp → otelcol-contrib and opampsupervisor, with
# /etc/otel-collector/config.yaml and /etc/opampsupervisor/config.yaml, the
# supervisor unit enabled and started (it runs the collector, so the collector's
# own unit is disabled); rcfg-remotecfg → alloy, with /etc/rcfg-runtime/config.rcfg
# as the CONFIG_FILE of its unit, enabled and started. An installed version is not
# reinstalled and an existing file is not replaced without --force, so running it
# twice changes nothing. Every failure names its step and a hint.
#
# Upstream release assets (read from the release configs, not guessed):
#   open-telemetry/opentelemetry-collector-releases v0.159.0
#     distributions/otelcol-contrib/.goreleaser.yaml, cmd/opampsupervisor/.goreleaser.yaml:
#     nfpm packages named <package>_<version>_linux_<goarch>.{deb,rpm} under the tags
#     v<version> and cmd/opampsupervisor/v<version>; `checksum: split: true` (since
#     v0.158.0, #1582) publishes <asset>.sha256 beside each asset; before, one list:
#     opentelemetry-collector-releases_otelcol-contrib_checksums.txt, checksums.txt.
#   grafana/alloy v1.18.1
#     build-tools/make/packaging.mk: alloy-<version>-1.<goarch>.{deb,rpm};
#     scripts/publish-release-artifacts.sh: one SHA256SUMS per release;
#     packaging/deb/alloy.service reads CONFIG_FILE from /etc/default/alloy
#     (rpm: /etc/sysconfig/alloy), as docs/sources/configure/linux.md describes.
set -eu

# Pinned upstream versions: the newest releases the bootstrap files were checked against.
COLLECTOR_VERSION=0.159.0
ALLOY_VERSION=1.18.1

usage() {
	cat <<EOF
usage: install.sh --endpoint URL [--agent-token TOKEN] [--token TOKEN --mode MODE [--collector-id ID]]
                  [--package-base-url URL] [--collector-version V] [--alloy-version V]
                  [--force] [--dry-run] [--root DIR]

  --endpoint URL       the svc server's public URL (https; http only on loopback)
  --agent-token TOKEN  install svc-agent and enroll it with this agent enrollment token
  --token TOKEN        install the collector and write its bootstrap files, carrying this token
  --mode MODE          opamp (default): OpenTelemetry Collector (OpAMP); rcfg-remotecfg: Alloy (remote config)
  --collector-id ID    the collector the files are for (shown; the token decides)
  --package-base-url URL
                       take the collector packages from URL/<asset>, checked against
                       URL/SHA256SUMS (a mirror, e.g. the server's /downloads/collectors),
                       instead of the upstream GitHub releases
  --collector-version V  otelcol-contrib and opampsupervisor version (default $COLLECTOR_VERSION)
  --alloy-version V    alloy version (default $ALLOY_VERSION)
  --force              replace existing config and bootstrap files
  --dry-run            print what would be done, change nothing
  --root DIR           install into DIR instead of / (images, tests): units are
                       enabled there, not started
EOF
}

say() { printf 'install.sh: %s\n' "$*"; }

# fail STEP HINT MESSAGE...
fail() {
	step=$1 hint=$2
	shift 2
	printf 'install.sh: %s failed: %s\n  hint: %s\n' "$step" "$*" "$hint" >&2
	exit 1
}

ENDPOINT='' AGENT_TOKEN='' TOKEN='' MODE='' COLLECTOR_ID='' FORCE=0 DRY_RUN=0 ROOT='' PACKAGE_BASE_URL=''
while [ $# -gt 0 ]; do
	option=$1
	case $option in
	--force) FORCE=1; shift; continue ;;
	--dry-run) DRY_RUN=1; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	--*=*) value=${option#*=}; option=${option%%=*}; shift ;;
	--endpoint | --agent-token | --token | --mode | --collector-id | --root | --package-base-url | --collector-version | --alloy-version)
		[ $# -ge 2 ] || fail arguments "see install.sh --help" "$option needs a value"
		value=$2; shift 2 ;;
	--*) fail arguments "see install.sh --help" "unknown option $option" ;;
	*) fail arguments "see install.sh --help" "unexpected argument '$option'" ;;
	esac
	case $option in
	--endpoint) ENDPOINT=${value%/} ;;
	--agent-token) AGENT_TOKEN=$value ;;
	--token) TOKEN=$value ;;
	--mode) MODE=$value ;;
	--collector-id) COLLECTOR_ID=$value ;;
	--root) ROOT=${value%/} ;;
	--package-base-url) PACKAGE_BASE_URL=${value%/} ;;
	--collector-version) COLLECTOR_VERSION=$value ;;
	--alloy-version) ALLOY_VERSION=$value ;;
	*) fail arguments "see install.sh --help" "unknown option $option" ;;
	esac
done

# ---- checks before anything changes
[ -n "$ENDPOINT" ] || fail arguments "copy the snippet from the svc UI, or pass --endpoint https://<server>" "--endpoint is required"
case $ENDPOINT in
https://*) ;;
http://localhost | http://localhost:* | http://127.* | http://\[::1\] | http://\[::1\]:*) ;;
*) fail arguments "use the server's https URL (its externalUrl)" "--endpoint $ENDPOINT is not https; tokens would cross the network in the clear" ;;
esac
[ -n "$AGENT_TOKEN" ] || [ -n "$TOKEN" ] || fail arguments "pass --agent-token, --token with --mode, or both" "nothing to do"
if [ -n "$TOKEN" ]; then
	MODE=${MODE:-opamp}
	case $MODE in
	opamp | rcfg-remotecfg) ;;
	*) fail arguments "--mode is opamp or rcfg-remotecfg" "unknown mode '$MODE'" ;;
	esac
elif [ -n "$MODE" ] || [ -n "$COLLECTOR_ID" ]; then
	fail arguments "--mode and --collector-id go with --token" "no collector token given"
fi
for version in "$COLLECTOR_VERSION" "$ALLOY_VERSION"; do
	case $version in
	'' | *[!0-9.]* | .* | *.) fail arguments "versions are like 0.159.0 (no leading v)" "version '$version' is not a release number" ;;
	esac
done
case $PACKAGE_BASE_URL in
'' | https://* | http://localhost | http://localhost[:/]* | http://127.* | http://\[::1\] | http://\[::1\][:/]*) ;;
*) fail arguments "use an https mirror, or the server's $ENDPOINT/downloads/collectors" "--package-base-url $PACKAGE_BASE_URL is not https" ;;
esac
if [ "$DRY_RUN" -eq 0 ] && [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ]; then
	fail permissions "run it with sudo, as the snippet does" "install.sh must run as root"
fi
command -v curl >/dev/null 2>&1 || fail prerequisites "install curl (apt-get install curl / dnf install curl)" "curl is not installed"

for token in "$AGENT_TOKEN" "$TOKEN"; do
	case $token in
	*[!A-Za-z0-9_]*) fail arguments "copy the token again; tokens are letters, digits and _" "a token holds other characters" ;;
	esac
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# fetch URL OUT [TOKEN]: the token goes to curl on stdin, never on its command line,
# and a request that carries one does not follow redirects.
fetch() {
	if [ -n "${3:-}" ]; then
		printf 'header = "Authorization: Bearer %s"\n' "$3" | curl -fsS --proto '=https,http' --retry 3 -K - -o "$2" "$1"
	else
		# GitHub answers release downloads with a redirect to its storage host.
		curl -fsSL --proto '=https,http' --proto-redir '=https' --retry 3 -o "$2" "$1"
	fi
}

# act DESCRIPTION COMMAND...: runs the command, or under --dry-run only says which.
act() {
	description=$1
	shift
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would run: $*"
	else
		say "$description"
		"$@"
	fi
}

CHANGED=0

# place_file PATH MODE TOKEN: writes the server's rendering of PATH for TOKEN,
# unless the file exists (then only reported, or replaced with --force).
place_file() {
	path=$1 mode=$2 token=$3
	target=$ROOT$path
	if [ -e "$target" ] && [ "$FORCE" -eq 0 ]; then
		say "kept $path: it exists (use --force to replace it)"
		return 0
	fi
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would write $path (mode $mode) from $ENDPOINT/v1/bootstrap"
		return 0
	fi
	fresh=$WORK/file
	fetch "$ENDPOINT/v1/bootstrap?file=$path" "$fresh" "$token" ||
		fail "fetching $path" "check the token is live (tokens expire; opamp tokens are single-use) and that the server's externalUrl is set" "the server refused or could not be reached"
	if [ -e "$target" ] && cmp -s "$fresh" "$target"; then
		say "kept $path: unchanged"
		return 0
	fi
	mkdir -p "$(dirname "$target")"
	chmod "$mode" "$fresh"
	mv -f "$fresh" "$target" || fail "writing $path" "check the disk is writable" "could not write $target"
	say "wrote $path (mode $mode)"
	CHANGED=1
}

# ---- svc-agent
install_agent() {
	if command -v dpkg >/dev/null 2>&1; then
		kind=deb
		arch=$(dpkg --print-architecture)
		pattern="svc-agent_*_$arch.deb"
		installed=$(dpkg-query ${ROOT:+--admindir="$ROOT/var/lib/dpkg"} -W -f '${Status} ${Version}' svc-agent 2>/dev/null | sed -n 's/^install ok installed //p') || installed=''
	elif command -v rpm >/dev/null 2>&1; then
		kind=rpm
		arch=$(uname -m)
		pattern="svc-agent-*.$arch.rpm"
		installed=$(rpm ${ROOT:+--root="$ROOT"} -q --qf '%{VERSION}' svc-agent 2>/dev/null) || installed=''
	else
		fail "detecting the package manager" "svc-agent ships as deb and rpm; on other systems use the container image" "neither dpkg nor rpm was found"
	fi

	sums=$WORK/SHA256SUMS
	fetch "$ENDPOINT/downloads/SHA256SUMS" "$sums" ||
		fail "fetching SHA256SUMS" "check $ENDPOINT is reachable from this host and serves /downloads/ (downloads.dir on the server)" "could not download $ENDPOINT/downloads/SHA256SUMS"
	line=$(awk -v pattern="$pattern" '
		{ name = $2; sub(/^\*/, "", name); p = pattern; gsub(/\./, "\\.", p); gsub(/\*/, "[^/]*", p)
		  if (name ~ ("^" p "$")) print $1, name }' "$sums" | tail -n 1)
	[ -n "$line" ] || fail "choosing the package" "the server has no $pattern; build it with bun run package and put it in downloads.dir" "no package for $kind/$arch"
	sum=${line%% *} package=${line#* }
	case $kind in
	deb) version=${package#svc-agent_}; version=${version%_"$arch".deb} ;;
	rpm) version=${package#svc-agent-}; version=${version%."$arch".rpm} ;;
	esac

	place_file /etc/svc/config.yaml 600 "$AGENT_TOKEN"

	if [ "$installed" = "$version" ]; then
		say "kept svc-agent $version: already installed"
	elif [ "$DRY_RUN" -eq 1 ]; then
		say "would install $package (svc-agent ${installed:+$installed → }$version)"
	else
		fetch "$ENDPOINT/downloads/$package" "$WORK/$package" ||
			fail "downloading $package" "check $ENDPOINT is reachable from this host" "could not download $ENDPOINT/downloads/$package"
		got=$(sha256sum "$WORK/$package" | cut -d ' ' -f 1)
		[ "$got" = "$sum" ] || fail "checking $package" "download again; if it persists the server's downloads.dir holds a damaged file" "SHA-256 is $got, SHA256SUMS says $sum"
		case $kind in
		deb) act "installing $package" dpkg ${ROOT:+--root="$ROOT" --force-script-chrootless} -i "$WORK/$package" ||
			fail "installing $package" "read dpkg's message above" "dpkg -i failed" ;;
		rpm) act "installing $package" rpm ${ROOT:+--root="$ROOT"} -U "$WORK/$package" ||
			fail "installing $package" "read rpm's message above" "rpm -U failed" ;;
		esac
		CHANGED=1
	fi

	start_unit svc-agent.service "/usr/local/bin/svc-agent --config /etc/svc/config.yaml"
}

# ---- collector packages
# The host's package kind and the architecture in upstream asset names (goarch).
package_platform() {
	if command -v dpkg >/dev/null 2>&1; then
		PKG_KIND=deb
		machine=$(dpkg --print-architecture)
	elif command -v rpm >/dev/null 2>&1; then
		PKG_KIND=rpm
		machine=$(uname -m)
	else
		fail "detecting the package manager" "the collectors ship as deb and rpm; on other systems install them by hand" "neither dpkg nor rpm was found"
	fi
	case $machine in
	amd64 | x86_64) PKG_ARCH=amd64 ;;
	arm64 | aarch64) PKG_ARCH=arm64 ;;
	*) fail "detecting the architecture" "install.sh installs collectors on amd64 and arm64; install them by hand" "unsupported architecture $machine" ;;
	esac
}

# installed_version PACKAGE: the installed version, empty when it is not installed.
installed_version() {
	case $PKG_KIND in
	deb) dpkg-query ${ROOT:+--admindir="$ROOT/var/lib/dpkg"} -W -f '${Status} ${Version}' "$1" 2>/dev/null | sed -n 's/^install ok installed //p' ;;
	rpm) rpm ${ROOT:+--root="$ROOT"} -q --qf '%{VERSION}' "$1" 2>/dev/null ;;
	esac || true
}

# expected_sum ASSET SOURCE: the SHA-256 of ASSET from SOURCE, a SHA256SUMS list or
# (upstream collector releases) the asset's own .sha256 file; sets SUM, empty when
# SOURCE names none.
expected_sum() {
	asset=$1 source=$2 list=$WORK/sums
	fetch "$source" "$list" ||
		fail "fetching the checksum of $asset" "check this host reaches $source, or mirror the packages and pass --package-base-url" "could not download $source"
	case $source in
	*.sha256) SUM=$(awk 'NR == 1 { print $1 }' "$list") ;;
	*) SUM=$(awk -v asset="$asset" '{ name = $2; sub(/^\*/, "", name); if (name == asset) print $1 }' "$list" | tail -n 1) ;;
	esac
	case $SUM in
	*[!0-9a-f]*) SUM='' ;;
	esac
	[ ${#SUM} -eq 64 ] || SUM=''
}

# install_package PACKAGE VERSION ASSET URL SUMS_URL: installs ASSET from URL unless
# VERSION of PACKAGE is installed, after checking its SHA-256 against SUMS_URL.
install_package() {
	name=$1 want=$2 asset=$3 url=$4 sums_url=$5
	have=$(installed_version "$name")
	# deb versions carry the package revision (alloy's is 1.18.1-1); rpm %{VERSION} does not.
	case $have in
	"$want" | "$want"-[0-9]*)
		say "kept $name $have: already installed"
		return 0 ;;
	esac
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would download $url, check its SHA-256 against $sums_url, and install $name ${have:+$have → }$want"
		return 0
	fi
	expected_sum "$asset" "$sums_url"
	[ -n "$SUM" ] || fail "checking $asset" "the mirror's SHA256SUMS must list $asset; check --package-base-url and the version" "$sums_url names no SHA-256 for $asset"
	fetch "$url" "$WORK/$asset" ||
		fail "downloading $asset" "check this host reaches $url (a proxy?), or mirror the packages and pass --package-base-url" "could not download $url"
	got=$(sha256sum "$WORK/$asset" | cut -d ' ' -f 1)
	[ "$got" = "$SUM" ] || fail "checking $asset" "download again; if it persists the mirror holds a damaged file" "SHA-256 is $got, $sums_url says $SUM"
	# In another root the packages' maintainer scripts (users, units) run inside it
	# (dpkg chroots), never on this host: they are not written for DPKG_ROOT.
	case $PKG_KIND in
	deb) act "installing $asset" dpkg ${ROOT:+--root="$ROOT"} --force-confold -i "$WORK/$asset" ||
		fail "installing $asset" "read dpkg's message above${ROOT:+; with --root the packages' scripts run in $ROOT, which needs /bin/sh}" "dpkg -i failed" ;;
	rpm) act "installing $asset" rpm ${ROOT:+--root="$ROOT"} -U "$WORK/$asset" ||
		fail "installing $asset" "read rpm's message above" "rpm -U failed" ;;
	esac
	CHANGED=1
}

# split_checksums VERSION: whether that collector release has one <asset>.sha256 per
# asset (v0.158.0 on, #1582) rather than one checksums file.
split_checksums() {
	major=${1%%.*} minor=${1#*.}
	minor=${minor%%.*}
	[ "$major" -gt 0 ] || [ "$minor" -ge 158 ]
}

# collector_package PACKAGE VERSION: where the upstream release (or the mirror) keeps it.
collector_package() {
	name=$1 version=$2
	case $name in
	alloy)
		asset="alloy-$version-1.$PKG_ARCH.$PKG_KIND"
		release="https://github.com/grafana/alloy/releases/download/v$version"
		sums="$release/SHA256SUMS" ;;
	otelcol-contrib)
		asset="${name}_${version}_linux_$PKG_ARCH.$PKG_KIND"
		release="https://github.com/open-telemetry/opentelemetry-collector-releases/releases/download/v$version"
		sums="$release/$asset.sha256"
		split_checksums "$version" || sums="$release/opentelemetry-collector-releases_otelcol-contrib_checksums.txt" ;;
	opampsupervisor)
		asset="${name}_${version}_linux_$PKG_ARCH.$PKG_KIND"
		release="https://github.com/open-telemetry/opentelemetry-collector-releases/releases/download/cmd%2Fopampsupervisor%2Fv$version"
		sums="$release/$asset.sha256"
		split_checksums "$version" || sums="$release/checksums.txt" ;;
	esac
	if [ -n "$PACKAGE_BASE_URL" ]; then
		release=$PACKAGE_BASE_URL sums="$PACKAGE_BASE_URL/SHA256SUMS"
	fi
	install_package "$name" "$version" "$asset" "$release/$asset" "$sums"
}

# service_group PATH GROUP: the file's group becomes GROUP (the service user's), so the
# service reads a file that stays closed to others. Looked up in the root it runs in.
service_group() {
	path=$1 group=$2
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would give $path to group $group"
		return 0
	fi
	if [ -n "$ROOT" ]; then
		gid=$(awk -F: -v group="$group" '$1 == group { print $3 }' "$ROOT/etc/group" 2>/dev/null) || gid=''
	else
		gid=$(getent group "$group" | cut -d: -f3) || gid=''
	fi
	if [ -z "$gid" ]; then
		say "left $path to root: there is no group $group (the package creates it); the service cannot read it until it is chgrp $group"
		return 0
	fi
	[ "$(stat -c %g "$ROOT$path")" = "$gid" ] && return 0
	chown "0:$gid" "$ROOT$path" || fail "setting the group of $path" "check the disk is writable" "chown failed"
	say "gave $path to group $group"
}

# point_alloy_config: the alloy unit runs `alloy run $CONFIG_FILE`, CONFIG_FILE coming
# from its environment file; point it at the bootstrap file.
point_alloy_config() {
	case $PKG_KIND in deb) env_file=/etc/default/alloy ;; rpm) env_file=/etc/sysconfig/alloy ;; esac
	wanted='CONFIG_FILE="/etc/rcfg-runtime/config.rcfg"'
	if [ -e "$ROOT$env_file" ] && grep -qx "$wanted" "$ROOT$env_file"; then
		say "kept $env_file: CONFIG_FILE is /etc/rcfg-runtime/config.rcfg"
		return 0
	fi
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would set $wanted in $env_file"
		return 0
	fi
	edited=$WORK/alloy.env
	if [ -e "$ROOT$env_file" ]; then
		awk -v wanted="$wanted" '/^CONFIG_FILE=/ { if (!done) print wanted; done = 1; next } { print } END { if (!done) print wanted }' "$ROOT$env_file" >"$edited"
		chmod "$(stat -c %a "$ROOT$env_file")" "$edited"
	else
		printf '%s\n' "$wanted" >"$edited"
		mkdir -p "$(dirname "$ROOT$env_file")"
	fi
	mv -f "$edited" "$ROOT$env_file" || fail "writing $env_file" "check the disk is writable" "could not write $ROOT$env_file"
	say "set $wanted in $env_file"
	CHANGED=1
}

# start_unit UNIT COMMAND: enabled, and (re)started on this system; only enabled in
# another root. Without systemd, says to run COMMAND.
start_unit() {
	unit=$1 command=$2
	if [ -n "$ROOT" ]; then
		act "enabling $unit in $ROOT (not started: not this system's root)" systemctl --root="$ROOT" enable "$unit" ||
			fail "enabling $unit" "run systemctl --root=$ROOT enable $unit" "systemctl failed"
	elif [ ! -d /run/systemd/system ]; then
		say "systemd is not running here: start it with $command"
	else
		act "enabling $unit" systemctl enable "$unit" ||
			fail "enabling $unit" "see systemctl status $unit" "systemctl enable failed"
		if [ "$CHANGED" -eq 1 ]; then
			act "restarting $unit" systemctl restart "$unit" ||
				fail "starting $unit" "see journalctl -u $unit" "systemctl restart failed"
		else
			act "starting $unit if it is stopped" systemctl start "$unit" ||
				fail "starting $unit" "see journalctl -u $unit" "systemctl start failed"
		fi
	fi
}

# stop_unit UNIT: disabled (and stopped on this system), when it is enabled.
stop_unit() {
	unit=$1
	if [ -n "$ROOT" ]; then
		# Offline, disabling a unit that is not enabled changes nothing.
		act "disabling $unit in $ROOT" systemctl --root="$ROOT" disable "$unit" ||
			fail "disabling $unit" "run systemctl --root=$ROOT disable $unit" "systemctl failed"
	elif [ -d /run/systemd/system ]; then
		systemctl is-enabled --quiet "$unit" 2>/dev/null || systemctl is-active --quiet "$unit" 2>/dev/null || return 0
		act "disabling and stopping $unit" systemctl disable --now "$unit" ||
			fail "disabling $unit" "see systemctl status $unit" "systemctl disable --now failed"
	fi
}

# ---- the collector: packages, bootstrap files, unit
install_collector() {
	say "collector for ${COLLECTOR_ID:-a new collector} ($MODE)"
	package_platform
	CHANGED=0
	case $MODE in
	opamp)
		collector_package otelcol-contrib "$COLLECTOR_VERSION"
		collector_package opampsupervisor "$COLLECTOR_VERSION"
		# The supervisor runs the collector; the package's own unit would run a second one.
		stop_unit otelcol-contrib.service
		place_file /etc/otel-collector/config.yaml 640 "$TOKEN"
		place_file /etc/opampsupervisor/config.yaml 640 "$TOKEN"
		service_group /etc/otel-collector/config.yaml opampsupervisor
		service_group /etc/opampsupervisor/config.yaml opampsupervisor
		start_unit opampsupervisor.service "/usr/bin/opampsupervisor --config=/etc/opampsupervisor/config.yaml"
		say "the supervisor enrolls with the token in /etc/opampsupervisor/config.yaml and runs /usr/bin/otelcol-contrib"
		;;
	rcfg-remotecfg)
		collector_package alloy "$ALLOY_VERSION"
		place_file /etc/rcfg-runtime/config.rcfg 640 "$TOKEN"
		service_group /etc/rcfg-runtime/config.rcfg alloy
		point_alloy_config
		start_unit alloy.service "/usr/bin/alloy run --storage.path=/var/lib/alloy/data /etc/rcfg-runtime/config.rcfg"
		say "alloy runs /etc/rcfg-runtime/config.rcfg and polls $ENDPOINT for its pipeline"
		;;
	esac
}

[ "$DRY_RUN" -eq 0 ] || say "dry run: nothing will be changed"
[ -z "$AGENT_TOKEN" ] || install_agent
[ -z "$TOKEN" ] || install_collector
say "done"
