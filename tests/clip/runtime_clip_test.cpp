// Runtime clips: uniform resampling, SoA layout, the decoding cache, playback modes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "kinema/clip/runtime_clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

Asset load_walk() { return load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh"); }

// Largest angle (radians) and translation difference between the runtime pose and the raw
// clip's double-precision pose at time t.
void compare_to_raw(const Asset& asset, const RuntimeClip& rc, double t, double& max_angle,
                    double& max_translation) {
  const Skeleton& sk = asset.skeleton;
  std::vector<Transform> raw(static_cast<size_t>(sk.joint_count()));
  sample_pose(asset.clips[0], sk, t, WrapMode::Clamp, raw);
  std::vector<SoaTransform> pose(static_cast<size_t>(rc.soa_count()));
  ASSERT_TRUE(sample(rc, static_cast<float>(t), pose));
  for (int j = 0; j < sk.joint_count(); ++j) {
    const Transformf x = get_joint(pose, j);
    max_angle =
        std::max(max_angle, angle_between(Quat(x.rotation), raw[static_cast<size_t>(j)].rotation));
    max_translation = std::max(
        max_translation, length(Vec3(x.translation) - raw[static_cast<size_t>(j)].translation));
  }
}

TEST(RuntimeClip, MatchesTheRawClipAtFramesAndBetween) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  EXPECT_EQ(rc.joint_count(), asset.skeleton.joint_count());
  EXPECT_NEAR(rc.duration(), asset.clips[0].duration, 1e-6);
  EXPECT_EQ(rc.frame_count(), asset.clips[0].frame_count());
  double angle = 0, translation = 0;
  for (int f = 0; f < rc.frame_count(); ++f)
    compare_to_raw(asset, rc, f / rc.sample_rate(), angle, translation);
  // 16-bit rotations: ~3e-5 rad; float translations relative to a ~20-unit root height.
  EXPECT_LT(angle, 1e-4);
  EXPECT_LT(translation, 1e-4);
  // Between frames the runtime nlerps where the raw clip slerps: still far below a degree at
  // 120 fps.
  angle = translation = 0;
  for (int f = 0; f + 1 < rc.frame_count(); f += 7)
    compare_to_raw(asset, rc, (f + 0.37) / rc.sample_rate(), angle, translation);
  EXPECT_LT(angle, 1e-3);
  EXPECT_LT(translation, 1e-3);
}

TEST(RuntimeClip, ConstantChannelsAreStoredOnce) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  // BVH: only the root translates; no joint scales.
  EXPECT_EQ(rc.animated_translation_groups(), 1);
  EXPECT_EQ(rc.animated_scale_groups(), 0);
  EXPECT_GT(rc.animated_rotation_groups(), 0);
  const size_t raw_bytes = 10 * sizeof(float) * size_t(rc.joint_count()) * size_t(rc.frame_count());
  EXPECT_LT(rc.memory_bytes(), raw_bytes / 2);
}

TEST(RuntimeClip, CacheGivesBitIdenticalPosesForwardReversedAndRandom) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton, {.sample_rate = 30});
  SamplingCache cache(rc);
  std::vector<SoaTransform> a(static_cast<size_t>(rc.soa_count())), b(a.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> any(-0.5f, rc.duration() + 0.5f);
  std::vector<float> times;
  for (float t = 0; t <= rc.duration(); t += 1 / 60.0f) times.push_back(t);  // forward, 2 per frame
  for (float t = rc.duration(); t >= 0; t -= 1 / 24.0f) times.push_back(t);  // reversed
  for (int i = 0; i < 200; ++i) times.push_back(any(rng));                   // random seeks
  for (float t : times) {
    ASSERT_TRUE(sample(rc, t, cache, a));
    ASSERT_TRUE(sample(rc, t, b));
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(SoaTransform))) << "t = " << t;
  }
}

// One clip shared read-only by many threads, each with its own cache and output: every thread
// gets exactly the single-threaded poses.
TEST(RuntimeClip, ConcurrentSamplingWithDistinctOutputsIsDeterministic) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  const size_t soa = static_cast<size_t>(rc.soa_count());
  constexpr int kFrames = 300;
  std::vector<SoaTransform> expected(soa * kFrames);
  for (int f = 0; f < kFrames; ++f)
    sample(rc, f * 0.01f, std::span(expected).subspan(size_t(f) * soa, soa));
  std::vector<std::vector<SoaTransform>> results(4, std::vector<SoaTransform>(expected.size()));
  std::vector<std::thread> threads;
  for (auto& out : results)
    threads.emplace_back([&rc, &out, soa] {
      SamplingCache cache(rc);
      for (int f = 0; f < kFrames; ++f)
        sample(rc, f * 0.01f, cache, std::span(out).subspan(size_t(f) * soa, soa));
    });
  for (std::thread& t : threads) t.join();
  for (const auto& out : results)
    EXPECT_EQ(0, std::memcmp(out.data(), expected.data(), expected.size() * sizeof(SoaTransform)));
}

