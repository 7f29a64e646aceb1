#!/usr/bin/env bash
# Compiles svc-agent into one self-contained binary with `bun build --compile`.
#   bash scripts/build-agent.sh          dist/svc-agent for this machine
#   bash scripts/build-agent.sh --all    also dist/svc-agent-linux-amd64 and dist/svc-agent-linux-arm64
# Cross-targets fetch that platform's Bun runtime from the npm registry once.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
build() {
  "$BUN" build --compile --minify --sourcemap "$@" agent/main.ts
}
build --outfile dist/svc-agent
if [[ "${1:-}" == "--all" ]]; then
  build --target bun-linux-x64 --outfile dist/svc-agent-linux-amd64
  build --target bun-linux-arm64 --outfile dist/svc-agent-linux-arm64
fi
