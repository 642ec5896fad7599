#!/usr/bin/env bash
# Installs what is missing, builds kinema (release) and runs the whole test suite with ctest,
# then builds the focused ASan/UBSan preset (asan-focus: parsers, solvers and raw memory — every
# module but the renderer and the pipeline's jobs, without the CLI) and runs its tests under the
# sanitizers (KINEMA_TEST_ASAN=0 skips that pass; `cmake --preset asan` and `ctest --preset asan`
# sanitize the whole suite). README.md gives the measured time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release
if [ "${KINEMA_TEST_ASAN:-1}" = "1" ]; then
  cmake --preset asan-focus >/dev/null
  cmake --build --preset asan-focus
  ctest --preset asan-focus
fi
