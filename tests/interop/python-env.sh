# The official Python SDK in a venv, for the interop runners: source it, then call
# `python_env VERSION`; it prints the interpreter of tests/interop/.venv/mcp-VERSION
# (git-ignored), creating the venv with `pip install mcp==VERSION` when it is missing or holds
# another version. The venv is made by ${MCP_INTEROP_PYTHON:-python3} (3.10 or newer). Needs
# `here` (tests/interop) and a `die` function in the caller.

# The pinned SDKs: the last 1.x (2025-11-25 only) and a 2.x (2025-11-25 and 2026-07-28).
MCP_PY_V1="1.30.0"
MCP_PY_V2="2.3.0"

python_env() {
  local version="$1" venv="$here/.venv/mcp-$1"
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$version')" 2>/dev/null; then
    echo "interop: installing mcp==$version into $venv" >&2
    rm -rf "$venv"
    "${MCP_INTEROP_PYTHON:-python3}" -m venv "$venv" || die "python -m venv failed"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$version" \
      || die "pip install mcp==$version failed"
  fi
  printf '%s\n' "$venv/bin/python"
}
