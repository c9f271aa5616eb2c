#!/usr/bin/env bash
# Interop test: the official Python SDK's client (`mcp` 2.x, pinned in python-env.sh, which
# speaks 2025-11-25 and 2026-07-28) against examples/http_server.rs. One server process on a
# free 127.0.0.1 port serves both legs:
#
#   python-2026   mode="auto": the SDK probes server/discover and must settle on 2026-07-28,
#                 with no initialize (stateless requests, `_meta`, Mcp-Method/Mcp-Name headers,
#                 subscriptions/listen, sampling through an input-required result)
#   python-2025   mode="legacy": the initialize handshake, a 2025-11-25 session
#
# The checks are in tests/interop/python_client.py. (The TypeScript client against the same
# server: run.sh; our client against other SDKs' servers: client-run.sh.)
#
# Usage:
#   tests/interop/python-client-run.sh              # build + start the example, run both legs
#   tests/interop/python-client-run.sh --url URL    # both legs against a running server (loopback)
#   tests/interop/python-client-run.sh --install-only
#
# The SDK is installed with pip into tests/interop/.venv/mcp-VERSION (git-ignored) by
# ${MCP_INTEROP_PYTHON:-python3} (3.10 or newer). Environment: CARGO_TARGET_DIR (respected),
# MCP_INTEROP_STARTUP_SECS (the server's time to listen, default 60), MCP_INTEROP_CLIENT_SECS
# (hard cap on one leg, default 60).
# Prints one line per check, a summary per leg, and last `interop: N passed, M failed` (legs).
# Exit status: 0 when both legs passed, 1 otherwise or on setup errors.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
client_secs="${MCP_INTEROP_CLIENT_SECS:-60}"

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

# shellcheck source=tests/interop/python-env.sh
. "$here/python-env.sh"
python="$(python_env "$MCP_PY_V2")"
[[ $install_only -eq 1 ]] && exit 0

# shellcheck source=tests/conformance/example-server.sh
. "$repo/tests/conformance/example-server.sh"

if [[ -z "$url" ]]; then
  start_example http_server "$(mktemp -t interop-python-client.XXXXXX.log)" "${MCP_INTEROP_STARTUP_SECS:-60}"
  url="http://127.0.0.1:$port/mcp"
fi

passed=0 failed=0
for era in v2026 v2025; do
  echo "interop: python python_client.py $url $era" >&2
  rc=0
  # NO_PROXY: the SDK's HTTP client honours proxy variables; this traffic stays on loopback.
  NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost" MCP_INTEROP_CLIENT_SECS="$client_secs" \
    timeout --kill-after=5 "$((client_secs + 5))" "$python" "$here/python_client.py" "$url" "$era" || rc=$?
  if [[ $rc -eq 0 ]]; then
    passed=$((passed + 1))
  else
    [[ $rc -eq 124 || $rc -eq 137 ]] && echo "interop: the $era leg hit the time cap" >&2
    failed=$((failed + 1))
  fi
done
echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
