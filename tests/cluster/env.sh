# A cluster of example servers on loopback for the cluster tests and the load benchmark: a
# Redis server of its own (Debian's redis-server), N nodes sharing their sessions on it, and
# HAProxy (Debian's haproxy) in front, balancing every request round robin with no stickiness.
# Source it (needs `repo` and a `die` function), then:
#
#   cluster_install                 installs redis-server, redis-cli (redis-tools: the Rust
#                                   tests create their Redis Clusters with it; Sentinels are
#                                   `redis-server --sentinel`) and haproxy when missing (apt-get)
#   cluster_start BIN N LOGDIR [ARGS...]
#                                   starts Redis, N nodes `BIN --port P --redis URL ARGS...`
#                                   and HAProxy; sets `redis_port`, `node_ports` (array),
#                                   `node_pids` (array), `lb_port`, `lb_url`
#   cluster_kill_node I             SIGKILLs node I (0-based)
#   cluster_restart_node I          starts node I again on its port
#   cluster_stop                    stops everything (also installed as an EXIT trap)

cluster_dir=""
redis_pid=""
lb_pid=""
node_pids=()
node_ports=()
node_bin=""
node_args=()
cluster_logs=""

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

cluster_install() {
  local missing=()
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v redis-cli >/dev/null || missing+=(redis-tools)
  command -v haproxy >/dev/null || [[ -x /usr/sbin/haproxy ]] || missing+=(haproxy)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "cluster: installing ${missing[*]} (apt-get)" >&2
  local sudo=""
  [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
    || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q "${missing[@]}" >/dev/null; } \
    || die "could not install ${missing[*]}"
  # Debian starts the packaged services; the tests run their own.
  $sudo systemctl stop redis-server haproxy >/dev/null 2>&1 || true
  $sudo service redis-server stop >/dev/null 2>&1 || true
  $sudo service haproxy stop >/dev/null 2>&1 || true
}

haproxy_bin() {
  command -v haproxy 2>/dev/null || echo /usr/sbin/haproxy
}

start_node() {
  local i="$1"
  "$node_bin" --port "${node_ports[$i]}" --redis "redis://127.0.0.1:$redis_port" \
    ${node_args[@]+"${node_args[@]}"} >>"$cluster_logs/node-$i.log" 2>&1 &
  node_pids[$i]=$!
  wait_for_port "${node_ports[$i]}" 60 "${node_pids[$i]}" || die "node $i failed to start (log: $cluster_logs/node-$i.log)"
}

cluster_start() {
  node_bin="$1"
  local n="$2"
  cluster_logs="$3"
  shift 3
  node_args=("$@")
  mkdir -p "$cluster_logs"
  cluster_dir="$(mktemp -d)"
  trap cluster_stop EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  redis_port="$(free_port)"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$cluster_dir" >"$cluster_logs/redis.log" 2>&1 &
  redis_pid=$!
  wait_for_port "$redis_port" 20 "$redis_pid" || die "redis-server failed to start"
  local i servers=""
  for ((i = 0; i < n; i++)); do
    node_ports[$i]="$(free_port)"
    start_node "$i"
    servers+="  server node$i 127.0.0.1:${node_ports[$i]} check inter 300ms fall 1 rise 1"$'\n'
  done
  lb_port="$(free_port)"
  cat >"$cluster_dir/haproxy.cfg" <<CFG
global
  maxconn 4000
defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout tunnel 120s
  option redispatch
  retries 3
frontend mcp
  bind 127.0.0.1:$lb_port
  default_backend nodes
backend nodes
  # Every request to the next node: no stickiness, no preference for the last server.
  balance roundrobin
  http-response set-header X-Mcp-Node %s
$servers
CFG
  "$(haproxy_bin)" -f "$cluster_dir/haproxy.cfg" -db >"$cluster_logs/haproxy.log" 2>&1 &
  lb_pid=$!
  wait_for_port "$lb_port" 20 "$lb_pid" || die "haproxy failed to start (log: $cluster_logs/haproxy.log)"
  lb_url="http://127.0.0.1:$lb_port/mcp"
  echo "cluster: redis :$redis_port, nodes ${node_ports[*]}, haproxy $lb_url" >&2
}

cluster_kill_node() {
  kill -9 "${node_pids[$1]}" 2>/dev/null || true
  wait "${node_pids[$1]}" 2>/dev/null || true
}

cluster_restart_node() {
  start_node "$1"
}

stop_pid() {
  local pid="$1"
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

cluster_stop() {
  local rc=$?
  stop_pid "$lb_pid"
  local pid
  for pid in ${node_pids[@]+"${node_pids[@]}"}; do stop_pid "$pid"; done
  stop_pid "$redis_pid"
  [[ -n "$cluster_dir" ]] && rm -rf "$cluster_dir"
  if [[ $rc -ne 0 && -n "$cluster_logs" ]]; then
    local log
    for log in "$cluster_logs"/*.log; do
      [[ -f "$log" ]] || continue
      echo "--- $log (tail) ---" >&2
      tail -n 20 "$log" >&2 || true
    done
  fi
  exit "$rc"
}
