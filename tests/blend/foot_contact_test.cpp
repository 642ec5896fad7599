// Foot plants on ankle and toe, and the foot-skate metric (kinema/blend/foot_contact.h).
#include "kinema/blend/foot_contact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kDt = 1.0 / 30;

/// One foot's track built frame by frame: ankle and toe positions.
struct Track {
  std::vector<Vec3> ankle, toe;
  void add(const Vec3& a, const Vec3& t) {
    ankle.push_back(a);
    toe.push_back(t);
  }
};

std::vector<int> planted_frames(const FootPlants& p, int foot = 0) {
  std::vector<int> frames;
  for (int f = 0; f < p.frame_count; ++f)
    if (p.is_planted(f, foot)) frames.push_back(f);
  return frames;
}

/// A step: swing (2 m/s, 20 cm up), stance (both still, on the floor), heel roll (the ankle rises
/// and moves forward at 0.6 m/s while the toe stays), swing again.
Track heel_roll_step() {
  Track t;
  const Vec3 toe_offset{0, -0.06, 0.14};
  double x = 0;
  for (int f = 0; f < 10; ++f, x += 2 * kDt) t.add({0, 0.3, x}, Vec3{0, 0.3, x} + toe_offset);
  const Vec3 ankle{0, 0.08, x}, toe = ankle + toe_offset;
  for (int f = 0; f < 20; ++f) t.add(ankle, toe);
  for (int f = 1; f <= 10; ++f) {
    // The ankle turns about the toe: it rises and comes forward, the toe does not move.
    const double a = 0.15 * f;
    t.add(toe + Vec3{0, 0.06 * std::cos(a) + 0.14 * std::sin(a),
                     0.06 * std::sin(a) - 0.14 * std::cos(a)},
          toe);
  }
  for (int f = 1; f <= 10; ++f)
    t.add(Vec3{0, 0.3, toe.z + 2 * f * kDt}, Vec3{0, 0.3, toe.z + 2 * f * kDt} + toe_offset);
  return t;
}

TEST(FootPlants, HeelRollStaysPlantedOnTheToe) {
  const Track t = heel_roll_step();
  const FootPlants both = detect_foot_plants(t.ankle, t.toe, 1, kDt);
  const std::vector<int> frames = planted_frames(both);
  ASSERT_FALSE(frames.empty());
  // Planted from the landing to the toe-off, heel roll included (frames 30–39).
  EXPECT_LE(frames.front(), 11);
  EXPECT_GE(frames.back(), 38);  // 39's central difference sees the swing
  EXPECT_EQ(static_cast<int>(frames.size()), frames.back() - frames.front() + 1);  // one plant
  ASSERT_EQ(both.plants.size(), 1u);
  EXPECT_TRUE(both.toe_support[35]);   // rolling: the toe is the slower point
  EXPECT_FALSE(both.toe_support[20]);  // flat: a tie goes to the ankle
  // The ankle alone counts the roll as moving: the plant ends with the flat stance.
  const FootPlants ankle_only = detect_foot_plants(t.ankle, {}, 1, kDt);
  const std::vector<int> ankle_frames = planted_frames(ankle_only);
  ASSERT_FALSE(ankle_frames.empty());
  EXPECT_LE(ankle_frames.back(), 31);
}

/// A foot on its floor moving at `speeds[f]` m/s at frame f (x advances by speed·dt).
std::vector<Vec3> moving_at(const std::vector<double>& speeds) {
  std::vector<Vec3> p;
  double x = 0;
  for (double v : speeds) {
    p.push_back({x, 0.1, 0});
    x += v * kDt;
  }
  return p;
}

TEST(FootPlants, HysteresisKeepsAPlantBetweenTheThresholds) {
  // Stopped for 10 frames, then 0.35 m/s: between enter (0.25) and leave (0.45), so the plant
  // holds; a foot that starts at 0.35 m/s never plants.
  std::vector<double> speeds(10, 0.0);
  speeds.resize(40, 0.35);
  const FootPlants held = detect_foot_plants(moving_at(speeds), {}, 1, kDt);
  EXPECT_EQ(planted_frames(held).size(), 40u);
  const FootPlants never = detect_foot_plants(moving_at(std::vector<double>(40, 0.35)), {}, 1, kDt);
  EXPECT_TRUE(planted_frames(never).empty());
  // Past leave_speed the plant ends.
  speeds.resize(60, 0.6);
  const FootPlants left = detect_foot_plants(moving_at(speeds), {}, 1, kDt);
  const std::vector<int> frames = planted_frames(left);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front(), 0);
  EXPECT_GE(frames.back(), 38);
  EXPECT_LE(frames.back(), 40);
}

