// kinema/skeleton/skeleton_bytes.h — a skeleton in kinema's binary formats (.kmm, .kmc): per joint
// its name (u32 length + UTF-8), its parent (i32, −1 for a root) and its rest transform as 10 f64
// (translation xyz, rotation xyzw, scale xyz). The joint count is written by the caller.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

#include "kinema/core/byte_io.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::detail {

inline void put_skeleton_joints(ByteWriter& w, const Skeleton& skeleton) {
  for (const Joint& j : skeleton.joints()) {
    w.put_string(j.name);
    w.put(int32_t(j.parent));
    for (const double v : {j.rest.translation.x, j.rest.translation.y, j.rest.translation.z,
                           j.rest.rotation.x, j.rest.rotation.y, j.rest.rotation.z,
                           j.rest.rotation.w, j.rest.scale.x, j.rest.scale.y, j.rest.scale.z})
      w.put(v);
  }
}

/// Reads `joints` joints and builds the skeleton (which validates parents, names and the rest
/// poses); a failure names the byte offset.
inline Skeleton get_skeleton_joints(ByteReader& r, size_t joints, const std::string& file) {
  std::vector<Joint> list(joints);
  for (Joint& j : list) {
    j.name = r.get_string("joint name");
    j.parent = r.get<int32_t>("joint parent");
    double v[10];
    for (double& x : v) {
      x = r.get<double>("joint rest pose");
      if (!std::isfinite(x)) r.fail("a joint's rest pose is not finite");
    }
    j.rest = {{v[0], v[1], v[2]}, {v[3], v[4], v[5], v[6]}, {v[7], v[8], v[9]}};
  }
  const size_t at = r.offset();
  try {
    Skeleton s = Skeleton::build(std::move(list), false, file);
    if (size_t(s.joint_count()) != joints) r.fail("the skeleton is not valid");
    return s;
  } catch (const Error& e) {
    throw Error(file, "byte " + std::to_string(at), "the skeleton is not valid: " + e.reason());
  }
}

}  // namespace kinema::detail
