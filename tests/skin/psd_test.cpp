// Pose-space deformation with RBF interpolation (Lewis, Cordner & Fong 2000; worked elbow:
// docs/worked_examples.md, "Corrective shapes, pose-space deformation, delta mush").
#include "kinema/skin/psd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "common/alloc_counter.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr float kDeg = std::numbers::pi_v<float> / 180.0f;

float eval1(const RbfInterpolator& r, float pose) {
  float out = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(r.evaluate(std::span<const float>(&pose, 1), std::span<float>(&out, 1)));
  return out;
}

RbfInterpolator elbow(bool linear, std::vector<float> poses = {0, 90 * kDeg},
                      std::vector<float> values = {0, 1}) {
  RbfSettings s;
  s.sigma = 60 * kDeg;
  s.linear_term = linear;
  return RbfInterpolator::build(1, poses, values, 1, s);
}

TEST(Psd, GaussianRbfThroughTwoElbowExamples) {
  const RbfInterpolator r = elbow(false);
  EXPECT_EQ(r.example_count(), 2u);
  EXPECT_NEAR(r.coefficient(1, 0), 1.0112f, 1e-4f);
  EXPECT_NEAR(r.coefficient(0, 0), -0.1066f, 1e-4f);
  EXPECT_NEAR(eval1(r, 45 * kDeg), 0.515f, 5e-4f);
  EXPECT_NEAR(eval1(r, 120 * kDeg), 0.786f, 5e-4f);
  // Passes through the examples…
  EXPECT_NEAR(eval1(r, 0), 0.0f, 1e-6f);
  EXPECT_NEAR(eval1(r, 90 * kDeg), 1.0f, 1e-6f);
  // …and falls back toward 0 past the last one (the classic RBF pitfall).
  EXPECT_LT(eval1(r, 180 * kDeg), 0.15f);
  EXPECT_LT(eval1(r, 150 * kDeg), eval1(r, 120 * kDeg));
  EXPECT_GT(r.rcond(), 0.5);
}

TEST(Psd, LinearTermKeepsTheCorrectionPast90) {
  // Two examples: the linear term fits them exactly, the RBF part vanishes: f = θ / 90°.
  const RbfInterpolator two = elbow(true);
  EXPECT_NEAR(eval1(two, 45 * kDeg), 0.5f, 1e-5f);
  EXPECT_NEAR(eval1(two, 120 * kDeg), 4.0f / 3.0f, 1e-5f);
  EXPECT_NEAR(two.coefficient(0, 0), 0.0f, 1e-6f);
  // Three examples with a bump in the middle: exact at the examples, RBF + linear in between,
  // and still rising past 90° where the pure Gaussian RBF falls back.
  const std::vector<float> poses{0, 45 * kDeg, 90 * kDeg}, values{0, 0.3f, 1};
  const RbfInterpolator lin = elbow(true, poses, values), pure = elbow(false, poses, values);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(eval1(lin, poses[i]), values[i], 1e-5f);
    EXPECT_NEAR(eval1(pure, poses[i]), values[i], 1e-5f);
  }
  EXPECT_GT(eval1(lin, 120 * kDeg), 1.0f);
  EXPECT_GT(eval1(lin, 180 * kDeg), eval1(lin, 120 * kDeg));
  EXPECT_LT(eval1(pure, 180 * kDeg), 0.3f);
  EXPECT_NE(lin.linear_coefficient(1, 0), 0.0f);
}

TEST(Psd, RandomExamplesInManyDimensionsPassThroughTheirValues) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  for (bool linear : {false, true}) {
    for (RbfKernel kernel : {RbfKernel::Gaussian, RbfKernel::InverseQuadratic}) {
      const size_t dims = 5, n = 12, outputs = 3 * 40;  // a 40-vertex delta field
      std::vector<float> poses(n * dims), values(n * outputs);
      for (auto& x : poses) x = u(rng);
      for (auto& x : values) x = 0.1f * u(rng);
      RbfSettings s;
      s.kernel = kernel;
      s.sigma = 1.2;
      s.linear_term = linear;
      const RbfInterpolator r = RbfInterpolator::build(dims, poses, values, outputs, s);
      EXPECT_EQ(r.feature_count(), linear ? dims : 0u);
      std::vector<float> out(outputs);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(r.evaluate(std::span(poses).subspan(i * dims, dims), out));
        for (size_t o = 0; o < outputs; ++o)
          EXPECT_NEAR(out[o], values[i * outputs + o], 2e-4f) << i << " " << o;
      }
      // The Vec3f form adds the same field to positions.
      std::vector<Vec3f> positions(40, Vec3f{1, 2, 3});
      ASSERT_TRUE(r.evaluate_add(std::span(poses).subspan(0, dims), positions));
      for (size_t v = 0; v < 40; ++v) EXPECT_NEAR(positions[v].y, 2 + values[3 * v + 1], 2e-4f);
    }
  }
}

