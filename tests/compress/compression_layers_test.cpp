// The layers of animation compression worked by hand on a 60-joint, 30 fps character: constant
// tracks, key reduction, smallest-three quantization and how a hip error reaches the foot
// (docs/worked_examples.md, "Compression").
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kinema/compress/compress.h"
#include "kinema/compress/quantize.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Only the rotations (60 × 16 bytes) and the root translation (12 bytes) change: 972 bytes per
// frame instead of 2,400, 2.5 times less, losslessly.
TEST(CompressionLayers, ConstantTracksLeave972BytesPerFrame) {
  const int joints = 60, frames = 30;
  std::vector<Transform> poses(size_t(joints * frames));
  for (int f = 0; f < frames; ++f)
    for (int j = 0; j < joints; ++j) {
      Transform& x = poses[size_t(f * joints + j)];
      // Bone offsets never change; only the root translates; nothing scales.
      x.translation = j == 0 ? Vec3{0.01 * f, 1, 0} : Vec3{0, 0.1, 0};
      x.rotation = Quat::from_axis_angle({0, 0, 1}, 0.01 * (j + 1) * f);
    }
  const TrackClassification c = classify_tracks(poses, joints);
  EXPECT_EQ(c.animated, 61);
  EXPECT_EQ(c.constant, 59);  // the bone offsets, stored once
  EXPECT_EQ(c.identity, 60);  // scales
  EXPECT_EQ(c.animated_bytes_per_frame, 972u);
  const double raw_per_frame = 10.0 * 4 * joints;  // 40 bytes per joint
  EXPECT_EQ(raw_per_frame, 2400.0);
  EXPECT_NEAR(raw_per_frame / double(c.animated_bytes_per_frame), 2.5, 0.05);
  // One minute at 30 fps: 4.32 MB raw.
  EXPECT_EQ(raw_per_frame * 30 * 60, 4.32e6);
}

// A channel sampled 0, 1.02, 1.98, 3.01, 4.0 at frames 0–4 stays within 0.02 of the line through
// its first and last keys: at a tolerance of 0.05 only those 2 keys remain.
TEST(CompressionLayers, KeyReductionKeepsTwoKeysOfANearlyStraightChannel) {
  const std::vector<double> v = {0, 1.02, 1.98, 3.01, 4.0};
  EXPECT_EQ(reduce_keys(v, 0.05), (std::vector<int>{0, 4}));
  // Tighter than the 0.02 deviation: the middle keys come back.
  EXPECT_GT(reduce_keys(v, 0.015).size(), 2u);
  // Every sample stays within the tolerance of the reduced curve.
  const std::vector<double> wave = [] {
    std::vector<double> w;
    for (int i = 0; i < 200; ++i) w.push_back(std::sin(i * 0.05) + 0.3 * std::sin(i * 0.31));
    return w;
  }();
  const std::vector<int> kept = reduce_keys(wave, 0.01);
  for (size_t k = 0; k + 1 < kept.size(); ++k)
    for (int i = kept[k]; i <= kept[k + 1]; ++i) {
      const double t = double(i - kept[k]) / (kept[k + 1] - kept[k]);
      EXPECT_LE(std::abs(wave[size_t(kept[k])] +
                         (wave[size_t(kept[k + 1])] - wave[size_t(kept[k])]) * t - wave[size_t(i)]),
                0.01 + 1e-12);
    }
}

// 30° about z, q = (w 0.9659, z 0.2588), 10 bits per kept component: w is dropped; z's code is
// round((0.2588 + 0.7071) / 1.4142 · 1023) = round(698.72) = 699, decoding to 0.2592; x and y (0)
// get code 512 and decode to 0.0007; the rebuilt w is 0.9658 and the rotation is 0.12° off.
TEST(CompressionLayers, SmallestThreeKeeps30DegreesAboutZWithin012Degrees) {
  const Quat q{0, 0, 0.2588, 0.9659};  // (x, y, z, w)
  const SmallestThree s = encode_smallest_three(q, 10);
  EXPECT_EQ(s.dropped, 3);  // w
  EXPECT_EQ(s.codes[0], 512u);
  EXPECT_EQ(s.codes[1], 512u);
  EXPECT_EQ(s.codes[2], 699u);
  // The hand computation's 698.72 is that of the exact 30° rotation (z = sin 15° = 0.258819…).
  const Quat exact = Quat::from_axis_angle({0, 0, 1}, 30 * kPi / 180);
  EXPECT_NEAR((exact.z + std::sqrt(0.5)) / std::sqrt(2.0) * 1023, 698.72, 0.005);
  EXPECT_EQ(encode_smallest_three(exact, 10).codes[2], 699u);
  EXPECT_NEAR(decode_smallest_three_component(699, 10), 0.2592, 5e-5);
  EXPECT_NEAR(decode_smallest_three_component(512, 10), 0.0007, 5e-5);
  EXPECT_NEAR(1.4142 / 1023, 0.00138, 5e-6);  // the step
  const Quat d = decode_smallest_three(s);
  EXPECT_NEAR(d.w, 0.9658, 5e-5);
  EXPECT_NEAR(angle_between(q, d) * 180 / kPi, 0.12, 0.005);
  EXPECT_NEAR(angle_between(exact, d) * 180 / kPi, 0.12, 0.005);
  // 32 bits instead of 128: 60 rotations + a 6-byte root translation = 246 bytes, 9.8×.
  EXPECT_NEAR(2400.0 / (60 * 4 + 6), 9.8, 0.05);
}

// A 0.05° error at the hip moves a foot 1 m below it by 1000 · 0.05 · π/180 = 0.87 mm.
TEST(CompressionLayers, HipErrorMovesTheFootByItsArcLength) {
  std::vector<Joint> js(2);
  js[0].name = "hip";
  js[1].name = "foot";
  js[1].parent = 0;
  js[1].rest.translation = {0, -1, 0};
  const Skeleton sk = Skeleton::build(js);
  const std::vector<Transform> a = sk.rest_pose();
  std::vector<Transform> b = a;
  b[0].rotation = Quat::from_axis_angle({1, 0, 0}, 0.05 * kPi / 180);
  std::vector<double> per_joint(2);
  pose_error(sk, a, b, 0.0, per_joint);
  EXPECT_NEAR(per_joint[0], 0.0, 1e-15);
  EXPECT_NEAR(per_joint[1] * 1000, 0.87, 0.005);  // mm
  EXPECT_NEAR(per_joint[1] * 1000, 1000 * 0.05 * kPi / 180, 1e-5);
  // With the default 3 cm virtual vertices the hip's own vertices move 0.026 mm, the foot's
  // up to (1 m + 3 cm) · θ.
  const double e = pose_error(sk, a, b, 0.03);
  EXPECT_GT(e * 1000, 0.87);
  EXPECT_LT(e * 1000, 1.03 * 0.05 * kPi / 180 * 1000 + 1e-9);
}

}  // namespace
}  // namespace kinema
