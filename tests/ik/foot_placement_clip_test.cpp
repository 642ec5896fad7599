// tests/ik/foot_placement_clip_test.cpp — foot placement over a whole clip and its metrics.
#include "kinema/ik/foot_placement_clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

// pelvis(0) → thighL(1) → shinL(2) → footL(3) → toeL(4); pelvis → thighR(5) → … → toeR(8).
// Hips at y 0.93, knees slightly forward, ankles at y 0.09, toes at y 0.02 (the floor).
Skeleton biped() {
  std::vector<Joint> j;
  const auto add = [&](const char* name, int parent, Vec3 t) {
    Joint joint;
    joint.name = name;
    joint.parent = parent;
    joint.rest.translation = t;
    j.push_back(joint);
  };
  add("pelvis", -1, {0, 0.98, 0});
  for (int side = 0; side < 2; ++side) {
    const double x = side == 0 ? 0.1 : -0.1;
    const int base = static_cast<int>(j.size());
    add(side == 0 ? "thighL" : "thighR", 0, {x, -0.05, 0});
    add(side == 0 ? "shinL" : "shinR", base, {0, -0.42, 0.02});
    add(side == 0 ? "footL" : "footR", base + 1, {0, -0.42, -0.02});
    add(side == 0 ? "toeL" : "toeR", base + 2, {0, -0.07, 0.12});
  }
  return Skeleton::build(j);
}

FootPlacementRig rig() {
  FootPlacementRig r;
  r.pelvis = 0;
  r.legs = {{1, 2, 3}, {5, 6, 7}};
  r.toes = {4, 8};
  return r;
}

// Standing still for one second at 30 fps (the pelvis keyed, the legs at rest).
Clip standing() {
  Clip c;
  c.name = "stand";
  c.duration = 1;
  c.sample_rate = 30;
  c.tracks.resize(9);
  c.tracks[0].translation.times = {0, 1};
  c.tracks[0].translation.values = {{0, 0.98, 0}, {0, 0.98, 0}};
  c.tracks[4].rotation.times = {0, 1};  // a toe track that must survive unchanged
  c.tracks[4].rotation.values = {Quat::identity(), Quat::from_axis_angle({1, 0, 0}, 0.2)};
  return c;
}

// Left of x = 0 (the right foot) at `right`, right of it (the left foot) at `left`.
HeightField split_ground(double left, double right) {
  const int w = 41;
  std::vector<double> h;
  for (int iz = 0; iz < w; ++iz)
    for (int ix = 0; ix < w; ++ix) h.push_back(ix >= 20 ? left : right);
  return HeightField(-1, -1, 0.05, w, w, h);
}

Vec3 joint_position(const Clip& c, const Skeleton& s, double t, int j) {
  return sample_model_pose(c, s, t)[static_cast<size_t>(j)].translation_part();
}

TEST(FootPlacementClip, FeetMeetUnevenGroundAndMetricsSaySo) {
  const Skeleton s = biped();
  const Clip c = standing();
  // Left foot on a 0.10 step above the floor (0.02), right foot in a 0.05 hole.
  const HeightField ground = split_ground(0.12, -0.03);
  ClipFootPlacementOptions o;
  ClipFootPlacementReport r;
  const Clip out = place_feet_on_ground(c, s, rig(), ground, o, &r);
  EXPECT_EQ(r.frames, 31);
  EXPECT_NEAR(r.floor_height, 0.02, 1e-12);  // the toes
  ASSERT_EQ(r.ankle_heights.size(), 2u);
  EXPECT_NEAR(r.ankle_heights[0], 0.07, 1e-12);
  EXPECT_NEAR(r.pelvis_offset_min, -0.05, 1e-12);

  for (double t : {0.0, 0.5, 1.0}) {
    EXPECT_NEAR(joint_position(out, s, t, 3).y - 0.07, 0.12, 1e-9) << t;   // left sole on step
    EXPECT_NEAR(joint_position(out, s, t, 7).y - 0.07, -0.03, 1e-9) << t;  // right in the hole
    EXPECT_NEAR(joint_position(out, s, t, 0).y, 0.93, 1e-9) << t;          // pelvis lowered
  }
  // Bone lengths are kept.
  EXPECT_NEAR(distance(joint_position(out, s, 0.5, 1), joint_position(out, s, 0.5, 2)),
              distance(joint_position(c, s, 0.5, 1), joint_position(c, s, 0.5, 2)), 1e-9);
  // The toe track is the input's; the legs and the pelvis are keyed every frame.
  EXPECT_EQ(out.tracks[4].rotation.times, c.tracks[4].rotation.times);
  EXPECT_EQ(out.tracks[1].rotation.key_count(), 31u);
  EXPECT_EQ(out.tracks[0].translation.key_count(), 31u);
  EXPECT_EQ(out.tracks[4].translation.key_count(), 0u);

  // Metrics: every frame is planted (standing still at the floor).
  EXPECT_EQ(r.on_floor.overall.planted_frames, 62);
  EXPECT_NEAR(r.on_floor.overall.penetration_max, 0, 1e-12);
  EXPECT_NEAR(r.on_floor.overall.float_max, 0, 1e-12);
  EXPECT_NEAR(r.before.legs[0].penetration_max, 0.10, 1e-12);
  EXPECT_NEAR(r.before.legs[0].penetration_mean, 0.10, 1e-12);
  EXPECT_NEAR(r.before.legs[1].float_mean, 0.05, 1e-12);
  EXPECT_NEAR(r.before.overall.penetration_mean, 0.05, 1e-12);  // over both legs' frames
  EXPECT_NEAR(r.after.overall.penetration_max, 0, 1e-9);
  EXPECT_NEAR(r.after.overall.float_max, 0, 1e-9);
  EXPECT_EQ(r.after.overall.reach_failures, 0);
  EXPECT_NEAR(r.after.overall.knee_jump_max, 0, 1e-6);  // the springs start settled
  EXPECT_EQ(r.before.overall.knee_jump_max, 0);
}