TEST(Psd, QuaternionMetricUsesTheAngleAndIgnoresTheSign) {
  const Vec3f z{0, 0, 1}, x{1, 0, 0};
  auto q4 = [](const Quatf& q) { return std::vector<float>{q.x, q.y, q.z, q.w}; };
  // Shoulder examples: rest, raised 90° about z, twisted 90° about x; values: a 2-vertex field.
  std::vector<float> poses;
  for (const Quatf& q : {Quatf::identity(), Quatf::from_axis_angle(z, 90 * kDeg),
                         Quatf::from_axis_angle(x, 90 * kDeg)}) {
    const auto f = q4(q);
    poses.insert(poses.end(), f.begin(), f.end());
  }
  const std::vector<float> values{0, 0,    0, 0, 0,    0,  //
                                  0, 0.1f, 0, 0, 0.2f, 0, 0.05f, 0, 0, 0, 0, 0.05f};
  RbfSettings s;
  s.metric = PoseMetric::Quaternion;
  s.sigma = 60 * kDeg;
  const RbfInterpolator r = RbfInterpolator::build(1, poses, values, 6, s);
  EXPECT_EQ(r.pose_size(), 4u);
  const auto a = q4(Quatf::from_axis_angle(z, 30 * kDeg));
  const auto neg = q4(Quatf::from_axis_angle(z, 30 * kDeg) * -1.0f);
  const auto b = q4(Quatf::from_axis_angle(z, 80 * kDeg));
  EXPECT_NEAR(r.distance(a, b), 50 * kDeg, 1e-5);
  EXPECT_NEAR(r.distance(neg, b), 50 * kDeg, 1e-5);
  std::vector<float> o1(6), o2(6);
  ASSERT_TRUE(r.evaluate(a, o1));
  ASSERT_TRUE(r.evaluate(neg, o2));
  for (size_t o = 0; o < 6; ++o) EXPECT_FLOAT_EQ(o1[o], o2[o]);
  ASSERT_TRUE(r.evaluate(std::span(poses).subspan(4, 4), o1));
  EXPECT_NEAR(o1[1], 0.1f, 1e-5f);
  EXPECT_NEAR(o1[4], 0.2f, 1e-5f);

  // From the joints' local rotations, with the linear term on rotation vectors (needs 4 examples
  // in general position: rest and three axes).
  std::vector<float> p4 = poses;
  const auto y90 = q4(Quatf::from_axis_angle({0, 1, 0}, 90 * kDeg));
  p4.insert(p4.end(), y90.begin(), y90.end());
  s.linear_term = true;
  const RbfInterpolator rl = RbfInterpolator::build(1, p4, std::vector<float>{0, 1, 0.5f, 0}, 1, s);
  EXPECT_EQ(rl.feature_count(), 3u);
  const std::vector<Quatf> local{Quatf::identity(), Quatf::from_axis_angle(z, 90 * kDeg)};
  const std::vector<int> joints{1};
  std::vector<float> pose(4), w(1);
  ASSERT_TRUE(pose_from_rotations(local, joints, pose));
  ASSERT_TRUE(rl.evaluate(pose, w));
  EXPECT_NEAR(w[0], 1.0f, 1e-5f);
  EXPECT_FALSE(pose_from_rotations(local, std::vector<int>{2}, pose));
  EXPECT_FALSE(pose_from_rotations(local, joints, std::span(pose).first(3)));
}