TEST(RuntimeClip, BadInputsAreRejectedWithoutWriting) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  const RuntimeClip other = RuntimeClip::build(asset.clips[0], asset.skeleton, {.sample_rate = 10});
  std::vector<SoaTransform> pose(static_cast<size_t>(rc.soa_count()), SoaTransform::identity());
  std::vector<SoaTransform> small(pose.size() - 1);
  EXPECT_FALSE(sample(rc, std::nanf(""), pose));
  EXPECT_FALSE(sample(rc, 0.5f, small));
  SamplingCache foreign(other);
  EXPECT_FALSE(sample(rc, 0.5f, foreign, pose));
  EXPECT_EQ(pose[0].qw[0], 1.0f);                   // untouched
  EXPECT_FALSE(sample(RuntimeClip{}, 0.0f, pose));  // an empty clip samples nothing
  Clip bad = asset.clips[0];
  bad.duration = std::nan("");
  EXPECT_THROW(RuntimeClip::build(bad, asset.skeleton), Error);
}

TEST(RuntimeClip, SingleFramePoseAndPaddingLanesHoldIdentity) {
  std::vector<Joint> joints(5);
  for (int j = 0; j < 5; ++j) {
    joints[size_t(j)].name = "j" + std::to_string(j);
    joints[size_t(j)].parent = j - 1;
    joints[size_t(j)].rest.translation = {0, 1, 0};
  }
  const Skeleton sk = Skeleton::build(joints);
  Clip c;
  c.name = "pose";
  c.duration = 0;
  c.tracks.resize(1);
  c.tracks[0].rotation.times = {0};
  c.tracks[0].rotation.values = {Quat::from_axis_angle({1, 0, 0}, 0.5)};
  const RuntimeClip rc = RuntimeClip::build(c, sk);
  std::vector<SoaTransform> pose(2);
  EXPECT_EQ(rc.animated_rotation_groups(), 0);  // nothing to decode: the cache must cope
  SamplingCache cache(rc);
  ASSERT_TRUE(sample(rc, 0.0f, cache, pose));
  ASSERT_TRUE(sample(rc, 3.0f, pose));
  EXPECT_NEAR(get_joint(pose, 0).rotation.x, std::sin(0.25), 1e-4);
  EXPECT_EQ(get_joint(pose, 4).translation.y, 1.0f);
  for (int l = 1; l < 4; ++l) {  // lanes 5..7 are padding
    EXPECT_EQ(pose[1].qw[l], 1.0f);
    EXPECT_EQ(pose[1].sx[l], 1.0f);
    EXPECT_EQ(pose[1].tx[l], 0.0f);
  }
}

// ---- Compact format ---------------------------------------------------------------------------

constexpr RuntimeClipOptions kCompact{.format = RuntimeClipFormat::Compact};

// Largest rotation angle (radians) and translation / scale difference between two runtime poses.
void compare_poses(std::span<const SoaTransform> a, std::span<const SoaTransform> b, int joints,
                   double& max_angle, double& max_vec) {
  for (int j = 0; j < joints; ++j) {
    const Transformf x = get_joint(a, j), y = get_joint(b, j);
    max_angle = std::max(max_angle, angle_between(Quat(x.rotation), Quat(y.rotation)));
    max_vec = std::max({max_vec, double(length(x.translation - y.translation)),
                        double(length(x.scale - y.scale))});
  }
}

TEST(RuntimeClipCompact, SamplesLikeTheFastFormatAtFramesAndBetween) {
  for (const char* file : {"/bvh/cmu_cgspeed_mb/02_01.bvh", "/fbx/ozz_pab/walk.fbx"}) {
    const Asset asset = load_asset(test_paths::data_dir() + file);
    const RuntimeClip fast = RuntimeClip::build(asset.clips[0], asset.skeleton);
    const RuntimeClip compact = RuntimeClip::build(asset.clips[0], asset.skeleton, kCompact);
    EXPECT_EQ(compact.format(), RuntimeClipFormat::Compact);
    EXPECT_EQ(compact.frame_count(), fast.frame_count());
    std::vector<SoaTransform> a(size_t(fast.soa_count())), b(a.size());
    double angle = 0, vec = 0;
    for (int i = 0; i <= 4 * (fast.frame_count() - 1); ++i) {  // frames and quarter frames
      const float t = i / (4 * fast.sample_rate());
      ASSERT_TRUE(sample(fast, t, a));
      ASSERT_TRUE(sample(compact, t, b));
      compare_poses(a, b, fast.joint_count(), angle, vec);
    }
    // Fast is within 3e-5 rad of the source, Compact within 2e-4 (its largest component is
    // rebuilt from the other three's 15- and 16-bit values). The translations and scales are
    // the same floats, lerped the same way.
    EXPECT_LT(angle, 2.5e-4) << file;
    EXPECT_LT(vec, 1e-6) << file;
  }
}

