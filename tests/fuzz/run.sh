#!/usr/bin/env bash
# Builds the fuzz targets of actix-mcp and runs them with libFuzzer, on the stable toolchain.
#
#   bash tests/fuzz/run.sh --smoke               # CI: every target for 25 s
#   bash tests/fuzz/run.sh --minutes 10 [T...]   # long runs, one target after the other
#   bash tests/fuzz/run.sh --merge [T...]        # minimise what runs found into corpus/<T>
#                                                # (at most MAX_FILES inputs, default 300)
#   bash tests/fuzz/run.sh --build               # build only
#
# libFuzzer comes from the `libfuzzer-sys` crate, compiled from its C++ sources with the
# machine's g++ (nothing to install beyond Rust and a C++ compiler); coverage comes from the
# LLVM sanitizer-coverage pass that cargo-fuzz turns on, asked for by hand through RUSTFLAGS
# (plain `-C` options, so stable rustc takes them). The flags are applied to the target only
# (`--target`), never to build scripts and proc macros.
#
# Each target starts from its committed seeds (corpus/<T>, read only) plus what earlier runs
# on this machine found (.work/corpus/<T>, where new inputs go), with the dictionary
# dict/<T>.dict when there is one. A crash, a panic, a timeout (10 s for one input) or running
# out of memory stops that target and saves the input under artifacts/<T>/; the script goes on
# with the other targets and exits 1 at the end. Reproduce a saved input with
#   "$CARGO_TARGET_DIR"/<host>/fuzz/<T> artifacts/<T>/<file>
# Set TASKSET="taskset -c 1" (and NICE=10) to keep a long run on one core.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

targets=(jsonrpc dispatch http client_sse client_lines uri_template seal)
mode=run
seconds=25
chosen=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=run; seconds=25 ;;
    --minutes) mode=run; seconds=$(( $2 * 60 )); shift ;;
    --seconds) mode=run; seconds=$2; shift ;;
    --merge) mode=merge ;;
    --build) mode=build ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) chosen+=("$1") ;;
  esac
  shift
done
[ ${#chosen[@]} -gt 0 ] && targets=("${chosen[@]}")

# libfuzzer-sys compiles libFuzzer's C++ sources: a fresh Debian machine may lack g++.
if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing g++ (libFuzzer is C++)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
  else
    echo "libFuzzer needs a C++ compiler: install g++" >&2
    exit 1
  fi
fi

host="$(rustc -vV | sed -n 's/^host: //p')"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
# Coverage instrumentation is for this crate's own build only.
unset CARGO_BUILD_RUSTFLAGS CARGO_ENCODED_RUSTFLAGS

echo "== building the fuzz targets (libFuzzer, profile fuzz, $host)"
cargo build --locked --profile fuzz --target "$host" $(printf -- '--bin %s ' "${targets[@]}")
[ "$mode" = build ] && exit 0
bin="$CARGO_TARGET_DIR/$host/fuzz"

# The longest input worth trying, per target.
max_len() {
  case "$1" in
    client_sse) echo 16384 ;;
    http|client_lines|dispatch) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

failed=()
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" ".work/corpus/$t" "artifacts/$t"
  dict=()
  [ -f "dict/$t.dict" ] && dict=("-dict=dict/$t.dict")
  if [ "$mode" = merge ]; then
    # libFuzzer's merge records every input's features (edges only, no hit counts) in a
    # control file; minimise.py keeps the few hundred inputs that cover the most of them.
    echo "== $t: minimising corpus/$t and .work/corpus/$t into corpus/$t"
    rm -rf ".work/merged-$t" ".work/picked-$t" ".work/merge-$t.ctl" && mkdir -p ".work/merged-$t"
    ${TASKSET:-} nice -n "${NICE:-0}" "$bin/$t" -merge=1 -use_counters=0 -rss_limit_mb=4096 \
      "-max_len=$(max_len "$t")" -merge_control_file=".work/merge-$t.ctl" "${dict[@]}" \
      ".work/merged-$t" "corpus/$t" ".work/corpus/$t" >".work/merge-$t.log" 2>&1
    python3 minimise.py ".work/merge-$t.ctl" "${MAX_FILES:-300}" ".work/picked-$t"
    rm -rf "corpus/$t" && mv ".work/picked-$t" "corpus/$t"
    continue
  fi
  echo "== $t: ${seconds} s"
  log=".work/$t.log"
  if ${TASKSET:-} nice -n "${NICE:-0}" "$bin/$t" ".work/corpus/$t" "corpus/$t" "${dict[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 "-max_len=$(max_len "$t")" \
      -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1; then
    # The last status line (coverage, features, corpus) and the final statistics.
    grep -E "^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)" "$log" | tail -1 || true
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" "$log" \
      | sed 's/^stat:://; s/: */=/' | tr '\n' ' ' || true
    echo
  else
    echo "!! $t failed; the input is in tests/fuzz/artifacts/$t/:"
    grep -E -A30 "panicked|ERROR: libFuzzer|==ERROR" "$log" | head -60 || tail -40 "$log"
    ls -t "artifacts/$t" | head -3
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found failures in: ${failed[*]}"
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets passed"
