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

namespace kinema {
namespace {

Asset load_walk() { return load_asset(KINEMA_TEST_DATA_DIR "/bvh/cmu_cgspeed_mb/02_01.bvh"); }

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
