#!/usr/bin/env bash
# What each cargo feature of actix-mcp costs and whether it stands on its own:
#   1. the crates each feature set compiles (`cargo tree -e normal`), against its ceiling;
#   2. no crate with C code in a set without `auth` or `rustls`;
#   3. clippy -D warnings on every target with each feature alone, none, the defaults, and all;
#   4. the tests of the server-only and the client-only builds (the full set runs in
#      scripts/test-all.sh);
#   5. both crates package (`cargo package --workspace`).
# Usage: bash scripts/features.sh [counts|clippy|tests|package]... (default: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "features: error: $*" >&2; exit 1; }

# Feature set, then the most crates it may compile (the count of `cargo tree -e normal
# --prefix none | sort -u`, the way the README reports it).
CEILINGS=(
  "server" 110
  "server,validate" 155
  "server,http,validate" 240
  "client" 110
)
# Every feature a user may pick, each checked on its own.
FEATURES=(server http validate client client-http auth rustls redis otel skills)

count() {
  cargo tree -e normal --prefix none --no-default-features --features "$1" 2>/dev/null | sort -u | wc -l
}

counts() {
  echo "== crates compiled per feature set (cargo tree -e normal --prefix none | sort -u | wc -l)"
  local failed=0 i set ceiling n
  for ((i = 0; i < ${#CEILINGS[@]}; i += 2)); do
    set=${CEILINGS[i]}
    ceiling=${CEILINGS[i + 1]}
    n=$(count "$set")
    printf '%-28s %4d (at most %d)\n' "$set" "$n" "$ceiling"
    if ((n > ceiling)); then
      echo "features: error: \`$set\` compiles $n crates, past its ceiling of $ceiling" >&2
      failed=1
    fi
  done
  for set in client-http "server,http,validate,client-http" full; do
    printf '%-28s %4d\n' "$set" "$(count "$set")"
  done
  echo "== no C code without auth or rustls"
  local c
  for set in server "server,validate" "server,http,validate" client client-http \
    "server,http,validate,client-http,redis,otel"; do
    c=$(cargo tree -e normal,build --prefix none --no-default-features --features "$set" 2>/dev/null |
      awk '{print $1}' | sort -u | grep -E '^(cc|cmake|aws-lc-sys|aws-lc-rs|ring|openssl-sys)$' || true)
    if [[ -n $c ]]; then
      echo "features: error: \`$set\` compiles C code: $(echo "$c" | tr '\n' ' ')" >&2
      failed=1
    fi
  done
  ((failed == 0)) || exit 1
  echo "ok"
}

clippy() {
  local set
  # Each feature alone, then the Skills extension with each side.
  for set in "" "${FEATURES[@]}" "server,skills" "client,skills"; do
    echo "== cargo clippy --workspace --all-targets --no-default-features --features '$set' -- -D warnings"
    cargo clippy --workspace --all-targets --no-default-features --features "$set" -- -D warnings
  done
  echo "== cargo clippy --workspace --all-targets (default features) -- -D warnings"
  cargo clippy --workspace --all-targets -- -D warnings
  echo "== cargo clippy --workspace --all-targets --features full -- -D warnings"
  cargo clippy --workspace --all-targets --features full -- -D warnings
}

tests() {
  local set
  for set in server client; do
    echo "== cargo test --workspace --no-default-features --features $set"
    cargo test --workspace --no-default-features --features "$set"
  done
}

package() {
  echo "== cargo package --workspace (both crates build from what they publish)"
  # Cargo verifies each tarball against the others' through a local registry whose crates it
  # unpacks under $CARGO_HOME/registry/src once per name and version, and reuses: a copy of
  # this workspace's crates unpacked by an earlier run (same version, older code) would be
  # built instead of the one just packaged. Remove those copies first (only ours).
  local cargo_home=${CARGO_HOME:-$HOME/.cargo}
  rm -rf "$cargo_home"/registry/src/-*/actix-mcp-[0-9]* "$cargo_home"/registry/src/-*/actix-mcp-actors-[0-9]*
  # The working tree of a CI checkout is clean; locally, uncommitted files are allowed.
  cargo package --workspace --allow-dirty
}

steps=("$@")
((${#steps[@]})) || steps=(counts clippy tests package)
for step in "${steps[@]}"; do
  case $step in
    counts | clippy | tests | package) "$step" ;;
    *) die "unknown step \`$step\` (counts, clippy, tests, package)" ;;
  esac
done
