// Blend spaces and phase synchronization: the worked walk/run numbers of docs/worked_examples.md
// ("Blend spaces": the 1D walk/run space at 2.0, 2.5 and 3.5 m/s, the 2D nine-sample layout),
// plus properties and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kinema/blend/blend_space.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// The 1D locomotion space: idle 0, walk 1.5 m/s (1.2 s cycle), run 4.5 m/s (0.8 s cycle).
// The run starts on the right foot, the walk on the left.
std::vector<BlendSample1D> locomotion_1d() {
  return {
      {"idle", 0.0f, {2.0f, {}}, 0.0f},
      {"walk", 1.5f, {1.2f, {{"L", 0.0f}, {"R", 0.5f}}}, 1.5f},
      {"run", 4.5f, {0.8f, {{"R", 0.0f}, {"L", 0.5f}}}, 4.5f},
  };
}

enum Nine {
  kIdle,
  kFwdWalk,
  kBackWalk,
  kRightWalk,
  kLeftWalk,
  kFwdRun,
  kBackRun,
  kRightRun,
  kLeftRun
};

// The 2D space: idle at the centre, walks at 1.5 m/s and runs at 4.5 m/s in four
// directions (x = sideways, + right; y = forward).
std::vector<BlendSample2D> nine_samples() {
  return {
      {"idle", {0, 0}, {}},          {"walk_fwd", {0, 1.5f}, {}},   {"walk_back", {0, -1.5f}, {}},
      {"walk_right", {1.5f, 0}, {}}, {"walk_left", {-1.5f, 0}, {}}, {"run_fwd", {0, 4.5f}, {}},
      {"run_back", {0, -4.5f}, {}},  {"run_right", {4.5f, 0}, {}},  {"run_left", {-4.5f, 0}, {}},
  };
}

std::string error_of(const auto& build) {
  try {
    build();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no kinema::Error thrown)";
}

// Σ wᵢ·pᵢ of a 2D space.
BlendPoint2D reproduce(const BlendSpace2D& space, const std::vector<float>& w) {
  double x = 0, y = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    x += w[i] * double(space.samples()[i].position.x);
    y += w[i] * double(space.samples()[i].position.y);
  }
  return {float(x), float(y)};
}

double sum_of(const std::vector<float>& w) {
  double s = 0;
  for (float v : w) s += v;
  return s;
}

// ---- worked examples --------------------------------------------------------------------------

TEST(BlendSpace1D, WalkRunAt2MpsWeightsCycleAndSpeedCorrection) {
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  ASSERT_TRUE(space.weights(2.0f, w));
  // w_run = (2.0 − 1.5)/(4.5 − 1.5) = 1/6, w_walk = 5/6.
  EXPECT_FLOAT_EQ(w[0], 0.0f);
  EXPECT_NEAR(w[1], 5.0 / 6.0, 1e-6);
  EXPECT_NEAR(w[2], 1.0 / 6.0, 1e-6);

  // T = 5/6·1.2 + 1/6·0.8 = 1.1333 s; walk plays 1.2/1.1333 = 1.059×, run 0.8/1.1333 = 0.706×.
  const std::optional<float> t = space.sync().cycle_duration(w);
  ASSERT_TRUE(t);
  EXPECT_NEAR(*t, 1.1333, 5e-5);
  std::vector<float> rates(3);
  ASSERT_TRUE(space.sync().playback_rates(w, rates));
  EXPECT_NEAR(rates[1], 1.059, 5e-4);
  EXPECT_NEAR(rates[2], 0.706, 5e-4);

  // Strides 1.8 m and 3.6 m blend to 2.1 m per 1.1333 s: 1.853 m/s, not 2.0.
  EXPECT_NEAR(*space.stride(w), 2.1, 5e-5);
  EXPECT_NEAR(*space.root_speed(w), 1.853, 5e-4);
  // (b) playback scale 2.0/1.853 = 1.079.
  EXPECT_NEAR(*space.playback_scale(w, 2.0f), 1.079, 5e-4);
  // (a) the weight that gives exactly 2.0 m/s: w_run = 0.2308.
  std::vector<float> exact(3);
  ASSERT_TRUE(space.speed_matched_weights(2.0f, exact));
  EXPECT_NEAR(exact[2], 0.2308, 5e-5);
  EXPECT_NEAR(exact[1], 1.0 - 0.2308, 5e-5);
  EXPECT_EQ(exact[0], 0.0f);
  EXPECT_NEAR(*space.root_speed(exact), 2.0, 1e-6);
}