TEST(Psd, BadInputThrowsClearErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  RbfSettings s;
  auto reason = [](auto&& build) -> std::string {
    try {
      build();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return "accepted";
  };
  const std::vector<float> v2{0, 1};
  EXPECT_NE(reason([&] { RbfInterpolator::build(1, {}, {}, 1, s); }).find("no example"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, std::vector<float>{0, 0.5f, 0.5f},
                                     std::vector<float>{0, 1, 2}, 1, s);
            }).find("examples 1 and 2"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, v2, std::vector<float>{0}, 1, s);
            }).find("1 example values for 2 examples"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(2, std::vector<float>{0, 1, 2}, v2, 1, s);
            }).find("not a multiple"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, std::vector<float>{0, nan}, v2, 1, s);
            }).find("example 1"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, v2, std::vector<float>{nan, 1}, 1, s);
            }).find("example 0"),
            std::string::npos);
  // Nearly coincident centres: not duplicates, but the kernel matrix is hopeless.
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, std::vector<float>{0, 1e-7f}, v2, 1, s);
            }).find("ill-conditioned"),
            std::string::npos);
  RbfSettings lin = s;
  lin.linear_term = true;
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(2, std::vector<float>{0, 0, 1, 1}, v2, 1, lin);
            }).find("at least 3 examples"),
            std::string::npos);
  // Collinear examples cannot fix a 2D linear term.
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(2, std::vector<float>{0, 0, 1, 1, 2, 2},
                                     std::vector<float>{0, 1, 2}, 1, lin);
            }).find("singular"),
            std::string::npos);
  RbfSettings bad = s;
  bad.sigma = 0;
  EXPECT_NE(reason([&] { RbfInterpolator::build(1, v2, v2, 1, bad); }).find("σ"),
            std::string::npos);
  RbfSettings quat = s;
  quat.metric = PoseMetric::Quaternion;
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0}, v2, 1, quat);
            }).find("zero quaternion"),
            std::string::npos);
  EXPECT_NE(reason([&] {
              RbfInterpolator::build(1, std::vector<float>{0, 0, 0, 1, 0, 0, 0, -1}, v2, 1, quat);
            }).find("same pose twice"),
            std::string::npos);
  // Regularization accepts duplicates (smoothing instead of interpolating).
  RbfSettings ridge = s;
  ridge.regularization = 1e-3;
  const RbfInterpolator r = RbfInterpolator::build(1, std::vector<float>{0, 0}, v2, 1, ridge);
  EXPECT_NEAR(eval1(r, 0), 0.5f, 1e-3f);
}

TEST(Psd, RuntimeEvaluationRejectsBadCallsAndDoesNotAllocate) {
  const RbfInterpolator r = elbow(true);
  std::vector<float> out(1, -7.0f), out2(2);
  const std::vector<float> pose{0.5f}, pose2{0.5f, 0.1f}, bad{std::nanf("")};
  EXPECT_FALSE(r.evaluate(pose2, out));
  EXPECT_FALSE(r.evaluate(pose, out2));
  EXPECT_FALSE(r.evaluate(bad, out));
  EXPECT_FALSE(RbfInterpolator{}.evaluate(pose, out));
  EXPECT_EQ(out[0], -7.0f);
  std::vector<Vec3f> two(2);
  EXPECT_FALSE(r.evaluate_add(pose, two));

  // A 2000-vertex delta field over 3 joint angles, evaluated without allocating.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  const size_t n = 2000, dims = 3, examples = 8;
  std::vector<float> poses(examples * dims), values(examples * 3 * n);
  for (auto& x : poses) x = u(rng);
  for (auto& x : values) x = u(rng);
  RbfSettings s;
  s.linear_term = true;
  const RbfInterpolator field = RbfInterpolator::build(dims, poses, values, 3 * n, s);
  std::vector<Vec3f> positions(n);
  std::vector<float> flat(3 * n);
  const std::vector<float> p{0.1f, 0.2f, 0.3f};
  test::start_counting_allocations();
  const bool ok = field.evaluate(p, flat) && field.evaluate_add(p, positions);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  ASSERT_TRUE(ok);
  EXPECT_FLOAT_EQ(positions[123].z, flat[3 * 123 + 2]);
}

}  // namespace
}  // namespace kinema
