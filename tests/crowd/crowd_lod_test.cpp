// Crowd LOD: the joint-update arithmetic (200 characters × 60 bones at 60 Hz = 720,000 a second;
// with 150 of them at 15 Hz, 315,000), tiers by distance with hysteresis, cross-fades that count
// both skeletons while they last, and bad settings refused.
#include "kinema/crowd/crowd_lod.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

CrowdLodSettings two_rates() {
  // Near at 60 Hz, mid (from 30 m) at 15 Hz, both with all 60 bones; far tiers out of reach.
  CrowdLodSettings s;
  s.tiers[0] = {0, 60, 60};
  s.tiers[1] = {30, 15, 60};
  s.tiers[2] = {1000, 0, 0};
  s.tiers[3] = {2000, 0, 0};
  s.frame_hz = 60;
  return s;
}

std::uint64_t joint_updates_in_one_second(CrowdLod& lod, const std::vector<float>& distances) {
  for (int frame = 0; frame < 60; ++frame) lod.update(distances);
  return lod.joint_updates_total();
}

TEST(CrowdLod, TwoHundredNearCharactersCost720000JointUpdatesASecond) {
  CrowdLod lod(two_rates(), 200);
  EXPECT_EQ(joint_updates_in_one_second(lod, std::vector<float>(200, 5.0f)), 720000u);
}

TEST(CrowdLod, HundredFiftyOfThemAt15HzCost315000) {
  std::vector<float> distances(200, 5.0f);
  for (std::size_t i = 50; i < 200; ++i) distances[i] = 60.0f;
  CrowdLod lod(two_rates(), 200);
  EXPECT_EQ(joint_updates_in_one_second(lod, distances), 315000u);  // 180,000 + 135,000
  EXPECT_EQ(lod.counts()[0], 50u);
  EXPECT_EQ(lod.counts()[1], 150u);
  // Staggered: every frame costs about the same, 50·60 + (37 or 38)·60 (a quarter of the 150).
  for (int frame = 0; frame < 8; ++frame) {
    lod.update(distances);
    EXPECT_GE(lod.joint_updates_this_frame(), 3000u + 37 * 60);
    EXPECT_LE(lod.joint_updates_this_frame(), 3000u + 38 * 60);
  }
}

TEST(CrowdLod, TiersFollowDistanceWithHysteresis) {
  CrowdLodSettings s;  // near < 15 m ≤ mid < 40 m ≤ far < 80 m ≤ farthest, hysteresis 1 m
  CrowdLod lod(s, 4);
  lod.update(std::vector<float>{5, 20, 50, 100});
  EXPECT_EQ(lod.tier(0), CrowdTier::Near);
  EXPECT_EQ(lod.tier(1), CrowdTier::Mid);
  EXPECT_EQ(lod.tier(2), CrowdTier::Far);
  EXPECT_EQ(lod.tier(3), CrowdTier::Farthest);
  // Agent 0 walks to and fro across the 15 m boundary within the hysteresis: no switch.
  for (float d : {14.5f, 15.5f, 14.8f, 15.9f, 14.2f}) {
    lod.update(std::vector<float>{d, 20, 50, 100});
    EXPECT_EQ(lod.tier(0), CrowdTier::Near) << d;
  }
  lod.update(std::vector<float>{16.5f, 20, 50, 100});
  EXPECT_EQ(lod.tier(0), CrowdTier::Mid);
  lod.update(std::vector<float>{14.5f, 20, 50, 100});
  EXPECT_EQ(lod.tier(0), CrowdTier::Mid);  // back only below 14 m
  lod.update(std::vector<float>{13.5f, 20, 50, 100});
  EXPECT_EQ(lod.tier(0), CrowdTier::Near);
  lod.update(std::vector<float>{NAN, 20, 50, 100});
  EXPECT_EQ(lod.tier(0), CrowdTier::Near);  // a bad camera never freezes a character
}

TEST(CrowdLod, SwitchingCrossFadesAndCountsBothSkeletonsMeanwhile) {
  CrowdLodSettings s;
  s.fade_seconds = 0.25f;  // 15 frames at 60 Hz
  CrowdLod lod(s, 1);
  lod.update(std::vector<float>{5});
  EXPECT_EQ(lod.joint_updates_this_frame(), 60u);
  lod.update(std::vector<float>{30});  // near → mid
  EXPECT_EQ(lod.tier(0), CrowdTier::Mid);
  EXPECT_EQ(lod.fading_from(0), CrowdTier::Near);
  EXPECT_NEAR(lod.fade(0), 1.0f / 15, 1e-6f);
  float last = lod.fade(0);
  int frames = 1;
  while (lod.fade(0) < 1) {
    lod.update(std::vector<float>{30});
    EXPECT_GT(lod.fade(0), last);
    last = lod.fade(0);
    ++frames;
  }
  EXPECT_EQ(frames, 15);
  EXPECT_EQ(lod.fading_from(0), CrowdTier::Mid);
  // Settled in mid: 20 joints every other frame.
  std::uint64_t before = lod.joint_updates_total();
  lod.update(std::vector<float>{30});
  lod.update(std::vector<float>{30});
  EXPECT_EQ(lod.joint_updates_total() - before, 20u);
  // Off to the VAT tier: no skeleton once the fade is over.
  lod.update(std::vector<float>{60});
  EXPECT_EQ(lod.tier(0), CrowdTier::Far);
  for (int f = 0; f < 20; ++f) lod.update(std::vector<float>{60});
  EXPECT_FALSE(lod.updates_skeleton(0));
  EXPECT_EQ(lod.joint_updates_this_frame(), 0u);
}

TEST(CrowdLod, BadSettingsAreRefused) {
  CrowdLodSettings s;
  s.tiers[2].min_distance = 10;  // below mid's 15
  EXPECT_THROW(CrowdLod(s, 1), Error);
  s = {};
  s.tiers[1].joints = 0;
  EXPECT_THROW(CrowdLod(s, 1), Error);
  s = {};
  s.frame_hz = 0;
  EXPECT_THROW(CrowdLod(s, 1), Error);
  s = {};
  s.tiers[0].min_distance = 1;
  EXPECT_THROW(CrowdLod(s, 1), Error);
}

}  // namespace
}  // namespace kinema
