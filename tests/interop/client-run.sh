#!/usr/bin/env bash
# Interop test of OUR client: the command-line client (examples/client.rs, built once with
# `cargo build --features full --example client`) against servers written with other SDKs, over stdio and
# over Streamable HTTP on a free 127.0.0.1 port. Legs:
#
#   everything-stdio, everything-http   @modelcontextprotocol/server-everything, the official
#                                       TypeScript reference server (pinned in package.json and
#                                       package-lock.json, installed by `npm ci` via run.sh)
#   python1-stdio, python1-http         tests/interop/python_server.py on the official Python
#                                       SDK `mcp` 1.x (FastMCP)
#   python2-stdio, python2-http         the same server on `mcp` 2.x (FastMCP renamed MCPServer);
#                                       it answers server/discover, so our client (auto-detecting)
#                                       speaks 2026-07-28 to it, sampling and elicitation arriving
#                                       as input_required rounds (the 1.x legs stay 2025-11-25)
#
# HTTP servers listen on 127.0.0.1 only: server-everything's streamableHttp mode takes its port
# from $PORT and listens on every interface, so it runs with `node --import loopback.mjs`.
#
# Each check runs the client once and asserts what it printed: the JSON result on stdout, the
# JSON progress / log / error lines on stderr, the exit status (tests/interop/check.mjs).
#
# Usage:
#   tests/interop/client-run.sh                 # every leg
#   tests/interop/client-run.sh LEG...          # only these legs
#   tests/interop/client-run.sh --install-only  # Node 22, npm packages, Python venvs
#
# Node 22 comes from tests/conformance/node-env.sh (shared cache). The Python SDKs are pinned
# in python-env.sh and installed with pip into tests/interop/.venv/mcp-VERSION (git-ignored) by
# ${MCP_INTEROP_PYTHON:-python3} (3.10 or newer). Environment: CARGO_TARGET_DIR (respected),
# MCP_CONFORMANCE_CACHE, MCP_INTEROP_STARTUP_SECS (a server's time to listen, default 60),
# MCP_INTEROP_RUN_SECS (hard cap on one client run, default 60).
#
# Known behaviour of the peers, asserted as it is:
#   - server-everything (2026.x) lists all its resources in one page (no cursor); the Python
#     test server pages its resources 5 at a time, so pagination is checked there.
#   - server-everything answers an unknown tool and invalid arguments with an `isError` result
#     (no JSON-RPC error); our client passes that through (exit 0).
#   - server-everything sends its logs and its roots/list request outside any request: over
#     HTTP they travel on the standalone GET stream, which our client opens after initializing
#     and waits for (bounded) before its next request, so they reach it even when sent at once.
#   - mcp 1.x answers an unknown resource with JSON-RPC error code 0 (mcp 2.x: -32602).
#   - mcp 1.x logs a ClosedResourceError traceback when a session is deleted while its GET
#     stream is open (server-side noise, in its log only).
#
# Prints one line per check, a summary per leg, and last `interop: N passed, M failed`.
# Exit status: 0 when every check passed, 1 otherwise or on setup errors.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
all_legs=(everything-stdio everything-http python1-stdio python1-http python2-stdio python2-http)
startup_secs="${MCP_INTEROP_STARTUP_SECS:-60}"
run_secs="${MCP_INTEROP_RUN_SECS:-60}"

die() { echo "interop: error: $*" >&2; exit 1; }

legs=()
install_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --install-only) install_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option: $1 (see --help)" ;;
    *) [[ " ${all_legs[*]} " == *" $1 "* ]] || die "unknown leg: $1 (legs: ${all_legs[*]})"
       legs+=("$1"); shift ;;
  esac
