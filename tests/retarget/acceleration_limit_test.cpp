// Limiting a displacement's acceleration (kinema/retarget/acceleration_limit.h): bounds met on
// random tracks and steps, the target kept where it already meets them, a step spread over the
// frames it needs, the nearest answer (least squares) and bad arguments refused.
#include "kinema/retarget/acceleration_limit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kinema/core/error.h"

namespace kinema {
namespace {

/// The largest |Δ²(base + offsets)_t| − bound_t over the interior frames.
double worst_excess(const std::vector<Vec3>& base, const std::vector<Vec3>& offsets,
                    const std::vector<double>& bound) {
  std::vector<Vec3> moved(base.size());
  for (size_t i = 0; i < base.size(); ++i) moved[i] = base[i] + offsets[i];
  const std::vector<double> a = second_difference_norms(moved);
  double worst = -1e300;
  for (size_t t = 1; t + 1 < base.size(); ++t) worst = std::max(worst, a[t] - bound[t]);
  return worst;
}

/// A wandering track (metres): a random walk of accelerations up to `accel` per frame².
std::vector<Vec3> wandering_track(std::mt19937& rng, size_t n, double accel) {
  std::uniform_real_distribution<double> u(-accel, accel);
  std::vector<Vec3> p(n);
  Vec3 v{0, 0, 0};
  for (size_t i = 1; i < n; ++i) {
    v = v + Vec3{u(rng), u(rng), u(rng)} * (1 / std::sqrt(3.0));
    p[i] = p[i - 1] + v;
  }
  return p;
}

/// Bounds of the kind the arm clean-up uses: max(the track's own acceleration, a floor).
std::vector<double> own_or_floor(const std::vector<Vec3>& base, double floor) {
  std::vector<double> b = second_difference_norms(base);
  for (double& x : b) x = std::max(x, floor);
  return b;
}

/// Offsets that are 0 before frame `at` and `height` from it on.
std::vector<Vec3> step_at(size_t n, size_t at, const Vec3& height) {
  std::vector<Vec3> target(n, Vec3{0, 0, 0});
  for (size_t i = at; i < n; ++i) target[i] = height;
  return target;
}

TEST(AccelerationLimit, RandomStepsOnRandomTracksMeetEveryBound) {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 20; ++trial) {
    const size_t n = 50 + size_t(rng() % 400);
    const std::vector<Vec3> base = wandering_track(rng, n, 0.004);
    const std::vector<double> bound = own_or_floor(base, 0.002 + 0.01 * (rng() % 5));
    // Offsets that jump: piecewise constant pushes of up to 20 cm, some single-frame spikes.
    std::uniform_real_distribution<double> push(-0.2, 0.2);
    std::vector<Vec3> target(n, Vec3{0, 0, 0});
    Vec3 level{0, 0, 0};
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 25 == 0) level = Vec3{push(rng), push(rng), push(rng)};
      target[i] = level;
      if (rng() % 60 == 0) target[i] = target[i] + Vec3{push(rng), 0, 0};
    }
    const AccelerationLimitResult r = limit_acceleration(base, target, bound);
    ASSERT_EQ(r.offsets.size(), n);
    EXPECT_LE(worst_excess(base, r.offsets, bound), 1e-9) << "trial " << trial;
    EXPECT_LE(r.max_violation, 1e-9);
    EXPECT_GT(worst_excess(base, target, bound), 0.01);  // the target alone does not meet them
  }
}

TEST(AccelerationLimit, ATargetThatMeetsTheBoundsIsReturnedUnchanged) {
  std::mt19937 rng(7);
  const std::vector<Vec3> base = wandering_track(rng, 300, 0.003);
  std::vector<Vec3> target(300);
  for (size_t i = 0; i < target.size(); ++i)  // a slow sway: tiny accelerations
    target[i] = Vec3{0.05 * std::sin(double(i) / 40), 0.02, 0};
  const std::vector<double> bound = own_or_floor(base, 0.01);
  const AccelerationLimitResult r = limit_acceleration(base, target, bound);
  EXPECT_EQ(r.frames_changed, 0);
  EXPECT_EQ(r.stretches, 0);
  for (size_t i = 0; i < target.size(); ++i) EXPECT_EQ(r.offsets[i], target[i]);
}

