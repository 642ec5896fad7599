// Arm clearance on positions: the field, the re-solve, the lever, the coin flip, the round belly,
// nearest-1 against 16, one-sided smoothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "kinema/retarget/arm_clearance.h"
#include "kinema/retarget/bound_smoothing.h"

namespace kinema {
namespace {

struct Cloud {
  std::vector<Vec3f> points, normals;
  void add(const Vec3& p, const Vec3& n) {
    points.emplace_back(p);
    normals.emplace_back(normalize(n));
  }
};

/// A rectangle of points (spacing h) through `centre`, spanned by u and v, facing `normal`.
void add_patch(Cloud& c, const Vec3& centre, const Vec3& u, const Vec3& v, double half_u,
               double half_v, const Vec3& normal, double h = 0.01) {
  for (double a = -half_u; a <= half_u + 1e-9; a += h)
    for (double b = -half_v; b <= half_v + 1e-9; b += h) c.add(centre + u * a + v * b, normal);
}

/// A sphere of points (about `h` apart) with outward normals.
void add_sphere(Cloud& c, const Vec3& centre, double r, double h) {
  const int rings = std::max(4, int(std::numbers::pi * r / h));
  for (int i = 0; i <= rings; ++i) {
    const double phi = std::numbers::pi * i / rings;
    const int around = std::max(1, int(2 * std::numbers::pi * r * std::sin(phi) / h));
    for (int j = 0; j < around; ++j) {
      const double th = 2 * std::numbers::pi * j / around;
      const Vec3 n{std::sin(phi) * std::cos(th), std::cos(phi), std::sin(phi) * std::sin(th)};
      c.add(centre + n * r, n);
    }
  }
}

ClearanceField field_of(const Cloud& c, ClearanceFieldOptions o = {}, double max_clearance = 0.1) {
  ClearanceField f;
  f.build(c.points, c.normals, o, max_clearance);
  return f;
}

ArmRadii uniform_radii(double r) { return {{{r}}, {{r}}, {{r}}}; }

TEST(ClearanceField, PlaneGivesDepthAndPushAlongItsNormal) {
  Cloud c;
  add_patch(c, {0, 0, 0}, {1, 0, 0}, {0, 0, 1}, 0.3, 0.3, {0, 1, 0});
  const ClearanceField f = field_of(c);
  const ClearancePush inside = f.push({0.013, -0.05, 0.021}, 0.03);
  EXPECT_TRUE(inside.near);
  EXPECT_NEAR(inside.depth, 0.05, 1e-9);
  EXPECT_NEAR(inside.push.y, 0.08, 1e-9);  // clearance 0.03 − s (−0.05)
  EXPECT_NEAR(inside.push.x, 0, 1e-9);
  const ClearancePush clear = f.push({0, 0.2, 0}, 0.03);  // beyond clearance + reach
  EXPECT_FALSE(clear.near);
  EXPECT_EQ(clear.depth, 0);
  EXPECT_EQ(length(clear.push), 0);
}

TEST(ClearanceField, RelativeWeightsDoNotUnderflowWhenTheWholeNeighbourhoodIsFar) {
  Cloud c;
  add_patch(c, {0, 0, 0}, {1, 0, 0}, {0, 0, 1}, 0.2, 0.2, {0, 1, 0});
  ClearanceFieldOptions o;
  o.reach_m = 10;
  o.soft_m = 0.001;  // exp(−(5 m / 1 mm)²) is 0 in double: absolute weights would all vanish
  const ClearancePush p = field_of(c, o).push({0, -5, 0}, 0.01);
  ASSERT_TRUE(p.near);
  EXPECT_NEAR(p.depth, 5, 1e-9);
  EXPECT_NEAR(normalize(p.push).y, 1, 1e-12);
}

TEST(ArmClearance, ResolveKeepsBoneLengthsAndCarriesTheHand) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  for (int trial = 0; trial < 200; ++trial) {
    ArmPose arm{{0, 1.4, 0}, {u(rng), 1.1 + u(rng) * 0.2, u(rng)}, {}, {}, {}};
    arm.wrist = arm.elbow + normalize(Vec3{u(rng), -0.2, u(rng)}) * 0.25;
    arm.hand_tip = arm.wrist + Vec3{0, -0.08, 0.02};
    arm.fingertips = {arm.wrist + Vec3{0.01, -0.17, 0}};
    const ArmPose out = resolve_arm(arm, {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)});
    EXPECT_NEAR(length(out.elbow - out.shoulder), length(arm.elbow - arm.shoulder), 1e-9);
    EXPECT_NEAR(length(out.wrist - out.elbow), length(arm.wrist - arm.elbow), 1e-9);
    const Vec3 moved = out.wrist - arm.wrist;
    EXPECT_NEAR(length(out.hand_tip - (arm.hand_tip + moved)), 0, 1e-12);
    EXPECT_NEAR(length(out.fingertips[0] - (arm.fingertips[0] + moved)), 0, 1e-12);
  }
  // A reachable target is reached; zero offsets change nothing.
  ArmPose arm{{0, 1.4, 0}, {0.05, 1.12, 0.05}, {0.05, 0.87, 0.1}, {0.05, 0.8, 0.1}, {}};
  const ArmPose same = resolve_arm(arm, {0, 0, 0}, {0, 0, 0});
  EXPECT_NEAR(length(same.elbow - arm.elbow), 0, 1e-9);
  const ArmPose moved = resolve_arm(arm, {0, 0.02, 0.03}, {0, 0, 0});
  EXPECT_NEAR(length(moved.wrist - (arm.wrist + Vec3{0, 0.02, 0.03})), 0, 1e-9);
}

