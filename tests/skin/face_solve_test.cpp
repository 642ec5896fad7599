// Blendshape solve: the worked smile/jaw normal equations (docs/worked_examples.md, "Faces"),
// active bounds with the KKT conditions checked independently, sparsity, a round trip on
// Godette's real face targets, no allocation per frame, bad input.
#include "kinema/skin/face_solve.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/alloc_counter.h"
// This file replaces the global operator new for the kinema_skin_tests program (exactly one file
// of a program may; if another tests/skin file also includes it, keep one of the two).
// common/replace_global_new.h is included once per test program: by delta_mush_test.cpp.
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skin/blend_shapes.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

// Worked example: smile (0.40, 0.30, 0.10), jaw (−0.20, 0, −0.80), column-major.
const std::vector<float> kSmileJawBasis{0.40f, 0.30f, 0.10f, -0.20f, 0.0f, -0.80f};

/// Objective ½‖Bw − d‖² + ½ε‖w‖² + λΣw and its gradient, in double, straight from B.
struct Problem {
  std::vector<float> B;
  size_t m = 0, n = 0;
  std::vector<float> d;
  double lambda = 0, eps = 0;

  std::vector<double> residual(const std::vector<float>& w) const {
    std::vector<double> r(m);
    for (size_t i = 0; i < m; ++i) {
      double s = -double(d[i]);
      for (size_t k = 0; k < n; ++k) s += double(B[k * m + i]) * w[k];
      r[i] = s;
    }
    return r;
  }
  double objective(const std::vector<float>& w) const {
    double f = 0;
    for (double x : residual(w)) f += 0.5 * x * x;
    for (float x : w) f += 0.5 * eps * double(x) * x + lambda * x;
    return f;
  }
  std::vector<double> gradient(const std::vector<float>& w) const {
    const std::vector<double> r = residual(w);
    std::vector<double> g(n);
    for (size_t k = 0; k < n; ++k) {
      double s = 0;
      for (size_t i = 0; i < m; ++i) s += double(B[k * m + i]) * r[i];
      g[k] = s + eps * w[k] + lambda;
    }
    return g;
  }
  double max_diag() const {
    double s = 0;
    for (size_t k = 0; k < n; ++k) {
      double c = 0;
      for (size_t i = 0; i < m; ++i) c += double(B[k * m + i]) * B[k * m + i];
      s = std::max(s, c);
    }
    return s;
  }
};

/// The KKT conditions of the box-constrained problem at w, with a tolerance for float weights.
void expect_kkt(const Problem& p, const std::vector<float>& w, double tol) {
  const std::vector<double> g = p.gradient(w);
  for (size_t k = 0; k < p.n; ++k) {
    ASSERT_GE(w[k], 0.0f);
    ASSERT_LE(w[k], 1.0f);
    if (w[k] <= 1e-6f)
      EXPECT_GE(g[k], -tol) << "weight " << k << " at 0 wants to grow";
    else if (w[k] >= 1.0f - 1e-6f)
      EXPECT_LE(g[k], tol) << "weight " << k << " at 1 wants to shrink";
    else
      EXPECT_NEAR(g[k], 0.0, tol) << "free weight " << k;
  }
}

TEST(FaceSolve, SmileAndJawFromThreeMeasurements) {
  BlendshapeSolver solver(kSmileJawBasis, 3, 2);
  const auto gram = solver.gram();
  EXPECT_NEAR(gram[0], 0.26, 5e-4);
  EXPECT_NEAR(gram[1], -0.16, 5e-4);
  EXPECT_NEAR(gram[2], -0.16, 5e-4);
  EXPECT_NEAR(gram[3], 0.68, 5e-4);
  const std::vector<float> d{0.17f, 0.20f, -0.41f};
  std::vector<double> btd(2);
  ASSERT_TRUE(solver.project(d, btd));
  EXPECT_NEAR(btd[0], 0.087, 5e-4);
  EXPECT_NEAR(btd[1], 0.294, 5e-4);
  EXPECT_NEAR(gram[0] * gram[3] - gram[1] * gram[2], 0.1512, 5e-5);  // the determinant
  std::vector<float> w(2);
  BlendshapeSolveReport report;
  ASSERT_TRUE(solver.solve(d, w, &report));
  EXPECT_TRUE(report.converged);
  EXPECT_NEAR(w[0], 0.702f, 5e-4f);
  EXPECT_NEAR(w[1], 0.598f, 5e-4f);
  // Reconstruction (0.161, 0.211, −0.408), 0.014 from the measurement.
  const float rx = 0.40f * w[0] - 0.20f * w[1], ry = 0.30f * w[0], rz = 0.10f * w[0] - 0.80f * w[1];
  EXPECT_NEAR(rx, 0.161f, 5e-4f);
  EXPECT_NEAR(ry, 0.211f, 5e-4f);
  EXPECT_NEAR(rz, -0.408f, 5e-4f);
  EXPECT_NEAR(report.residual, 0.014, 5e-4);
  EXPECT_EQ(report.at_lower, 0);
  EXPECT_EQ(report.at_upper, 0);
}

