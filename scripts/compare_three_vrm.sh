#!/usr/bin/env bash
# Compares kinema's renders with three-vrm's screenshots of the same avatar, pose (rest, t = 0)
# and camera (docs/render.md, "Against three-vrm").
#
#   scripts/compare_three_vrm.sh CLIENTS_DIR [OUT_DIR] [--size WxH] [--kinema PATH]
#
# CLIENTS_DIR: a copy of the real-client harnesses, installed by their install.sh (Chromium,
# node/node_modules with three.js and three-vrm). It is only read: its browser_check.mjs and
# browser_page.mjs are copied to a temporary folder and given three options there
# (scripts/three_vrm_tools.py patch-page): --plain (the model alone on a transparent canvas, no
# grid or bone lines, the page's camera in the report), --rotate-vrm0 and --no-outlines.
# OUT_DIR (default: a temporary folder, removed): every screenshot, render, side-by-side image and
# metrics file. --size: the image size (default 640x480). --kinema: the program (default
# build/release/kinema). PYTHON: a Python 3 with numpy and PIL (default python3).
#
# Cases: Godette (VRM 0.x, MToon with outlines) as three-vrm loads it (facing −Z, seen from
# behind, as the clients' own screenshot), turned by VRMUtils.rotateVRM0 (seen from the front),
# and from behind without MToon outlines on either side (the outline shell set apart); debug_robot (VRM 1.0, unlit textured gizmos) with its one mesh copied for each of the 22
# nodes that instance it (kinema's reader keeps one instance of a mesh). kinema draws each through
# the page's camera (--eye --target --fov 40) under the page's lights: the directional light
# (1,2,3) of irradiance 2, the hemisphere light as a light probe (three_vrm_tools.py probe), no
# shadows (three's page has none), no ground, no capsule skeleton, transparent.
# Prints one metrics line per case (compare_images.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '4,14p' "$0"; exit 2; }
clients=$(cd "$1" && pwd)
shift
out=
size=640x480
kinema=$root/build/release/kinema
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --kinema) kinema=$2; shift 2 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
py=${PYTHON:-python3}
"$py" -c 'import numpy, PIL' 2>/dev/null ||
  { echo "$py lacks numpy or PIL (Debian: apt-get install python3-numpy python3-pil; or set PYTHON)" >&2; exit 2; }
[ -d "$clients/node/node_modules/three" ] ||
  { echo "$clients/node/node_modules is missing: run $clients/install.sh" >&2; exit 2; }
[ -x "$kinema" ] || { echo "no kinema program at $kinema (build it, or pass --kinema)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=yes
[ -n "$out" ] || { out=$tmp/out; keep=; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The page, patched in a copy; node_modules linked from the clients.
page=$tmp/page
mkdir -p "$page"
cp "$clients/node/browser_check.mjs" "$clients/node/browser_page.mjs" "$page/"
ln -s "$clients/node/node_modules" "$page/node_modules"
"$py" "$root/scripts/three_vrm_tools.py" patch-page "$page"
"$py" "$root/scripts/three_vrm_tools.py" probe "$out/hemisphere.hdr"
"$py" "$root/scripts/three_vrm_tools.py" deinstance "$root/tests/data/vrm/debug_robot.vrm" \
  "$out/debug_robot_deinstanced.vrm" >/dev/null

godette=$root/tests/data/vrm/Godette_vrm_v4.vrm
robot=$out/debug_robot_deinstanced.vrm
failed=0
for spec in "godette_back|$godette||" "godette_front|$godette|--rotate-vrm0|" \
  "godette_back_no_outlines|$godette|--no-outlines|--no-outlines" "robot|$robot||"; do
  IFS='|' read -r name file extra kextra <<<"$spec"
  # shellcheck disable=SC2086
  node "$page/browser_check.mjs" "$file" --plain $extra --size "$size" --out "$out/${name}_three.png" \
    --json "$out/${name}_three.json" >/dev/null 2>"$out/${name}_three.log" ||
    { echo "$name: three.js failed (see $out/${name}_three.json)"; failed=1; continue; }
  read -r -a view <<<"$("$py" "$root/scripts/three_vrm_tools.py" camera "$out/${name}_three.json")"
  # shellcheck disable=SC2086
  "$kinema" -q render "$file" "${view[@]}" $kextra --size "$size" --no-ground --no-skeleton --transparent \
    --no-shadows --light-irradiance 2,2,2 --environment "$out/hemisphere.hdr" \
    -o "$out/${name}_kinema.png" || { echo "$name: kinema failed"; failed=1; continue; }
  "$py" "$root/scripts/compare_images.py" "$out/${name}_three.png" "$out/${name}_kinema.png" \
    --labels three,kinema --out "$out/${name}_side_by_side.png" \
    --small "$out/${name}_small.png" --json "$out/${name}_metrics.json" >/dev/null
  "$py" - "$name" "$out/${name}_metrics.json" "${view[*]}" <<'PY'
import json, sys
m = json.load(open(sys.argv[2]))
e, c = m["edge_distance_px"], m["colour_mean_abs_diff"] or {}
print(f"{sys.argv[1]}: IoU {m['iou']:.4f}; silhouette edge distance px three→kinema max "
      f"{e['three_to_kinema']['max']} p95 {e['three_to_kinema']['p95']}, kinema→three max "
      f"{e['kinema_to_three']['max']} p95 {e['kinema_to_three']['p95']}; coverage off by > 1 "
      f"sample: {100 * m['coverage_differs_by_more_than_one_sample']:.2f} %; colour |Δ| mean "
      f"{c.get('mean')} (edge band {c.get('edge_band_mean')}, interior {c.get('interior_mean')})\n"
      f"    kinema {sys.argv[3]}")
PY
done
if [ -n "$keep" ]; then echo "images and metrics: $out"; else echo "(images removed: give OUT_DIR to keep them)"; fi
exit $failed
