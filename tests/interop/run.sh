#!/usr/bin/env bash
# Interop test: the official TypeScript MCP SDK client (tests/interop/client.mjs, SDK pinned in
# package-lock.json) against examples/http_server.rs; then the same client cancelling a request
# with an AbortSignal (tests/interop/cancel.mjs) against `http_server --stateless` protected by
# bearer tokens the script signs and whose JWKS it serves. (Our own client against other SDKs'
# servers: client-run.sh.)
#
# Usage:
#   tests/interop/run.sh              # build + start `--example http_server --port P`, run both checks
#   tests/interop/run.sh --url URL    # run client.mjs against an already running server (no cancel check)
#   tests/interop/run.sh --install-only
#
# Node 22 comes from tests/conformance/node-env.sh (shared cache, see there). Environment:
# CARGO_TARGET_DIR (respected), MCP_CONFORMANCE_CACHE, MCP_INTEROP_STARTUP_SECS (default 60),
# MCP_INTEROP_CLIENT_SECS (hard cap on the client, default 60).
# Exit status: 0 when every check passed, 1 otherwise (and on setup errors).
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

own_server=0
if [[ -z "$url" ]]; then
  own_server=1
  start_example http_server "$(mktemp -t interop-http-server.XXXXXX.log)" "${MCP_INTEROP_STARTUP_SECS:-60}"
  url="http://127.0.0.1:$port/mcp"
fi

passed=0
failed=0
# run_check NAME ARGS...: runs `node ARGS...` in tests/interop under the time cap, counting it.
run_check() {
  local name="$1" rc
  shift
  echo "interop: node $*" >&2
  set +e
  (cd "$here" && timeout --kill-after=5 "${MCP_INTEROP_CLIENT_SECS:-60}" "$NODE" "$@")
  rc=$?
  set -e
  if [[ $rc -eq 0 ]]; then
    passed=$((passed + 1))
  else
    [[ $rc -eq 124 || $rc -eq 137 ]] && echo "interop: $name hit the time cap" >&2
    echo "interop: $name failed (exit $rc)" >&2
    failed=$((failed + 1))
  fi
}

run_check client client.mjs "$url"

if [[ $own_server -eq 1 ]]; then
  # Cancellation without a session: a stateless endpoint protected by bearer tokens, whose
  # JWKS cancel.mjs serves on $jwks_port.
  kill_example
  jwks_port="$(free_port)"
  start_example http_server "$(mktemp -t interop-http-server-cancel.XXXXXX.log)" \
    "${MCP_INTEROP_STARTUP_SECS:-60}" --stateless \
    --auth-jwks "http://127.0.0.1:$jwks_port/jwks" --auth-issuer "http://127.0.0.1:$jwks_port" \
    --auth-audience "http://127.0.0.1:{port}/mcp"
  run_check cancel cancel.mjs "http://127.0.0.1:$port/mcp" "$jwks_port"
fi

echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