TEST(FaceSolve, TargetsOutsideTheBoxClampAndSatisfyKkt) {
  BlendshapeSolver solver(kSmileJawBasis, 3, 2);
  std::vector<float> w(2);
  BlendshapeSolveReport report;
  // 1.5 × smile: smile clamps to 1; the jaw would go negative with smile at 1, so it clamps to 0.
  const std::vector<float> big{0.60f, 0.45f, 0.15f};
  ASSERT_TRUE(solver.solve(big, w, &report));
  EXPECT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_EQ(report.at_upper, 1);
  EXPECT_EQ(report.at_lower, 1);
  // −smile: smile clamps to 0, the jaw explains what it can: (jaw·(−smile)) / (jaw·jaw) =
  // 0.16/0.68.
  const std::vector<float> neg{-0.40f, -0.30f, -0.10f};
  ASSERT_TRUE(solver.solve(neg, w, &report));
  EXPECT_EQ(w[0], 0.0f);
  EXPECT_NEAR(w[1], 0.16f / 0.68f, 1e-5f);
  Problem p{kSmileJawBasis, 3, 2, neg, 0, 1e-9 * 0.68};
  expect_kkt(p, w, 1e-6);
}

TEST(FaceSolve, RandomBoxProblemsMeetKktAndBeatNeighbours) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(-0.5f, 1.5f);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t m = 12 + size_t(trial % 5) * 6, n = 3 + size_t(trial % 9);
    Problem p;
    p.m = m;
    p.n = n;
    p.B.resize(m * n);
    for (float& x : p.B) x = 0.1f * g(rng);
    std::vector<float> truth(n);
    for (float& x : truth) x = u(rng);  // many outside [0, 1]
    p.d.assign(m, 0.0f);
    for (size_t i = 0; i < m; ++i)
      for (size_t k = 0; k < n; ++k) p.d[i] += p.B[k * m + i] * truth[k];
    BlendshapeSolveOptions o;
    o.sparsity = trial % 2 ? 1e-4 : 0.0;
    p.lambda = o.sparsity;
    p.eps = o.ridge * p.max_diag();
    BlendshapeSolver solver(p.B, m, n, o);
    std::vector<float> w(n);
    BlendshapeSolveReport report;
    ASSERT_TRUE(solver.solve(p.d, w, &report));
    ASSERT_TRUE(report.converged) << "trial " << trial;
    expect_kkt(p, w, 1e-5);
    // Convex problem: no feasible neighbour is lower (up to float rounding of w).
    const double f = p.objective(w);
    for (size_t k = 0; k < n; ++k)
      for (float step : {-0.01f, 0.01f}) {
        std::vector<float> v = w;
        v[k] = std::clamp(v[k] + step, 0.0f, 1.0f);
        EXPECT_GE(p.objective(v), f - 1e-9) << "trial " << trial << " weight " << k;
      }
  }
}

TEST(FaceSolve, DependentShapesStillConvergeToAKktPoint) {
  // Column 2 = column 0 + column 1 (a rig's "blink" = blinkL + blinkR), column 3 = column 0.
  std::mt19937 rng(9);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const size_t m = 30, n = 5;
  for (int trial = 0; trial < 20; ++trial) {
    Problem p;
    p.m = m;
    p.n = n;
    p.B.resize(m * n);
    for (size_t i = 0; i < m; ++i) {
      p.B[0 * m + i] = g(rng);
      p.B[1 * m + i] = g(rng);
      p.B[2 * m + i] = p.B[i] + p.B[m + i];
      p.B[3 * m + i] = p.B[i];
      p.B[4 * m + i] = g(rng);
    }
    p.d.resize(m);
    for (float& x : p.d) x = 1.5f * g(rng);
    p.eps = 1e-9 * p.max_diag();
    BlendshapeSolver solver(p.B, m, n);
    std::vector<float> w(n);
    BlendshapeSolveReport report;
    ASSERT_TRUE(solver.solve(p.d, w, &report));
    EXPECT_TRUE(report.converged) << "trial " << trial;
    expect_kkt(p, w, 1e-5 * p.max_diag());
  }
}

