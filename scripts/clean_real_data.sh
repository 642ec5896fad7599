#!/bin/bash
# Retargets the BVH clips with hands near the body (salsa, Indian dance, martial arts from the
# Daz-friendly CMU set, and the iClone CC3 set) onto each AVATAR at 30 fps with `kinema
# retarget`, cleans the arms with `kinema clean --report`, and prints per file and arm: frames
# inside before -> after, front/back switches per-frame -> path, the wrist's second difference
# p99 and peak before -> after (mm/frame²), the added wrist displacement mean (mm), the clasped
# frames, and the clean's time. The last lines are the totals and the worst ratios.
#
#   bash scripts/clean_real_data.sh build/release/kinema ../shared/data tests/data/vrm/Godette_vrm_v4.vrm
#
# KINEMA_CLEAN_ARGS adds options to every `kinema clean` (e.g. "--no-accel-limit --smooth 0").
set -euo pipefail
kinema=$1 data=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for avatar in "$@"; do
  for f in "$data"/bvh/cmu_daz_acrnn/*.bvh "$data"/bvh/cmu_iclone_cc3/*.bvh; do
    "$kinema" --no-progress retarget "$f" --onto "$avatar" -o "$out/r.glb" --fps 30 >/dev/null
    "$kinema" --no-progress clean "$out/r.glb" --character "$avatar" -o "$out/c.glb" \
      --report "$out/c.json" ${KINEMA_CLEAN_ARGS:-} >/dev/null
    echo "$(basename "$avatar") $(basename "$(dirname "$f")")/$(basename "$f")" >>"$out/names"
    cp "$out/c.json" "$out/$(wc -l <"$out/names").json"
  done
done
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
names = open(os.path.join(out, "names")).read().splitlines()
tot = {"before": 0, "after": 0}
worst_ratio, worst_jerk, within, runs = 0.0, -1e9, 0, 0
print("%-22s %-30s %-5s %-13s %-9s %-22s %-8s %-7s %s" % (
    "avatar", "clip", "arm", "inside", "switches", "jerk p99 / peak", "added", "clasped", "time"))
for i, name in enumerate(names, 1):
    d = json.load(open(os.path.join(out, "%d.json" % i)))
    avatar, clip = name.split(" ")
    for arm in ("left", "right"):
        a = d["arms"][arm]
        b, f = a["frames_inside_before"], a["frames_inside_after"]
        tot["before"] += b
        tot["after"] += f
        if b >= 20:
            worst_ratio = max(worst_ratio, f / b)
        rise = a["jerk_p99_after_mm"] - a["jerk_p99_before_mm"]
        worst_jerk = max(worst_jerk, rise)
        within += rise <= 1.0
        runs += 1
        print("%-22s %-30s %-5s %5d -> %-5d %2d -> %-3d %5.1f/%5.1f -> %5.1f/%5.1f %6.1f  %5d  %.2f s" % (
            avatar, clip, arm, b, f, a["switches_per_frame"], a["switches"],
            a["jerk_p99_before_mm"], a["jerk_peak_before_mm"], a["jerk_p99_after_mm"],
            a["jerk_peak_after_mm"], a["added_mean_mm"], d["clasped_hands"]["frames"],
            d["timings_s"]["clear_arms_total"]))
print("frames inside, all clips and arms: %d -> %d (%.1f %%)" % (
    tot["before"], tot["after"], 100.0 * tot["after"] / max(1, tot["before"])))
print("worst after/before among arms with >= 20 frames inside: %.1f %%" % (100 * worst_ratio))
print("largest rise of the wrist's p99 second difference: %+.2f mm/frame^2" % worst_jerk)
print("arms whose p99 second difference rose by at most 1 mm/frame^2: %d of %d" % (within, runs))
PY
