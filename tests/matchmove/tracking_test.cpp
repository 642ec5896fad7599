// Tests for kinema/matchmove/tracking.h on the synthetic plate of test_scene.h, whose ground
// truth says where every tracked point really is.
#include "kinema/matchmove/tracking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kinema/core/error.h"
#include "test_scene.h"

namespace kinema::matchmove {
namespace {

using test::plate;

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, std::size_t(q * double(v.size())))];
}

TEST(Tracking, FollowsTheTrueScenePoints) {
  const test::Plate& p = plate();
  // Step error: the surface under each observation, reprojected into the next frame through the
  // true camera and lens, against the next observation — Lucas–Kanade's own accuracy. Drift: the
  // surface under a track's FIRST observation against every later one — what the steps add up
  // to (a translational window on a patch that perspective deforms wanders a little).
  std::vector<double> steps, drift, end_drift;
  std::size_t observations = 0;
  for (const Track& t : p.tracks.tracks) {
    const Observation& first = t.observations.front();
    const auto x = p.scene.point_under(first.frame, first.u, first.v);
    ASSERT_TRUE(x.has_value());
    for (std::size_t k = 1; k < t.observations.size(); ++k) {
      const Observation& o = t.observations[k];
      const Observation& before = t.observations[k - 1];
      composite::PixelPoint truth;
      ASSERT_TRUE(p.scene.project(o.frame, *x, truth));
      drift.push_back(std::hypot(o.u - truth.u, o.v - truth.v));
      if (k + 1 == t.observations.size()) end_drift.push_back(drift.back());
      const auto y = p.scene.point_under(before.frame, before.u, before.v);
      ASSERT_TRUE(y.has_value());
      ASSERT_TRUE(p.scene.project(o.frame, *y, truth));
      steps.push_back(std::hypot(o.u - truth.u, o.v - truth.v));
    }
    observations += t.observations.size();
  }
  std::printf(
      "tracking: %zu tracks, %zu observations, render %.2f s, track %.2f s\n"
      "  step error median %.3f px, 95th percentile %.3f px; drift median %.3f px, 95th "
      "percentile %.3f px, at track ends median %.3f px\n",
      p.tracks.tracks.size(), observations, p.render_seconds, p.track_seconds,
      percentile(steps, 0.5), percentile(steps, 0.95), percentile(drift, 0.5),
      percentile(drift, 0.95), percentile(end_drift, 0.5));
  EXPECT_GT(p.tracks.tracks.size(), 300u);
  EXPECT_LT(percentile(steps, 0.5), 0.1);
  EXPECT_LT(percentile(steps, 0.95), 0.3);
  EXPECT_LT(percentile(drift, 0.5), 0.5);
}

TEST(Tracking, TracksAreConsecutiveInsideTheFrameAndUnique) {
  const test::Plate& p = plate();
  const TrackOptions defaults;
  EXPECT_EQ(p.tracks.width, 640);
  EXPECT_EQ(p.tracks.height, 360);
  EXPECT_EQ(p.tracks.frame_count, int(p.frames.size()));
  int previous_id = -1;
  bool redetected = false;
  for (const Track& t : p.tracks.tracks) {
    EXPECT_GT(t.id, previous_id);
    previous_id = t.id;
    ASSERT_GE(t.observations.size(), std::size_t(defaults.min_track_length));
    redetected |= t.observations.front().frame > 0;
    for (std::size_t k = 0; k < t.observations.size(); ++k) {
      const Observation& o = t.observations[k];
      if (k > 0) {
        EXPECT_EQ(o.frame, t.observations[k - 1].frame + 1);
      }
      EXPECT_GE(o.u, defaults.border);
      EXPECT_GE(o.v, defaults.border);
      EXPECT_LE(o.u, p.tracks.width - 1 - defaults.border);
      EXPECT_LE(o.v, p.tracks.height - 1 - defaults.border);
    }
  }
  EXPECT_TRUE(redetected) << "the camera moves: tracks leave and new corners must replace them";
}

