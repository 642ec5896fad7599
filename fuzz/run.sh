#!/usr/bin/env bash
# Runs kinema's fuzz targets (built by `cmake --preset fuzz && cmake --build --preset fuzz`), one
# at a time, each under ASan/UBSan with libFuzzer's limits: an input slower than 1 s, a process
# over 1 GiB, a leak, a crash or any exception but kinema::Error is a finding. Fails on the first
# target with a finding; the input is saved as build/fuzz/findings/<target>/crash-… (or leak-,
# timeout-, oom-).
#
#   fuzz/run.sh -t SECONDS [TARGET...]   each target for SECONDS (the test command: 5)
#   fuzz/run.sh -n RUNS [TARGET...]      each target for RUNS executions (fuzz/run_long.sh)
#
# TARGETs are the names after fuzz_ (bvh, gltf, …); none: all. New inputs go into a working
# corpus, build/fuzz/corpus/<target>/, read together with the seed folder the build made. Prints
# one line per target: executions, executions/s (over the wall time), peak RSS, corpus inputs
# (libFuzzer's count at the end, seeds included), seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=(bvh gltf vrma kmc kmm kml graph stick_path tags scene obj png)
BUILD=${KINEMA_FUZZ_BUILD:-build/fuzz}
mode=${1:-}
budget=${2:-}
if [[ "$mode" != -t && "$mode" != -n ]] || ! [[ "$budget" =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/run.sh -t SECONDS | -n RUNS [TARGET...]" >&2
  exit 1
fi
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
printf '%-11s %10s %8s %9s %7s %6s\n' target executions exec/s "peak MiB" corpus s
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
for t in "${targets[@]}"; do
  program="$BUILD/fuzz/fuzz_$t"
  seeds="$BUILD/fuzz/seeds/$t"
  corpus="$BUILD/corpus/$t"
  findings="$BUILD/findings/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  : >"$log"
  start=$SECONDS executed=0 peak=0 stalls=0
  while :; do
    # What is left of the budget (a run restarts after a stall, below).
    if [ "$mode" = -t ]; then
      left=$((budget - (SECONDS - start)))
      # A fixed seed (KINEMA_FUZZ_SEED, default 1): the test command's short runs walk the same
      # mutations every time on the same build, so CI does not pass or fail by the clock's luck.
      limit=(-max_total_time=$((left > 1 ? left : 1)) -seed="${KINEMA_FUZZ_SEED:-1}")
    else
      limit=(-runs=$((budget - executed)))
    fi
    # -timeout=1: an input that takes over a second is a finding; -rss_limit_mb (and with it the
    # malloc limit): so is a process over 1 GiB or one allocation over that.
    status=0
    "$program" "${limit[@]}" -timeout=1 -rss_limit_mb=1024 -print_final_stats=1 \
      -artifact_prefix="$findings/" "$corpus" "$seeds" >"$log.part" 2>&1 || status=$?
    cat "$log.part" >>"$log"
    n=$(stat number_of_executed_units "$log.part")
    executed=$((executed + ${n:-0}))
    rss=$(stat peak_rss_mb "$log.part")
    peak=$((${rss:-0} > peak ? ${rss:-0} : peak))
    [ $status -eq 0 ] && break
    # A timeout whose input runs alone well within the second was the shared machine stalling
    # the process (the clock is wall time), not the reader: noted, and the run goes on.
    input=$(ls -t "$findings" | head -n 1)
    if [[ "$input" == timeout-* ]] && [ $stalls -lt 3 ] &&
      "$program" -timeout=1 "$findings/$input" >"$log.rerun" 2>&1; then
      stalls=$((stalls + 1))
      echo "fuzz_$t: $input did not reproduce alone ($(grep -o 'in [0-9]* ms' "$log.rerun")):" \
        "a stall of the machine, not a finding; going on" >&2
      mv "$findings/$input" "$findings/stall-${input#timeout-}"
      continue
    fi
    tail -n 60 "$log" >&2
    echo "fuzz_$t: FINDING (log: $log, input: $findings/$input)" >&2
    exit 1
  done
  rm -f "$log.part" "$log.rerun"
  printf '%-11s %10s %8s %9s %7s %6s\n' "$t" "$executed" \
    "$((executed / (SECONDS - start > 0 ? SECONDS - start : 1)))" "$peak" \
    "$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)" "$((SECONDS - start))"
done
