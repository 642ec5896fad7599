// The compressor and decoder on synthetic clips: lossless stages, the error bound (a property
// test over random skeletons and clips), sampling equivalences, no allocation, threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/alloc_counter.h"
#include "common/replace_global_new.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "test_clips.h"

namespace kinema {
namespace {

std::vector<Transformf> decode_aos(const CompressedClip& c, int frame, float alpha) {
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  EXPECT_TRUE(sample_frame(c, frame, alpha, soa));
  std::vector<Transformf> aos(size_t(c.joint_count()));
  to_aos(soa, aos);
  return aos;
}

TEST(Compress, LosslessStagesAreBitExact) {
  std::mt19937 rng(7);
  const Skeleton sk = test::random_skeleton(12, rng);
  const Clip clip = test::random_clip(sk, 1.0, 30, rng);
  double rate = 0;
  const std::vector<Transform> ref = resample_frames(clip, sk, 0, rate);
  const TrackClassification cls = classify_tracks(ref, sk.joint_count());
  ASSERT_GT(cls.identity, 0);
  ASSERT_GT(cls.constant, 0);
  const CompressedClip c = compress(clip, sk);
  const size_t n = size_t(sk.joint_count());
  for (int f = 0; f < c.frame_count(); f += 7) {
    const std::vector<Transformf> got = decode_aos(c, f, 0);
    for (size_t j = 0; j < n; ++j) {
      const Transformf want(ref[size_t(f) * n + j]);
      const TrackKind kt = cls.kinds[j * 3], kr = cls.kinds[j * 3 + 1], ks = cls.kinds[j * 3 + 2];
      // Lossless kinds are kept; an animated channel may become a (lossy) near-constant one.
      EXPECT_TRUE(c.kind(int(j), 0) == kt ||
                  (kt == TrackKind::Animated && c.kind(int(j), 0) == TrackKind::Constant));
      EXPECT_TRUE(c.kind(int(j), 1) == kr ||
                  (kr == TrackKind::Animated && c.kind(int(j), 1) == TrackKind::Constant));
      if (kt != TrackKind::Animated) {
        EXPECT_EQ(got[j].translation, want.translation) << j;
      }
      if (ks != TrackKind::Animated) {
        EXPECT_EQ(got[j].scale, want.scale) << j;
      }
      if (kr == TrackKind::Constant) {
        EXPECT_EQ(got[j].rotation, want.rotation) << j;
      }
      if (kr == TrackKind::Identity) {
        EXPECT_EQ(got[j].rotation, Quatf::identity()) << j;
      }
    }
  }
}

// The decoder writes a group's animated rotations together (normalized four at a time); the
// constant and identity rotations sharing their group stay bit-exact between frames too, with
// and without the cache, and every animated rotation comes back unit.
TEST(Compress, ConstantRotationsBesideAnimatedOnesStayExactBetweenFrames) {
  std::mt19937 rng(7);
  const Skeleton sk = test::random_skeleton(12, rng);
  const Clip clip = test::random_clip(sk, 1.0, 30, rng);
  const CompressedClip c = compress(clip, sk);
  const size_t n = size_t(sk.joint_count());
  std::vector<int> animated, fixed;
  for (int j = 0; j < int(n); ++j)
    (c.kind(j, 1) == TrackKind::Animated ? animated : fixed).push_back(j);
  ASSERT_FALSE(animated.empty());
  ASSERT_FALSE(fixed.empty());
  const std::vector<Transformf> at_frame = decode_aos(c, 0, 0);
  CompressedSamplingCache cache(c);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> aos(n);
  for (float t = 0.013f; t < 1.0f; t += 0.047f)
    for (const bool cached : {false, true}) {
      ASSERT_TRUE(cached ? sample(c, t, cache, soa) : sample(c, t, soa));
      to_aos(soa, aos);
      for (const int j : fixed)
        EXPECT_EQ(aos[size_t(j)].rotation, at_frame[size_t(j)].rotation) << j << " at " << t;
      for (const int j : animated) {
        const Quatf q = aos[size_t(j)].rotation;
        EXPECT_NEAR(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, 1.0f, 2e-6f) << j << " at " << t;
      }
    }
}

// Mocap exports carry channels that only jitter (finger rotations of 1e-12 rad in the CMU Daz
// files): stored once, and the bound still holds.
TEST(Compress, NearConstantTracksAreStoredOnce) {
  std::mt19937 rng(23);
  const Skeleton sk = test::random_skeleton(8, rng);
  Clip clip = test::random_clip(sk, 1.0, 60, rng);
  test::set_rotation_keys(clip, 7, 61, 60.0, [](int f) {
    return Quat::from_axis_angle({1, 0, 0}, 1e-9 * (f % 3));
  });
  CompressionStats st;
  const CompressedClip c = compress(clip, sk, {}, &st);
  EXPECT_EQ(c.kind(7, 1), TrackKind::Constant);
  EXPECT_LE(st.error.max, 1e-4);
  EXPECT_LE(measure_error(clip, sk, c).max, 1e-4);
}

TEST(Compress, BoundHoldsOnRandomClips) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 12; ++trial) {
    const int joints = 3 + int(rng() % 40);
    const Skeleton sk = test::random_skeleton(joints, rng);
    const double rate = trial % 3 == 0 ? 30 : (trial % 3 == 1 ? 60 : 120);
    const Clip clip = test::random_clip(sk, 0.5 + 0.1 * trial, rate, rng, trial % 2 == 0);
    CompressOptions opt;
    opt.max_error = trial % 4 == 0 ? 1e-3 : (trial % 4 == 1 ? 1e-5 : 1e-4);
    opt.vertex_distance = trial % 5 == 0 ? 0.1 : 0.03;
    opt.segment_frames = trial % 2 ? 16 : 8;
    CompressionStats st;
    const CompressedClip c = compress(clip, sk, opt, &st);
    EXPECT_LE(st.error.max, opt.max_error) << trial;
    EXPECT_LE(st.error.p99, st.error.max) << trial;
    // Measured again from the outside, with the real decoder.
    const ErrorStats e = measure_error(clip, sk, c, opt.vertex_distance);
    EXPECT_LE(e.max, opt.max_error) << trial;
    EXPECT_EQ(e.samples, size_t(joints) * size_t(2 * c.frame_count() - 1));
    EXPECT_GT(st.ratio, 1.0) << trial;
    // Serialized and loaded again: the same bytes.
    const std::vector<std::byte> bytes(c.bytes().begin(), c.bytes().end());
    const CompressedClip back = CompressedClip::deserialize(bytes, "roundtrip");
    EXPECT_TRUE(std::equal(back.bytes().begin(), back.bytes().end(), bytes.begin()));
  }
}

