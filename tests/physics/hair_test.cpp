// Hair: guides keep their length, stiff bending holds a strand out where soft bending lets it
// droop, twist at the root travels to the tip only with twist stiffness, roots follow the head,
// colliders keep strands out, children interpolate their guides, bad input refused.
#include "kinema/physics/hair.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kFrame = 1.0 / 60;

/// A straight guide of `n` points from `root` along `direction`, 2 cm apart.
std::vector<Vec3> straight(const Vec3& root, const Vec3& direction, int n) {
  std::vector<Vec3> s;
  for (int i = 0; i < n; ++i) s.push_back(root + normalize(direction) * (0.02 * i));
  return s;
}

double largest_stretch(const HairSystem& hair) {
  double worst = 0;
  for (size_t g = 0; g < hair.guide_count(); ++g) {
    const auto p = hair.guide(g);
    for (size_t s = 0; s + 1 < p.size(); ++s)
      worst = std::max(worst, std::abs(length(p[s + 1] - p[s]) / hair.rest_length(g, s) - 1));
  }
  return worst;
}

TEST(Hair, HangingStrandStaysPutAndKeepsItsLength) {
  HairSystem hair({straight({0, 1, 0}, {0, -1, 0}, 16)}, {});
  for (int i = 0; i < 120; ++i) hair.step(kFrame);
  EXPECT_NEAR(hair.guide(0).back().y, 1 - 0.3, 1e-3);
  EXPECT_LT(largest_stretch(hair), 1e-3);
}

TEST(Hair, StiffBendingHoldsAStrandOutWhereSoftBendingLetsItDroop) {
  auto tip_after_two_seconds = [](double bend) {
    HairOptions o;
    o.bend_stiffness = bend;
    HairSystem hair({straight({0, 1, 0}, {1, 0, 0}, 11)}, o);
    for (int i = 0; i < 120; ++i) hair.step(kFrame);
    EXPECT_LT(largest_stretch(hair), 0.01);
    return hair.guide(0).back();
  };
  const Vec3 stiff = tip_after_two_seconds(1.0), soft = tip_after_two_seconds(0.0);
  EXPECT_GT(stiff.y, 0.94);  // within 6 cm of level at 20 cm out
  EXPECT_LT(soft.y, 0.85);   // hangs well down
  EXPECT_GT(stiff.x, soft.x);
}

TEST(Hair, TwistAtTheRootReachesTheTipOnlyWithTwistStiffness) {
  // Turn the head 90° about the vertical strand's own axis: with twist stiffness the tip's
  // material frame turns with it; without, only the root segment turns.
  auto tip_turn = [](double twist) {
    HairOptions o;
    o.twist_stiffness = twist;
    o.gravity = {0, -9.8, 0};
    HairSystem hair({straight({0, 1, 0}, {0, -1, 0}, 8)}, o);
    const Vec3 before = rotate(hair.frame(0, 6), Vec3{1, 0, 0});
    hair.set_head(from_rotation_vector(Vec3{0, std::numbers::pi / 2, 0}), {0, 0, 0});
    for (int i = 0; i < 240; ++i) hair.step(kFrame);
    const Vec3 after = rotate(hair.frame(0, 6), Vec3{1, 0, 0});
    return std::acos(std::clamp(dot(before, after), -1.0, 1.0));
  };
  EXPECT_NEAR(tip_turn(0.5), std::numbers::pi / 2, 0.05);
  EXPECT_LT(tip_turn(0.0), 0.05);
}

TEST(Hair, RootsFollowTheHeadAndCollidersKeepStrandsOut) {
  // A strand from the top of a 10 cm head sphere, lying over it: it never enters the sphere
  // (grown by the thickness); moving the head moves the root exactly.
  HairOptions o;
  o.bend_stiffness = 0;
  o.colliders = {Collider{ColliderShape::Sphere, {0, 0, 0}, {}, {0, 1, 0}, 0.1}};
  HairSystem hair({straight({0, 0.1, 0}, {1, 0.2, 0}, 12)}, o);
  for (int i = 0; i < 120; ++i) hair.step(kFrame);
  for (size_t i = 1; i < hair.guide(0).size(); ++i)  // the root is on the scalp
    EXPECT_GE(length(hair.guide(0)[i]), 0.1 + 0.002 - 1e-9);
  EXPECT_LT(hair.guide(0).back().y, 0.0);  // it fell over the side
  hair.set_head(Quat{0, 0, 0, 1}, {0.5, 0, 0});
  hair.step(kFrame);
  EXPECT_EQ(hair.guide(0)[0], (Vec3{0.5, 0.1, 0}));
}

TEST(Hair, ChildrenInterpolateTheirGuides) {
  HairSystem hair({straight({0, 1, 0}, {0, -1, 0}, 6), straight({0.1, 1, 0}, {1, -1, 0}, 6)}, {});
  const std::vector<Vec3> roots{{0, 1, 0}, {0.05, 1, 0}};
  const HairChildren children = make_hair_children(hair, roots, 6);
  for (const auto& w : children.weights) EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-12);
  const std::vector<Vec3> points = interpolate_hair(hair, children);
  ASSERT_EQ(points.size(), 12u);
  // A child on a guide's root is that guide; one midway is the average offset from its root.
  for (size_t j = 0; j < 6; ++j) {
    EXPECT_NEAR(length(points[j] - hair.guide(0)[j]), 0, 1e-12);
    const Vec3 mid =
        Vec3{0.05, 1, 0} +
        ((hair.guide(0)[j] - hair.guide(0)[0]) + (hair.guide(1)[j] - hair.guide(1)[0])) * 0.5;
    EXPECT_NEAR(length(points[6 + j] - mid), 0, 1e-12);
  }
}

TEST(Hair, RefusesBadInput) {
  auto refuses = [](std::vector<std::vector<Vec3>> guides, HairOptions o, const std::string& says) {
    try {
      HairSystem hair(std::move(guides), std::move(o));
      ADD_FAILURE() << "accepted; expected " << says;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  const auto good = straight({0, 0, 0}, {0, -1, 0}, 4);
  refuses({}, {}, "no guide strands");
  refuses({good, {{0, 0, 0}}}, {}, "guide 1 has fewer than 2 points");
  refuses({{{0, 0, 0}, {0, 0, 0}}}, {}, "guide 0, segment 0 has zero length");
  refuses({{{0, 0, 0}, {0, std::numeric_limits<double>::quiet_NaN(), 0}}}, {},
          "guide 0, point 1 is not finite");
  HairOptions o;
  o.bend_stiffness = 1.5;
  refuses({good}, o, "bend_stiffness must be between 0 and 1");
  o = {};
  o.substeps = 0;
  refuses({good}, o, "substeps and iterations must be ≥ 1");
  HairSystem hair({good}, {});
  EXPECT_THROW(hair.set_head(Quat{0, 0, 0, 0}, {0, 0, 0}), Error);
  EXPECT_THROW(hair.step(0), Error);
  EXPECT_THROW(make_hair_children(hair, std::vector<Vec3>{{0, 0, 0}}, 1), Error);
}

}  // namespace
}  // namespace kinema
