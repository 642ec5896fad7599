// Real mocap from tests/data/bvh: the bound holds, the CC3 thighs near 180° decode within it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "kinema/compress/compress.h"
#include "kinema/io/bvh.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

struct Case {
  const char* path;
  double min_ratio;  // a floor well under what is measured (docs/compress.md), to catch regressions
};

class RealClips : public ::testing::TestWithParam<Case> {};

TEST_P(RealClips, BoundHoldsAndRatioIsHigh) {
  const Asset a = read_bvh(kData + "/" + GetParam().path);
  ASSERT_FALSE(a.clips.empty());
  CompressionStats st;
  const CompressedClip c = compress(a.clips[0], a.skeleton, {}, &st);
  std::printf(
      "%s: %d joints, %d frames, %zu → %zu bytes, %.2f:1, max %.4f cm, p99 %.4f cm, %.2f bits\n",
      GetParam().path, st.joints, st.frames, st.raw_bytes, st.compressed_bytes, st.ratio,
      st.error.max * 100, st.error.p99 * 100, st.mean_bits);
  EXPECT_LE(st.error.max, 1e-4);
  EXPECT_GE(st.ratio, GetParam().min_ratio);
  const ErrorStats e = measure_error(a.clips[0], a.skeleton, c);
  EXPECT_LE(e.max, 1e-4);
}

// Format version 2 gives each stored component its own bit rate: on a real clip, where a
// segment's x, y and z ranges differ several times, the three rates of a track differ often, the
// widest one is what bit_rate(s, t) reports, and each component's bits add up to the file size.
TEST(RealClips, ComponentsHaveTheirOwnBitRates) {
  const Asset a = read_bvh(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const CompressedClip c = compress(a.clips[0], a.skeleton);
  long differing = 0, total = 0;
  uint64_t bits = 0;
  for (int s = 0; s < c.segment_count(); ++s) {
    // The last segment holds the rest (a tail under half a segment joins it).
    const int n =
        s + 1 < c.segment_count() ? c.segment_frames() : c.frame_count() - s * c.segment_frames();
    uint64_t frame_bits = 0;
    for (int t = 0; t < c.animated_track_count(); ++t) {
      const int r[3] = {c.bit_rate(s, t, 0), c.bit_rate(s, t, 1), c.bit_rate(s, t, 2)};
      for (int b : r) EXPECT_TRUE((b >= 0 && b <= 14) || b == 16 || b == 32) << b;
      EXPECT_EQ(c.bit_rate(s, t), std::max({r[0], r[1], r[2]}));
      ASSERT_NE(r[0], 32);  // no raw segment in this clip (they would store 4 rotation floats)
      differing += r[0] != r[1] || r[1] != r[2];
      ++total;
      frame_bits += uint64_t(r[0] + r[1] + r[2]);
    }
    bits += (uint64_t(n) * frame_bits + 7) / 8 * 8;
  }
  EXPECT_EQ(c.bit_rate(0, 0, 3), -1);
  EXPECT_EQ(c.bit_rate(0, c.animated_track_count()), -1);
  EXPECT_GT(differing, total / 4) << differing << " of " << total;
  // Header, name, kinds, constants, clip ranges and 8-byte segment headers come before the
  // samples; 8 zero bytes after.
  const size_t headers = size_t(c.segment_count()) * size_t(c.animated_track_count()) * 8;
  EXPECT_LT(bits / 8 + headers + 8, c.size_bytes());
}

INSTANTIATE_TEST_SUITE_P(Bvh, RealClips,
                         ::testing::Values(Case{"bvh/cmu_cgspeed_mb/02_01.bvh", 8},
                                           Case{"bvh/cmu_iclone_cc3/007_12.bvh", 8},
                                           Case{"bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh", 4}));

// The iClone CC3 rig's thighs sit near 180° (w ≈ 0), where a drop-w format loses precision;
// smallest-three drops another component there, and the bound holds at those joints too.
TEST(RealClips, Cc3ThighsNear180DegreesStayWithinTheBound) {
  const Asset a = read_bvh(kData + "/bvh/cmu_iclone_cc3/007_12.bvh");
  const Skeleton& sk = a.skeleton;
  double rate = 0;
  const std::vector<Transform> ref = resample_frames(a.clips[0], sk, 0, rate);
  const size_t n = size_t(sk.joint_count());
  std::vector<int> near180;
  for (size_t j = 0; j < n; ++j) {
    double min_w = 1;
    for (size_t f = 0; f < ref.size() / n; ++f)
      min_w = std::min(min_w, std::abs(ref[f * n + j].rotation.w));
    if (min_w < 0.1) near180.push_back(int(j));
  }
  ASSERT_FALSE(near180.empty());
  bool has_thigh = false;
  for (int j : near180)
    has_thigh = has_thigh || sk.joint(j).name.find("Thigh") != std::string::npos;
  EXPECT_TRUE(has_thigh);
  const CompressedClip c = compress(a.clips[0], sk);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> aos(n);
  std::vector<Transform> got(n), want(n);
  std::vector<double> per_joint(n);
  for (int f = 0; f + 1 < c.frame_count(); ++f)
    for (float alpha : {0.0f, 0.5f}) {
      ASSERT_TRUE(sample_frame(c, f, alpha, soa));
      to_aos(soa, aos);
      for (size_t j = 0; j < n; ++j) {
        got[j] = Transform(aos[j]);
        const Transform& r0 = ref[size_t(f) * n + j];
        const Transform& r1 = ref[size_t(f + 1) * n + j];
        want[j] = alpha > 0 ? Transform{lerp(r0.translation, r1.translation, 0.5),
                                        nlerp(r0.rotation, r1.rotation, 0.5),
                                        lerp(r0.scale, r1.scale, 0.5)}
                            : r0;
      }
      pose_error(sk, want, got, 0.03, per_joint);
      for (int j : near180) ASSERT_LE(per_joint[size_t(j)], 1e-4) << sk.joint(j).name << " " << f;
    }
}

}  // namespace
}  // namespace kinema
