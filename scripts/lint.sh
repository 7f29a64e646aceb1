#!/usr/bin/env bash
# Formatting and lint (Biome, configured in biome.jsonc), writing nothing: scripts/test.sh
# runs it after the typecheck. To format the tree and apply Biome's safe fixes (the one
# change a formatting commit holds; run it again after merging unformatted work):
#   node_modules/.bin/biome check --write .
set -euo pipefail
cd "$(dirname "$0")/.."
exec node_modules/.bin/biome ci --max-diagnostics=50 .