// The lever: only a forearm point a quarter from the elbow is inside (15 mm). Moving the wrist
// alone moves that point a quarter as far, so the wrist travels about four times the depth;
// moving the elbow's pole too, the forearm leaves about as far as it was deep.
TEST(ArmClearance, ForearmLeverNeedsFourTimesTheWristMotionUnlessTheElbowMoves) {
  Cloud c;
  add_patch(c, {0.06, 0, 0.015}, {1, 0, 0}, {0, 1, 0}, 0.02, 0.03, {0, 0, 1}, 0.005);
  ClearanceFieldOptions fo;
  fo.reach_m = 0.02;
  const ClearanceField field = field_of(c, fo);
  const ArmPose arm{{-0.2, -0.2, 0}, {0, 0, 0}, {0.24, 0, 0}, {0.32, 0, 0}, {}};
  ArmClearanceOptions o;
  o.margin_m = 0;
  o.fore_samples = 5;  // t = 0, 0.25, 0.5, 0.75, 1
  o.iterations = 200;
  o.field = fo;
  EXPECT_NEAR(arm_depth(field, arm, uniform_radii(0), o), 0.015, 1e-9);

  ArmClearanceOptions fixed = o;
  fixed.push_elbow_pole = false;
  const ArmCandidate lever = push_arm_out(field, arm, uniform_radii(0), {}, {}, fixed);
  const ArmCandidate both = push_arm_out(field, arm, uniform_radii(0), {}, {}, o);
  EXPECT_LT(lever.inside_m, 1e-4);
  EXPECT_LT(both.inside_m, 1e-4);
  // ≈ 4: a little less, as the re-solve lets the elbow drift with the wrist.
  EXPECT_GT(length(lever.wrist_offset) / 0.015, 3.2);
  EXPECT_LT(length(lever.wrist_offset) / 0.015, 4.5);
  EXPECT_NEAR(length(both.wrist_offset) / 0.015, 1.0, 0.3);
  EXPECT_GT(length(both.elbow_offset), 0.01);  // the elbow moved out with the forearm
}

