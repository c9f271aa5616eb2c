#!/usr/bin/env bash
# Run the client scenarios of the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in tests/conformance/npm/package-lock.json) against examples/conformance_client.rs and
# judge the result against tests/conformance/expected-failures-client.txt. See the client
# section of tests/conformance/SCENARIOS.md. The server side is tests/conformance/run.sh.
#
# Usage:
#   tests/conformance/run-client.sh                    # build the example, run the 2025-11-25 client set
#   tests/conformance/run-client.sh --requirements 2026-07-28   # the 2026-07-28 (stateless) client set
#   tests/conformance/run-client.sh --scenario NAME    # one scenario (debugging), same wire version
#   tests/conformance/run-client.sh --install-only     # just install Node 22 + the suite
#   tests/conformance/run.sh --client [OPTIONS]        # the same, through run.sh
#
# Options:
#   --scenario NAME          run only NAME (e.g. sse-retry)
#   --requirements REV       requirement set (default 2025-11-25)
#   --timeout MS             per-scenario timeout passed to the suite (default 30000)
#   --expected-failures F    default tests/conformance/expected-failures-client.txt for 2025-11-25,
#                            tests/conformance/expected-failures-client-REV.txt for another set REV
#   --results DIR            where to keep the suite's output
#                            (default tests/conformance/results/client-<stamp>)
#   --install-only           install toolchain and exit
#   -h, --help
#
# Environment: MCP_CONFORMANCE_CACHE (toolchain cache, default tests/conformance/.cache),
# CARGO_TARGET_DIR (respected), MCP_CONFORMANCE_SUITE_SECS (hard cap on the whole suite run,
# default 600).
#
# How it runs: the suite starts a mock server per scenario (every scenario of the set at once)
# and runs `bash tests/conformance/client-exit.sh <conformance_client binary> <mock server URL>`
# with the scenario's name in MCP_CONFORMANCE_SCENARIO; client-exit.sh records the client's exit
# status under <results>/client-exit/.
#
# Exit status: 0 when every scenario passes or is a listed expected failure; 1 on any unexpected
# failure, on any listed scenario that now passes, or on setup errors. The last line printed is
#   conformance (client): N passed, M failed, K skipped
# (N = passing scenarios, M = unexpected failures + stale expected-failure entries, K = expected
# failures). A scenario passes when it has no FAILURE check and at least one SUCCESS check (the
# suite's own pass rate) and the client exited 0 within the timeout (the scenarios where the
# suite expects the client to give up or refuse, `allowClientError` in its source, may exit
# non-zero).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

scenario=""
requirements="2025-11-25"
timeout_ms="30000"
expected=""
results=""
install_only=0
# Scenarios whose client the suite itself allows to exit non-zero (`allowClientError` in the
# suite's source) within the 2025-11-25 and 2026-07-28 client sets: the client gives up
# (scope-retry-limit) or must refuse the server's metadata or authorization response.
allow_client_error="auth/scope-retry-limit,auth/resource-mismatch,auth/iss-supported-missing"
allow_client_error+=",auth/iss-wrong-issuer,auth/iss-unexpected,auth/iss-normalized"
allow_client_error+=",auth/metadata-issuer-mismatch,http-invalid-tool-headers"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "conformance (client): error: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --scenario) [[ $# -ge 2 ]] || die "--scenario needs a NAME"; scenario="$2"; shift 2 ;;
    --scenario=*) scenario="${1#*=}"; shift ;;
    --requirements) [[ $# -ge 2 ]] || die "--requirements needs a revision"; requirements="$2"; shift 2 ;;
    --requirements=*) requirements="${1#*=}"; shift ;;
    --timeout) [[ $# -ge 2 ]] || die "--timeout needs milliseconds"; timeout_ms="$2"; shift 2 ;;
    --timeout=*) timeout_ms="${1#*=}"; shift ;;
    --expected-failures) [[ $# -ge 2 ]] || die "--expected-failures needs a file"; expected="$2"; shift 2 ;;
    --expected-failures=*) expected="${1#*=}"; shift ;;
    --results) [[ $# -ge 2 ]] || die "--results needs a directory"; results="$2"; shift 2 ;;
    --results=*) results="${1#*=}"; shift ;;
    --install-only) install_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$timeout_ms" =~ ^[0-9]+$ ]] || die "--timeout must be a number of milliseconds"