TEST(AccelerationLimit, AStepIsSpreadOverTheFramesTheBoundNeedsWithASmallCounterSwing) {
  // A still track and an 18 cm step in the offset, at most 5 mm/frame² allowed. The nearest
  // answer (least squares) leans back a little before the step and overshoots a little after it,
  // symmetrically, and settles on the target on either side.
  const size_t n = 200;
  const std::vector<Vec3> base(n, Vec3{0, 1, 0});
  const std::vector<Vec3> target = step_at(n, 100, {0.18, 0, 0});
  const std::vector<double> bound(n, 0.005);
  const AccelerationLimitResult r = limit_acceleration(base, target, bound);
  EXPECT_LE(worst_excess(base, r.offsets, bound), 1e-9);
  EXPECT_EQ(r.stretches, 1);
  double low = 0, high = 0;
  for (size_t i = 0; i < n; ++i) {
    low = std::min(low, r.offsets[i].x);
    high = std::max(high, r.offsets[i].x);
    EXPECT_NEAR(r.offsets[i].y, 0, 1e-12);
  }
  EXPECT_LT(-low, 0.08 * 0.18);
  EXPECT_LT(high - 0.18, 0.08 * 0.18);
  EXPECT_NEAR(-low, high - 0.18, 1e-4);
  for (size_t i = 0; i < 80; ++i) EXPECT_NEAR(r.offsets[i].x, 0, 2e-4) << i;
  for (size_t i = 120; i < n; ++i) EXPECT_NEAR(r.offsets[i].x, 0.18, 2e-4) << i;
  EXPECT_NEAR(r.offsets[99].x + r.offsets[100].x, 0.18, 1e-4);  // symmetric about the step
  // Without the limit the step would need 180 mm/frame² at its two frames.
  EXPECT_GT(worst_excess(base, target, bound), 0.17);
}

TEST(AccelerationLimit, TheAnswerIsNearerTheTargetThanPlainBlurring) {
  // The least-squares answer against another feasible one: the same step blurred until it meets
  // the bound (a box filter applied until it does).
  const size_t n = 240;
  const std::vector<Vec3> base(n, Vec3{0, 0, 0});
  const std::vector<Vec3> target = step_at(n, 120, {0, 0.1, 0});
  const std::vector<double> bound(n, 0.002);
  const AccelerationLimitResult r = limit_acceleration(base, target, bound);
  std::vector<Vec3> blurred = target;
  while (worst_excess(base, blurred, bound) > 0) {
    std::vector<Vec3> next = blurred;
    for (size_t i = 1; i + 1 < n; ++i) next[i] = (blurred[i - 1] + blurred[i] + blurred[i + 1]) / 3;
    blurred = next;
  }
  auto cost = [&](const std::vector<Vec3>& d) {
    double c = 0;
    for (size_t i = 0; i < n; ++i) c += length_squared(d[i] - target[i]);
    return c;
  };
  EXPECT_LE(worst_excess(base, r.offsets, bound), 1e-9);
  EXPECT_LT(cost(r.offsets), cost(blurred));
}

TEST(AccelerationLimit, StretchesFarApartAreSolvedApartAndTheFramesBetweenKept) {
  const size_t n = 600;
  const std::vector<Vec3> base(n, Vec3{0, 0, 0});
  std::vector<Vec3> target(n, Vec3{0, 0, 0});
  target[100] = Vec3{0, 0, 0.1};  // two single-frame spikes, 400 frames apart
  target[500] = Vec3{0.1, 0, 0};
  const std::vector<double> bound(n, 0.003);
  const AccelerationLimitResult r = limit_acceleration(base, target, bound);
  EXPECT_EQ(r.stretches, 2);
  EXPECT_LE(worst_excess(base, r.offsets, bound), 1e-9);
  for (size_t i = 200; i < 400; ++i) EXPECT_EQ(r.offsets[i], target[i]) << i;
  EXPECT_EQ(r.offsets[100].x, 0);  // each spike's own axis only
  EXPECT_EQ(r.offsets[500].z, 0);
}

TEST(AccelerationLimit, ShortTracksAreReturnedAndBadArgumentsRefused) {
  const std::vector<Vec3> two{{0, 0, 0}, {1, 0, 0}};
  EXPECT_EQ(limit_acceleration(two, two, std::vector<double>{0, 0}).offsets, two);
  const std::vector<Vec3> three(3, Vec3{0, 0, 0});
  EXPECT_THROW(limit_acceleration(three, two, std::vector<double>{0, 0, 0}), Error);
  EXPECT_THROW(limit_acceleration(three, three, std::vector<double>{0, -1, 0}), Error);
  EXPECT_THROW(limit_acceleration(three, three, std::vector<double>{0, NAN, 0}), Error);
}

}  // namespace
}  // namespace kinema
