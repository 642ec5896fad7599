// tests/compress/test_clips.h — synthetic skeletons and clips for the compression tests.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::test {

/// A random tree of `joints` joints (parents-first), bones 5–40 cm.
inline Skeleton random_skeleton(int joints, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Joint> js;
  for (int j = 0; j < joints; ++j) {
    Joint x;
    x.name = "j" + std::to_string(j);
    x.parent = j == 0 ? kNoParent : std::max(0, j - 1 - int(rng() % 3));
    const Vec3 dir = normalize(Vec3{u(rng), u(rng) + 1.5, u(rng)});
    x.rest.translation = j == 0 ? Vec3{0, 1, 0} : dir * (0.05 + 0.35 * (u(rng) + 1) / 2);
    js.push_back(x);
  }
  return Skeleton::build(js);
}

/// Smooth random motion: every rotation a sum of sines about random axes (some swinging past
/// 180°), the root translating, a few joints held still, optional scale on one joint.
inline Clip random_clip(const Skeleton& sk, double seconds, double rate, std::mt19937& rng,
                        bool with_scale = false) {
  std::uniform_real_distribution<double> u(-1, 1);
  Clip c;
  c.name = "random";
  c.sample_rate = rate;
  const int frames = int(std::lround(seconds * rate)) + 1;
  c.duration = (frames - 1) / rate;
  c.tracks.resize(size_t(sk.joint_count()));
  for (int j = 0; j < sk.joint_count(); ++j) {
    JointTrack& t = c.tracks[size_t(j)];
    const int mode = int(rng() % 6);  // 0: no track (rest), 1: constant, else animated
    if (mode == 0) continue;
    const Vec3 axis = normalize(Vec3{u(rng), u(rng), u(rng)});
    const Vec3 axis2 = normalize(Vec3{u(rng), u(rng), u(rng)});
    const double amp = mode == 5 ? 3.0 : 0.2 + u(rng) * 0.15, freq = 0.3 + 2 * (u(rng) + 1);
    const double phase = u(rng) * 3;
    for (int f = 0; f < frames; ++f) {
      const double time = f / rate;
      t.rotation.times.push_back(time);
      if (mode == 1) {
        t.rotation.values.push_back(Quat::from_axis_angle(axis, amp));
        continue;
      }
      const Quat q = Quat::from_axis_angle(axis, amp * std::sin(freq * time + phase)) *
                     Quat::from_axis_angle(axis2, 0.3 * std::sin(2.7 * freq * time));
      t.rotation.values.push_back(q);
    }
    if (j == 0) {
      for (int f = 0; f < frames; ++f) {
        const double time = f / rate;
        t.translation.times.push_back(time);
        t.translation.values.push_back(
            {1.5 * time, 0.9 + 0.05 * std::sin(6 * time), 0.3 * std::cos(time)});
      }
    }
    if (with_scale && j == sk.joint_count() / 2) {
      for (int f = 0; f < frames; ++f) {
        const double time = f / rate;
        t.scale.times.push_back(time);
        const double s = 1 + 0.2 * std::sin(3 * time);
        t.scale.values.push_back({s, s, s});
      }
    }
  }
  return c;
}

}  // namespace kinema::test