TEST(Tracking, CornersKeepTheirMinimumDistance) {
  // Apart by min_distance on the pixel grid; sub-pixel refinement then moves each corner by at
  // most half the block along each axis.
  const test::Plate& p = plate();
  std::vector<Observation> first;
  for (const Track& t : p.tracks.tracks)
    if (t.observations.front().frame == 0) first.push_back(t.observations.front());
  ASSERT_GT(first.size(), 100u);
  for (std::size_t i = 0; i < first.size(); ++i)
    for (std::size_t j = i + 1; j < first.size(); ++j)
      ASSERT_GE(std::hypot(first[i].u - first[j].u, first[i].v - first[j].v),
                TrackOptions{}.min_distance - (TrackOptions{}.block_size - 1) * std::sqrt(2.0));
}

TEST(Tracking, ForwardBackwardCheckEndsTracksAcrossACut) {
  // Frame 1 is an unrelated picture (the plate mirrored): a track that "continues" across the
  // cut found some look-alike patch, and tracking it back does not return to where it began.
  const test::Plate& p = plate();
  composite::Image mirrored = p.frames[0];
  for (int y = 0; y < mirrored.height; ++y)
    for (int x = 0; x < mirrored.width; ++x)
      mirrored.at(x, y) = p.frames[0].at(mirrored.width - 1 - x, y);
  const std::vector<composite::Image> cut{p.frames[0], mirrored};
  const TrackSet checked = track_features(cut);
  TrackOptions lenient;
  lenient.forward_backward_threshold = 0;  // off
  const TrackSet unchecked = track_features(cut, lenient);
  std::printf("across a cut: %zu tracks survive with the check, %zu without\n",
              checked.tracks.size(), unchecked.tracks.size());
  // A few survive: corners near the mirror's axis, and chance look-alikes both ways.
  EXPECT_GT(unchecked.tracks.size(), 400u);
  EXPECT_LT(checked.tracks.size(), unchecked.tracks.size() / 10);
}

TEST(Tracking, LumaIsSrgbEncoded) {
  composite::Image image(3, 1);
  image.at(0, 0) = {0, 0, 0, 1};
  image.at(1, 0) = {0.5f, 0.5f, 0.5f, 1};
  image.at(2, 0) = {2, 2, 2, 1};  // HDR: clamps
  const std::vector<unsigned char> luma = tracking_luma(image);
  ASSERT_EQ(luma.size(), 3u);
  EXPECT_EQ(luma[0], 0);
  EXPECT_EQ(luma[1], 188);  // 0.5 linear is 0.7354 in sRGB
  EXPECT_EQ(luma[2], 255);
}

TEST(Tracking, RejectsBadInput) {
  const composite::Image a(32, 24, {0.5f, 0.5f, 0.5f, 1}), b(32, 20, {0.5f, 0.5f, 0.5f, 1});
  const std::vector<composite::Image> one{a}, differing{a, a, b}, empty{a, composite::Image()};
  EXPECT_THROW(track_features(std::vector<composite::Image>{}), Error);
  try {
    track_features(one);
    FAIL() << "one frame";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2 frames"), std::string::npos) << e.what();
  }
  try {
    track_features(differing);
    FAIL() << "differing sizes";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "frame 2");
    EXPECT_NE(e.reason().find("32×20 but frame 0 is 32×24"), std::string::npos) << e.what();
  }
  try {
    track_features(empty);
    FAIL() << "empty frame";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "frame 1");
    EXPECT_NE(e.reason().find("empty"), std::string::npos) << e.what();
  }
  TrackOptions bad;
  bad.window_size = 20;
  try {
    track_features(std::vector<composite::Image>{a, a}, bad);
    FAIL() << "even window";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "TrackOptions.window_size");
  }
}

TEST(Tracking, AFlatPlateHasNoTracks) {
  const composite::Image grey(64, 48, {0.2f, 0.2f, 0.2f, 1});
  const TrackSet tracks = track_features(std::vector<composite::Image>{grey, grey, grey});
  EXPECT_TRUE(tracks.tracks.empty());
}

}  // namespace
}  // namespace kinema::matchmove
