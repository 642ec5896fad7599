#!/usr/bin/env bash
# Records how Blender 3.4 and three.js read the fixtures beside this script: world positions of
# every joint at every frame, in the file's own axes and units (centimetres), as small JSON files
# that tests/io/bvh_translation_test.cpp compares kinema's reading with.
#
#   tests/data/bvh/translation/record_references.sh CLIENTS_DIR
#
# CLIENTS_DIR is a writable copy of the real-client harnesses (Blender's blender_eval.py and
# three.js's node/browser_check.mjs, installed by their install.sh). Nothing of kinema runs here.
set -euo pipefail
clients=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
frames=0,1,2,3,4,5,6,7,8
times=$(python3 -c "print(','.join(repr(f * 0.033333) for f in range(9)))")
record() {  # record FIXTURE TOOL
  local in="$here/$1.bvh" raw="$tmp/$1.$2.json"
  if [ "$2" = blender ]; then
    blender -b --factory-startup --python-exit-code 3 --python "$clients/blender_eval.py" -- \
      --in "$in" --frames "$frames" --out "$raw" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  else
    (cd "$clients" && node node/browser_check.mjs "$in" --time "$times" --json "$raw" >"$tmp/log" 2>&1) ||
      { cat "$tmp/log"; exit 1; }
  fi
  python3 - "$raw" "$here/$1.$2.json" "$2" <<'PY'
import json, sys
raw, out, tool = sys.argv[1:]
d = json.load(open(raw))
frames = []
for s in d["samples"]:
    # Joint heads only (three.js also reports End Sites as "<joint>/ENDSITE").
    frames.append({k: v for k, v in sorted(s["positions"].items()) if "/" not in k})
version = d.get("blender_version") or "three.js r187 BVHLoader"
json.dump({"reader": tool, "version": version, "unit": "file units (cm)", "frames": frames},
          open(out, "w"), indent=1)
PY
  echo "wrote $here/$1.$2.json"
}
record local_translation blender
record local_translation_moving blender
record displacement threejs
record displacement blender