TEST(BlendSpace1D, TrotIsOneThirdRunWithHipAt30Degrees) {
  // 2.5 m/s between walk 1.5 and run 4.5: w = 1/3; hip 20° (walk) and 50° (run) blend to 30°.
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  ASSERT_TRUE(space.weights(2.5f, w));
  EXPECT_NEAR(w[2], 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(20.0 + w[2] * (50.0 - 20.0), 30.0, 1e-5);
}

TEST(BlendSpace1D, ThreeAndAHalfMpsIsTwoThirdsRun) {
  // w_run = (3.5 − 1.5)/3 = 2/3; T = 1/3·1.2 + 2/3·0.8 = 0.9333 s.
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  ASSERT_TRUE(space.weights(3.5f, w));
  EXPECT_NEAR(w[2], 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(w[1], 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(*space.sync().cycle_duration(w), 0.9333, 5e-5);
}

TEST(BlendSpace1D, WalkMovedAt2MpsNeedsOneThirdFasterPlayback) {
  // Game code moving the character at 2.0 m/s while the walk covers 1.5 m/s: the feet slide
  // unless the walk plays 2.0/1.5 = 1.33× faster.
  const BlendSpace1D space(locomotion_1d());
  const std::vector<float> walk_only{0.0f, 1.0f, 0.0f};
  EXPECT_NEAR(*space.root_speed(walk_only), 1.5, 1e-6);
  EXPECT_NEAR(*space.playback_scale(walk_only, 2.0f), 1.33, 5e-3);
  EXPECT_NEAR(*space.playback_scale(walk_only, 2.0f), 4.0 / 3.0, 1e-6);
}

TEST(BlendSpace2D, NineSampleWeightsAreOppositeTriangleAreas) {
  const BlendSpace2D space(nine_samples());
  // The triangle (forward run, forward walk, right run) is one of the Delaunay triangles.
  const std::set<std::uint32_t> run_walk_tri = {kFwdRun, kFwdWalk, kRightRun};
  bool found = false;
  for (const auto& t : space.triangles())
    found |= std::set<std::uint32_t>(t.begin(), t.end()) == run_walk_tri;
  EXPECT_TRUE(found);

  // p = (1.0, 2.5): areas 3.0, 2.25, 1.5 of 6.75 → 0.444, 0.333, 0.222.
  std::vector<float> w(9);
  ASSERT_TRUE(space.weights({1.0f, 2.5f}, w));
  EXPECT_NEAR(w[kFwdRun], 0.444, 5e-4);
  EXPECT_NEAR(w[kFwdWalk], 0.333, 5e-4);
  EXPECT_NEAR(w[kRightRun], 0.222, 5e-4);
  EXPECT_NEAR(w[kFwdRun], 3.0 / 6.75, 1e-6);
  EXPECT_NEAR(w[kFwdWalk], 2.25 / 6.75, 1e-6);
  EXPECT_NEAR(w[kRightRun], 1.5 / 6.75, 1e-6);
  EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
  const BlendPoint2D back = reproduce(space, w);
  EXPECT_NEAR(back.x, 1.0, 1e-6);
  EXPECT_NEAR(back.y, 2.5, 1e-6);

  // Only the three clips are evaluated.
  std::array<BlendWeight, 3> sparse{};
  ASSERT_EQ(space.sparse_weights({1.0f, 2.5f}, sparse), 3u);
  EXPECT_EQ(sparse[0].sample, std::uint32_t(kFwdWalk));
  EXPECT_EQ(sparse[1].sample, std::uint32_t(kFwdRun));
  EXPECT_EQ(sparse[2].sample, std::uint32_t(kRightRun));
}

TEST(BlendSpace2D, NineSampleTriangulationIsMirrorSymmetric) {
  const BlendSpace2D space(nine_samples());
  // 9 points, 4 on the hull: 2·9 − 2 − 4 = 12 triangles.
  ASSERT_EQ(space.triangles().size(), 12u);
  ASSERT_EQ(space.hull().size(), 4u);
  const auto key = [&](std::array<BlendPoint2D, 3> p) {
    std::sort(p.begin(), p.end(),
              [](BlendPoint2D a, BlendPoint2D b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
    return std::vector<float>{p[0].x, p[0].y, p[1].x, p[1].y, p[2].x, p[2].y};
  };
  std::set<std::vector<float>> tris;
  for (const auto& t : space.triangles())
    tris.insert(key({space.samples()[t[0]].position, space.samples()[t[1]].position,
                     space.samples()[t[2]].position}));
  for (const auto& t : space.triangles()) {
    std::array<BlendPoint2D, 3> mx, my;
    for (int j = 0; j < 3; ++j) {
      const BlendPoint2D p = space.samples()[t[j]].position;
      mx[j] = {p.x == 0 ? 0.0f : -p.x, p.y};
      my[j] = {p.x, p.y == 0 ? 0.0f : -p.y};
    }
    EXPECT_TRUE(tris.count(key(mx))) << "mirror in x missing";
    EXPECT_TRUE(tris.count(key(my))) << "mirror in y missing";
  }
}

TEST(BlendSpace2D, BarycentricWeightsReproduceTwoMorePoints) {
  const BlendSpace2D space(nine_samples());
  std::vector<float> w(9);
  // (0.5, 3.0) is in the same triangle as (1.0, 2.5): 5/9 forward run, 1/3 forward walk, 1/9
  // right run.
  ASSERT_TRUE(space.weights({0.5f, 3.0f}, w));
  EXPECT_NEAR(w[kFwdRun], 5.0 / 9.0, 1e-6);
  EXPECT_NEAR(w[kFwdWalk], 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(w[kRightRun], 1.0 / 9.0, 1e-6);
  EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
  BlendPoint2D back = reproduce(space, w);
  EXPECT_NEAR(back.x, 0.5, 1e-6);
  EXPECT_NEAR(back.y, 3.0, 1e-6);

  // (0.6, 0.6) is in (idle, forward walk, right walk): 0.2, 0.4, 0.4.
  ASSERT_TRUE(space.weights({0.6f, 0.6f}, w));
  EXPECT_NEAR(w[kIdle], 0.2, 1e-6);
  EXPECT_NEAR(w[kFwdWalk], 0.4, 1e-6);
  EXPECT_NEAR(w[kRightWalk], 0.4, 1e-6);
  EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
  back = reproduce(space, w);
  EXPECT_NEAR(back.x, 0.6, 1e-6);
  EXPECT_NEAR(back.y, 0.6, 1e-6);
}

// ---- 1D properties ----------------------------------------------------------------------------

TEST(BlendSpace1D, RandomWeightsAreLinearAndClamped) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pos(-10.0f, 10.0f);
  for (int set = 0; set < 50; ++set) {
    std::vector<BlendSample1D> samples;
    const int n = 2 + set % 9;
    std::set<float> used;
    while (int(samples.size()) < n) {
      const float p = pos(rng);
      if (used.insert(p).second) samples.push_back({"", p, {}, std::nullopt});
    }
    const BlendSpace1D space(samples);
    const float lo = *used.begin(), hi = *used.rbegin();
    std::vector<float> w(n);
    for (int q = 0; q < 200; ++q) {
      const float x = pos(rng) * 1.2f;
      ASSERT_TRUE(space.weights(x, w));
      int nonzero = 0;
      double back = 0;
      for (int i = 0; i < n; ++i) {
        EXPECT_GE(w[i], 0.0f);
        nonzero += w[i] != 0.0f;
        back += w[i] * double(samples[i].position);
      }
      EXPECT_LE(nonzero, 2);
      EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
      EXPECT_NEAR(back, std::clamp(x, lo, hi), 2e-5);
      std::array<BlendWeight, 2> sparse{};
      const std::size_t count = space.sparse_weights(x, sparse);
      ASSERT_GE(count, 1u);
      for (std::size_t k = 0; k < count; ++k) EXPECT_EQ(sparse[k].weight, w[sparse[k].sample]);
    }
    // Exactly 1 at a sample.
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(space.weights(samples[i].position, w));
      EXPECT_EQ(w[i], 1.0f);
      EXPECT_EQ(sum_of(w), 1.0);
    }
  }
}

TEST(BlendSpace1D, OutsideTheRangeClampsToTheEndSample) {
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  ASSERT_TRUE(space.weights(-1.0f, w));
  EXPECT_EQ(w, (std::vector<float>{1, 0, 0}));
  ASSERT_TRUE(space.weights(9.0f, w));
  EXPECT_EQ(w, (std::vector<float>{0, 0, 1}));
  std::array<BlendWeight, 2> sparse{};
  ASSERT_EQ(space.sparse_weights(9.0f, sparse), 1u);
  EXPECT_EQ(sparse[0].sample, 2u);
  EXPECT_EQ(sparse[0].weight, 1.0f);
}

TEST(BlendSpace1D, SpeedMatchedWeightsHitTheTargetSpeed) {
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  for (float v = 0.0f; v <= 4.5f; v += 0.125f) {
    ASSERT_TRUE(space.speed_matched_weights(v, w));
    EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
    EXPECT_NEAR(*space.root_speed(w), v, 2e-6) << v;
  }
  // Beyond every sample: the fastest one; the playback scale covers the rest.
  ASSERT_TRUE(space.speed_matched_weights(6.0f, w));
  EXPECT_EQ(w, (std::vector<float>{0, 0, 1}));
  EXPECT_NEAR(*space.playback_scale(w, 6.0f), 6.0 / 4.5, 1e-6);
}

TEST(BlendSpace1D, SpeedQueriesReportMissingData) {
  std::vector<BlendSample1D> samples = locomotion_1d();
  samples[0].root_speed.reset();
  const BlendSpace1D space(samples);
  const std::vector<float> idle_only = {1, 0, 0}, walk_only = {0, 1, 0};
  EXPECT_FALSE(space.root_speed(idle_only));  // the idle has no root speed
  EXPECT_TRUE(space.root_speed(walk_only));   // zero weights do not need one
  const BlendSpace1D full(locomotion_1d());
  EXPECT_FALSE(full.playback_scale(idle_only, 2.0f));  // an idle cannot be sped up to move
  EXPECT_FALSE(full.playback_scale(walk_only, kNaN));
  const BlendSpace1D no_speeds({{"a", 0, {}, std::nullopt}, {"b", 1, {}, std::nullopt}});
  std::vector<float> w = {0.5f, 0.5f};
  EXPECT_FALSE(no_speeds.speed_matched_weights(1.0f, w));
  EXPECT_EQ(w, (std::vector<float>{0.5f, 0.5f}));
}

TEST(BlendSpace1D, BadQueriesReturnFalseAndLeaveOutputs) {
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w = {7, 7, 7};
  EXPECT_FALSE(space.weights(kNaN, w));
  EXPECT_FALSE(space.weights(kInf, w));
  EXPECT_FALSE(space.weights(-kInf, w));
  EXPECT_EQ(w, (std::vector<float>{7, 7, 7}));
  std::vector<float> short_out(2);
  EXPECT_FALSE(space.weights(1.0f, short_out));
  std::array<BlendWeight, 2> sparse{};
  EXPECT_EQ(space.sparse_weights(kNaN, sparse), 0u);
  std::array<BlendWeight, 1> too_small{};
  EXPECT_EQ(space.sparse_weights(1.0f, too_small), 0u);
  EXPECT_FALSE(space.speed_matched_weights(kNaN, w));
  EXPECT_FALSE(space.root_speed(std::vector<float>{kNaN, 1, 0}));
}

// ---- phase synchronization --------------------------------------------------------------------

TEST(PhaseSync, AdvancesByDtOverTheBlendedCycle) {
  const BlendSpace1D space(locomotion_1d());
  std::vector<float> w(3);
  ASSERT_TRUE(space.weights(2.0f, w));
  const double cycle = *space.sync().cycle_duration(w);
  // Walk and run have their markers half a cycle apart, so the warp is uniform here.
  float phase = 0.25f;
  ASSERT_TRUE(space.sync().advance(w, 1.0f / 60.0f, phase));
  EXPECT_NEAR(phase, 0.25 + (1.0 / 60.0) / cycle, 1e-6);
  // A whole number of cycles is a no-op; backwards works too.
  float p2 = 0.25f;
  ASSERT_TRUE(space.sync().advance(w, float(3 * cycle), p2));
  EXPECT_NEAR(p2, 0.25, 1e-5);
  ASSERT_TRUE(space.sync().advance(w, -1.0f / 60.0f, p2));
  EXPECT_NEAR(p2, 0.25 - (1.0 / 60.0) / cycle, 1e-5);
}

TEST(PhaseSync, ClipsStartingOnDifferentFeetAlignByMarkerId) {
  const BlendSpace1D space(locomotion_1d());
  const PhaseSync& sync = space.sync();
  ASSERT_EQ(sync.segment_count(), 2u);
  ASSERT_EQ(sync.marker_ids().size(), 2u);
  EXPECT_EQ(sync.marker_ids()[0], "L");  // the first clip with markers (walk) leads the order
  std::vector<float> t(3);
  ASSERT_TRUE(sync.local_times(0.0f, t));
  EXPECT_FLOAT_EQ(t[1], 0.0f);  // walk: L at 0.0
  EXPECT_FLOAT_EQ(t[2], 0.5f);  // run: L at 0.5 (it starts on R)
  ASSERT_TRUE(sync.local_times(0.5f, t));
  EXPECT_FLOAT_EQ(t[1], 0.5f);  // walk: R
  EXPECT_FLOAT_EQ(t[2], 0.0f);  // run: R
}

// Uneven markers, a wrap-around segment and an unsynchronized (marker-less) clip.
std::vector<ClipCycle> uneven_cycles() {
  return {
      {1.2f, {{"R", 0.62f}, {"L", 0.1f}}},   // walk, markers given out of order
      {0.8f, {{"R", 0.05f}, {"L", 0.45f}}},  // run on the other foot, uneven
      {2.0f, {}},                            // idle
      {0.9f, {{"L", 0.9f}, {"R", 0.3f}}},    // jog: L near the end, so L→R wraps
  };
}

TEST(PhaseSync, MarkerWarpMapsEachMarkerToTheMatchingMarker) {
  const std::vector<ClipCycle> cycles = uneven_cycles();
  const PhaseSync sync(cycles);
  ASSERT_EQ(sync.segment_count(), 2u);
  for (std::size_t k = 0; k < sync.segment_count(); ++k) {
    const std::string& id = sync.marker_ids()[k];
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      if (cycles[c].markers.empty()) continue;
      float expected = -1;
      for (const SyncMarker& m : cycles[c].markers)
        if (m.id == id) expected = m.time;
      EXPECT_NEAR(*sync.local_time(c, sync.marker_phase(k)), expected, 1e-6)
          << "clip " << c << " marker " << id;
    }
  }
  // Halfway between canonical L (phase 0) and R (0.5), every clip is halfway between its own.
  std::vector<float> t(4);
  ASSERT_TRUE(sync.local_times(0.25f, t));
  EXPECT_NEAR(t[0], (0.1 + 0.62) / 2, 1e-6);
  EXPECT_NEAR(t[1], (0.45 + 1.05) / 2, 1e-6);      // segment L 0.45 → R 0.05 wraps past 1
  EXPECT_NEAR(t[2], 0.25, 1e-6);                   // no markers: local time = phase
  EXPECT_NEAR(t[3], (0.9 + 1.3) / 2 - 1.0, 1e-6);  // L 0.9 → R 0.3, the midpoint wraps
}

TEST(PhaseSync, SingleClipPlaysAtItsOwnSpeedAndLoopsInItsDuration) {
  const std::vector<ClipCycle> cycles = uneven_cycles();
  const PhaseSync sync(cycles);
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    std::vector<float> w(cycles.size(), 0.0f);
    w[c] = 1.0f;
    float phase = 0.1f;
    const float start = *sync.local_time(c, phase);
    const int frames = 97;
    const float dt = cycles[c].duration / frames;
    for (int f = 1; f <= frames; ++f) {
      ASSERT_TRUE(sync.advance(w, dt, phase));
      // 100% on one clip: its local time runs uniformly at dt/T_c, whatever its markers.
      double expected = start + double(f) / frames;
      expected -= std::floor(expected);
      double got = *sync.local_time(c, phase);
      double diff = std::abs(got - expected);
      EXPECT_LT(std::min(diff, 1.0 - diff), 2e-5) << "clip " << c << " frame " << f;
    }
    EXPECT_NEAR(phase, 0.1, 2e-5);
  }
}

TEST(PhaseSync, BlendedCycleTakesTheBlendedDuration) {
  const std::vector<ClipCycle> cycles = uneven_cycles();
  const PhaseSync sync(cycles);
  const std::vector<float> w = {0.5f, 0.3f, 0.0f, 0.2f};
  const float cycle = *sync.cycle_duration(w);
  EXPECT_NEAR(cycle, 0.5 * 1.2 + 0.3 * 0.8 + 0.2 * 0.9, 1e-6);
  float phase = 0.0f;
  for (int f = 0; f < 120; ++f) ASSERT_TRUE(sync.advance(w, cycle / 120, phase));
  const double diff = std::abs(phase - 0.0);
  EXPECT_LT(std::min(diff, 1.0 - diff), 2e-5);
  // One big step that crosses several markers lands on the same place as many small ones.
  float big = 0.3f, small = 0.3f;
  ASSERT_TRUE(sync.advance(w, 2.5f * cycle + 0.37f, big));
  for (int f = 0; f < 1000; ++f) ASSERT_TRUE(sync.advance(w, (2.5f * cycle + 0.37f) / 1000, small));
  EXPECT_NEAR(big, small, 1e-4);
}

TEST(PhaseSync, PhaseAndLocalTimesStayInTheUnitInterval) {
  const std::vector<ClipCycle> cycles = uneven_cycles();
  const PhaseSync sync(cycles);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> w(4), t(4);
  float phase = 0.0f;
  for (int i = 0; i < 20000; ++i) {
    for (float& v : w) v = unit(rng) < 0.3f ? 0.0f : unit(rng);
    w[i % 4] += 1e-3f;  // never all zero
    const float dt = i % 100 == 0 ? (unit(rng) - 0.5f) * 100.0f : unit(rng) / 30.0f;
    ASSERT_TRUE(sync.advance(w, dt, phase));
    ASSERT_GE(phase, 0.0f);
    ASSERT_LT(phase, 1.0f);
    ASSERT_TRUE(sync.local_times(phase, t));
    for (float v : t) {
      ASSERT_GE(v, 0.0f);
      ASSERT_LT(v, 1.0f);
    }
  }
  // Phases just below 1 and outside [0, 1) are wrapped, never returned as 1.
  float edge = std::nextafter(1.0f, 0.0f);
  ASSERT_TRUE(sync.advance(w, 1e-9f, edge));
  EXPECT_LT(edge, 1.0f);
  ASSERT_TRUE(sync.local_times(-0.75f, t));
  EXPECT_NEAR(t[2], 0.25f, 1e-6);
  ASSERT_TRUE(sync.local_times(3.0f, t));
  EXPECT_EQ(t[2], 0.0f);
}

TEST(PhaseSync, WithoutMarkersThePhaseIsEveryClipsNormalizedTime) {
  const std::vector<ClipCycle> cycles = {{1.0f, {}}, {0.5f, {}}};
  const PhaseSync sync(cycles);
  EXPECT_EQ(sync.segment_count(), 1u);
  EXPECT_TRUE(sync.marker_ids().empty());
  std::vector<float> t(2);
  ASSERT_TRUE(sync.local_times(0.7f, t));
  EXPECT_FLOAT_EQ(t[0], 0.7f);
  EXPECT_FLOAT_EQ(t[1], 0.7f);
}

TEST(PhaseSync, BadQueriesReturnFalseAndLeaveOutputs) {
  const std::vector<ClipCycle> cycles = uneven_cycles();
  const PhaseSync sync(cycles);
  const std::vector<float> good = {1, 0, 0, 0};
  float phase = 0.4f;
  EXPECT_FALSE(sync.advance(good, kNaN, phase));
  EXPECT_FALSE(sync.advance(good, kInf, phase));
  EXPECT_FALSE(sync.advance(std::vector<float>{kNaN, 1, 0, 0}, 0.1f, phase));
  EXPECT_FALSE(sync.advance(std::vector<float>{-1, 1, 0, 0}, 0.1f, phase));
  EXPECT_FALSE(sync.advance(std::vector<float>{0, 0, 0, 0}, 0.1f, phase));
  EXPECT_FALSE(sync.advance(std::vector<float>{1, 0}, 0.1f, phase));
  EXPECT_EQ(phase, 0.4f);
  float nan_phase = kNaN;
  EXPECT_FALSE(sync.advance(good, 0.1f, nan_phase));
  std::vector<float> t = {9, 9, 9, 9};
  EXPECT_FALSE(sync.local_times(kNaN, t));
  EXPECT_EQ(t, (std::vector<float>{9, 9, 9, 9}));
  EXPECT_FALSE(sync.local_time(4, 0.5f));
  EXPECT_FALSE(sync.cycle_duration(std::vector<float>{kInf, 0, 0, 0}));
  std::vector<float> rates(3);
  EXPECT_FALSE(sync.playback_rates(good, rates));
  const PhaseSync empty;
  EXPECT_FALSE(empty.cycle_duration(std::vector<float>{}));
}

// ---- 2D properties ----------------------------------------------------------------------------

std::vector<BlendSample2D> random_samples(std::mt19937& rng, int n, bool grid) {
  std::uniform_real_distribution<float> coord(-5.0f, 5.0f);
  std::uniform_int_distribution<int> cell(-4, 4);  // 81 cells: room for every set size
  std::vector<BlendSample2D> s;
  std::set<std::pair<float, float>> used;
  while (int(s.size()) < n) {
    // Grid sets are full of cocircular and collinear points: the degenerate cases.
    const BlendPoint2D p = grid ? BlendPoint2D{cell(rng) * 1.5f, cell(rng) * 1.5f}
                                : BlendPoint2D{coord(rng), coord(rng)};
    if (used.insert({p.x, p.y}).second) s.push_back({"", p, {}});
  }
  return s;
}

double cross(BlendPoint2D o, BlendPoint2D a, BlendPoint2D b) {
  return (double(a.x) - o.x) * (double(b.y) - o.y) - (double(a.y) - o.y) * (double(b.x) - o.x);
}

// Distance from p to the hull boundary and whether p is inside (or on) the hull.
std::pair<double, bool> hull_distance(const BlendSpace2D& space, BlendPoint2D p) {
  const auto h = space.hull();
  double best = 1e30;
  bool inside = true;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const BlendPoint2D a = space.samples()[h[i]].position;
    const BlendPoint2D b = space.samples()[h[(i + 1) % h.size()]].position;
    if (cross(a, b, p) < 0) inside = false;
    const double ex = b.x - a.x, ey = b.y - a.y;
    const double u =
        std::clamp(((p.x - a.x) * ex + (p.y - a.y) * ey) / (ex * ex + ey * ey), 0.0, 1.0);
    best = std::min(best, std::hypot(a.x + u * ex - p.x, a.y + u * ey - p.y));
  }
  return {best, inside};
}

TEST(BlendSpace2D, TriangulationIsDelaunayAndCoversTheHull) {
  std::mt19937 rng(3);
  for (int set = 0; set < 60; ++set) {
    const bool grid = set % 3 == 0;
    const int n = 3 + set % 30;
    std::vector<BlendSample2D> samples;
    do samples = random_samples(rng, n, grid);
    while (error_of([&] { BlendSpace2D{samples}; }).find("collinear") != std::string::npos);
    const BlendSpace2D space(samples);
    const auto pos = [&](std::uint32_t i) { return samples[i].position; };
    double area = 0;
    std::vector<int> used(n, 0);
    for (const auto& t : space.triangles()) {
      const double a2 = cross(pos(t[0]), pos(t[1]), pos(t[2]));
      ASSERT_GT(a2, 0) << "triangles are counter-clockwise and not degenerate";
      area += a2 / 2;
      for (std::uint32_t v : t) used[v] = 1;
      // Empty circumcircle: no sample strictly inside (up to rounding).
      const BlendPoint2D a = pos(t[0]), b = pos(t[1]), c = pos(t[2]);
      for (int k = 0; k < n; ++k) {
        const BlendPoint2D d = pos(k);
        const double adx = a.x - d.x, ady = a.y - d.y, bdx = b.x - d.x, bdy = b.y - d.y,
                     cdx = c.x - d.x, cdy = c.y - d.y;
        const double det = (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) +
                           (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy) +
                           (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
        EXPECT_LE(det, 1e-6) << "sample " << k << " inside a circumcircle";
      }
    }
    double hull_area = 0;
    const auto h = space.hull();
    for (std::size_t i = 0; i < h.size(); ++i)
      hull_area += cross({0, 0}, pos(h[i]), pos(h[(i + 1) % h.size()])) / 2;
    EXPECT_NEAR(area, hull_area, 1e-6 * hull_area);
    EXPECT_EQ(space.triangles().size(), 2 * std::size_t(n) - 2 - h.size());
    for (int k = 0; k < n; ++k) EXPECT_TRUE(used[k]) << "every sample is a vertex";
  }
}

TEST(BlendSpace2D, RandomPointsGetConvexWeightsThatReproduceThem) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> coord(-6.0f, 6.0f);
  int inside_count = 0;
  for (int set = 0; set < 20; ++set) {
    std::vector<BlendSample2D> samples;
    do samples = random_samples(rng, 3 + set * 3, set % 4 == 0);
    while (error_of([&] { BlendSpace2D{samples}; }).find("collinear") != std::string::npos);
    const BlendSpace2D space(samples);
    std::vector<float> w(samples.size());
    for (int q = 0; q < 500; ++q) {  // 20 × 500 = 10,000 points
      const BlendPoint2D p{coord(rng), coord(rng)};
      ASSERT_TRUE(space.weights(p, w));
      int nonzero = 0;
      for (float v : w) {
        ASSERT_GE(v, 0.0f);
        nonzero += v != 0.0f;
      }
      EXPECT_LE(nonzero, 3);
      EXPECT_NEAR(sum_of(w), 1.0, 1e-6);
      const auto [dist, inside] = hull_distance(space, p);
      const BlendPoint2D target = *space.project_to_hull(p);
      const BlendPoint2D back = reproduce(space, w);
      EXPECT_NEAR(back.x, target.x, 1e-5);
      EXPECT_NEAR(back.y, target.y, 1e-5);
      if (inside) {
        ++inside_count;
        EXPECT_EQ(target, p);
      } else {
        // The projection lies on the hull, at the distance of the nearest hull point.
        EXPECT_LT(hull_distance(space, target).first, 1e-5);
        EXPECT_NEAR(std::hypot(target.x - p.x, target.y - p.y), dist, 1e-5);
        EXPECT_LE(nonzero, 2);
      }
    }
  }
  EXPECT_GT(inside_count, 2000);
}

TEST(BlendSpace2D, WeightsAreOneAtSamplesAndContinuousAcrossEdges) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int set = 0; set < 20; ++set) {
    std::vector<BlendSample2D> samples;
    do samples = random_samples(rng, 4 + set * 2, set % 3 == 0);
    while (error_of([&] { BlendSpace2D{samples}; }).find("collinear") != std::string::npos);
    const BlendSpace2D space(samples);
    const std::size_t n = samples.size();
    std::vector<float> w(n), w2(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(space.weights(samples[i].position, w));
      EXPECT_EQ(w[i], 1.0f) << "sample " << i;
      EXPECT_EQ(sum_of(w), 1.0);
    }
    // Cross every triangle edge at a random point: the two sides differ by at most the
    // barycentric gradient (1/altitude, ≤ 1/the smallest altitude of any triangle) times the
    // step, plus float rounding of the query points.
    double min_altitude = 1e30;
    for (const auto& t : space.triangles()) {
      const BlendPoint2D a = samples[t[0]].position, b = samples[t[1]].position,
                         c = samples[t[2]].position;
      const double longest =
          std::max({std::hypot(b.x - a.x, b.y - a.y), std::hypot(c.x - b.x, c.y - b.y),
                    std::hypot(a.x - c.x, a.y - c.y)});
      min_altitude = std::min(min_altitude, cross(a, b, c) / longest);
    }
    for (const auto& t : space.triangles()) {
      for (int j = 0; j < 3; ++j) {
        const BlendPoint2D u = samples[t[j]].position, v = samples[t[(j + 1) % 3]].position;
        const double s = unit(rng), len = std::hypot(v.x - u.x, v.y - u.y);
        const double eps = 1e-4;
        const double nx = (v.y - u.y) / len, ny = -(v.x - u.x) / len;  // outward normal
        const double mx = u.x + s * (v.x - u.x), my = u.y + s * (v.y - u.y);
        ASSERT_TRUE(space.weights({float(mx - eps * nx), float(my - eps * ny)}, w));
        ASSERT_TRUE(space.weights({float(mx + eps * nx), float(my + eps * ny)}, w2));
        double worst = 0;
        for (std::size_t k = 0; k < n; ++k) worst = std::max(worst, double(std::abs(w[k] - w2[k])));
        EXPECT_LT(worst, (2 * eps + 1e-5) / min_altitude + 1e-5)
            << "jump across edge " << t[j] << "-" << t[(j + 1) % 3];
      }
    }
  }
}

