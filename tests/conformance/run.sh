#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/conformance/npm/package-lock.json) against examples/conformance_server/ and judge the
# result against tests/conformance/expected-failures.txt. See tests/conformance/SCENARIOS.md.
#
# Usage:
#   tests/conformance/run.sh                    # build + start the example, run the 2025-11-25 and
#                                               # 2026-07-28 sets against that one server process
#   tests/conformance/run.sh --scenario NAME    # one scenario (debugging), same wire version
#   tests/conformance/run.sh --url URL          # test an already running server (no build/start)
#   tests/conformance/run.sh --install-only     # just install Node 22 + the suite (warm the cache)
#   tests/conformance/run.sh --client [...]     # the client scenarios instead: runs run-client.sh
#                                               # with the other arguments (see its --help)
#
# Options:
#   --scenario NAME          run only NAME (e.g. server-sse-polling)
#   --url URL                server URL; skips cargo build and server start
#   --requirements REV[,REV] requirement sets, run in turn against the same server process
#                            (default 2025-11-25,2026-07-28)
#   --timeout MS             per-scenario timeout passed to the suite (default 30000)
#   --expected-failures F    for every set; default tests/conformance/expected-failures.txt for
#                            2025-11-25, tests/conformance/expected-failures-REV.txt for another REV
#   --results DIR            where to keep the suite's output (default tests/conformance/results/<stamp>;
#                            one subdirectory per requirement set)
#   --install-only           install toolchain and exit
#   -h, --help
#
# Environment: MCP_CONFORMANCE_CACHE (toolchain cache, default tests/conformance/.cache),
# CARGO_TARGET_DIR (respected), MCP_CONFORMANCE_STARTUP_SECS (server start wait, default 60),
# MCP_CONFORMANCE_SUITE_SECS (hard cap on the whole suite run, default 1500).
#
# Exit status: 0 when every scenario of every set passes or is a listed expected failure; 1 on any
# unexpected failure, on any listed scenario that now passes, or on setup errors. Each set ends with
#   conformance: N passed, M failed, K skipped
# and, with several sets, the last line printed sums them the same way:
# (N = passing scenarios, M = unexpected failures + stale expected-failure entries, K = expected
# failures). A scenario passes as the suite's own pass rate counts it: no FAILURE check and at
# least one SUCCESS check.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

scenario=""
url=""
requirements="2025-11-25,2026-07-28"
timeout_ms="30000"
expected=""
results=""
install_only=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "conformance: error: $*" >&2; exit 1; }

for arg in "$@"; do
  if [[ "$arg" == "--client" ]]; then
    rest=()
    for other in "$@"; do [[ "$other" == "--client" ]] || rest+=("$other"); done
    exec bash "$here/run-client.sh" ${rest[@]+"${rest[@]}"}
  fi
done

