// kinema/math/soa_transform.h — four joints' local transforms in structure-of-arrays form.
//
// The runtime pose format. A pose of N joints is ceil(N / 4) SoaTransforms; joint j lives in
// element j / 4, lane j % 4. Lanes past the last joint are padding and hold the identity.
// Every component is a float[4] so one SIMD register holds one component of four joints
// (the layout ozz-animation calls SoaTransform). Quaternions are (x, y, z, w), translations
// metres, scales unitless, all local to the parent joint.
#pragma once

#include <span>

#include "kinema/math/transform.h"

namespace kinema {

struct alignas(16) SoaTransform {
  float tx[4], ty[4], tz[4];
  float qx[4], qy[4], qz[4], qw[4];
  float sx[4], sy[4], sz[4];

  /// Four identity transforms.
  static constexpr SoaTransform identity() {
    return {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0},
            {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
  }
};

/// Number of SoaTransforms that hold `joint_count` joints.
constexpr int soa_count(int joint_count) { return (joint_count + 3) / 4; }

/// Reads joint `joint` of an SoA pose. The caller guarantees joint / 4 < pose.size().
inline Transformf get_joint(std::span<const SoaTransform> pose, int joint) {
  const SoaTransform& s = pose[static_cast<size_t>(joint / 4)];
  const int l = joint % 4;
  return {{s.tx[l], s.ty[l], s.tz[l]},
          {s.qx[l], s.qy[l], s.qz[l], s.qw[l]},
          {s.sx[l], s.sy[l], s.sz[l]}};
}

/// Writes joint `joint` of an SoA pose. The caller guarantees joint / 4 < pose.size().
inline void set_joint(std::span<SoaTransform> pose, int joint, const Transformf& t) {
  SoaTransform& s = pose[static_cast<size_t>(joint / 4)];
  const int l = joint % 4;
  s.tx[l] = t.translation.x, s.ty[l] = t.translation.y, s.tz[l] = t.translation.z;
  s.qx[l] = t.rotation.x, s.qy[l] = t.rotation.y, s.qz[l] = t.rotation.z, s.qw[l] = t.rotation.w;
  s.sx[l] = t.scale.x, s.sy[l] = t.scale.y, s.sz[l] = t.scale.z;
}

/// AoS → SoA. `soa` must have soa_count(aos.size()) elements; padding lanes become identity.
/// Returns false (writing nothing) on a size mismatch.
bool to_soa(std::span<const Transformf> aos, std::span<SoaTransform> soa);
/// SoA → AoS: the first aos.size() joints. Returns false when soa is too small.
bool to_aos(std::span<const SoaTransform> soa, std::span<Transformf> aos);

}  // namespace kinema
