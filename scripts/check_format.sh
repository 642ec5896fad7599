#!/usr/bin/env bash
# Fails (and lists the files) when any C++ file in the repository is not clang-formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed (scripts/setup.sh installs it)"; exit 1; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find include src tests tools bench -name '*.cpp' -o -name '*.h')
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not clang-formatted (run clang-format -i):\n'; printf '  %s\n' "${bad[@]}"; exit 1
fi
echo "all C++ files are clang-formatted"
