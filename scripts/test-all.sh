#!/usr/bin/env bash
# Runs every test of actix-mcp: the Rust unit, integration and doc tests of the workspace
# (with every feature, `full`; the cluster tests against redis-server, which it installs from Debian's packages
# with haproxy when missing), then the official MCP conformance suite against
# examples/conformance_server (server scenarios; once more through HAProxy against two nodes
# sharing their sessions on Redis) and examples/conformance_client (client scenarios, 2025-11-25 and 2026-07-28), then the official TypeScript
# SDK client against examples/http_server (and, with the MCP Apps reference SDK's schemas,
# against examples/apps_server), then our command-line client against servers of the
# official TypeScript and Python SDKs, then the official Python SDK client (2026-07-28 and
# 2025-11-25) against examples/http_server. The conformance and TypeScript runs install Node 22
# (PyPI wheel, in a venv) and pinned npm packages into tests/conformance/.cache on first use;
# the last two also the pinned Python SDKs into tests/interop/.venv (pip).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== redis-server, redis-cli and haproxy (Debian packages) for the cluster tests"
die() { echo "test-all: error: $*" >&2; exit 1; }
# shellcheck source=tests/cluster/env.sh
. tests/cluster/env.sh
cluster_install

echo "== cargo test --workspace --features full"
cargo test --workspace --features full

echo "== fuzzing smoke run: each libFuzzer target of tests/fuzz for 25 s (see tests/fuzz/README.md)"
bash tests/fuzz/run.sh --smoke

echo "== MCP conformance suite (server, requirements 2025-11-25 and 2026-07-28, one server process)"
bash tests/conformance/run.sh

echo "== MCP conformance suite (server, both sets) through HAProxy against two nodes on Redis"
bash tests/cluster/run.sh

echo "== the same, each node with a session lease of 1 s (Cluster::session_lease)"
bash tests/cluster/run.sh --session-lease-ms 1000

echo "== the same, each node with a 1 s lease and keeping requests' streams in its memory"
bash tests/cluster/run.sh --session-lease-ms 1000 --request-streams-on-node

echo "== MCP conformance suite (client, requirements 2025-11-25)"
bash tests/conformance/run-client.sh

echo "== MCP conformance suite (client, requirements 2026-07-28)"
bash tests/conformance/run-client.sh --requirements 2026-07-28

echo "== interop: official TypeScript client against examples/http_server"
bash tests/interop/run.sh

echo "== interop: official TypeScript client (v2) and the MCP Apps reference SDK's schemas against examples/apps_server"
bash tests/interop/apps-run.sh

echo "== interop: our client against server-everything (TypeScript) and the Python SDK"
bash tests/interop/client-run.sh

echo "== interop: official Python SDK client (2026-07-28 and 2025-11-25) against examples/http_server"
bash tests/interop/python-client-run.sh
