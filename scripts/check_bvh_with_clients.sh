#!/usr/bin/env bash
# Checks kinema's BVH position-channel handling with real third-party readers (Blender 3.4's
# importer and three.js's BVHLoader): every fixture of tests/data/bvh/translation/ is converted
# .bvh → .bvh by kinema, and both readers must read the written file the same way, and the same
# way as the fixture's own correct reading (recorded beside it by record_references.sh).
#
#   scripts/check_bvh_with_clients.sh CLIENTS_DIR [KINEMA]
#
# CLIENTS_DIR: a writable copy of the real-client harnesses, installed by their install.sh.
# KINEMA: the kinema program (default build/release/kinema). Prints one line per check and exits
# 1 if any fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clients=$(cd "$1" && pwd)
kinema=${2:-$root/build/release/kinema}
fixtures=$root/tests/data/bvh/translation
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
times=$(python3 -c "print(','.join(repr(f * 0.033333) for f in range(9)))")
failed=0
for name in local_translation local_translation_moving displacement; do
  "$kinema" -q convert "$fixtures/$name.bvh" "$tmp/$name.bvh"
  blender -b --factory-startup --python-exit-code 3 --python "$clients/blender_eval.py" -- \
    --in "$tmp/$name.bvh" --frames 0,1,2,3,4,5,6,7,8 --out "$tmp/$name.blender.json" >/dev/null 2>&1
  (cd "$clients" && node node/browser_check.mjs "$tmp/$name.bvh" --time "$times" \
    --json "$tmp/$name.threejs.json" >/dev/null 2>&1)
  reference=$fixtures/$name.blender.json
  [ "$name" = displacement ] && reference=$fixtures/$name.threejs.json
  python3 - "$tmp/$name.blender.json" "$tmp/$name.threejs.json" "$reference" "$name" <<'PY' || failed=1
import json, math, sys
blender, three, reference, name = sys.argv[1:]
def frames(path):  # a client's report (samples) or a recorded reference (frames); joints only
    d = json.load(open(path))
    if "frames" in d:
        return d["frames"]
    return [{k: v for k, v in s["positions"].items() if "/" not in k} for s in d["samples"]]
def worst(a, b):
    return max(math.dist(fa[k], fb[k]) for fa, fb in zip(a, b) for k in fa)
b, t, r = frames(blender), frames(three), frames(reference)
height_cm = 168.0
ok = True
for label, d in (("Blender vs three.js", worst(b, t)), ("Blender vs the fixture's reading", worst(b, r)),
                 ("three.js vs the fixture's reading", worst(t, r))):
    good = d <= 1e-6 * height_cm  # a millionth of the figure's height
    ok = ok and good
    print("%-28s %-34s %.2e cm  %s" % (name, label, d, "ok" if good else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
exit $failed