// Near the shoulder the arm is also body: the upper arm is tested only from 70 % of its length
// on, so a torso enclosing its first half pushes nothing; its outer part is pushed.
TEST(ArmClearance, UpperArmIsTestedOnlyOnItsOuterPart) {
  const ArmPose arm{{0, 1.4, 0}, {0, 1.1, 0.05}, {0, 0.85, 0.1}, {0, 0.77, 0.1}, {}};
  ArmClearanceOptions o;
  o.field.reach_m = 0.05;
  auto depth_with_surface_at = [&](double y) {  // a front-facing patch 2 cm in front of the arm
    Cloud c;
    add_patch(c, {0, y, 0.02 + (1.4 - y) / 6}, {1, 0, 0}, {0, 1, 0}, 0.05, 0.05, {0, 0, 1}, 0.005);
    return arm_depth(field_of(c, o.field), arm, uniform_radii(0), o);
  };
  EXPECT_EQ(depth_with_surface_at(1.33), 0);     // around t ≈ 0.25 of the upper arm
  EXPECT_GT(depth_with_surface_at(1.15), 0.01);  // around t ≈ 0.85
}

TEST(ArmClearance, UpperArmRestingAgainstTheBodyIsLeftThereButPushedOutWhenInside) {
  // The upper arm can move only through the elbow's pole; once no sample is inside, its clearance
  // alone does not keep the rounds going (near the armpit a thick body always touches it).
  const ArmPose arm{{0, 1.4, 0}, {0, 1.1, 0.05}, {0, 0.85, 0.1}, {0, 0.77, 0.1}, {}};
  ArmClearanceOptions o;  // radius 0: each sample's clearance is the 6 mm margin
  auto pushed_with_patch_at = [&](double z) {  // a front-facing patch behind the t = 0.7 sample
    Cloud c;
    add_patch(c, {0, 1.19, z}, {1, 0, 0}, {0, 1, 0}, 0.02, 0.02, {0, 0, 1}, 0.005);
    return push_arm_out(field_of(c, o.field), arm, uniform_radii(0), {0, 0, 0}, {0, 0, 0}, o);
  };
  const ArmCandidate resting = pushed_with_patch_at(0.035 - 0.004);  // 4 mm off: within 6 mm
  EXPECT_EQ(resting.inside_m, 0);
  EXPECT_LT(length(resting.elbow_offset) + length(resting.wrist_offset), 1e-12);
  const ArmCandidate inside = pushed_with_patch_at(0.035 + 0.006);  // 6 mm in
  EXPECT_GT(length(inside.elbow_offset), 0.001);
  EXPECT_LT(inside.inside_m, 0.006);
}

/// A static pose with a hand clasped behind the back, in the character's frame (+Z forward):
/// the forearm 74 mm into a surface it leaves backwards, the hand 73 mm into one it leaves
/// forwards; each frame jitters both surfaces by up to ±1 mm.
struct CoinFlip {
  ArmTrack track;
  std::vector<ClearanceField> fields;
  std::vector<Vec3> forward;
  CoinFlip(int frames, ArmClearanceOptions& o) {
    o.margin_m = 0.006;
    o.field.reach_m = 0.1;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> noise(-0.001, 0.001);
    const ArmPose arm{
        {0.25, 1.4, -0.15}, {0.2, 1.12, -0.15}, {0.2, 0.87, -0.15}, {0.2, 0.77, -0.15}, {}};
    for (int i = 0; i < frames; ++i) {
      Cloud c;
      // The forearm's upper half (z = −0.15): a back-facing patch 74 mm behind it (inside
      // means in front of a back-facing surface).
      add_patch(c, {0.2, 1.05, -0.15 - 0.074 + noise(rng)}, {1, 0, 0}, {0, 1, 0}, 0.04, 0.04,
                {0, 0, -1});
      // The hand (y 0.77–0.84): a front-facing patch 73 mm in front of it.
      add_patch(c, {0.2, 0.78, -0.15 + 0.073 + noise(rng)}, {1, 0, 0}, {0, 1, 0}, 0.04, 0.03,
                {0, 0, 1});
      fields.push_back(field_of(c, o.field));
      track.frames.push_back(arm);
      forward.push_back({0, 0, 1});
    }
    track.radii = uniform_radii(0.0);
  }
  ClearanceFieldAt at() const {
    return [this](long i, ClearanceField&) -> const ClearanceField& { return fields[size_t(i)]; };
  }
  static std::vector<Vec3> wrists(const std::vector<ArmCandidate>& c) {
    std::vector<Vec3> out;
    for (const ArmCandidate& a : c) out.push_back(a.wrist_offset);
    return out;
  }
};

