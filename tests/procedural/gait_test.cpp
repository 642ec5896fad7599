// Procedural gaits: planted feet that do not move, legs that keep their length, swings that clear
// the stairs, a body that bobs twice a cycle and tilts with the feet, footfalls in order.
#include "kinema/procedural/gait.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/terrain.h"
#include "kinema/math/scalar.h"
#include "test_paths.h"

namespace kinema {
namespace {

constexpr double kDt = 1.0 / 60;

std::vector<Transform> model_of(const Skeleton& skeleton, const std::vector<Transform>& local) {
  std::vector<Transform> model(local.size());
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const int p = skeleton.parent(j);
    model[static_cast<size_t>(j)] =
        p < 0 ? local[static_cast<size_t>(j)]
              : model[static_cast<size_t>(p)] * local[static_cast<size_t>(j)];
  }
  return model;
}

/// Walks a rig for `seconds` with a constant velocity and calls `check(gait, model)` every frame.
template <class Check>
void walk(const GaitRig& rig, const Ground* ground, Vec3 start, Vec3 velocity, double seconds,
          Check check) {
  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, ground);
  gait.reset(start, std::atan2(velocity.x, velocity.z));
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  const int frames = static_cast<int>(std::lround(seconds / kDt));
  for (int f = 0; f < frames; ++f) {
    ASSERT_TRUE(gait.update(kDt, velocity, std::atan2(velocity.x, velocity.z), {}, local));
    check(gait, model_of(rig.skeleton, local));
  }
}

const GaitCreature kCreatures[] = {GaitCreature::kBiped, GaitCreature::kQuadruped,
                                   GaitCreature::kHexapod, GaitCreature::kSpider};

TEST(Gait, CreaturesHaveTheirLegsAndStandOnThem) {
  const size_t legs[] = {2, 4, 6, 8};
  for (int c = 0; c < 4; ++c) {
    const GaitRig rig = make_gait_creature(kCreatures[c]);
    ASSERT_EQ(rig.legs.size(), legs[c]);
    ASSERT_EQ(rig.leg_names.size(), legs[c]);
    Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, nullptr);
    gait.reset({2, 0, -1}, 0.5);
    std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
    ASSERT_TRUE(gait.pose({}, local));
    const auto model = model_of(rig.skeleton, local);
    for (size_t i = 0; i < rig.legs.size(); ++i) {
      const Vec3 foot = model[static_cast<size_t>(rig.legs[i].foot)].translation;
      EXPECT_NEAR(foot.y, 0, 1e-9) << rig.leg_names[i];  // the feet on the floor
      EXPECT_NEAR(distance(foot, gait.foot(i).sole), 0, 1e-9) << rig.leg_names[i];
    }
  }
}

TEST(Gait, PlantedFeetDoNotMoveAndLegsKeepTheirLength) {
  for (const GaitCreature creature : kCreatures) {
    const GaitRig rig = make_gait_creature(creature);
    std::vector<double> bones;
    const auto rest = model_of(rig.skeleton, rig.skeleton.rest_pose());
    for (const GaitLeg& leg : rig.legs) {
      bones.push_back(distance(rest[static_cast<size_t>(leg.hip)].translation,
                               rest[static_cast<size_t>(leg.knee)].translation));
      bones.push_back(distance(rest[static_cast<size_t>(leg.knee)].translation,
                               rest[static_cast<size_t>(leg.foot)].translation));
    }
    std::vector<Vec3> last(rig.legs.size());
    std::vector<char> was_planted(rig.legs.size(), 0);
    double worst_slide = 0, worst_reach = 0, worst_bone = 0;
    int steps = 0;
    walk(rig, nullptr, {0, 0, 0}, {0.3, 0, 0.9}, 6, [&](const Gait& gait, const auto& model) {
      for (size_t i = 0; i < rig.legs.size(); ++i) {
        const GaitLeg& leg = rig.legs[i];
        const Vec3 foot = model[static_cast<size_t>(leg.foot)].translation;
        const bool planted = !gait.foot(i).swinging;
        if (planted && was_planted[i]) worst_slide = std::max(worst_slide, distance(foot, last[i]));
        if (!planted && was_planted[i]) ++steps;
        was_planted[i] = planted;
        last[i] = foot;
        worst_reach = std::max(worst_reach, distance(foot, gait.foot(i).sole));
        worst_bone =
            std::max({worst_bone,
                      std::abs(distance(model[static_cast<size_t>(leg.hip)].translation,
                                        model[static_cast<size_t>(leg.knee)].translation) -
                               bones[2 * i]),
                      std::abs(distance(model[static_cast<size_t>(leg.knee)].translation, foot) -
                               bones[2 * i + 1])});
      }
    });
    EXPECT_LT(worst_slide, 1e-9);  // a planted foot stays exactly where it landed
    EXPECT_LT(worst_reach, 1e-9);  // every foot reaches its sole point (the body came down)
    EXPECT_LT(worst_bone, 1e-9);
    EXPECT_GT(steps, static_cast<int>(rig.legs.size()) * 4);  // they walked
  }
}

