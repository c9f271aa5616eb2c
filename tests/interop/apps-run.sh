#!/usr/bin/env bash
# MCP Apps interop: the official TypeScript client (v2) with the MCP Apps reference SDK's
# schemas (tests/interop/apps/check.mjs, packages pinned in its package-lock.json) against
# examples/apps_server.rs.
#
# Usage:
#   tests/interop/apps-run.sh              # build + start `--example apps_server --port P`, run the check
#   tests/interop/apps-run.sh --url URL    # run the check against an already running server
#
# Node 22 comes from tests/conformance/node-env.sh (shared cache, see there). Environment:
# CARGO_TARGET_DIR (respected), MCP_CONFORMANCE_CACHE, MCP_INTEROP_STARTUP_SECS (default 60),
# MCP_INTEROP_CLIENT_SECS (hard cap on the check, default 60).
# Exit status: the check's (0 = every check held), or 1 on setup errors.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
apps="$here/apps"

url=""
die() { echo "apps interop: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --url) [[ $# -ge 2 ]] || die "--url needs a URL"; url="$2"; shift 2 ;;
    --url=*) url="${1#*=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

# shellcheck source=tests/conformance/node-env.sh
. "$repo/tests/conformance/node-env.sh"
mcp_node_env || die "could not install Node 22"

want="$(cat "$apps/package.json" "$apps/package-lock.json" | sha256sum | cut -d' ' -f1)"
have="$(cat "$apps/node_modules/.installed-sha256" 2>/dev/null || true)"
if [[ "$want" != "$have" || ! -d "$apps/node_modules/@modelcontextprotocol/ext-apps" ]]; then
  echo "apps interop: npm ci in tests/interop/apps" >&2
  (cd "$apps" && "$NPM" ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed"
  printf '%s\n' "$want" > "$apps/node_modules/.installed-sha256"
fi

# shellcheck source=tests/conformance/example-server.sh
. "$repo/tests/conformance/example-server.sh"

if [[ -z "$url" ]]; then
  start_example apps_server "$(mktemp -t interop-apps-server.XXXXXX.log)" "${MCP_INTEROP_STARTUP_SECS:-60}"
  url="http://127.0.0.1:$port/mcp"
fi

echo "apps interop: node check.mjs $url" >&2
(cd "$apps" && timeout --kill-after=5 "${MCP_INTEROP_CLIENT_SECS:-60}" "$NODE" check.mjs "$url")