// A tail of fewer than S/2 frames joins the last segment (its headers would cost more than its
// frames); a tail of S/2 or more is a segment of its own. Either way every frame and midpoint of
// the last segments decodes within the bound.
TEST(Compress, ShortTailJoinsTheLastSegment) {
  std::mt19937 rng(77);
  const Skeleton sk = test::random_skeleton(6, rng);
  // 30 fps: 49 frames (a 1-frame tail), 56 (8 = S/2), 63 (15), 10 (shorter than one segment).
  for (auto [frames, segments] : {std::pair{49, 3}, {56, 4}, {63, 4}, {10, 1}}) {
    const Clip clip = test::random_clip(sk, (frames - 1) / 30.0, 30, rng, false);
    CompressOptions opt;
    opt.segment_frames = 16;
    const CompressedClip c = compress(clip, sk, opt);
    ASSERT_EQ(c.frame_count(), frames);
    EXPECT_EQ(c.segment_count(), segments) << frames;
    EXPECT_LE(measure_error(clip, sk, c, opt.vertex_distance).max, opt.max_error) << frames;
  }
}

// Mocap often starts with a T-pose frame and then jumps to the performer's heading; the CMU Daz
// files jump to ~180° about the vertical (w ≈ 0 from frame 1 on). Within one segment no component
// is large in every frame, so smallest-three would rebuild a tiny one: raw rotations keep all four.
TEST(Compress, TPoseFrameThenHalfTurnStaysWithinTheBound) {
  std::mt19937 rng(17);
  const Skeleton sk = test::random_skeleton(15, rng);
  Clip clip = test::random_clip(sk, 1.0, 120, rng);
  test::set_rotation_keys(clip, 0, 121, 120.0, [](int f) {
    const double wobble = 0.002 * std::sin(f * 0.2);
    return f == 0 ? Quat::identity() : Quat::from_axis_angle({0.02, 1, 0.04}, 3.1416 + wobble);
  });
  CompressionStats st;
  const CompressedClip c = compress(clip, sk, {}, &st);
  EXPECT_LE(st.error.max, 1e-4);
  EXPECT_LE(measure_error(clip, sk, c).max, 1e-4);
  const int t = c.kind(0, 0) == TrackKind::Animated
                    ? 1
                    : 0;            // the root rotation's track (after its translation)
  EXPECT_EQ(c.bit_rate(0, t), 32);  // the first segment: raw
  EXPECT_LT(c.bit_rate(1, t), 32);  // the next ones are quantized again
}

