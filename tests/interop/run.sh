#!/usr/bin/env bash
# Interop test: the official TypeScript MCP SDK client (tests/interop/client.mjs, SDK pinned in
# package-lock.json) against examples/http_server.rs. (Our own client against other SDKs'
# servers: client-run.sh.)
#
# Usage:
#   tests/interop/run.sh              # build + start `--example http_server --port P`, run the client
#   tests/interop/run.sh --url URL    # run the client against an already running server
#   tests/interop/run.sh --install-only
#
# Node 22 comes from tests/conformance/node-env.sh (shared cache, see there). Environment:
# CARGO_TARGET_DIR (respected), MCP_CONFORMANCE_CACHE, MCP_INTEROP_STARTUP_SECS (default 60),
# MCP_INTEROP_CLIENT_SECS (hard cap on the client, default 60).
# Exit status: the client's (0 = everything matched), or 1 on setup errors.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

url=""
install_only=0
die() { echo "interop: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --url) [[ $# -ge 2 ]] || die "--url needs a URL"; url="$2"; shift 2 ;;
    --url=*) url="${1#*=}"; shift ;;
    --install-only) install_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

# shellcheck source=tests/conformance/node-env.sh
. "$repo/tests/conformance/node-env.sh"
mcp_node_env || die "could not install Node 22"

want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
have="$(cat "$here/node_modules/.installed-sha256" 2>/dev/null || true)"
if [[ "$want" != "$have" || ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]]; then
  echo "interop: npm ci in tests/interop" >&2
  (cd "$here" && "$NPM" ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed"
  printf '%s\n' "$want" > "$here/node_modules/.installed-sha256"
fi
[[ $install_only -eq 1 ]] && exit 0

# shellcheck source=tests/conformance/example-server.sh
. "$repo/tests/conformance/example-server.sh"

if [[ -z "$url" ]]; then
  start_example http_server "$(mktemp -t interop-http-server.XXXXXX.log)" "${MCP_INTEROP_STARTUP_SECS:-60}"
  url="http://127.0.0.1:$port/mcp"
fi

echo "interop: node client.mjs $url" >&2
set +e
(cd "$here" && timeout --kill-after=5 "${MCP_INTEROP_CLIENT_SECS:-60}" "$NODE" client.mjs "$url")
rc=$?
set -e
if [[ $rc -eq 0 ]]; then
  echo "interop: 1 passed, 0 failed"
else
  [[ $rc -eq 124 || $rc -eq 137 ]] && echo "interop: client hit the time cap" >&2
  echo "interop: 0 passed, 1 failed"
fi
exit "$rc"