TEST(FootPlacementClip, FollowGroundCarriesTheBody) {
  const Skeleton s = biped();
  const HeightField ground = split_ground(0.62, 0.62);  // a floor 0.6 m higher
  ClipFootPlacementOptions o;
  o.follow_ground = true;
  ClipFootPlacementReport r;
  const Clip out = place_feet_on_ground(standing(), s, rig(), ground, o, &r);
  EXPECT_NEAR(r.follow_min, 0.6, 1e-12);
  EXPECT_NEAR(r.follow_max, 0.6, 1e-12);
  EXPECT_NEAR(joint_position(out, s, 0.5, 0).y, 1.58, 1e-9);
  EXPECT_NEAR(joint_position(out, s, 0.5, 3).y, 0.69, 1e-9);
  EXPECT_NEAR(r.after.overall.penetration_max, 0, 1e-9);
  EXPECT_NEAR(r.before.overall.penetration_max, 0.6, 1e-9);
  // Without it, ground 0.6 m up is above where the rays start (ray_up 0.5): the feet stay in it.
  o.follow_ground = false;
  place_feet_on_ground(standing(), s, rig(), ground, o, &r);
  EXPECT_NEAR(r.after.overall.penetration_max, 0.6, 1e-9);
}

TEST(FootPlacementClip, ExplicitFloorAndAnkleHeights) {
  const Skeleton s = biped();
  ClipFootPlacementOptions o;
  o.floor_height = 0.0;
  o.ankle_heights = {0.09, 0.09};
  ClipFootPlacementReport r;
  const Clip out = place_feet_on_ground(standing(), s, rig(), split_ground(0.1, 0.1), o, &r);
  EXPECT_EQ(r.floor_height, 0.0);
  EXPECT_NEAR(joint_position(out, s, 0.2, 3).y, 0.19, 1e-9);
}

TEST(FootPlacementClip, BadInputIsRefused) {
  const Skeleton s = biped();
  const HeightField g = split_ground(0, 0);
  const auto fails = [&](FootPlacementRig r, ClipFootPlacementOptions o, const char* what) {
    try {
      place_feet_on_ground(standing(), s, r, g, o);
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  FootPlacementRig r = rig();
  r.legs.clear();
  fails(r, {}, "1 to 4 legs");
  r = rig();
  r.legs[1] = {5, 3, 7};  // not a chain
  fails(r, {}, "chain");
  r = rig();
  r.pelvis = 99;
  fails(r, {}, "out of range");
  r = rig();
  r.toes = {4};
  fails(r, {}, "toe");
  ClipFootPlacementOptions o;
  o.fps = 0;
  fails(rig(), o, "fps");
  o = {};
  o.ankle_heights = {0.1};
  fails(rig(), o, "one per leg");
  o.ankle_heights = {0.1, -1};
  fails(rig(), o, "ankle_heights");
  o = {};
  o.floor_height = std::nan("");
  fails(rig(), o, "floor_height");
}

}  // namespace
}  // namespace kinema