TEST(FaceSolve, SparsityReducesTheNonZeroWeights) {
  // 52 shapes of which 6 are used, 120 measurements with noise.
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const size_t m = 120, n = 52;
  std::vector<float> B(m * n);
  for (float& x : B) x = 0.01f * g(rng);
  std::vector<float> truth(n, 0.0f);
  for (size_t k : {2, 9, 17, 30, 41, 50}) truth[k] = 0.3f + 0.1f * float(k % 5);
  std::vector<float> d(m, 0.0f);
  for (size_t i = 0; i < m; ++i) {
    for (size_t k = 0; k < n; ++k) d[i] += B[k * m + i] * truth[k];
    d[i] += 0.002f * g(rng);
  }
  auto nonzero = [](const std::vector<float>& w) {
    return std::count_if(w.begin(), w.end(), [](float x) { return x > 1e-6f; });
  };
  const std::vector<float> dense = solve_blendshape_weights(B, m, n, d);
  BlendshapeSolveOptions o;
  o.sparsity = 2e-4;
  BlendshapeSolveReport report;
  const std::vector<float> sparse = solve_blendshape_weights(B, m, n, d, o, &report);
  EXPECT_TRUE(report.converged);
  EXPECT_LT(nonzero(sparse), nonzero(dense));
  EXPECT_LE(nonzero(sparse), 12);
  // The true shapes survive.
  for (size_t k : {2, 9, 17, 30, 41, 50}) EXPECT_GT(sparse[k], 0.1f) << k;
  Problem p{B, m, n, d, o.sparsity, 0};
  p.eps = o.ridge * p.max_diag();
  expect_kkt(p, sparse, 1e-6);
}

/// Godette's 15 face targets as a basis over every vertex any target moves (x, y, z stacked).
struct GodetteBasis {
  std::vector<float> B;
  size_t rows = 0, cols = 0;
};
GodetteBasis godette_basis() {
  const Asset a = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  for (const Mesh& mesh : a.meshes) {
    if (mesh.morph_targets.size() != 15) continue;
    std::vector<size_t> used;
    for (size_t i = 0; i < mesh.vertex_count(); ++i) {
      bool any = false;
      for (const MorphTarget& t : mesh.morph_targets) any = any || length(t.position_deltas[i]) > 0;
      if (any) used.push_back(i);
    }
    GodetteBasis b;
    b.rows = used.size() * 3;
    b.cols = 15;
    b.B.resize(b.rows * b.cols);
    for (size_t k = 0; k < 15; ++k)
      for (size_t j = 0; j < used.size(); ++j)
        for (int c = 0; c < 3; ++c)
          b.B[k * b.rows + j * 3 + size_t(c)] = mesh.morph_targets[k].position_deltas[used[j]][c];
    return b;
  }
  return {};
}

TEST(FaceSolve, GodetteRoundTripRecoversTheWeights) {
  const GodetteBasis g = godette_basis();
  ASSERT_EQ(g.cols, 15u);
  ASSERT_GT(g.rows, 300u);
  BlendshapeSolver solver(g.B, g.rows, g.cols);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 1e-4f);  // 0.1 mm tracking noise
  std::vector<float> truth(15), w(15), d(g.rows);
  double worst = 0, worst_clean = 0;
  for (int trial = 0; trial < 100; ++trial) {
    for (float& x : truth) x = u(rng);
    for (int noisy = 0; noisy < 2; ++noisy) {
      for (size_t i = 0; i < g.rows; ++i) {
        double s = 0;
        for (size_t k = 0; k < 15; ++k) s += double(g.B[k * g.rows + i]) * truth[k];
        d[i] = float(s) + (noisy ? noise(rng) : 0.0f);
      }
      BlendshapeSolveReport report;
      ASSERT_TRUE(solver.solve(d, w, &report));
      ASSERT_TRUE(report.converged);
      for (size_t k = 0; k < 15; ++k) {
        const double e = std::fabs(double(w[k]) - truth[k]);
        (noisy ? worst : worst_clean) = std::max(noisy ? worst : worst_clean, e);
      }
    }
  }
  // Measured (x86-64, release): clean ≈ 1e-5 (float data), 0.1 mm noise ≈ 0.02.
  std::printf("Godette round trip: max weight error %.2e clean, %.2e with 0.1 mm noise\n",
              worst_clean, worst);
  EXPECT_LT(worst_clean, 1e-3);
  EXPECT_LT(worst, 0.05);
}

