#!/usr/bin/env bash
# The long fuzz run RELIABILITY.md records: builds the fuzz preset (clang, ASan/UBSan) and runs
# every target (or the TARGETs named) for 1,000,000 executions each, one after another.
#   fuzz/run_long.sh [TARGET...]        (KINEMA_FUZZ_RUNS=N changes the count)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
exec bash fuzz/run.sh -n "${KINEMA_FUZZ_RUNS:-1000000}" "$@"
