// Walks up a parents-first hierarchy of local transforms: what the ik module's apply functions
// need to move a joint in model space while only writing local transforms.
#pragma once

#include <cstddef>
#include <span>

#include "kinema/math/quat.h"
#include "kinema/math/transform.h"

namespace kinema::ik_detail {

/// Model rotation of joint j (−1: the model frame itself, identity) from local rotations.
inline Quat model_rotation(std::span<const int> parents, std::span<const Transform> local, int j) {
  Quat q = Quat::identity();
  for (; j >= 0; j = parents[static_cast<std::size_t>(j)])
    q = local[static_cast<std::size_t>(j)].rotation * q;
  return normalize(q);
}

/// Model scale of joint j when every scale on the way up is uniform (the x components' product).
inline double model_uniform_scale(std::span<const int> parents, std::span<const Transform> local,
                                  int j) {
  double s = 1;
  for (; j >= 0; j = parents[static_cast<std::size_t>(j)])
    s *= local[static_cast<std::size_t>(j)].scale.x;
  return s;
}

/// Whether a is a proper ancestor of j.
inline bool is_ancestor(std::span<const int> parents, int a, int j) {
  for (j = parents[static_cast<std::size_t>(j)]; j >= 0; j = parents[static_cast<std::size_t>(j)])
    if (j == a) return true;
  return false;
}

}  // namespace kinema::ik_detail