TEST(FaceSolve, WarmAndColdStartsAgreeAndSolvingAllocatesNothing) {
  const GodetteBasis g = godette_basis();
  BlendshapeSolveOptions cold_o;
  cold_o.warm_start = false;
  BlendshapeSolver warm(g.B, g.rows, g.cols), cold(g.B, g.rows, g.cols, cold_o);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-0.2f, 1.2f);
  std::vector<float> truth(15), ww(15), wc(15), d(g.rows);
  for (float& x : truth) x = u(rng);
  test::start_counting_allocations();
  bool all = true;
  for (int frame = 0; frame < 60; ++frame) {
    for (float& x : truth) x = std::clamp(x + 0.05f * (u(rng) - 0.5f), -0.2f, 1.2f);
    for (size_t i = 0; i < g.rows; ++i) {
      float s = 0;
      for (size_t k = 0; k < 15; ++k) s += g.B[k * g.rows + i] * truth[k];
      d[i] = s;
    }
    BlendshapeSolveReport rw, rc;
    all = all && warm.solve(d, ww, &rw) && cold.solve(d, wc, &rc) && rw.converged && rc.converged;
    for (size_t k = 0; k < 15; ++k) all = all && std::fabs(ww[k] - wc[k]) < 1e-5f;
  }
  const long allocations = test::stop_counting_allocations();
  EXPECT_TRUE(all);
  EXPECT_EQ(allocations, 0);
}

TEST(FaceSolve, BadInputIsRejected) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(BlendshapeSolver(kSmileJawBasis, 3, 3), Error);  // size mismatch
  EXPECT_THROW(BlendshapeSolver(kSmileJawBasis, 0, 2), Error);  // empty
  EXPECT_THROW(BlendshapeSolver({}, 3, 0), Error);
  std::vector<float> b = kSmileJawBasis;
  b[4] = nan;
  EXPECT_THROW(BlendshapeSolver(b, 3, 2), Error);
  b = kSmileJawBasis;
  b[3] = b[4] = b[5] = 0.0f;  // the jaw moves nothing
  try {
    BlendshapeSolver s(b, 3, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.place().find("column 1"), std::string::npos) << e.place();
  }
  BlendshapeSolveOptions o;
  o.sparsity = -1;
  EXPECT_THROW(BlendshapeSolver(kSmileJawBasis, 3, 2, o), Error);
  o = {};
  o.tolerance = 0;
  EXPECT_THROW(BlendshapeSolver(kSmileJawBasis, 3, 2, o), Error);
  o = {};
  o.ridge = std::numeric_limits<double>::infinity();
  EXPECT_THROW(BlendshapeSolver(kSmileJawBasis, 3, 2, o), Error);

  BlendshapeSolver solver(kSmileJawBasis, 3, 2);
  std::vector<float> w{7, 7};
  const std::vector<float> short_d{0.1f, 0.2f}, nan_d{0.1f, nan, 0.0f}, d{0.17f, 0.2f, -0.41f};
  EXPECT_FALSE(solver.solve(short_d, w));
  EXPECT_FALSE(solver.solve(nan_d, w));
  std::vector<float> w3(3);
  EXPECT_FALSE(solver.solve(d, w3));
  EXPECT_EQ(w[0], 7.0f);
  EXPECT_EQ(w[1], 7.0f);
  std::vector<double> btd(3);
  EXPECT_FALSE(solver.project(d, btd));
  EXPECT_THROW(solve_blendshape_weights(kSmileJawBasis, 3, 2, nan_d), Error);
  EXPECT_THROW(solve_blendshape_weights(kSmileJawBasis, 3, 2, short_d), Error);
  EXPECT_TRUE(solver.solve(d, w));  // still usable after rejected input
  EXPECT_NEAR(w[0], 0.702f, 5e-4f);
}

}  // namespace
}  // namespace kinema