TEST(ArmClearance, CoinFlipPerFrameFlipsButTheCandidatePathDoesNot) {
  ArmClearanceOptions o;
  CoinFlip flip(120, o);
  const auto solved = solve_arm_tracks(flip.at(), std::span(&flip.track, 1), o);
  const int per_frame = count_reverting_switches(CoinFlip::wrists(solved[0].per_frame),
                                                 flip.forward, o.switch_window_frames);
  const int path = count_reverting_switches(CoinFlip::wrists(solved[0].chosen), flip.forward,
                                            o.switch_window_frames);
  EXPECT_GT(per_frame, 3);
  EXPECT_EQ(path, 0);
}

TEST(ArmClearance, SolveIsBitIdenticalWhateverTheThreadCount) {
  std::vector<std::vector<ArmTrackSolution>> runs;
  for (const int threads : {1, 2, 4}) {
    ArmClearanceOptions o;
    o.threads = threads;
    CoinFlip flip(700, o);  // several chunks of the sweeps
    runs.push_back(solve_arm_tracks(flip.at(), std::span(&flip.track, 1), o));
  }
  for (size_t r = 1; r < runs.size(); ++r)
    for (size_t i = 0; i < runs[0][0].chosen.size(); ++i) {
      const ArmCandidate &a = runs[0][0].chosen[i], &b = runs[r][0].chosen[i];
      ASSERT_EQ(a.wrist_offset.x, b.wrist_offset.x);
      ASSERT_EQ(a.wrist_offset.y, b.wrist_offset.y);
      ASSERT_EQ(a.wrist_offset.z, b.wrist_offset.z);
      ASSERT_EQ(a.elbow_offset.z, b.elbow_offset.z);
      ASSERT_EQ(a.inside_m, b.inside_m);
    }
}

TEST(ArmClearance, CoinFlipSeenHandGoesToTheCameraSide) {
  for (const double camera_side : {1.0, -1.0}) {
    for (const double seen : {1.0, 0.0}) {
      ArmClearanceOptions o;
      CoinFlip flip(60, o);
      flip.track.toward.assign(60, Vec3{0, 0, camera_side});
      flip.track.seen.assign(60, seen);
      const auto solved = solve_arm_tracks(flip.at(), std::span(&flip.track, 1), o);
      const double want = seen > 0.5 ? camera_side : -camera_side;  // unseen: the far side
      for (const ArmCandidate& c : solved[0].chosen) {
        EXPECT_GT(c.wrist_offset.z * want, 0.01) << "camera " << camera_side << " seen " << seen;
        EXPECT_LT(c.inside_m, 0.01);  // from 74 mm deep
      }
    }
  }
}

/// Hands clasped in front of a round belly, both a little inside it, for `frames` frames.
struct RoundBelly {
  std::array<ArmTrack, 2> tracks;
  ClearanceField field;
  RoundBelly(int frames, ArmClearanceOptions& o) {
    o.field.reach_m = 0.05;
    o.field.soft_m = 0.004;  // a plane local to the small sphere
    Cloud c;
    add_sphere(c, {0, 1.0, 0}, 0.06, 0.008);
    field = field_of(c, o.field);
    for (int side = 0; side < 2; ++side) {
      const double s = side == 0 ? 1 : -1;  // left hand on +X
      for (int i = 0; i < frames; ++i) {
        const double sway = 0.004 * std::sin(i * 0.3);
        ArmPose arm{
            {0.19 * s, 1.42, 0.0}, {0.24 * s, 1.16, 0.1}, {0.0265 * s + sway, 1.0, 0.024}, {}, {}};
        arm.hand_tip = arm.wrist + Vec3{-0.01 * s, -0.08, 0.02};
        tracks[size_t(side)].frames.push_back(arm);
      }
      tracks[size_t(side)].radii = uniform_radii(0.025);
    }
  }
  ClearanceFieldAt at() const {
    return [this](long, ClearanceField&) -> const ClearanceField& { return field; };
  }
};