TEST(Compress, DecodingAtFrameTimesMatchesTheRawClip) {
  std::mt19937 rng(11);
  const Skeleton sk = test::random_skeleton(20, rng);
  const Clip clip = test::random_clip(sk, 2.0, 60, rng);
  const CompressOptions opt;
  const CompressedClip c = compress(clip, sk, opt);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> aos(size_t(sk.joint_count()));
  std::vector<Transform> got(aos.size()), raw(aos.size());
  for (int f = 0; f < c.frame_count(); ++f) {
    const double t = f / double(c.sample_rate());
    ASSERT_TRUE(sample(c, float(t), soa));
    to_aos(soa, aos);
    for (size_t j = 0; j < aos.size(); ++j) got[j] = Transform(aos[j]);
    sample_pose(clip, sk, t, WrapMode::Clamp, raw);
    // The bound, plus what rounding the time to float may move (≪ 1 µm here).
    EXPECT_LE(pose_error(sk, raw, got, opt.vertex_distance), opt.max_error + 1e-6) << f;
  }
}

TEST(Compress, SelectedJointsMatchTheWholePose) {
  std::mt19937 rng(5);
  const Skeleton sk = test::random_skeleton(23, rng);
  const Clip clip = test::random_clip(sk, 1.0, 30, rng, true);
  const CompressedClip c = compress(clip, sk);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  const std::vector<int> joints = {22, 0, 7, 13, 7};
  std::vector<Transformf> part(joints.size());
  for (float t : {0.0f, 0.1234f, 0.5f, 0.99f, 1.0f, 5.0f, -1.0f}) {
    ASSERT_TRUE(sample(c, t, soa));
    ASSERT_TRUE(sample_joints(c, t, joints, part));
    for (size_t i = 0; i < joints.size(); ++i) {
      const Transformf w = get_joint(soa, joints[i]);
      EXPECT_NEAR(part[i].rotation.x, w.rotation.x, 1e-6f);
      EXPECT_NEAR(part[i].rotation.w, w.rotation.w, 1e-6f);
      EXPECT_NEAR(part[i].translation.y, w.translation.y, 1e-6f);
      EXPECT_NEAR(part[i].scale.z, w.scale.z, 1e-6f);
    }
  }
  const std::vector<int> bad = {23};
  std::vector<Transformf> one(1);
  EXPECT_FALSE(sample_joints(c, 0.5f, bad, one));
  EXPECT_FALSE(sample_joints(c, 0.5f, joints, one));
  EXPECT_FALSE(sample(c, std::nanf(""), soa));
  std::vector<SoaTransform> small(1);
  EXPECT_FALSE(sample(c, 0.5f, small));
  EXPECT_FALSE(sample(CompressedClip{}, 0.5f, soa));
}

TEST(Compress, WorksWhereARuntimeClipDoes) {
  std::mt19937 rng(3);
  const Skeleton sk = test::random_skeleton(17, rng);
  const Clip clip = test::random_clip(sk, 1.0, 60, rng);
  const RuntimeClip rc = RuntimeClip::build(clip, sk);
  const CompressedClip cc = compress(clip, sk);
  ASSERT_EQ(rc.soa_count(), cc.soa_count());
  EXPECT_EQ(rc.frame_count(), cc.frame_count());
  EXPECT_FLOAT_EQ(rc.duration(), cc.duration());
  std::vector<SoaTransform> a(size_t(rc.soa_count())), b(a.size());
  std::vector<Transformf> aa(size_t(sk.joint_count())), bb(aa.size());
  std::vector<Transform> da(aa.size()), db(aa.size());
  for (float t = 0; t <= 1.0f; t += 0.037f) {
    ASSERT_TRUE(sample(rc, t, a));
    ASSERT_TRUE(sample(cc, t, b));
    to_aos(a, aa);
    to_aos(b, bb);
    for (size_t j = 0; j < aa.size(); ++j) da[j] = Transform(aa[j]), db[j] = Transform(bb[j]);
    // RuntimeClip's snorm16 rotations are ~0.002° off; both are within a fraction of a mm.
    EXPECT_LT(pose_error(sk, da, db, 0.03), 5e-4) << t;
  }
}

