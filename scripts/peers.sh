#!/usr/bin/env bash
# Builds the real peers the tests run against (test/peers: the OpenTelemetry
# Collector distribution, the OpAMP supervisor, the scripted opamp-go client and
# the small Go checkers; its nested modules test/peers/alloy: Alloy's
# remote-config client and syntax checker, and test/peers/ferretdb: FerretDB)
# into test/peers/bin, from the Go module proxy at the versions each module's
# go.sum pins. scripts/test.sh runs it before `bun test`, so no test builds anything.
# Go's own module and build caches make a second run take seconds.
set -euo pipefail
cd "$(dirname "$0")/../test/peers"

# Go 1.26.5 or newer (Alloy's syntax module needs it): the one on PATH, else the official install's.
go_version_ok() { "$1" env GOVERSION 2>/dev/null | grep -Eq '^go1\.(26\.([5-9]|[1-9][0-9])|2[7-9]|[3-9][0-9])(\.|$|[a-z])'; }
go=""
for candidate in "$(command -v go || true)" /usr/local/go/bin/go; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && go_version_ok "$candidate"; then go=$candidate; break; fi
done
if [ -z "$go" ]; then
  echo "peers: Go 1.26.5 or newer is needed to build test/peers (none on PATH nor at /usr/local/go/bin/go); install it, then run: bash scripts/peers.sh" >&2
  exit 1
fi

# Go needs somewhere for its caches; some CI shells have no HOME.
if [ -z "${HOME:-}" ]; then
  export GOPATH="${GOPATH:-${TMPDIR:-/tmp}/svc-gopath}" GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/svc-go-build}"
fi
# go.sum already holds every module's hash, so the build never asks the checksum database;
# -mod=readonly refuses to change go.mod or go.sum behind the developer's back.
export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
"$go" build -trimpath -o bin/ \
  ./otelcol-svc ./opampclient ./yamlv3 ./promtext ./durations \
  github.com/open-telemetry/opentelemetry-collector-contrib/cmd/opampsupervisor
# Nested modules of their own: Alloy's pins (golang.org/x/sys among them) and FerretDB's
# dependencies would move the collector's.
"$go" -C alloy build -trimpath -o ../bin/ ./alloy-remotecfg ./alloy-syntax
# FerretDB for the MongoDB adapter's tests (server/store/mongodb.test.ts).
"$go" -C ferretdb build -trimpath -o ../bin/ ./ferretdb