done
[[ ${#legs[@]} -gt 0 ]] || legs=("${all_legs[@]}")

# ---------------------------------------------------------------------------------------------
# Setup: Node and server-everything (run.sh installs both), the Python SDKs, our client.

bash "$here/run.sh" --install-only || die "installing Node 22 and the npm packages failed"
# shellcheck source=tests/conformance/node-env.sh
. "$repo/tests/conformance/node-env.sh"
# shellcheck source=tests/conformance/wait-port.sh
. "$repo/tests/conformance/wait-port.sh"
mcp_node_env || die "could not install Node 22"
everything_js="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[[ -f "$everything_js" ]] || die "server-everything is not installed at $everything_js"

# shellcheck source=tests/interop/python-env.sh
. "$here/python-env.sh"
python1="$(python_env "$MCP_PY_V1")"
python2="$(python_env "$MCP_PY_V2")"
[[ $install_only -eq 1 ]] && exit 0

echo "interop: cargo build --features full --example client" >&2
(cd "$repo" && cargo build --features full --example client) || die "cargo build --features full --example client failed"
target_dir="$(cd "$repo" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null || true)"
client="${target_dir:-${CARGO_TARGET_DIR:-$repo/target}}/debug/examples/client"
[[ -x "$client" ]] || die "built client not found at $client"
# --stdio splits its command line on whitespace.
for path in "$NODE" "$everything_js" "$python1" "$python2" "$here/python_server.py"; do
  [[ "$path" != *[[:space:]]* ]] || die "a path with whitespace cannot go through --stdio: $path"
done

work="$(mktemp -d -t interop-client.XXXXXX)"
server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
cleanup() { local rc=$?; stop_server; rm -rf "$work"; exit "$rc"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_server PORT LOG CMD...: runs CMD in the background and waits (bounded) until it
# accepts TCP connections on 127.0.0.1:PORT.
start_server() {
  local port="$1" log="$2"; shift 2
  "$@" >"$log" 2>&1 &
  server_pid=$!
  wait_for_port "$port" "$startup_secs" "$server_pid" || { tail -n 20 "$log" >&2; die "server failed to start: $*"; }
}

# ---------------------------------------------------------------------------------------------
# Checks

leg=""
conn=()
passed=0 failed=0 leg_passed=0 leg_failed=0

pass() { leg_passed=$((leg_passed + 1)); echo "  ok    $leg: $1"; }
fail() { leg_failed=$((leg_failed + 1)); echo "  FAIL  $leg: $1"; }

# check NAME WANT_STATUS EXPR -- ARGS...: runs the client with the leg's connection ($conn)
# and ARGS; passes when it exits with WANT_STATUS and EXPR holds (see check.mjs).
check() {
  local name="$1" want="$2" expr="$3" rc=0
  shift 3
  [[ "${1:-}" == "--" ]] && shift
  timeout --kill-after=5 "$run_secs" "$client" "${conn[@]}" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if "$NODE" "$here/check.mjs" "$want" "$expr" "$rc" "$work/out" "$work/err" 2>"$work/why"; then
    pass "$name"
  else
    fail "$name"
    sed 's/^/  /' "$work/why"
  fi
}

# expect_event FILE LINE NAME: passes when FILE gets the line LINE within 10 s.
expect_event() {
  local file="$1" line="$2" name="$3"
  for _ in $(seq 1 100); do
    if grep -qxF "$line" "$file" 2>/dev/null; then pass "$name"; return; fi
    sleep 0.1
  done
  fail "$name (no \"$line\" in $file within 10 s)"
}

everything_checks() {
  local docs
  docs="$(cd "$(dirname "$everything_js")/docs" && find . -maxdepth 1 -type f -printf '%f\n' | sort)"
  export EVERYTHING_DOCS="$docs"
  check info 0 'out.serverInfo.name === "mcp-servers/everything" && out.protocolVersion === "2025-11-25"
    && "logging" in out.capabilities && "completions" in out.capabilities
    && typeof out.instructions === "string"' -- info
  check "tools (no sampling, elicitation or roots offered)" 0 '["echo", "get-sum", "get-structured-content",
    "trigger-long-running-operation", "toggle-simulated-logging"].every((n) => out.some((t) => t.name === n))
    && !out.some((t) => ["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"].includes(t.name))' -- tools
  check "tools (sampling, elicitation and roots offered)" 0 '["trigger-sampling-request", "trigger-elicitation-request",
    "trigger-url-elicitation", "get-roots-list"].every((n) => out.some((t) => t.name === n))' \
    -- --sampling-reply x --elicit-decline --roots file:///tmp tools
  check "resources: every static document, once" 0 'out.length === env.EVERYTHING_DOCS.split("\n").length
    && new Set(out.map((r) => r.uri)).size === out.length && env.EVERYTHING_DOCS.split("\n")
      .every((d) => out.some((r) => r.uri === "demo://resource/static/document/" + encodeURIComponent(d)))' -- resources
  check templates 0 'out.map((t) => t.uriTemplate).sort().join() ===
    "demo://resource/dynamic/blob/{resourceId},demo://resource/dynamic/text/{resourceId}"' -- templates
  check prompts 0 '["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]
    .every((n) => out.some((p) => p.name === n))' -- prompts
  check "call echo" 0 'text === "Echo: hello interop" && out.isError !== true' -- call echo '{"message":"hello interop"}'
  check "call get-sum" 0 'text === "The sum of 2 and 40 is 42."' -- call get-sum '{"a":2,"b":40}'
  check "call get-structured-content" 0 'out.structuredContent.temperature === 36 && out.structuredContent.humidity === 82
    && JSON.parse(text).conditions === out.structuredContent.conditions' -- call get-structured-content '{"location":"Chicago"}'
  check "call echo with invalid arguments: a tool error" 0 'out.isError === true && text.includes("-32602")' -- call echo '{}'
  check "call an unknown tool: a tool error" 0 'out.isError === true && text.includes("not found")' -- call no-such-tool
  check "prompt args-prompt" 0 'text === "What\u0027s weather in Paris, TX?"' -- prompt args-prompt '{"city":"Paris","state":"TX"}'
  check "prompt resource-prompt (an embedded resource)" 0 'out.messages.some((m) => m.content.type === "resource"
    && m.content.resource.uri === "demo://resource/dynamic/text/3")' -- prompt resource-prompt '{"resourceType":"Text","resourceId":"3"}'
  check "read a text template resource" 0 'text.startsWith("Resource 7: This is a plaintext resource")' \
    -- read demo://resource/dynamic/text/7
  check "read a blob template resource" 0 'Buffer.from(out.contents[0].blob, "base64").toString()
    .startsWith("Resource 3: This is a base64 blob")' -- read demo://resource/dynamic/blob/3
  check "read a static document" 0 'text.includes("# Everything Server - Features")' \
    -- read demo://resource/static/document/features.md
  check "read an unknown resource: exit 1" 1 'error.code === -32602 && error.message.includes("not found")' -- read demo://nowhere
  check "complete a prompt argument" 0 'out.completion.values.join() === "Engineering"' \
    -- complete --prompt completable-prompt department Eng
  check "complete a template variable" 0 'out.completion.values.join() === "5"' \
    -- complete --template 'demo://resource/dynamic/text/{resourceId}' resourceId 5
  check ping 0 'JSON.stringify(out) === "{}"' -- ping
  check "--progress" 0 'text.includes("Steps: 3") && progress.map((p) => p.progress).join() === "1,2,3"
    && progress.every((p) => p.total === 3 && p.progressToken === progress[0].progressToken)' \
    -- --progress call trigger-long-running-operation '{"duration":0.3,"steps":3}'
  check "--log-level debug: a simulated log line" 0 'text.startsWith("Started simulated") && logs.length >= 1
    && logs.every((l) => /message/.test(l.data))' -- --log-level debug call toggle-simulated-logging
  check "--roots, and the log of the roots sync" 0 'text.includes("URI: file:///tmp/interop-root")
    && logs.some((l) => l.level === "info" && l.data.includes("1 root(s) received"))' \
    -- --log-level info --roots file:///tmp/interop-root call get-roots-list
  check "--sampling-reply" 0 'text.includes("\"text\": \"a fine answer\"") && text.includes("actix-mcp-cli")' \
    -- --sampling-reply "a fine answer" call trigger-sampling-request '{"prompt":"hi","maxTokens":20}'
  check "--elicit-accept: a form, defaults filled" 0 'text.includes("- Name: Ada") && text.includes("- Agreed to terms: true")
    && text.includes("- Favorite Integer: 42")' \
    -- --elicit-accept '{"name":"Ada","check":true}' call trigger-elicitation-request
  check "--elicit-decline" 0 'text.includes("declined")' -- --elicit-decline call trigger-elicitation-request
  check "--elicit-accept: a URL, no content" 0 'text.includes("completed the URL elicitation")
    && JSON.parse(text.slice(text.indexOf("{"))).content === undefined' \
    -- --elicit-accept '{}' call trigger-url-elicitation '{"url":"https://example.com/auth","elicitationId":"e-1"}'
  check "URL elicitation required (-32042): exit 1" 1 'error.code === -32042 && error.data.elicitations[0].mode === "url"' \
    -- --elicit-decline call trigger-url-elicitation '{"url":"https://example.com/auth","errorPath":true}'
  check "--cancel-after-ms" 0 'out.cancelled === true' \
    -- --cancel-after-ms 300 call trigger-long-running-operation '{"duration":30,"steps":30}'
  check "--timeout-ms: exit 1" 1 'error.message.includes("no answer within")' \
    -- --timeout-ms 300 call trigger-long-running-operation '{"duration":30,"steps":30}'
}

# python_checks MAJOR EVENTS_FILE
python_checks() {
  local major="$1" events="$2"
  # mcp 2.x answers server/discover, so our client (auto-detecting) speaks 2026-07-28 to it.
  local version="2025-11-25"
  [[ "$major" == 2 ]] && version="2026-07-28"
  check "info: protocol $version" 0 "out.serverInfo.name === \"python-interop\" && out.protocolVersion === \"$version\"
    && \"logging\" in out.capabilities && \"completions\" in out.capabilities" -- info
  check tools 0 'out.map((t) => t.name).sort().join() === "add,ask_model,ask_user,countdown,shout,wait,weather"
    && "temperature_c" in out.find((t) => t.name === "weather").outputSchema.properties' -- tools
  check "resources: three pages of five, in order, once" 0 'JSON.stringify(out.map((r) => r.uri)) ===
    JSON.stringify(["info://server", ...Array.from({ length: 12 }, (_, i) => "note://" + (i + 1))])' -- resources
  check templates 0 'out.map((t) => t.uriTemplate).sort().join() === "greeting://{name},note://{number}/text"' -- templates
  check prompts 0 'out.length === 1 && out[0].name === "greet"
    && JSON.stringify(out[0].arguments.map((a) => [a.name, a.required])) === "[[\"name\",true],[\"style\",false]]"' -- prompts
  check "call add (structured result)" 0 'text === "42" && out.structuredContent.result === 42' -- call add '{"a":2,"b":40}'
  check "call weather (output schema)" 0 'JSON.stringify(out.structuredContent) ===
    "{\"city\":\"Oslo\",\"temperature_c\":21.5,\"conditions\":\"sunny\"}"
    && JSON.stringify(JSON.parse(text)) === JSON.stringify(out.structuredContent)' \
    -- call weather '{"city":"Oslo"}'
  check "call add with invalid arguments: a tool error" 0 'out.isError === true && text.includes("validation error")' \
    -- call add '{"a":"x","b":1}'
  check "call an unknown tool: a tool error" 0 'out.isError === true && text.includes("Unknown tool")' -- call no_such_tool
  check "prompt greet" 0 'text === "Say hello to Ada in a formal style."' -- prompt greet '{"name":"Ada","style":"formal"}'
  check "read a resource" 0 "text === \"python-interop on mcp $major.x\"" -- read info://server
  check "read a listed note" 0 'text === "note 7"' -- read note://7
  check "read through a template" 0 'text === "Hello, Bob!"' -- read greeting://Bob
  check "read through another template" 0 'text === "note 3"' -- read note://3/text
  check "read an unknown resource: exit 1" 1 'typeof error.code === "number" && error.message.includes("Unknown resource")' \
    -- read note://99
  check "complete a prompt argument" 0 'out.completion.values.join() === "Ada,Alan,Alonzo"' -- complete --prompt greet name A
  check "complete a template variable" 0 'out.completion.values.join() === "Barbara"' \
    -- complete --template 'greeting://{name}' name B
  check ping 0 'JSON.stringify(out) === "{}"' -- ping
  check "--progress" 0 'text === "counted 4 steps" && progress.map((p) => p.progress).join() === "1,2,3,4"
    && progress.every((p, i) => p.total === 4 && p.message === "step " + (i + 1))' -- --progress call countdown '{"steps":4}'
  check "--log-level info: info and warning, no debug" 0 'text === "HI"
    && JSON.stringify(logs.map((l) => [l.level, l.data])) === "[[\"info\",\"info: hi\"],[\"warning\",\"warning: hi\"]]"' \
    -- --log-level info call shout '{"message":"hi"}'
  check "--log-level debug: all three" 0 'logs.map((l) => l.level).join() === "debug,info,warning"' \
    -- --log-level debug call shout '{"message":"hi"}'
  check "--sampling-reply" 0 'text === "model said: blue"' -- --sampling-reply blue call ask_model '{"question":"sky?"}'
  check "--elicit-accept" 0 'text === "hello Ada"' -- --elicit-accept '{"name":"Ada"}' call ask_user
  check "--elicit-decline" 0 'text === "user chose decline"' -- --elicit-decline call ask_user
  : >"$events"
  check "--cancel-after-ms" 0 'out.cancelled === true' -- --cancel-after-ms 500 call wait '{"seconds":30}'
  expect_event "$events" "cancelled wait" "the cancellation reached the server"
  check "--timeout-ms: exit 1" 1 'error.message.includes("no answer within")' -- --timeout-ms 300 call wait '{"seconds":30}'
}

# ---------------------------------------------------------------------------------------------
# Legs

run_leg() {
  leg="$1" leg_passed=0 leg_failed=0
  local port log events="$work/events-$1"
  export INTEROP_EVENTS="$events"
  echo "interop: leg $leg" >&2
  case "$leg" in
    everything-stdio)
      conn=(--stdio "$NODE $everything_js stdio")
      everything_checks ;;
    everything-http)
      port="$(free_port)" log="$work/$leg.log"
      start_server "$port" "$log" env PORT="$port" "$NODE" --import "$here/loopback.mjs" "$everything_js" streamableHttp
      conn=(--url "http://127.0.0.1:$port/mcp")
      everything_checks
      stop_server ;;
    python1-stdio|python2-stdio)
      local py="$python1" major=1
      [[ "$leg" == python2-* ]] && py="$python2" major=2
      conn=(--stdio "$py $here/python_server.py")
      python_checks "$major" "$events" ;;
    python1-http|python2-http)
      local py="$python1" major=1
      [[ "$leg" == python2-* ]] && py="$python2" major=2
      port="$(free_port)" log="$work/$leg.log"
      start_server "$port" "$log" "$py" "$here/python_server.py" --http "$port"
      conn=(--url "http://127.0.0.1:$port/mcp")
      python_checks "$major" "$events"
      stop_server ;;
  esac
  if [[ $leg_failed -gt 0 && -n "${log:-}" && -f "${log:-}" ]]; then
    echo "  --- $leg server log (tail) ---"; tail -n 30 "$log" | sed 's/^/  /'
  fi
  echo "interop[$leg]: $leg_passed passed, $leg_failed failed"
  passed=$((passed + leg_passed)) failed=$((failed + leg_failed))
}

for name in "${legs[@]}"; do run_leg "$name"; done
echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
