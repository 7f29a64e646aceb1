#!/bin/sh
# svc installer: what the install snippet runs on a host.
#
#   curl -fsSL https://svc.example.com/downloads/install.sh | sudo sh -s -- \
#     --endpoint https://svc.example.com --agent-token svcen_... [--token svcen_... --mode opamp]
#
# With --agent-token it installs the svc-agent package for this host (deb or rpm,
# checked against the server's SHA256SUMS), writes /etc/svc/config.yaml (mode 0600)
# unless one exists, and enables and starts the svc-agent unit. With --token and
# --mode it writes the collector's bootstrap files as the server renders them:
# opamp → /etc/otel-collector/config.yaml and /etc/opampsupervisor/config.yaml,
# rcfg-remotecfg → /etc/rcfg-runtime/config.rcfg. It never installs or configures
# the collector itself, and never replaces an existing file without --force.
# Running it twice changes nothing. Every failure names its step and a hint.
set -eu

usage() {
	cat <<'EOF'
usage: install.sh --endpoint URL [--agent-token TOKEN] [--token TOKEN --mode MODE [--collector-id ID]]
                  [--force] [--dry-run] [--root DIR]

  --endpoint URL       the svc server's public URL (https; http only on loopback)
  --agent-token TOKEN  install svc-agent and enroll it with this agent enrollment token
  --token TOKEN        write the collector's bootstrap files, carrying this token
  --mode MODE          opamp (Runtime O, default) or rcfg-remotecfg (Runtime R)
  --collector-id ID    the collector the files are for (shown; the token decides)
  --force              replace existing config and bootstrap files
  --dry-run            print what would be done, change nothing
  --root DIR           install into DIR instead of / (images, tests): the unit is
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

ENDPOINT='' AGENT_TOKEN='' TOKEN='' MODE='' COLLECTOR_ID='' FORCE=0 DRY_RUN=0 ROOT=''
while [ $# -gt 0 ]; do
	option=$1
	case $option in
	--force) FORCE=1; shift; continue ;;
	--dry-run) DRY_RUN=1; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	--*=*) value=${option#*=}; option=${option%%=*}; shift ;;
	--endpoint | --agent-token | --token | --mode | --collector-id | --root)
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

# fetch URL OUT [TOKEN]: the token goes to curl on stdin, never on its command line.
fetch() {
	if [ -n "${3:-}" ]; then
		printf 'header = "Authorization: Bearer %s"\n' "$3" | curl -fsS --proto '=https,http' --retry 3 -K - -o "$2" "$1"
	else
		curl -fsS --proto '=https,http' --retry 3 -o "$2" "$1"
	fi
}

# act DESCRIPTION COMMAND...: runs the command, or only says it under --dry-run.
act() {
	description=$1
	shift
	if [ "$DRY_RUN" -eq 1 ]; then
		say "would $description"
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

	if [ -n "$ROOT" ]; then
		act "enabling svc-agent.service in $ROOT (not started: not this system's root)" systemctl --root="$ROOT" enable svc-agent.service ||
			fail "enabling svc-agent.service" "run systemctl --root=$ROOT enable svc-agent.service" "systemctl failed"
	elif [ ! -d /run/systemd/system ]; then
		say "systemd is not running here: start the agent with /usr/local/bin/svc-agent --config /etc/svc/config.yaml"
	else
		act "enabling svc-agent.service" systemctl enable svc-agent.service ||
			fail "enabling svc-agent.service" "see systemctl status svc-agent" "systemctl enable failed"
		if [ "$CHANGED" -eq 1 ]; then
			act "restarting svc-agent.service" systemctl restart svc-agent.service ||
				fail "starting svc-agent.service" "see journalctl -u svc-agent" "systemctl restart failed"
		else
			act "starting svc-agent.service if it is stopped" systemctl start svc-agent.service ||
				fail "starting svc-agent.service" "see journalctl -u svc-agent" "systemctl start failed"
		fi
	fi
}

# ---- collector bootstrap files
write_bootstrap() {
	say "collector bootstrap for ${COLLECTOR_ID:-a new collector} ($MODE)"
	case $MODE in
	opamp)
		place_file /etc/otel-collector/config.yaml 640 "$TOKEN"
		place_file /etc/opampsupervisor/config.yaml 640 "$TOKEN"
		say "next: install the OpenTelemetry Collector and its OpAMP supervisor, and start the supervisor; it enrolls with the token in /etc/opampsupervisor/config.yaml"
		;;
	rcfg-remotecfg)
		place_file /etc/rcfg-runtime/config.rcfg 640 "$TOKEN"
		say "next: start the Runtime R collector with /etc/rcfg-runtime/config.rcfg; it polls $ENDPOINT for its pipeline"
		;;
	esac
}

[ "$DRY_RUN" -eq 0 ] || say "dry run: nothing will be changed"
[ -z "$AGENT_TOKEN" ] || install_agent
[ -z "$TOKEN" ] || write_bootstrap
say "done"
