# Starts one of the repository's example servers on a free loopback port, for the conformance
# and interop runners. Source it, then call `start_example NAME LOG STARTUP_SECS [ARGS...]`; it
# sets `server_pid` and `port` and installs an EXIT trap that stops the server (SIGTERM, then
# SIGKILL after 5 s); `kill_example` stops it earlier (to start another one). `build_example
# NAME` only builds an example and sets `example_bin` (the client conformance runner uses it).
# Needs `repo` and a `die` function in the caller.

# shellcheck source=tests/conformance/wait-port.sh
. "$(dirname "${BASH_SOURCE[0]}")/wait-port.sh"

server_pid=""
port=""
server_log=""

# kill_example: stops the running server, if any (SIGTERM, then SIGKILL after 5 s).
kill_example() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}

stop_example() {
  local rc=$?
  kill_example
  if [[ -n "$server_log" && $rc -ne 0 && -f "$server_log" ]]; then
    echo "--- $server_log (tail) ---" >&2
    tail -n 40 "$server_log" >&2 || true
  fi
  exit "$rc"
}

# build_example NAME: build examples/NAME (debug) and set `example_bin` to the binary's path.
example_bin=""
build_example() {
  local name="$1" target_dir
  command -v cargo >/dev/null || die "cargo not found"
  echo "$name: cargo build --features full --example $name" >&2
  (cd "$repo" && cargo build --features full --example "$name") || die "cargo build --features full --example $name failed"
  target_dir="$(cd "$repo" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null || true)"
  target_dir="${target_dir:-${CARGO_TARGET_DIR:-$repo/target}}"
  example_bin="$target_dir/debug/examples/$name"
  [[ -x "$example_bin" ]] || die "built binary not found at $example_bin"
}

# free_port: prints a free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_example NAME LOG STARTUP_SECS [ARGS...]: build examples/NAME, run it with --port on a
# free port (and ARGS; `{port}` in one is replaced by that port), and wait (bounded) until it
# accepts TCP connections.
start_example() {
  local name="$1" log="$2" startup="$3" bin
  shift 3
  local args=("$@")
  build_example "$name"
  bin="$example_bin"
  port="$(free_port)"
  args=("${args[@]//\{port\}/$port}")
  server_log="$log"
  trap stop_example EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  echo "$name: starting $bin --port $port ${args[*]} (log: $log)" >&2
  "$bin" --port "$port" "${args[@]}" >"$log" 2>&1 &
  server_pid=$!
  wait_for_port "$port" "$startup" "$server_pid" || die "server failed to start"
}