TEST(BlendSpace2D, GridWithCollinearHullPoints) {
  std::vector<BlendSample2D> samples;
  for (int y = -1; y <= 1; ++y)
    for (int x = -1; x <= 1; ++x) samples.push_back({"", {float(x), float(y)}, {}});
  const BlendSpace2D space(samples);
  EXPECT_EQ(space.triangles().size(), 8u);
  EXPECT_EQ(space.hull().size(), 8u);  // the edge midpoints stay on the hull
  std::vector<float> w(9);
  ASSERT_TRUE(space.weights({0.25f, -0.5f}, w));
  const BlendPoint2D back = reproduce(space, w);
  EXPECT_NEAR(back.x, 0.25, 1e-6);
  EXPECT_NEAR(back.y, -0.5, 1e-6);
  // Outside, beyond an edge midpoint: projected onto the hull edge, two weights.
  ASSERT_TRUE(space.weights({3.0f, 0.5f}, w));
  EXPECT_NEAR(w[5], 0.5, 1e-6);  // (1, 0)
  EXPECT_NEAR(w[8], 0.5, 1e-6);  // (1, 1)
  EXPECT_EQ(*space.project_to_hull({3.0f, 0.5f}), (BlendPoint2D{1.0f, 0.5f}));
}

TEST(BlendSpace2D, BadQueriesReturnFalseAndLeaveOutputs) {
  const BlendSpace2D space(nine_samples());
  std::vector<float> w(9, 7.0f);
  EXPECT_FALSE(space.weights({kNaN, 0}, w));
  EXPECT_FALSE(space.weights({0, kInf}, w));
  EXPECT_EQ(w, std::vector<float>(9, 7.0f));
  std::vector<float> short_out(8);
  EXPECT_FALSE(space.weights({0, 0}, short_out));
  std::array<BlendWeight, 3> sparse{};
  EXPECT_EQ(space.sparse_weights({kNaN, 1}, sparse), 0u);
  std::array<BlendWeight, 2> too_small{};
  EXPECT_EQ(space.sparse_weights({0, 1}, too_small), 0u);
  EXPECT_FALSE(space.project_to_hull({kNaN, kNaN}));
}

