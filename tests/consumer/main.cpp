// Links the installed kinema: builds a two-joint skeleton, runs FK, parses a tiny BVH.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kinema/kinema.h"

int main() {
  using namespace kinema;
  std::vector<Joint> joints(2);
  joints[0].name = "root";
  joints[1].name = "child";
  joints[1].parent = 0;
  joints[1].rest.translation = {0, 1, 0};
  const Skeleton skeleton = Skeleton::build(joints, true);
  std::vector<Transform> local = skeleton.rest_pose();
  local[0].rotation = Quat::from_axis_angle({0, 0, 1}, radians(90.0));
  std::vector<Mat4> model(2);
  if (!local_to_model(skeleton.parents(), local, model)) return 1;
  const Vec3 p = model[1].translation_part();
  if (std::abs(p.x + 1.0) > 1e-9 || std::abs(p.y) > 1e-9) return 2;

  const Asset bvh = parse_bvh(
      "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n"
      " End Site\n {\n  OFFSET 0 170 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0\n",
      "inline.bvh");
  if (bvh.skeleton.joint_count() < 1) return 3;
  // load_asset's object file references the glTF and assimp readers: linking it proves the
  // package config brings kinema's private dependencies onto a static consumer's link line.
  try {
    load_asset("does-not-exist.glb");
    return 4;
  } catch (const Error& e) {
    if (e.file() != "does-not-exist.glb") return 5;
  }
  std::printf("consumer ok: %d joints\n", bvh.skeleton.joint_count());
  return 0;
}
