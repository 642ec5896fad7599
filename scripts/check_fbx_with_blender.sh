#!/usr/bin/env bash
# Checks kinema's FBX writer with a real third-party reader: Blender 3.4's FBX importer must put
# every joint of kinema's FBX files (a skinned glTF character, a skinned FBX, a BVH walk) where
# kinema's own evaluation of the clip does, within 1 mm, at five frames of the clip.
#
#   scripts/check_fbx_with_blender.sh CLIENTS_DIR [IO_TESTS]
#
# CLIENTS_DIR: a copy of the real-client harnesses, installed by their install.sh (blender_eval.py).
# IO_TESTS: the io test program (default build/release/tests/kinema_io_tests); its test
# FbxClientFiles writes the .fbx files and kinema's joint positions (NAME.kinema.json).
# Blender reports armature bones (joints a skin uses) and other nodes as objects; both are
# compared by name. Prints one line per file and exits 1 if any check fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clients=$(cd "$1" && pwd)
tests=${2:-$root/build/release/tests/kinema_io_tests}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
KINEMA_FBX_CHECK_DIR=$tmp "$tests" --gtest_filter='FbxClientFiles.*' >"$tmp/test.log" 2>&1 ||
  { echo "kinema could not write the FBX files"; cat "$tmp/test.log"; exit 1; }
failed=0
for fbx in "$tmp"/*.fbx; do
  name=$(basename "$fbx" .fbx)
  times=$(python3 -c "import json,sys; print(','.join(repr(t) for t in json.load(open(sys.argv[1]))['times']))" "$tmp/$name.kinema.json")
  blender -b --factory-startup --python-exit-code 3 --python "$clients/blender_eval.py" -- \
    --in "$fbx" --times "$times" --out "$tmp/$name.blender.json" >"$tmp/$name.blender.log" 2>&1 ||
    { echo "$name: Blender could not import the FBX"; tail -5 "$tmp/$name.blender.log"; failed=1; continue; }
  python3 - "$tmp/$name.kinema.json" "$tmp/$name.blender.json" "$name" <<'PY' || failed=1
import json, math, sys
kinema_path, blender_path, name = sys.argv[1:]
kinema, blender = json.load(open(kinema_path)), json.load(open(blender_path))
worst, total, count, bones, objects = 0.0, 0.0, 0, 0, 0
for ks, bs in zip(kinema["samples"], blender["samples"]):
    found = [(label.split("/")[-1], p, "bone") for label, p in bs.get("positions", {}).items()]
    found += [(label, p, "object") for label, p in bs.get("objects", {}).items()]
    for label, p, kind in found:
        if label not in ks["positions"]:
            continue
        d = math.dist(p, ks["positions"][label])
        worst, total, count = max(worst, d), total + d, count + 1
        bones += kind == "bone"
        objects += kind == "object"
ok = count > 0 and worst <= 1e-3
print("%-12s Blender 3.4 vs kinema: %d joint positions (%d bones, %d objects) at %d times, "
      "max %.3g mm, mean %.3g mm  %s"
      % (name, count, bones, objects, len(blender["samples"]), worst * 1e3,
         total / max(count, 1) * 1e3, "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
exit $failed
