#!/usr/bin/env bash
# Builds the real peers the tests run against (test/peers: the OpenTelemetry
# Collector distribution, the OpAMP supervisor, the scripted opamp-go client
# and the small Go checkers) into
# test/peers/bin, from the Go module proxy at the versions test/peers/go.sum
# pins. scripts/test.sh runs it before `bun test`, so no test builds anything.
# Go's own module and build caches make a second run take seconds.
set -euo pipefail
cd "$(dirname "$0")/../test/peers"

# Go 1.26 or newer: the one on PATH, else the official install's.
go_version_ok() { "$1" env GOVERSION 2>/dev/null | grep -Eq '^go1\.(2[6-9]|[3-9][0-9])(\.|$)'; }
go=""
for candidate in "$(command -v go || true)" /usr/local/go/bin/go; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && go_version_ok "$candidate"; then go=$candidate; break; fi
done
if [ -z "$go" ]; then
  echo "peers: Go 1.26 or newer is needed to build test/peers (none on PATH nor at /usr/local/go/bin/go); install Go 1.26, then run: bash scripts/peers.sh" >&2
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