TEST(Compress, SamplingNeverAllocatesAndIsThreadSafe) {
  std::mt19937 rng(9);
  const Skeleton sk = test::random_skeleton(31, rng);
  const Clip clip = test::random_clip(sk, 1.0, 120, rng);
  const CompressedClip c = compress(clip, sk);
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  const std::vector<int> joints = {3, 30};
  std::vector<Transformf> part(2);
  test::start_counting_allocations();
  for (float t = 0; t < 1.2f; t += 0.01f) {
    sample(c, t, soa);
    sample_joints(c, t, joints, part);
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);

  // Four threads, distinct outputs: the same results as one.
  std::vector<std::vector<SoaTransform>> outs(4, std::vector<SoaTransform>(soa.size()));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) sample(c, 0.37f, outs[size_t(i)]);
    });
  for (auto& th : threads) th.join();
  sample(c, 0.37f, soa);
  for (const auto& o : outs)
    EXPECT_EQ(std::memcmp(o.data(), soa.data(), soa.size() * sizeof(SoaTransform)), 0);
}

TEST(Compress, CacheGivesBitIdenticalPoses) {
  std::mt19937 rng(31);
  const Skeleton sk = test::random_skeleton(19, rng);
  const Clip clip = test::random_clip(sk, 1.0, 60, rng, true);
  const CompressedClip c = compress(clip, sk);
  CompressedSamplingCache cache(c);
  std::vector<SoaTransform> a(size_t(c.soa_count())), b(a.size());
  std::vector<float> times;
  for (float t = 0; t <= 1.05f; t += 1.0f / 90) times.push_back(t);      // forward, sub-frame
  for (float t = 1.0f; t >= -0.05f; t -= 1.0f / 45) times.push_back(t);  // backward
  // Two frames a call (a 60 fps clip played at 30 Hz, as a 120 fps clip at 60 Hz): the cache
  // steps aside; then a frame a call again from where that left off, and a stride of three.
  for (float t = 0; t <= 0.5f; t += 1.0f / 30) times.push_back(t);
  for (float t = 0.5f; t <= 0.8f; t += 1.0f / 60) times.push_back(t);
  for (float t = 0.8f; t >= 0.0f; t -= 1.0f / 20) times.push_back(t);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < 50; ++i) times.push_back(u(rng));  // seeks
  test::start_counting_allocations();
  for (float t : times) {
    ASSERT_TRUE(sample(c, t, a));
    ASSERT_TRUE(sample(c, t, cache, b));
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(SoaTransform)), 0) << t;
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  const CompressedClip other = compress(clip, sk);
  EXPECT_FALSE(sample(other, 0.5f, cache, b));
  cache.reset(other);
  EXPECT_TRUE(sample(other, 0.5f, cache, b));
}

TEST(Compress, RejectsBadInput) {
  std::mt19937 rng(1);
  const Skeleton sk = test::random_skeleton(4, rng);
  Clip clip = test::random_clip(sk, 1.0, 30, rng);
  CompressOptions opt;
  opt.max_error = 0;
  EXPECT_THROW(compress(clip, sk, opt), Error);
  opt = {};
  opt.segment_frames = 1;
  EXPECT_THROW(compress(clip, sk, opt), Error);
  Clip empty = clip;
  empty.duration = 0;
  EXPECT_THROW(compress(empty, sk), Error);
  Clip nan = clip;
  nan.tracks[0].rotation.times = {0};
  nan.tracks[0].rotation.values = {{std::nan(""), 0, 0, 1}};
  EXPECT_THROW(compress(nan, sk), Error);
}

}  // namespace
}  // namespace kinema