TEST(Gait, EachFootIsPlantedForTheDutyFactorOfTheCycle) {
  const GaitRig rig = make_gait_creature(GaitCreature::kQuadruped);
  std::vector<int> planted(rig.legs.size(), 0);
  int frames = 0;
  walk(rig, nullptr, {0, 0, 0}, {0, 0, 0.8}, 8, [&](const Gait& gait, const auto&) {
    ++frames;
    for (size_t i = 0; i < rig.legs.size(); ++i) planted[i] += gait.foot(i).swinging ? 0 : 1;
  });
  for (size_t i = 0; i < rig.legs.size(); ++i)
    EXPECT_NEAR(static_cast<double>(planted[i]) / frames, rig.settings.duty_factor, 0.02);
}

TEST(Gait, QuadrupedFeetFallInLateralSequence) {
  const GaitRig rig = make_gait_creature(GaitCreature::kQuadruped);
  std::vector<int> order;
  std::vector<char> swinging(rig.legs.size(), 0);
  walk(rig, nullptr, {0, 0, 0}, {0, 0, 0.8}, 4, [&](const Gait& gait, const auto&) {
    for (size_t i = 0; i < rig.legs.size(); ++i) {
      if (swinging[i] && !gait.foot(i).swinging) order.push_back(static_cast<int>(i));
      swinging[i] = gait.foot(i).swinging;
    }
  });
  ASSERT_GE(order.size(), 8u);
  // hind left, fore left, hind right, fore right: each footfall is followed by the next leg.
  for (size_t k = 1; k < order.size(); ++k) EXPECT_EQ(order[k], (order[k - 1] + 1) % 4) << k;
}

TEST(Gait, HipsBobTwicePerCycle) {
  const GaitRig rig = make_gait_creature(GaitCreature::kBiped);
  GaitSettings settings = rig.settings;
  settings.body_half_life = 0;  // the bob as planned, not smoothed
  Gait gait(rig.skeleton, rig.body, rig.legs, settings, nullptr);
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  // Slow enough that no stride lowers the body for reach: the bob alone moves it.
  const Vec3 velocity{0, 0, 0.5};
  for (int f = 0; f < 180; ++f) ASSERT_TRUE(gait.update(kDt, velocity, 0, {}, local));
  const double cycle = gait.cycle_at(0.5);
  const int frames = static_cast<int>(std::lround(cycle / kDt));
  std::vector<double> height;
  for (int f = 0; f < 3 * frames; ++f) {
    ASSERT_TRUE(gait.update(kDt, velocity, 0, {}, local));
    height.push_back(gait.body_height());
  }
  int maxima = 0;  // over the middle cycle
  for (size_t f = static_cast<size_t>(frames); f < static_cast<size_t>(2 * frames); ++f)
    if (height[f] > height[f - 1] && height[f] >= height[f + 1]) ++maxima;
  EXPECT_EQ(maxima, 2);
  const auto [lo, hi] = std::minmax_element(height.begin(), height.end());
  EXPECT_NEAR(*hi - *lo, 2 * settings.bob_amplitude, 0.3 * settings.bob_amplitude);
}

TEST(Gait, StandingStillTakesNoSteps) {
  const GaitRig rig = make_gait_creature(GaitCreature::kSpider);
  bool any_swing = false;
  walk(rig, nullptr, {1, 0, 1}, {0, 0, 0}, 3, [&](const Gait& gait, const auto&) {
    for (size_t i = 0; i < rig.legs.size(); ++i) any_swing |= gait.foot(i).swinging;
  });
  EXPECT_FALSE(any_swing);
}

