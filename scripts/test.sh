#!/usr/bin/env bash
# The whole suite, as README's test command runs it: system packages,
# typecheck, then every bun test. Ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
echo "== typecheck"
node_modules/.bin/tsc --noEmit -p tsconfig.json
echo "== bun test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
node_modules/.bin/bun test "$@" 2>&1 | tee "$log" || status=$?
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
echo "${passed} passed, ${failed} failed"
if [ "$passed" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