// ---- bad build input --------------------------------------------------------------------------

TEST(BlendSpace1D, RejectsBadInputWithClearErrors) {
  EXPECT_THAT(error_of([] {
                BlendSpace1D({{"walk", 1.5f, {1.2f, {}}, 1.5f}});
              }),
              HasSubstr("at least 2 samples (got 1)"));
  auto bad = locomotion_1d();
  bad[2].position = kNaN;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }),
              HasSubstr("sample 2 (\"run\"): position is not finite"));
  bad = locomotion_1d();
  bad[0].position = -kInf;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("position is not finite"));
  bad = locomotion_1d();
  bad[2].position = 1.5f;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("duplicate position 1.5"));
  bad = locomotion_1d();
  bad[1].cycle.duration = -1.2f;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }),
              HasSubstr("sample 1 (\"walk\"): cycle duration must be finite and > 0 s (got -1.2)"));
  bad[1].cycle.duration = 0.0f;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("cycle duration must be finite"));
  bad[1].cycle.duration = kNaN;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("cycle duration must be finite"));
  bad = locomotion_1d();
  bad[1].root_speed = kInf;
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("root speed is not finite"));
}

TEST(PhaseSync, RejectsBadMarkersWithClearErrors) {
  auto bad = locomotion_1d();
  bad[2].cycle.markers = {{"L", 0.0f}, {"L", 0.5f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }),
              HasSubstr("sample 2 (\"run\"): sync markers do not match: got L,L, expected L,R"));
  bad[2].cycle.markers = {{"L", 0.0f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("sync markers do not match"));
  bad[2].cycle.markers = {{"L", 0.0f}, {"R", 0.3f}, {"X", 0.6f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("sync markers do not match"));
  bad[2].cycle.markers = {{"L", 0.0f}, {"R", 1.0f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }),
              HasSubstr("sync marker \"R\" time must be in [0, 1) (got 1)"));
  bad[2].cycle.markers = {{"L", kNaN}, {"R", 0.5f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("time must be in [0, 1)"));
  bad[2].cycle.markers = {{"L", 0.25f}, {"R", 0.25f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("at the same time 0.25"));
  bad[2].cycle.markers = {{"", 0.25f}, {"R", 0.5f}};
  EXPECT_THAT(error_of([&] { BlendSpace1D{bad}; }), HasSubstr("sync marker with an empty id"));
  // A rotated sequence (R,L against L,R) is fine, as is a clip without markers.
  EXPECT_NO_THROW(BlendSpace1D{locomotion_1d()});
  const std::vector<ClipCycle> none;
  EXPECT_THAT(error_of([&] { PhaseSync{none}; }), HasSubstr("at least one clip"));
  const std::vector<ClipCycle> one = {{-1.0f, {}}};
  EXPECT_THAT(error_of([&] { PhaseSync{one}; }), HasSubstr("clip 0: cycle duration"));
}

TEST(BlendSpace2D, RejectsBadInputWithClearErrors) {
  EXPECT_THAT(error_of([] {
                BlendSpace2D({{"a", {0, 0}, {}}, {"b", {1, 0}, {}}});
              }),
              HasSubstr("at least 3 samples (got 2)"));
  EXPECT_THAT(error_of([] {
                BlendSpace2D(
                    {{"a", {0, 0}, {}}, {"b", {1, 1}, {}}, {"c", {2, 2}, {}}, {"d", {-3, -3}, {}}});
              }),
              HasSubstr("samples are collinear"));
  auto bad = nine_samples();
  bad[3].position = bad[5].position;
  EXPECT_THAT(error_of([&] { BlendSpace2D{bad}; }), HasSubstr("duplicate position (0, 4.5)"));
  bad = nine_samples();
  bad[4].position.y = kNaN;
  EXPECT_THAT(error_of([&] { BlendSpace2D{bad}; }),
              HasSubstr("sample 4 (\"walk_left\"): position is not finite"));
  bad = nine_samples();
  bad[7].position.x = kInf;
  EXPECT_THAT(error_of([&] { BlendSpace2D{bad}; }), HasSubstr("position is not finite"));
  bad = nine_samples();
  bad[1].cycle = {1.0f, {{"L", 0.0f}, {"R", 0.5f}}};
  bad[2].cycle = {1.0f, {{"L", 0.0f}}};
  EXPECT_THAT(error_of([&] { BlendSpace2D{bad}; }), HasSubstr("sync markers do not match"));
}

}  // namespace
}  // namespace kinema
