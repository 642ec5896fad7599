#!/usr/bin/env bash
# Fails (and lists the files) when any C++ file in the repository is not clang-formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed (scripts/setup.sh installs it)"; exit 1; }
# One clang-format process for all the files (xargs batches them): starting it once a file cost
# ~0.1 s each, most of this check's time (107 s for 832 files against 6 s).
list_files() { git ls-files -z '*.cpp' '*.h' 2>/dev/null || find include src tests tools bench \( -name '*.cpp' -o -name '*.h' \) -print0; }
if report=$(list_files | xargs -0 --no-run-if-empty clang-format --dry-run -Werror 2>&1); then
  echo "all C++ files are clang-formatted"
  exit 0
fi
# Each violation reads "path:line:col: error: code should be clang-formatted ..."; anything else
# (clang-format missing a file, crashing) is shown whole.
bad=$(printf '%s\n' "$report" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -z "$bad" ]; then
  printf 'clang-format failed:\n%s\n' "$report"; exit 1
fi
printf 'not clang-formatted (run clang-format -i):\n'; printf '%s\n' "$bad" | sed 's/^/  /'; exit 1