double mean_wrist_distance(const std::array<ArmTrackSolution, 2>& s) {
  double sum = 0;
  for (size_t i = 0; i < s[0].chosen.size(); ++i)
    sum += length(s[0].chosen[i].pose.wrist - s[1].chosen[i].pose.wrist);
  return sum / double(s[0].chosen.size());
}

TEST(ArmClearance, RoundBodyPartsIndependentPushesButTheSharedDirectionKeepsHandsTogether) {
  ArmClearanceOptions o;
  o.part_fingers = false;
  RoundBelly belly(40, o);
  const auto solved = solve_arm_tracks(belly.at(), belly.tracks, o);
  std::array<ArmTrackSolution, 2> independent{solved[0], solved[1]}, coupled{solved[0], solved[1]};
  const double before = length(belly.tracks[0].frames[0].wrist - belly.tracks[1].frames[0].wrist);
  EXPECT_NEAR(before, 0.053, 1e-3);
  // Independent pushes leave the belly along each side's own normal: the hands part.
  EXPECT_GT(mean_wrist_distance(independent), before + 0.02);

  couple_hands(belly.at(), {&belly.tracks[0], &belly.tracks[1]}, {&coupled[0], &coupled[1]}, o);
  double worst_gap = 0, deepest = 0;
  for (size_t i = 0; i < coupled[0].chosen.size(); ++i) {
    worst_gap = std::max(worst_gap,
                         length(coupled[0].chosen[i].pose.wrist - coupled[1].chosen[i].pose.wrist));
    deepest = std::max({deepest, coupled[0].chosen[i].inside_m, coupled[1].chosen[i].inside_m});
  }
  EXPECT_LT(deepest, 1e-4);              // none left inside
  EXPECT_LT(worst_gap, before + 0.015);  // kept together within 1.5 cm of the input
}

// The mechanism on one push of each wrist, at a ridge whose faces turn 60° to each side (left of
// the ridge faces left, right faces right): sharing only the separating component (its mean
// along the wrist line, the rest each hand's own) throws away the sideways part the faces need
// and leaves the wrists behind them; the shared direction with each hand's own distance does not.
TEST(ArmClearance, SharingOnlyTheSeparatingComponentLeavesHandsInsideTheSharedDirectionDoesNot) {
  const double alpha = std::numbers::pi / 3;
  Cloud c;
  for (const double side : {1.0, -1.0}) {
    const Vec3 along{side * std::cos(alpha), 0, -std::sin(alpha)};
    add_patch(c, along * 0.1, along, {0, 1, 0}, 0.1, 0.1,
              {side * std::sin(alpha), 0, std::cos(alpha)}, 0.005);
  }
  ClearanceFieldOptions fo;
  fo.soft_m = 0.004;
  const ClearanceField field = field_of(c, fo);
  const double clearance = 0.031;  // radius 25 mm + margin 6 mm
  // Wrists 5.3 cm apart, each 20 mm behind its own face.
  const double z = (-0.02 - std::sin(alpha) * 0.0265) / std::cos(alpha);
  const Vec3 wl{0.0265, 0, z}, wr{-0.0265, 0, z};
  ASSERT_NEAR(field.push(wl, clearance).depth, 0.02, 1e-6);
  const Vec3 pl = field.push(wl, clearance).push, pr = field.push(wr, clearance).push;
  const Vec3 u = normalize(wr - wl);
  const double mean = (dot(pl, u) + dot(pr, u)) / 2;
  const Vec3 sl = pl - u * dot(pl, u) + u * mean, sr = pr - u * dot(pr, u) + u * mean;
  EXPECT_GT(field.push(wl + sl, clearance).depth, 0.005);
  EXPECT_GT(field.push(wr + sr, clearance).depth, 0.005);
  const auto [cl, cr] = couple_pushes(pl, pr, 1.0);
  EXPECT_EQ(field.push(wl + cl, clearance).depth, 0);
  EXPECT_EQ(field.push(wr + cr, clearance).depth, 0);
  EXPECT_NEAR(length((wl + cl) - (wr + cr)), 0.053, 1e-9);  // still 5.3 cm apart
  // Independent pushes leave each face along its own normal: the hands part.
  EXPECT_GT(length((wl + pl) - (wr + pr)), 0.053 + 0.05);
}

