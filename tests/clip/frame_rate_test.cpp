// Frame-rate inference: infer_frame_rate and sample_rate_or (kinema/clip/clip.h).
#include <gtest/gtest.h>

#include <vector>

#include "kinema/clip/clip.h"

namespace kinema {
namespace {

// `count` key times from `start`, `1 / rate` apart, each rounded to float as glTF stores them.
std::vector<double> float_times(int count, double rate, double start = 0) {
  std::vector<double> t;
  for (int i = 0; i < count; ++i) t.push_back(static_cast<float>(start + i / rate));
  return t;
}

Keyframes<Quat> rotation_keys(std::vector<double> times) {
  Keyframes<Quat> k;
  k.values.assign(times.size(), Quat::identity());
  k.times = std::move(times);
  return k;
}

Keyframes<Vec3> translation_keys(std::vector<double> times) {
  Keyframes<Vec3> k;
  k.values.assign(times.size(), Vec3{0, 0, 0});
  k.times = std::move(times);
  return k;
}

Clip clip_with_rotation_times(std::vector<double> times) {
  Clip clip;
  clip.tracks.resize(1);
  clip.tracks[0].rotation = rotation_keys(std::move(times));
  return clip;
}

TEST(FrameRate, EvenlySpacedFloatTimesGiveTheExactWholeRate) {
  for (double rate : {24.0, 25.0, 30.0, 60.0, 120.0}) {
    const Clip clip = clip_with_rotation_times(float_times(1000, rate));
    const double inferred = infer_frame_rate(clip);
    EXPECT_EQ(inferred, rate);  // exactly: the float blur is snapped away
  }
}

TEST(FrameRate, ARateThatIsNotWholeIsKept) {
  // 29.97 fps (NTSC) and a rate a little off 120 are not snapped to the nearest integer.
  EXPECT_NEAR(infer_frame_rate(clip_with_rotation_times(float_times(300, 30000.0 / 1001))),
              30000.0 / 1001, 1e-4);
  const double odd = infer_frame_rate(clip_with_rotation_times(float_times(500, 120.0048)));
  EXPECT_NEAR(odd, 120.0048, 1e-3);
  EXPECT_NE(odd, 120.0);
}

TEST(FrameRate, UnevenTimesGiveZero) {
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 0.1, 0.17, 0.3, 0.4})), 0);
  // Evenly spaced but for one key, which no finer grid explains either.
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 0.1, 0.2, 0.3172, 0.4})), 0);
  // Keys a third of a frame apart are on the grid three times finer.
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 0.1, 0.2, 0.3, 0.3 + 0.1 / 3})), 30);
}

TEST(FrameRate, ShorterChannelsMayStartLateOrSkipFrames) {
  // The channel with the most keys sets the spacing; others only need to sit on its grid.
  Clip clip = clip_with_rotation_times(float_times(31, 30));
  clip.tracks.resize(2);
  clip.tracks[1].translation = translation_keys({1.0 / 30, 5.0 / 30, 6.0 / 30, 1.0});
  EXPECT_EQ(infer_frame_rate(clip), 30);
  clip.tracks[1].translation = translation_keys({0.3 / 30, 5.0 / 30, 6.0 / 30, 1.0});
  EXPECT_EQ(infer_frame_rate(clip), 0);  // a third of a frame off
}

TEST(FrameRate, KeyReducedChannelsStillShowTheirFrameGrid) {
  // No channel has a key on every frame (FBX key reduction): the closest keys are one frame
  // apart, and every key sits on that grid.
  std::vector<double> frames = {0, 1, 2, 5, 9, 10, 20, 30}, sparse = {0, 3, 30};
  for (double& f : frames) f /= 24;
  for (double& f : sparse) f /= 24;
  Clip clip = clip_with_rotation_times(frames);
  clip.tracks.resize(2);
  clip.tracks[1].translation = translation_keys(sparse);
  EXPECT_EQ(infer_frame_rate(clip), 24);
  // Adaptive keys (between frames, as some exporters reduce them) are on no grid.
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 0.0667, 0.0833, 0.0958, 0.1146, 0.1333})),
            0);
}

TEST(FrameRate, MorphWeightKeysCount) {
  Clip clip;
  MorphTrack weights;
  weights.target_count = 1;
  weights.times = float_times(50, 24);
  weights.values.assign(weights.times.size(), 0.0);
  clip.morph_tracks.push_back(weights);
  EXPECT_EQ(infer_frame_rate(clip), 24);
}

TEST(FrameRate, FewerThanThreeKeysGiveZero) {
  EXPECT_EQ(infer_frame_rate(Clip{}), 0);
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({})), 0);
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0})), 0);
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 1.0 / 30})), 0);
  EXPECT_EQ(infer_frame_rate(clip_with_rotation_times({0, 1.0 / 30, 2.0 / 30})), 30);
}

TEST(FrameRate, ASampleRateIsTakenAsItIs) {
  Clip clip = clip_with_rotation_times(float_times(100, 30));
  clip.sample_rate = 25;  // what the source says wins over the key times
  EXPECT_EQ(infer_frame_rate(clip), 25);
  Clip uneven = clip_with_rotation_times({0, 0.1, 0.15});
  uneven.sample_rate = 60;
  EXPECT_EQ(infer_frame_rate(uneven), 60);
}

TEST(FrameRate, SampleRateOrFallsBackWithoutLookingAtKeys) {
  Clip clip = clip_with_rotation_times(float_times(100, 60));
  EXPECT_EQ(sample_rate_or(clip, 30), 30);  // keys are not examined
  EXPECT_EQ(sample_rate_or(clip), kDefaultSampleRate);
  clip.sample_rate = 50;
  EXPECT_EQ(sample_rate_or(clip, 30), 50);
}

}  // namespace
}  // namespace kinema
