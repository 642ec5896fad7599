#!/usr/bin/env bash
# Checks kinema's VRM Animation (.vrma) writer with real third-party software: the Khronos glTF
# Validator must report no errors, and @pixiv/three-vrm-animation (in headless Chromium) playing
# the .vrma on the VRM 1.0 avatar must put every node where kinema's own evaluation of the clip
# does, within 1 mm, at seven times over the 2 s clip.
#
#   scripts/check_vrma_with_clients.sh CLIENTS_DIR [IO_TESTS] [AVATAR.vrm ...]
#
# CLIENTS_DIR: a copy of the real-client harnesses, installed by their install.sh.
# IO_TESTS: the io test program (default build/release/tests/kinema_io_tests); its test
# VrmaClientFiles writes the .vrma of a clip that bends every humanoid bone of the avatar and
# walks its hips, and kinema's joint positions for it (kinema.json).
# AVATAR.vrm: VRM 1.0 avatars to check (default tests/data/vrm/debug_robot.vrm).
# Prints one line per avatar and exits 1 if any check fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clients=$(cd "$1" && pwd)
tests=${2:-$root/build/release/tests/kinema_io_tests}
shift $(($# < 2 ? $# : 2))
avatars=("$@")
[ ${#avatars[@]} -eq 0 ] && avatars=("$root/tests/data/vrm/debug_robot.vrm")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
for avatar in "${avatars[@]}"; do
  name=$(basename "$avatar" .vrm)
  dir=$tmp/$name
  mkdir -p "$dir"
  cp "$avatar" "$dir/avatar.vrm"  # the browser page serves only the file's own folder
  KINEMA_VRMA_CHECK_DIR=$dir KINEMA_VRMA_CHECK_AVATAR=$avatar \
    "$tests" --gtest_filter='VrmaClientFiles.*' >"$dir/test.log" 2>&1 ||
    { echo "$name: kinema could not write the .vrma"; cat "$dir/test.log"; failed=1; continue; }
  node "$clients/node/validate.mjs" "$dir/posed.vrma" >"$dir/validate.json" 2>&1 || true
  times=$(python3 -c "import json,sys; print(','.join(repr(t) for t in json.load(open(sys.argv[1]))['times']))" "$dir/kinema.json")
  (cd "$clients" && node node/browser_check.mjs "$dir/avatar.vrm" --vrma "$dir/posed.vrma" \
    --time "$times" --json "$dir/threejs.json" >/dev/null 2>&1) || true
  python3 - "$dir/kinema.json" "$dir/threejs.json" "$dir/validate.json" "$name" <<'PY' || failed=1
import json, math, sys
kinema_path, three_path, validate_path, name = sys.argv[1:]
validate = json.load(open(validate_path))
three = json.load(open(three_path))
kinema = json.load(open(kinema_path))
if not three.get("ok") or three.get("vrmaError"):
    print("%s: three-vrm-animation failed: %s %s" % (name, three.get("error"), three.get("vrmaError")))
    sys.exit(1)
worst, total, count = 0.0, 0.0, 0
for ks, ts in zip(kinema["samples"], three["samples"]):
    for label, p in ts["positions"].items():
        if label not in ks["positions"]:
            continue
        d = math.dist(p, ks["positions"][label])
        worst, total, count = max(worst, d), total + d, count + 1
ok = validate.get("errors", 1) == 0 and count > 0 and worst <= 1e-3
print("%-24s validator: %d errors, %d warnings | three-vrm-animation vs kinema: %d node positions "
      "at %d times, max %.3g mm, mean %.3g mm  %s"
      % (name, validate.get("errors", -1), validate.get("warnings", -1), count,
         len(three["samples"]), worst * 1e3, total / max(count, 1) * 1e3, "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
exit $failed
