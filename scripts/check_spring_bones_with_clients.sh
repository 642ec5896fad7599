#!/usr/bin/env bash
# Recomputes three-vrm's spring-bone simulation of the test fixtures, the reference that
# tests/physics/spring_bones_test.cpp holds kinema to (every joint within 1 mm), and checks that
# a baked file plays the same motion in three.js without spring bones.
#
#   scripts/check_spring_bones_with_clients.sh CLIENTS_DIR [KINEMA]
#
# CLIENTS_DIR: a writable copy of shared/clients with install.sh run (node, Chromium, three-vrm).
# KINEMA: the kinema binary (default build/release/kinema). Writes
# tests/data/vrm/godette_walk_springs_vrm{0,1}.three_vrm.json and prints the worst difference
# between kinema's baked clip played by three.js and three-vrm's live simulation.
set -euo pipefail
clients=${1:?usage: $0 CLIENTS_DIR [KINEMA]}
kinema=${2:-build/release/kinema}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step=0.0166667
times=$(python3 -c "print(','.join('%.2f' % (0.05 * k) for k in range(1, 67)))")
for fixture in godette_walk_springs_vrm0.glb godette_walk_springs_vrm1.vrm; do
  src="$here/tests/data/vrm/$fixture"
  node "$clients/node/browser_check.mjs" "$src" --vrm --step "$step" --time "$times" \
    --all-nodes --json "$work/live.json" >/dev/null
  python3 "$here/scripts/spring_reference.py" "$work/live.json" "$fixture" \
    "$here/tests/data/vrm/${fixture%.*}.three_vrm.json" "$step"
  "$kinema" sim springbones "$src" -o "$work/baked.glb" -q
  node "$clients/node/browser_check.mjs" "$work/baked.glb" --vrm --time 0.5,1,2 --all-nodes \
    --json "$work/baked.json" >/dev/null
  python3 - "$work/baked.json" "$work/live.json" "$fixture" <<'PY'
import json, sys
baked, live = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
by_time = {round(s["time"], 6): s for s in live["samples"]}
worst = 0.0
for s in baked["samples"]:
    ref = by_time[round(s["time"], 6)]["positions"]
    for name, p in s["positions"].items():
        worst = max(worst, sum((a - b) ** 2 for a, b in zip(p, ref[name])) ** 0.5)
print(f"{sys.argv[3]}: kinema's baked clip in three.js vs three-vrm's live simulation: "
      f"worst {worst * 1e3:.4f} mm")
PY
done