TEST(ArmClearance, CouplePushesSharesTheDirectionAndKeepsEachDistance) {
  const auto [l, r] = couple_pushes({0.03, 0, 0.04}, {-0.03, 0, 0.04}, 1.0);
  EXPECT_NEAR(length(l), 0.05, 1e-12);
  EXPECT_NEAR(length(r), 0.05, 1e-12);
  EXPECT_NEAR(normalize(l).z, 1, 1e-12);
  const auto [l0, r0] = couple_pushes({0.03, 0, 0.04}, {-0.03, 0, 0.04}, 0.0);
  EXPECT_NEAR(l0.x, 0.03, 1e-12);
  EXPECT_NEAR(r0.x, -0.03, 1e-12);
}

TEST(ArmClearance, FingertipsPastTheOtherWristPartTheHandsToTheLimit) {
  ArmClearanceOptions o;
  RoundBelly belly(30, o);
  for (int side = 0; side < 2; ++side)
    for (ArmPose& a : belly.tracks[size_t(side)].frames) {
      const double s = side == 0 ? 1 : -1;
      a.wrist = a.wrist + Vec3{0, 0, 0.08};  // out in front of the belly: nothing to push
      a.elbow = a.elbow + Vec3{0, 0, 0.08};
      a.fingertips = {a.wrist + Vec3{-0.09 * s, 0, 0}};  // 3.7 cm past the other wrist
      a.hand_tip = a.wrist + Vec3{-0.05 * s, 0, 0};
    }
  auto solved = solve_arm_tracks(belly.at(), belly.tracks, o);
  couple_hands(belly.at(), {&belly.tracks[0], &belly.tracks[1]}, {&solved[0], &solved[1]}, o);
  for (size_t i = 0; i < solved[0].chosen.size(); ++i) {
    const ArmPose& l = solved[0].chosen[i].pose;
    const ArmPose& r = solved[1].chosen[i].pose;
    const Vec3 u = normalize(r.wrist - l.wrist);
    EXPECT_LE(dot(l.fingertips[0] - r.wrist, u), o.finger_pass_limit_m + 1e-9);
    EXPECT_LE(dot(r.fingertips[0] - l.wrist, u * -1.0), o.finger_pass_limit_m + 1e-9);
  }
}

/// Wrist |second difference| peak of a solution, mm/frame².
double wrist_jerk_peak_mm(const std::vector<ArmCandidate>& c) {
  double peak = 0;
  for (size_t i = 1; i + 1 < c.size(); ++i)
    peak = std::max(
        peak, 1000 * length(c[i + 1].pose.wrist - c[i].pose.wrist * 2.0 + c[i - 1].pose.wrist));
  return peak;
}

// An arm sliding around a round body (a cylinder sampled every 2.5 cm): with the nearest vertex
// alone the push direction jumps from vertex to vertex; a plane over 16 is smooth.
TEST(ArmClearance, SixteenNeighboursSlideSmootherThanTheNearestVertex) {
  Cloud c;
  const double r = 0.15, h = 0.025;
  const int around = int(2 * std::numbers::pi * r / h);
  for (int j = 0; j < around; ++j)
    for (double y = 0.8; y <= 1.2 + 1e-9; y += h) {
      const double th = 2 * std::numbers::pi * j / around;
      c.add({r * std::cos(th), y, r * std::sin(th)}, {std::cos(th), 0, std::sin(th)});
    }
  auto jerk = [&](int k) {
    ArmClearanceOptions o;
    o.field.neighbours = k;
    o.field.reach_m = 0.05;
    const ClearanceField field = field_of(c, o.field);
    ArmTrack t;
    t.radii = uniform_radii(0.03);
    for (int i = 0; i < 120; ++i) {
      const double th = 0.8 * i / 119.0;  // 46° of arc
      auto at = [&](double radius, double y) {
        return Vec3{radius * std::cos(th), y, radius * std::sin(th)};
      };
      t.frames.push_back({at(0.05, 1.5), at(0.3, 1.25), at(0.16, 1.0), at(0.10, 0.93), {}});
    }
    const auto s = solve_arm_tracks(
        [&](long, ClearanceField&) -> const ClearanceField& { return field; }, std::span(&t, 1), o);
    return wrist_jerk_peak_mm(s[0].chosen);
  };
  const double one = jerk(1), sixteen = jerk(16);
  EXPECT_GT(one, 1.5 * sixteen) << "nearest-1 " << one << " mm/frame², 16: " << sixteen;
}

