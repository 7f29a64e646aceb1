#!/usr/bin/env bash
# The whole suite, as README's test command runs it: system packages, the Go
# peers (scripts/peers.sh), typecheck, formatting and lint (scripts/lint.sh), then
# every bun test. Ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
# server/store/postgres.test.ts needs PostgreSQL on 127.0.0.1:5432 (trust auth),
# unless SVC_TEST_POSTGRES_URI points elsewhere: start the local cluster when it
# is stopped. Quiet and idempotent; without it those tests fail and say why.
if [ -z "${SVC_TEST_POSTGRES_URI:-}" ] && command -v pg_lsclusters >/dev/null 2>&1; then
  pg_lsclusters --no-header 2>/dev/null | while read -r version cluster _ status _; do
    case "$status" in online*) continue ;; esac
    pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start >/dev/null 2>&1 ||
      echo "postgres: could not start cluster $version/$cluster (as root: pg_ctlcluster --skip-systemctl-redirect $version $cluster start)" >&2
  done
fi
echo "== peers"
# The real collector, supervisor and Go checkers the tests run (test/peers), built before any test.
bash scripts/peers.sh
echo "== typecheck"
# The server and agent without DOM types, the browser UI with them, and the browser tests.
for project in tsconfig.json server/ui/tsconfig.json test/ui/tsconfig.json; do
  node_modules/.bin/tsc --noEmit -p "$project"
done
echo "== lint"
bash scripts/lint.sh
echo "== build what the tests run (binaries, packages)"
bash scripts/build-for-tests.sh
echo "== bun test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
node_modules/.bin/bun test --timeout 30000 "$@" 2>&1 | tee "$log" || status=$?
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
echo "${passed} passed, ${failed} failed"
if [ "$passed" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
