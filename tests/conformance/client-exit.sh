#!/usr/bin/env bash
# Runs the conformance client for one scenario of the suite's client mode and records how it
# ended, for summarize.py. run-client.sh hands the suite the command
#     exec bash tests/conformance/client-exit.sh <client binary>
# and the suite appends the mock server's URL and sets MCP_CONFORMANCE_SCENARIO. The exit
# status lands in $MCP_CONFORMANCE_EXIT_DIR/<scenario>.rc (a scenario's `/` makes a
# subdirectory, as in the suite's own results). When the suite stops the client at its
# timeout (SIGTERM to this script), the client (its process group) is stopped as well and the
# status recorded is the signal's (143), so a hung client never passes.
set -u
scenario="${MCP_CONFORMANCE_SCENARIO:?the suite sets MCP_CONFORMANCE_SCENARIO}"
exit_dir="${MCP_CONFORMANCE_EXIT_DIR:?run-client.sh sets MCP_CONFORMANCE_EXIT_DIR}"
if [[ ! "$scenario" =~ ^[A-Za-z0-9_][A-Za-z0-9_./-]*$ || "$scenario" == *..* ]]; then
  echo "client-exit: unexpected scenario name: $scenario" >&2
  exit 2
fi
[[ $# -ge 1 ]] || { echo "client-exit: usage: client-exit.sh CLIENT [ARGS...]" >&2; exit 2; }

# The client runs in a process group of its own (job control), so that stopping it stops
# whatever it started as well.
set -m
"$@" &
client=$!
trap 'kill -TERM -- "-$client" 2>/dev/null' TERM INT
wait "$client"
rc=$?
# A trapped signal ends `wait` early; wait again for the client's own status.
if kill -0 "$client" 2>/dev/null || [[ $rc -gt 128 ]]; then
  wait "$client"
  rc=$?
fi
status_file="$exit_dir/$scenario.rc"
mkdir -p "$(dirname "$status_file")"
printf '%s\n' "$rc" > "$status_file"
exit "$rc"