TEST(Gait, BodyFollowsTheVelocityAndTurnsAtTheTurnRate) {
  const GaitRig rig = make_gait_creature(GaitCreature::kHexapod);
  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, nullptr);
  gait.reset({0, 0, 0}, 0);
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  // Half a second of turning towards +X at 3 rad/s covers 1.5 rad of the π/2 asked.
  for (int f = 0; f < 30; ++f) ASSERT_TRUE(gait.update(kDt, {0.5, 0, 0}, kPi / 2, {}, local));
  EXPECT_NEAR(gait.heading(), 1.5, 1e-9);
  EXPECT_NEAR(gait.position().x, 0.25, 1e-9);
  for (int f = 0; f < 120; ++f) ASSERT_TRUE(gait.update(kDt, {0.5, 0, 0}, kPi / 2, {}, local));
  EXPECT_NEAR(gait.heading(), kPi / 2, 1e-12);
  EXPECT_NEAR(gait.position().x, 1.25, 1e-9);
  // The feet came along: their centre is near the body's ground point.
  Vec3 centre{0, 0, 0};
  for (size_t i = 0; i < gait.leg_count(); ++i) centre = centre + gait.foot(i).sole;
  centre = centre * (1.0 / static_cast<double>(gait.leg_count()));
  EXPECT_LT(std::hypot(centre.x - 1.25, centre.z), 0.25);
}

TEST(Gait, TurningOnTheSpotStepsTheFeetRoundTheBody) {
  const GaitRig rig = make_gait_creature(GaitCreature::kQuadruped);
  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, nullptr);
  gait.reset({0, 0, 0}, 0);
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  bool stepped = false;
  for (int f = 0; f < 240; ++f) {
    ASSERT_TRUE(gait.update(kDt, {0, 0, 0}, kPi / 2, {}, local));
    for (size_t i = 0; i < gait.leg_count(); ++i) stepped |= gait.foot(i).swinging;
  }
  EXPECT_TRUE(stepped);
  EXPECT_NEAR(gait.heading(), kPi / 2, 1e-12);
  // Each foot ends within a step's slack of its neutral spot turned a quarter: (x, z) → (z, −x).
  const auto rest = model_of(rig.skeleton, rig.skeleton.rest_pose());
  for (size_t i = 0; i < gait.leg_count(); ++i) {
    const Vec3 neutral = rest[static_cast<size_t>(rig.legs[i].foot)].translation;
    const Vec3 turned{neutral.z, 0, -neutral.x};
    EXPECT_LT(std::hypot(gait.foot(i).sole.x - turned.x, gait.foot(i).sole.z - turned.z), 0.03)
        << rig.leg_names[i];
  }
}

TEST(Gait, FastWalkingShortensTheCycleToKeepStridesShort) {
  const GaitRig rig = make_gait_creature(GaitCreature::kBiped);
  const Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, nullptr);
  const double max_stride = gait.settings().max_stride;
  EXPECT_DOUBLE_EQ(max_stride, 0.8 * gait.leg_length(0));
  EXPECT_DOUBLE_EQ(gait.cycle_at(0.5), rig.settings.cycle_duration);
  EXPECT_DOUBLE_EQ(gait.cycle_at(1.5), max_stride / 1.5);                 // shortened
  EXPECT_DOUBLE_EQ(gait.cycle_at(5.0), rig.settings.min_cycle_duration);  // as fast as it steps
  // Once under way (after the first second), each step covers one cycle of travel: max_stride.
  double longest = 0;
  std::vector<Vec3> lift(rig.legs.size());
  std::vector<char> swinging(rig.legs.size(), 0);
  int frame = 0;
  walk(rig, nullptr, {0, 0, 0}, {0, 0, 1.5}, 4, [&](const Gait& g, const auto&) {
    ++frame;
    for (size_t i = 0; i < rig.legs.size(); ++i) {
      if (!swinging[i] && g.foot(i).swinging) lift[i] = g.foot(i).planted;
      if (swinging[i] && !g.foot(i).swinging && frame > 60)
        longest = std::max(longest, distance(lift[i], g.foot(i).planted));
      swinging[i] = g.foot(i).swinging;
    }
  });
  EXPECT_NEAR(longest, max_stride, 0.03 * max_stride);
}

TEST(Gait, ClimbsTheDemoStairsWithoutStubbingAToe) {
  const GroundFile stairs = load_ground(test_paths::source_dir() + "/data/demo/stairs.obj");
  const Ground& ground = *stairs.ground;
  for (const GaitCreature creature : {GaitCreature::kBiped, GaitCreature::kSpider}) {
    const GaitRig rig = make_gait_creature(creature);
    double deepest = 0, worst_landing = 0;
    double final_height = 0, final_body = 0;
    walk(rig, &ground, {0, 0, -2.5}, {0, 0, 0.6}, 6.5, [&](const Gait& gait, const auto& model) {
      for (size_t i = 0; i < rig.legs.size(); ++i) {
        const GaitFoot& f = gait.foot(i);
        GroundHit hit;
        ASSERT_TRUE(ground.ray_down(f.sole + Vec3{0, 5, 0}, 10, hit));
        deepest = std::max(deepest, hit.point.y - f.sole.y);  // sole below the ground under it
        if (!f.swinging) worst_landing = std::max(worst_landing, std::abs(f.sole.y - hit.point.y));
        EXPECT_NEAR(distance(model[static_cast<size_t>(rig.legs[i].foot)].translation, f.sole), 0,
                    1e-6);
      }
      final_height = gait.position().z;
      final_body = gait.body_height();
    });
    EXPECT_LT(deepest, 1e-9) << rig.leg_names[0];
    EXPECT_LT(worst_landing, 1e-9);  // planted soles stand on the tread they landed on
    EXPECT_GT(final_height, 1.3);    // ended on the landing (0.75 m up from z = 0.3 on)
    // On the landing the body stands as high over the feet as at rest, less what a stride's
    // reach takes (a few centimetres).
    const double rest_height = rig.skeleton.joint(rig.body).rest.translation.y;
    EXPECT_LT(final_body, 0.75 + rest_height + 0.03);
    EXPECT_GT(final_body, 0.75 + rest_height - 0.12);
  }
}