TEST(FootPlants, PlantsShorterThanTheMinimumDurationAreDropped) {
  // Stops of 2 and 6 still frames (speed 0 by central difference) between runs at 1 m/s; at
  // 30 fps the 0.1 s minimum is 3 frames.
  std::vector<double> speeds;
  for (int stop : {1, 5}) {
    speeds.insert(speeds.end(), 10, 1.0);
    speeds.insert(speeds.end(), static_cast<size_t>(stop) + 1, 0.0);
  }
  speeds.insert(speeds.end(), 10, 1.0);
  const FootPlants p = detect_foot_plants(moving_at(speeds), {}, 1, kDt);
  ASSERT_EQ(p.plants.size(), 1u);
  EXPECT_GE(p.plants[0].frames(), 3);
  EXPECT_GT(p.plants[0].first, 20);  // the later, longer stop
  FootPlantOptions keep_all;
  keep_all.min_duration = 0;
  EXPECT_EQ(detect_foot_plants(moving_at(speeds), {}, 1, kDt, keep_all).plants.size(), 2u);
}

TEST(FootPlants, AFootHighAboveItsFloorIsNotPlanted) {
  // Still, but 30 cm above its low level for the second half (a held foot in the air).
  std::vector<Vec3> p(40, Vec3{0, 0.1, 0});
  for (size_t f = 20; f < 40; ++f) p[f].y = 0.4;
  const FootPlants plants = detect_foot_plants(p, {}, 1, kDt);
  const std::vector<int> frames = planted_frames(plants);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back(), 19);
  EXPECT_NEAR(plants.ankle_floor[0], 0.1, 1e-12);
}

TEST(FootSkate, MedianAndP90OfKnownSpeeds) {
  // Two feet planted throughout, sliding at 2 and 6 cm/s: each foot's median is its speed; all
  // 2·21 frames together have median (2 + 6)/2 = 4 cm/s (ranks 20 and 21 of 42) and p90 6.
  const std::vector<Vec3> slow = moving_at(std::vector<double>(21, 0.02));
  const std::vector<Vec3> fast = moving_at(std::vector<double>(21, 0.06));
  std::vector<Vec3> ankles;
  for (size_t f = 0; f < 21; ++f) ankles.insert(ankles.end(), {slow[f], fast[f]});
  const FootSkateReport r = measure_foot_skate(ankles, {}, 2, kDt);
  ASSERT_EQ(r.feet.size(), 2u);
  ASSERT_TRUE(r.feet[0].speed && r.feet[1].speed && r.total.speed);
  EXPECT_EQ(r.total.planted_frames, 42);
  EXPECT_NEAR(r.feet[0].speed->median, 2, 1e-9);
  EXPECT_NEAR(r.feet[1].speed->p90, 6, 1e-9);
  EXPECT_NEAR(r.total.speed->median, 4, 1e-9);
  EXPECT_NEAR(r.total.speed->p90, 6, 1e-9);
  EXPECT_NEAR(r.total.speed->max, 6, 1e-9);
}

TEST(FootSkate, TheSlowerOfAnkleAndToeIsMeasured) {
  // Heel roll: the ankle moves, the toe does not; the skate is the toe's 0.
  const Track t = heel_roll_step();
  const FootSkateReport r = measure_foot_skate(t.ankle, t.toe, 1, kDt);
  ASSERT_TRUE(r.total.speed);
  EXPECT_LT(r.total.speed->p90, 1.0);
  // Judged on the ankle alone, the roll counts as skating until the plant ends.
  const FootSkateReport ankle = measure_foot_skate(t.ankle, {}, 1, kDt);
  ASSERT_TRUE(ankle.total.speed);
  EXPECT_GT(ankle.total.speed->max, r.total.speed->max);
}

TEST(FootSkate, NoContactsIsSaidAsSuch) {
  const FootSkateReport r = measure_foot_skate(moving_at(std::vector<double>(30, 1.5)), {}, 1, kDt);
  EXPECT_EQ(r.total.planted_frames, 0);
  EXPECT_FALSE(r.total.speed.has_value());
  EXPECT_FALSE(r.feet[0].speed.has_value());
}

TEST(FootSkate, PercentileInterpolatesBetweenOrderStatistics) {
  std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_THROW(percentile(std::span<double>{}, 50), Error);
  EXPECT_THROW(percentile(v, 101), Error);
}

TEST(FootPlants, BadInputIsAnError) {
  const std::vector<Vec3> two(2, Vec3{0, 0, 0});
  EXPECT_THROW(detect_foot_plants(two, {}, 0, kDt), Error);
  EXPECT_THROW(detect_foot_plants(two, {}, 3, kDt), Error);
  EXPECT_THROW(detect_foot_plants(two, std::vector<Vec3>(3), 1, kDt), Error);
  EXPECT_THROW(detect_foot_plants(two, {}, 1, 0.0), Error);
  std::vector<Vec3> nan = two;
  nan[1].y = std::nan("");
  EXPECT_THROW(detect_foot_plants(nan, {}, 1, kDt), Error);
  EXPECT_THROW(detect_foot_plants(two, nan, 1, kDt), Error);
  FootPlantOptions backwards;
  backwards.leave_speed = 0.1;  // below enter_speed
  EXPECT_THROW(detect_foot_plants(two, {}, 1, kDt, backwards), Error);
  const FootPlants plants = detect_foot_plants(two, {}, 1, kDt);
  EXPECT_THROW(measure_foot_skate(std::vector<Vec3>(4), {}, 1, kDt, plants), Error);
}

}  // namespace
}  // namespace kinema
