#!/bin/bash
# Retargets every BVH of ../shared/data/bvh, plus the ProAnimationBank walk and run (FBX) and the
# Quaternius robot (GLB), onto each AVATAR at 30 fps with `kinema retarget --json`, and prints per
# file the foot skate (median/p90, cm/s), the knee-angle jump max (degrees), the float max of
# planted feet (cm) and the bone-length error (m), before -> after grounding.
#
#   bash scripts/retarget_real_data.sh build/release/kinema ../shared/data \
#       tests/data/vrm/debug_robot.vrm tests/data/vrm/Godette_vrm_v4.vrm
set -euo pipefail
kinema=$1 data=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for avatar in "$@"; do
  for f in "$data"/bvh/*/*.bvh "$data"/fbx/ozz_pab/walk.fbx "$data"/fbx/ozz_pab/run.fbx \
           "$data"/gltf/quaternius_robot/robot.glb; do
    "$kinema" --no-progress retarget "$f" --onto "$avatar" -o "$out/o.glb" --fps 30 --json |
      python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
b, a = d['before'], d['after']
def skate(m):
    s = m['skate']
    return '%.2f/%.2f' % (s['median_cm_per_s'], s['p90_cm_per_s']) if 'median_cm_per_s' in s else 'none'
print('%-20s %-32s skate %s -> %s  knee %.2f -> %.2f  float %.2f -> %.2f  bone %.1e' % (
    '$(basename "$avatar")', '$(basename "$(dirname "$f")")/$(basename "$f")', skate(b), skate(a),
    b['knee_jump_max_deg'], a['knee_jump_max_deg'], b['float_max_cm'], a['float_max_cm'],
    a['bone_length_error_max_m']))"
  done
done