// The point of the format: a clip whose fingers, toes and helpers hold still (ozz's pab walk:
// 23 of 67 joints rotate) takes about half the memory.
TEST(RuntimeClipCompact, StoresOnlyTheJointsThatMove) {
  const Asset asset = load_asset(test_paths::data_dir() + "/fbx/ozz_pab/walk.fbx");
  const RuntimeClip fast = RuntimeClip::build(asset.clips[0], asset.skeleton);
  const RuntimeClip compact = RuntimeClip::build(asset.clips[0], asset.skeleton, kCompact);
  EXPECT_EQ(compact.animated_rotation_groups(), fast.animated_rotation_groups());
  EXPECT_LT(compact.memory_bytes(), fast.memory_bytes() * 6 / 10)
      << compact.memory_bytes() << " against " << fast.memory_bytes();
}

TEST(RuntimeClipCompact, CacheGivesBitIdenticalPosesForwardReversedAndRandom) {
  const Asset asset = load_walk();
  const RuntimeClip rc = RuntimeClip::build(
      asset.clips[0], asset.skeleton, {.sample_rate = 30, .format = RuntimeClipFormat::Compact});
  SamplingCache cache(rc);
  std::vector<SoaTransform> a(static_cast<size_t>(rc.soa_count())), b(a.size());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> any(-0.5f, rc.duration() + 0.5f);
  std::vector<float> times;
  for (float t = 0; t <= rc.duration(); t += 1 / 60.0f) times.push_back(t);
  for (float t = rc.duration(); t >= 0; t -= 1 / 24.0f) times.push_back(t);
  for (int i = 0; i < 200; ++i) times.push_back(any(rng));
  for (float t : times) {
    ASSERT_TRUE(sample(rc, t, cache, a));
    ASSERT_TRUE(sample(rc, t, b));
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(SoaTransform))) << "t = " << t;
  }
}

// Rotations whose largest component is each of x, y, z, w in turn, negative as well as
// positive, components tied, w crossing zero, and a joint turning through more than a half turn
// (its stored sign flips from frame to frame): every frame comes back within the quantization
// step, and between frames the two neighbours are blended in one hemisphere.
TEST(RuntimeClipCompact, SmallestThreeRoundTripsEveryCase) {
  std::vector<Joint> joints(6);
  for (int j = 0; j < 6; ++j)
    joints[size_t(j)].name = "j" + std::to_string(j), joints[size_t(j)].parent = j - 1;
  const Skeleton sk = Skeleton::build(joints);
  const std::vector<Quat> cases = {
      normalize(Quat{0.9, 0.1, -0.2, 0.3}),  normalize(Quat{-0.1, -0.9, 0.2, 0.3}),
      normalize(Quat{0.2, 0.1, 0.95, -0.1}), normalize(Quat{0.1, -0.2, 0.3, -0.9}),
      normalize(Quat{0.5, 0.5, 0.5, 0.5}),   normalize(Quat{-0.5, 0.5, -0.5, 0.5}),
      normalize(Quat{0.7071, 0.7071, 0, 0}), normalize(Quat{0, 0, 0.7071, -0.7071})};
  Clip c;
  c.name = "cases";
  const int frames = int(cases.size());
  c.duration = (frames - 1) / 30.0;
  c.tracks.resize(6);
  for (int f = 0; f < frames; ++f) {
    const double t = f / 30.0;
    for (int j = 0; j < 5; ++j) {
      c.tracks[size_t(j)].rotation.times.push_back(t);
      // Joint j sees the cases rotated by j places; joint 5 turns 0.9 turn about an axis.
      c.tracks[size_t(j)].rotation.values.push_back(cases[size_t((f + j) % frames)]);
    }
    c.tracks[5].rotation.times.push_back(t);
    c.tracks[5].rotation.values.push_back(Quat::from_axis_angle(
        normalize(Vec3{1, 2, 3}), 2 * 3.14159265358979 * 0.9 * f / (frames - 1)));
  }
  const RuntimeClip rc =
      RuntimeClip::build(c, sk, {.sample_rate = 30, .format = RuntimeClipFormat::Compact});
  const RuntimeClip fast = RuntimeClip::build(c, sk, {.sample_rate = 30});
  std::vector<SoaTransform> pose(size_t(rc.soa_count())), fast_pose(pose.size());
  std::vector<Transform> raw(6);
  for (int i = 0; i <= 4 * (frames - 1); ++i) {
    const double t = i / 120.0;
    ASSERT_TRUE(sample(rc, float(t), pose));
    ASSERT_TRUE(sample(fast, float(t), fast_pose));
    for (int j = 0; j < 6; ++j) {
      const Quat got(get_joint(pose, j).rotation);
      EXPECT_NEAR(length(got), 1.0, 1e-5);
      if (i % 4 == 0) {  // on a frame: the stored rotation
        sample_pose(c, sk, t, WrapMode::Clamp, raw);
        EXPECT_LT(angle_between(got, raw[size_t(j)].rotation), 2.5e-4)
            << "joint " << j << " frame " << i / 4;
      }
      // Between frames: the same blend as the Fast format (which fixed the hemisphere offline),
      // unless the two frames are a half turn apart (either way round is then the short one).
      const int f = std::min(i / 4, frames - 2);
      std::vector<Transform> f0(6), f1(6);
      sample_pose(c, sk, f / 30.0, WrapMode::Clamp, f0);
      sample_pose(c, sk, (f + 1) / 30.0, WrapMode::Clamp, f1);
      if (std::abs(dot(f0[size_t(j)].rotation, f1[size_t(j)].rotation)) < 0.05) continue;
      EXPECT_LT(angle_between(got, Quat(get_joint(fast_pose, j).rotation)), 2.5e-4)
          << "joint " << j << " t " << t;
    }
  }
}

