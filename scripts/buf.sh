#!/usr/bin/env bash
# Runs the buf CLI from its platform package. The npm mirror CI uses carries
# only the Linux builds, so the package.json lists those directly instead of
# @bufbuild/buf, whose other platforms would make `npm ci` fail.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) echo "buf.sh: no buf build for $(uname -m)" >&2; exit 1 ;;
esac
bin="$root/node_modules/@bufbuild/buf-linux-$arch/bin/buf"
if [[ "$(uname -s)" != Linux || ! -x "$bin" ]]; then
  echo "buf.sh: $bin is missing; run npm ci on Linux (or install buf and run 'buf generate')" >&2
  exit 1
fi
exec "$bin" "$@"
