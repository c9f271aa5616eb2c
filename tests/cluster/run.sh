#!/usr/bin/env bash
# The official MCP conformance suite (server, both requirement sets) through HAProxy against two
# nodes of examples/conformance_server sharing their sessions, events and tasks on Redis: every
# request of a scenario goes to the next node, round robin, with no stickiness.
#
# Usage: tests/cluster/run.sh [--nodes N] [--session-lease-ms MS] [--request-streams-on-node]
#   (default 2 nodes, no lease, every stream's events in Redis). --request-streams-on-node: the
#   nodes keep requests' streams in their memory, and a resume elsewhere asks them on the bus.
# Installs redis-server and haproxy (Debian) when missing; Node 22 and the suite as
# tests/conformance/run.sh does. Exit status: that of tests/conformance/run.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "cluster: error: $*" >&2; exit 1; }

nodes=2
lease=0
on_node=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --session-lease-ms) lease="$2"; shift 2 ;;
    --request-streams-on-node) on_node=(--request-streams-on-node); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done

# shellcheck source=tests/conformance/wait-port.sh
. "$repo/tests/conformance/wait-port.sh"
# shellcheck source=tests/cluster/env.sh
. "$here/env.sh"

cluster_install
echo "cluster: cargo build --features full --example conformance_server" >&2
(cd "$repo" && cargo build --features full --example conformance_server) || die "build failed"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
bin="$target_dir/debug/examples/conformance_server"
[[ -x "$bin" ]] || die "no binary at $bin"

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
results="$repo/tests/conformance/results/cluster-$stamp"
mkdir -p "$results"
# Every node seals requestState with the same key, so a retry may land on any node.
key="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
cluster_start "$bin" "$nodes" "$results" --state-key "$key" --session-lease-ms "$lease" "${on_node[@]}"

set +e
bash "$repo/tests/conformance/run.sh" --url "$lb_url" --results "$results/suite"
rc=$?
set -e
if [[ $rc -eq 0 ]]; then
  served="$(grep -c 'node' "$results/haproxy.log" 2>/dev/null || true)"
  echo "cluster: conformance through haproxy against $nodes nodes (session lease ${lease} ms${on_node:+, request streams on node}): passed" >&2
fi
exit "$rc"
