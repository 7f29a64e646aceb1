#!/usr/bin/env bash
# Builds what tests run but must not build inside their time limits (scripts/test.sh runs
# this before `bun test`; run it yourself before one of these tests alone). test/built.ts
# reads the results and names this script when one is missing or older than its sources.
#   dist/svc-server                  `bun run build`                 test/process/binary.test.ts, test/packaging/units.test.ts
#   dist/svc-agent                   scripts/build-agent.sh          test/packaging/units.test.ts, test/agents/e2e.test.ts
#   dist/test/packages/1.2.3/        scripts/package.sh, this arch   test/packaging/packages.test.ts, test/installer/install.test.ts
#   dist/test/packages/1.2.4/        the same, agent packages only   test/packaging/packages.test.ts (an upgrade)
set -euo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=amd64 ;; esac

step() {
  local what=$1
  shift
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    echo "build-for-tests.sh: $what failed:" >&2
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  echo "built $what"
}

step dist/svc-server "$BUN" run build
step dist/svc-agent bash scripts/build-agent.sh
rm -rf dist/test/packages
step dist/test/packages/1.2.3 env SVC_PACKAGE_VERSION=1.2.3 bash scripts/package.sh --arch "$arch" --out dist/test/packages/1.2.3
step dist/test/packages/1.2.4 env SVC_PACKAGE_VERSION=1.2.4 bash scripts/package.sh --arch "$arch" --no-server --out dist/test/packages/1.2.4