[[ "$requirements" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || die "--requirements must look like 2025-11-25"
[[ -z "$scenario" || "$scenario" =~ ^[A-Za-z0-9_./-]+$ ]] || die "bad scenario name: $scenario"
if [[ -z "$expected" ]]; then
  if [[ "$requirements" == "2025-11-25" ]]; then
    expected="$here/expected-failures-client.txt"
  else
    expected="$here/expected-failures-client-$requirements.txt"
  fi
fi
[[ -f "$expected" ]] || die "no expected-failures file $expected (create one, even empty)"

# shellcheck source=tests/conformance/node-env.sh
. "$here/node-env.sh"
mcp_conformance_env || die "could not install Node 22 / the conformance suite"
echo "conformance (client): node $("$NODE" --version), suite $("$NODE" "$MCP_CONFORMANCE_CLI" --version)" >&2
[[ $install_only -eq 1 ]] && exit 0

# Scored and not-scored client scenarios of the requirement set.
sets="$(mcp_requirement_scenarios client "$requirements")" \
  || die "could not read the client scenarios of requirement set $requirements"
scored="${sets%% *}"
unscored="${sets#* }"
[[ -n "$scored" ]] || die "requirement set $requirements lists no client scenarios"

if [[ -n "$scenario" ]]; then
  case ",$scored,$unscored," in
    *",$scenario,"*) ;;
    *) echo "conformance (client): note: $scenario is not in the $requirements client set; running it anyway" >&2 ;;
  esac
fi

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
results="${results:-$here/results/client-$stamp}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

# shellcheck source=tests/conformance/example-server.sh
. "$here/example-server.sh"
build_example conformance_client
client_bin="$example_bin"

# The suite splits --command on spaces, so no path in it may hold one.
wrapper="$here/client-exit.sh"
for path in "$wrapper" "$client_bin"; do
  [[ "$path" != *" "* ]] || die "the suite cannot run a command whose path has a space: $path"
done
export MCP_CONFORMANCE_EXIT_DIR="$results/client-exit"
mkdir -p "$MCP_CONFORMANCE_EXIT_DIR"
# The suite runs the command through `sh -c` and stops it at the timeout with SIGTERM to that
# shell: `exec` makes client-exit.sh the process it stops, which then stops the client.
command="exec bash $wrapper $client_bin"

suite_secs="${MCP_CONFORMANCE_SUITE_SECS:-600}"
cli=("$NODE" "$MCP_CONFORMANCE_CLI" client --command "$command" -o "$results" --timeout "$timeout_ms")
if [[ -n "$scenario" ]]; then
  # Same wire version as the requirement run; --force runs it even outside that version's window.
  cli+=(--scenario "$scenario" --spec-version "$requirements" --force)
else
  # Runs the scored client scenarios and the not-scored ones of leg client, all in parallel.
  cli+=(--requirements "$requirements")
fi
echo "conformance (client): ${cli[*]}" >&2
set +e
timeout --kill-after=10 "$suite_secs" "${cli[@]}" >"$results/suite.log" 2>&1
suite_rc=$?
set -e
echo "conformance (client): suite exited $suite_rc (its own verdict; ours follows). Full log: $results/suite.log" >&2
if [[ $suite_rc -eq 124 || $suite_rc -eq 137 ]]; then
  echo "conformance (client): suite hit the ${suite_secs}s cap" >&2
fi

if [[ -z "$(find "$results" -name checks.json -print -quit)" ]]; then
  tail -n 40 "$results/suite.log" >&2 || true
  echo "conformance (client): 0 passed, 1 failed"
  die "the suite produced no results"
fi

set +e
python3 "$here/summarize.py" --results "$results" --expected "$expected" \
  --scored "$scored" --unscored "$unscored" ${scenario:+--only "$scenario"} \
  --prefix "" --exit-status "$MCP_CONFORMANCE_EXIT_DIR" --allow-client-error "$allow_client_error" \
  --label "conformance (client)" --json "$results/summary.json"
rc=$?
set -e
exit "$rc"