TEST(RuntimeClipCompact, EmptyAndStillClipsSample) {
  const Asset asset = load_walk();
  Clip still = asset.clips[0];
  for (JointTrack& track : still.tracks) {  // every channel holds its first key
    if (!track.rotation.values.empty())
      track.rotation.values.assign(track.rotation.values.size(), track.rotation.values[0]);
    if (!track.translation.values.empty())
      track.translation.values.assign(track.translation.values.size(), track.translation.values[0]);
  }
  const RuntimeClip rc = RuntimeClip::build(still, asset.skeleton, kCompact);
  EXPECT_EQ(rc.animated_rotation_groups(), 0);
  EXPECT_EQ(rc.animated_translation_groups(), 0);
  std::vector<SoaTransform> pose(size_t(rc.soa_count())), again(pose.size());
  SamplingCache cache(rc);
  ASSERT_TRUE(sample(rc, 0.25f, cache, pose));
  ASSERT_TRUE(sample(rc, 0.75f, again));
  EXPECT_EQ(0, std::memcmp(pose.data(), again.data(), pose.size() * sizeof(SoaTransform)));
  EXPECT_FALSE(sample(rc, std::nanf(""), pose));
}

TEST(Playback, LoopsClampsAndPlaysBackwards) {
  Playback p{.time = 0.9f, .rate = 1.0f, .loop = true};
  EXPECT_EQ(p.advance(0.2f, 1.0f), 1);
  EXPECT_NEAR(p.time, 0.1f, 1e-6);
  p.rate = -1.0f;
  EXPECT_EQ(p.advance(0.3f, 1.0f), -1);
  EXPECT_NEAR(p.time, 0.8f, 1e-6);
  EXPECT_NEAR(p.normalized(2.0f), 0.4f, 1e-6);
  Playback once{.time = 0.5f, .rate = 2.0f, .loop = false};
  EXPECT_EQ(once.advance(1.0f, 1.0f), 0);
  EXPECT_EQ(once.time, 1.0f);
  once.rate = -1;
  once.advance(5.0f, 1.0f);
  EXPECT_EQ(once.time, 0.0f);
  const float before = once.time;
  EXPECT_EQ(once.advance(std::nanf(""), 1.0f), 0);  // NaN dt: ignored
  EXPECT_EQ(once.time, before);
  // Long runs stay inside the clip.
  Playback loop{.time = 0, .rate = 1.3f, .loop = true};
  for (int i = 0; i < 100000; ++i) {
    loop.advance(1 / 60.0f, 1.2f);
    ASSERT_GE(loop.time, 0.0f);
    ASSERT_LT(loop.time, 1.2f);
  }
}

}  // namespace
}  // namespace kinema
