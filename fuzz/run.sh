#!/usr/bin/env bash
# Runs kinema's fuzz targets (built by `cmake --preset fuzz && cmake --build --preset fuzz`), one
# at a time, each under ASan/UBSan with libFuzzer's limits: an input slower than 1 s, a process
# over 1 GiB, a leak, a crash or any exception but kinema::Error is a finding. Fails on the first
# target with a finding; the input is saved as build/fuzz/findings/<target>/crash-… (or leak-,
# timeout-, oom-).
#
#   fuzz/run.sh -t SECONDS [TARGET...]   each target for SECONDS (the test command: 10)
#   fuzz/run.sh -n RUNS [TARGET...]      each target for RUNS executions (fuzz/run_long.sh)
#
# TARGETs are the names after fuzz_ (bvh, gltf, …); none: all. New inputs go into a working
# corpus, build/fuzz/corpus/<target>/, read together with the seed folder the build made. Prints
# one line per target: executions, executions/s, peak RSS, corpus inputs (libFuzzer's count at
# the end), seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=(bvh gltf vrma kmc kmm graph stick_path tags scene obj png)
BUILD=${KINEMA_FUZZ_BUILD:-build/fuzz}
limit=()
case "${1:-}" in
  -t) limit=(-max_total_time="$2") ;;
  -n) limit=(-runs="$2") ;;
  *) echo "usage: fuzz/run.sh -t SECONDS | -n RUNS [TARGET...]" >&2; exit 1 ;;
esac
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
printf '%-11s %10s %8s %9s %7s %6s\n' target executions exec/s "peak MiB" corpus s
for t in "${targets[@]}"; do
  program="$BUILD/fuzz/fuzz_$t"
  seeds="$BUILD/fuzz/seeds/$t"
  corpus="$BUILD/corpus/$t"
  findings="$BUILD/findings/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  start=$SECONDS
  # -timeout=1: an input that takes over a second is a finding; -rss_limit_mb (and with it the
  # malloc limit): so is a process over 1 GiB or one allocation over that.
  if ! "$program" "${limit[@]}" -timeout=1 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$seeds" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz_$t: FINDING (log: $log, input: $(ls -t "$findings" | head -n 1))" >&2
    exit 1
  fi
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  printf '%-11s %10s %8s %9s %7s %6s\n' "$t" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$(stat peak_rss_mb)" \
    "$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)" \
    "$((SECONDS - start))"
done
