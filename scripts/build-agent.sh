#!/usr/bin/env bash
# Compiles svc-agent into one self-contained binary with `bun build --compile`.
#   bash scripts/build-agent.sh                  dist/svc-agent for this machine
#   bash scripts/build-agent.sh --outfile PATH   the same binary at PATH (tests, benchmarks)
#   bash scripts/build-agent.sh --target T ...   for Bun target T, e.g. bun-linux-arm64 (packages)
#   bash scripts/build-agent.sh --all            also dist/svc-agent-linux-amd64 and dist/svc-agent-linux-arm64
#   bash scripts/build-agent.sh --no-order ...   without the bytecode layout profile (recording a new one)
# Cross-targets fetch that platform's Bun runtime from the npm registry once.
#
# Flags kept for the agent's 40 MiB idle budget (BENCHMARKS.md, svc-agent):
# --compile-jit-policy=1000 makes JavaScriptCore wait 1000 times longer before it
# JIT-compiles a function; the agent idles between a heartbeat and a rescan, so the
# interpreter serves it as well, and the JIT tiers stay asleep (about 8 MiB).
# --bytecode with --bytecode-order=agent/bytecode.order puts the bytecode an idle,
# connected agent runs together, so it touches fewer pages of the binary (about
# 1.7 MiB); scripts/record-agent-order.ts records that profile.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
outfile=dist/svc-agent
target=()
all=false
order=(--bytecode-order=agent/bytecode.order)
while [ $# -gt 0 ]; do
  case "$1" in
    --outfile) outfile="${2:?--outfile needs a path}"; shift 2 ;;
    --target) target=(--target "${2:?--target needs a Bun target, e.g. bun-linux-arm64}"); shift 2 ;;
    --all) all=true; shift ;;
    --no-order) order=(); shift ;;
    *) echo "build-agent.sh: unknown argument $1 (use --outfile PATH, --target T, --all or --no-order)" >&2; exit 2 ;;
  esac
done
build() {
  "$BUN" build --compile --minify --sourcemap --compile-jit-policy=1000 --bytecode --format=esm "${order[@]}" "$@" agent/main.ts
}
build "${target[@]}" --outfile "$outfile"
if $all; then
  build --target bun-linux-x64 --outfile dist/svc-agent-linux-amd64
  build --target bun-linux-arm64 --outfile dist/svc-agent-linux-arm64
fi