TEST(Gait, QuadrupedPitchesWithTheSlopeAndTheBipedStaysUpright) {
  // A plane rising 0.2 m a metre along +Z.
  std::vector<double> heights;
  for (int z = 0; z < 41; ++z)
    for (int x = 0; x < 41; ++x) heights.push_back(0.2 * (z * 0.25 - 5));
  const HeightField slope(-5, -5, 0.25, 41, 41, heights);
  for (const GaitCreature creature : {GaitCreature::kQuadruped, GaitCreature::kBiped}) {
    const GaitRig rig = make_gait_creature(creature);
    double pitch = 0, roll = 0;
    walk(rig, &slope, {0, 0, -2}, {0, 0, 0.6}, 4, [&](const Gait& gait, const auto&) {
      pitch = gait.pitch();
      roll = gait.roll();
    });
    if (creature == GaitCreature::kQuadruped) {
      EXPECT_NEAR(pitch, std::atan(0.2), 0.03);
    } else {
      EXPECT_EQ(pitch, 0);
    }
    EXPECT_NEAR(roll, 0, 0.01);  // feet out of step left and right lean it a little
  }
}

TEST(Gait, StartsOnAGroundFarAboveTheOrigin) {
  // A plateau 25 m up: the gait finds it from wherever it is reset (y = 0 given).
  const HeightField plateau(-10, -10, 1, 21, 21, std::vector<double>(21 * 21, 25.0));
  const GaitRig rig = make_gait_creature(GaitCreature::kQuadruped);
  double lowest = 1e9;
  walk(rig, &plateau, {0, 0, -3}, {0, 0, 0.5}, 3, [&](const Gait& gait, const auto&) {
    for (size_t i = 0; i < gait.leg_count(); ++i) lowest = std::min(lowest, gait.foot(i).sole.y);
  });
  EXPECT_NEAR(lowest, 25.0, 1e-9);
}

TEST(Gait, RejectsBadRigsAndBadUpdates) {
  const GaitRig rig = make_gait_creature(GaitCreature::kBiped);
  auto message = [&](int body, std::vector<GaitLeg> legs, GaitSettings settings) {
    try {
      Gait gait(rig.skeleton, body, std::move(legs), settings, nullptr);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(99, rig.legs, rig.settings).find("body joint 99"), std::string::npos);
  EXPECT_NE(message(rig.body, {}, rig.settings).find("at least one leg"), std::string::npos);
  std::vector<GaitLeg> swapped = rig.legs;
  std::swap(swapped[0].hip, swapped[0].foot);
  EXPECT_NE(message(rig.body, swapped, rig.settings).find("leg 0"), std::string::npos);
  GaitSettings bad = rig.settings;
  bad.duty_factor = 1;
  EXPECT_NE(message(rig.body, rig.legs, bad).find("duty_factor"), std::string::npos);

  Gait gait(rig.skeleton, rig.body, rig.legs, rig.settings, nullptr);
  std::vector<Transform> local(static_cast<size_t>(rig.skeleton.joint_count()));
  ASSERT_TRUE(gait.update(kDt, {0, 0, 1}, 0, {}, local));
  const std::vector<Transform> before = local;
  const Vec3 where = gait.position();
  EXPECT_FALSE(gait.update(kDt, {std::nan(""), 0, 0}, 0, {}, local));
  EXPECT_FALSE(gait.update(-kDt, {0, 0, 1}, 0, {}, local));
  std::vector<Transform> short_pose(2);
  EXPECT_FALSE(gait.update(kDt, {0, 0, 1}, 0, {}, short_pose));
  EXPECT_EQ(gait.position().z, where.z);
  EXPECT_TRUE(local == before);
}

}  // namespace
}  // namespace kinema