TEST(BoundSmoothing, EaseNeverExceedsAndHoldNeverFallsBelowItsInput) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> run(1, 12);
  std::uniform_real_distribution<double> level(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> steps;
    while (steps.size() < 150) steps.insert(steps.end(), size_t(run(rng)), level(rng));
    for (int radius : {1, 3, 6}) {
      const auto eased = ease_upper_bound(steps, radius);
      const auto held = hold_lower_bound(steps, radius);
      for (size_t i = 0; i < steps.size(); ++i) {
        EXPECT_LE(eased[i], steps[i]);
        EXPECT_GE(held[i], steps[i]);
      }
    }
  }
}

TEST(BoundSmoothing, EaseRampsIntoADipInsteadOfSteppingAndHoldRampsOutOfAPeak) {
  std::vector<double> dip(41, 1.0), peak(41, 0.0);
  for (int i = 18; i <= 22; ++i) dip[size_t(i)] = 0.2, peak[size_t(i)] = 0.8;
  const auto eased = ease_upper_bound(dip, 4);
  const auto held = hold_lower_bound(peak, 4);
  double largest_step = 0;
  for (size_t i = 1; i < eased.size(); ++i)
    largest_step = std::max(largest_step, std::abs(eased[i] - eased[i - 1]));
  EXPECT_LT(largest_step, 0.3);  // the input steps by 0.8
  EXPECT_EQ(eased[20], 0.2);
  EXPECT_EQ(held[20], 0.8);
  EXPECT_GT(held[15], 0.0);  // held before the peak: it is reached smoothly
  EXPECT_EQ(ease_upper_bound(dip, 0), dip);
}

}  // namespace
}  // namespace kinema

namespace kinema {
namespace {

// A path that jumps where the best candidate changes kind is smoothed where the body allows, and
// never made deeper than it was.
TEST(ArmClearance, SmoothingTakesTheJumpOutOfAPathButNotIntoTheBody) {
  ArmClearanceOptions o;
  CoinFlip flip(60, o);
  std::array<ArmTrack, 2> tracks{flip.track, flip.track};
  auto solved = solve_arm_tracks(flip.at(), tracks, o);
  // Make the left path jump 4 cm sideways halfway (outside the patches, which span x ± 4 cm).
  for (size_t i = 30; i < 60; ++i) {
    ArmCandidate& c = solved[0].chosen[i];
    c.wrist_offset = c.wrist_offset + Vec3{0.04, 0, 0};
    c.pose = resolve_arm(tracks[0].frames[i], c.wrist_offset, c.elbow_offset);
    c.inside_m = arm_depth(flip.fields[i], c.pose, tracks[0].radii, o);
  }
  std::vector<double> depth_before;
  for (const ArmCandidate& c : solved[0].chosen) depth_before.push_back(c.inside_m);
  const double jerk_before = wrist_jerk_peak_mm(solved[0].chosen);
  const auto shares =
      smooth_arm_paths(flip.at(), {&tracks[0], &tracks[1]}, {&solved[0], &solved[1]}, o);
  EXPECT_LT(wrist_jerk_peak_mm(solved[0].chosen), 0.3 * jerk_before);
  for (size_t i = 0; i < solved[0].chosen.size(); ++i) {
    EXPECT_LE(arm_depth(flip.fields[i], solved[0].chosen[i].pose, tracks[0].radii, o),
              std::max(o.inside_tolerance_m, depth_before[i]) + 1e-12);
    EXPECT_GE(shares[0][i], 0.0);
    EXPECT_LE(shares[0][i], 1.0);
  }
}

}  // namespace
}  // namespace kinema
