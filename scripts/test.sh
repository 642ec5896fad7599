#!/usr/bin/env bash
# Installs what is missing, builds kinema (release) and runs the whole test suite with ctest,
# then builds the focused ASan/UBSan preset (asan-focus: parsers, solvers and raw memory — every
# module but the renderer and the pipeline's jobs, without the CLI) and runs its tests under the
# sanitizers (KINEMA_TEST_ASAN=0 skips that pass; `cmake --preset asan` and `ctest --preset asan`
# sanitize the whole suite). Then it builds the libFuzzer targets (preset fuzz: clang, ASan/UBSan;
# fuzz/) and runs each reader's target for 5 s, failing on any finding (KINEMA_TEST_FUZZ=0 skips
# that). README.md gives the measured time.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase prints its wall time ("== phase: N s"), so a CI log shows where the time goes.
phase() {
  local name="$1" start=$SECONDS
  shift
  "$@"
  echo "== ${name}: $((SECONDS - start)) s (total $SECONDS s)"
}
quietly() { "$@" >/dev/null; }
phase setup bash scripts/setup.sh
phase "release configure" quietly cmake --preset release
phase "release build" cmake --build --preset release
# The Python package, installed for Debian's python3 (import kinema from anywhere); the release
# tests run its pytest suite against the build tree's copy.
phase "python install" quietly cmake --install build/release --component python
phase "python import" bash -c 'cd / && /usr/bin/python3 -c "import kinema; print(kinema.__file__)"'
phase "release tests" ctest --preset release
if [ "${KINEMA_TEST_ASAN:-1}" = "1" ]; then
  phase "asan-focus configure" quietly cmake --preset asan-focus
  phase "asan-focus build" cmake --build --preset asan-focus
  phase "asan-focus tests" ctest --preset asan-focus
fi
if [ "${KINEMA_TEST_FUZZ:-1}" = "1" ]; then
  phase "fuzz configure" quietly cmake --preset fuzz
  phase "fuzz build" cmake --build --preset fuzz
  phase "fuzz runs" bash fuzz/run.sh -t 5
fi