while [[ $# -gt 0 ]]; do
  case "$1" in
    --scenario) [[ $# -ge 2 ]] || die "--scenario needs a NAME"; scenario="$2"; shift 2 ;;
    --scenario=*) scenario="${1#*=}"; shift ;;
    --url) [[ $# -ge 2 ]] || die "--url needs a URL"; url="$2"; shift 2 ;;
    --url=*) url="${1#*=}"; shift ;;
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
[[ "$requirements" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}(,[0-9]{4}-[0-9]{2}-[0-9]{2})*$ ]] \
  || die "--requirements must look like 2025-11-25 or 2025-11-25,2026-07-28"
IFS=, read -r -a revisions <<<"$requirements"
[[ -z "$scenario" || ${#revisions[@]} -eq 1 ]] || die "--scenario needs exactly one --requirements set"
[[ -z "$scenario" || "$scenario" =~ ^[A-Za-z0-9_./-]+$ ]] || die "bad scenario name: $scenario"

# shellcheck source=tests/conformance/node-env.sh
. "$here/node-env.sh"
mcp_conformance_env || die "could not install Node 22 / the conformance suite"
echo "conformance: node $("$NODE" --version), suite $("$NODE" "$MCP_CONFORMANCE_CLI" --version)" >&2
[[ $install_only -eq 1 ]] && exit 0

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
results="${results:-$here/results/$stamp}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

# shellcheck source=tests/conformance/example-server.sh
. "$here/example-server.sh"

if [[ -z "$url" ]]; then
  start_example conformance_server "$results/server.log" "${MCP_CONFORMANCE_STARTUP_SECS:-60}"
  url="http://127.0.0.1:$port/mcp"
fi

suite_secs="${MCP_CONFORMANCE_SUITE_SECS:-1500}"

# Runs one requirement set against $url and judges it; prints its closing line.
run_set() {
  local rev="$1" out="$2" expect="$3"
  # Scored and not-scored server scenarios of the set, read with the suite's own YAML lib.
  local sets scored unscored
  sets="$(mcp_requirement_scenarios server "$rev")" \
    || die "could not read the server scenarios of requirement set $rev"
  scored="${sets%% *}"
  unscored="${sets#* }"
  if [[ -n "$scenario" ]]; then
    case ",$scored,$unscored," in
      *",$scenario,"*) ;;
      *) echo "conformance: note: $scenario is not in the $rev server set; running it anyway" >&2 ;;
    esac
  fi
  mkdir -p "$out"
  local cli=("$NODE" "$MCP_CONFORMANCE_CLI" server --url "$url" -o "$out" --timeout "$timeout_ms")
  if [[ -n "$scenario" ]]; then
    # Same wire version as the requirement run: --spec-version pins it, --force runs the
    # scenario even if the suite considers it outside that version's window.
    cli+=(--scenario "$scenario" --spec-version "$rev" --force)
  else
    # Runs the scored scenarios and then the not-scored ones, each once, at the revision's wire.
    cli+=(--requirements "$rev")
  fi
  echo "conformance: [$rev] ${cli[*]}" >&2
  set +e
  timeout --kill-after=10 "$suite_secs" "${cli[@]}" >"$out/suite.log" 2>&1
  local suite_rc=$?
  set -e
  echo "conformance: [$rev] suite exited $suite_rc (its own verdict; ours follows). Full log: $out/suite.log" >&2
  if [[ $suite_rc -eq 124 || $suite_rc -eq 137 ]]; then
    echo "conformance: [$rev] suite hit the ${suite_secs}s cap" >&2
  fi
  # The suite's own summary (in suite.log) is deliberately not echoed: its "Total: N passed, M
  # failed" counts checks, not scenarios, and must not be mistaken for this script's closing line.
  if ! compgen -G "$out/*/checks.json" >/dev/null; then
    tail -n 40 "$out/suite.log" >&2 || true
    [[ -f "$results/server.log" ]] && { echo "--- server.log (tail) ---" >&2; tail -n 40 "$results/server.log" >&2; }
    echo "conformance: 0 passed, 1 failed, 0 skipped"
    echo "conformance: [$rev] the suite produced no results" >&2
    return 1
  fi
  python3 "$here/summarize.py" --results "$out" --expected "$expect" \
    --scored "$scored" --unscored "$unscored" ${scenario:+--only "$scenario"} \
    --json "$out/summary.json"
}

rc=0
total_passed=0 total_failed=0 total_skipped=0
for rev in "${revisions[@]}"; do
  expect="$expected"
  if [[ -z "$expect" ]]; then
    if [[ "$rev" == "2025-11-25" ]]; then
      expect="$here/expected-failures.txt"
    else
      expect="$here/expected-failures-$rev.txt"
    fi
  fi
  [[ -f "$expect" ]] || die "no expected-failures file for $rev: $expect"
  out="$results"
  [[ ${#revisions[@]} -gt 1 ]] && out="$results/$rev"
  # Captured in a file, then shown: `tee /dev/stderr` would reopen (and truncate) a log file
  # that stderr is redirected to.
  verdict="$results/verdict-$rev.txt"
  # Called as a condition, so that a failing judgement (run_set's last command) returns here and
  # its verdict is shown, rather than ending the script under `set -e`.
  set_rc=0
  run_set "$rev" "$out" "$expect" >"$verdict" || set_rc=$?
  cat "$verdict"
  line="$(tail -n 1 "$verdict")"
  [[ $set_rc -eq 0 ]] || rc=1
  if [[ "$line" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    total_skipped=$((total_skipped + BASH_REMATCH[3]))
  else
    rc=1
    total_failed=$((total_failed + 1))
  fi
done
if [[ ${#revisions[@]} -gt 1 ]]; then
  echo "conformance (${requirements}): $total_passed passed, $total_failed failed, $total_skipped skipped"
fi
exit "$rc"
