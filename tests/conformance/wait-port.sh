# wait_for_port PORT SECS PID: waits (bounded by SECS) until something accepts TCP connections
# on 127.0.0.1:PORT; fails early if process PID exits first. Sourced by example-server.sh
# and tests/interop/client-run.sh.
wait_for_port() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, socket, sys, time
port, limit, pid = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("server process exited before accepting connections")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(f"server did not accept TCP connections on port {port} within {limit:g}s")
PY
}
