#!/usr/bin/env bash
# Installs what is missing, builds kinema (release), and runs the whole test suite with ctest.
# KINEMA_TEST_ASAN=1 also builds the ASan/UBSan preset and runs the suite under it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release
if [ "${KINEMA_TEST_ASAN:-0}" = "1" ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan
  ctest --preset asan
fi
