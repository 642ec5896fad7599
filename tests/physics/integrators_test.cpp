// Integrators on the worked examples: the falling ball (explicit, semi-implicit, Verlet), the
// spring listing's printed rows, RK4 at 20 s, the stiff spring exploding, implicit Euler's damping,
// the stability limit and critical damping, Hooke's spring with a damper; then properties.
#include "kinema/physics/integrators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "kinema/core/error.h"
#include "kinema/physics/spring.h"

namespace kinema {
namespace {

const AccelerationFn kGravity = [](double, std::span<const double>, std::span<const double>,
                                   std::span<double> a) { a[0] = -9.8; };

/// m x'' = −k x, one degree of freedom.
AccelerationFn spring(double k, double m) {
  return [k, m](double, std::span<const double> x, std::span<const double>, std::span<double> a) {
    a[0] = -k / m * x[0];
  };
}

double spring_energy(const SecondOrderState& s, double k = 1, double m = 1) {
  return 0.5 * m * s.v[0] * s.v[0] + 0.5 * k * s.x[0] * s.x[0];
}

TEST(Integrators, FallingBallExplicitEulerIsTooHighBy0147AtPoint3Seconds) {
  SecondOrderState s{{10}, {0}, 0};
  step_explicit_euler(s, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 10, 1e-12);
  EXPECT_NEAR(s.v[0], -0.98, 1e-12);
  step_explicit_euler(s, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 9.902, 1e-12);
  EXPECT_NEAR(s.v[0], -1.96, 1e-12);
  step_explicit_euler(s, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 9.706, 1e-12);
  EXPECT_NEAR(s.v[0], -2.94, 1e-12);
  EXPECT_NEAR(s.x[0] - (10 - 4.9 * 0.09), 0.147, 1e-12);
}

TEST(Integrators, FallingBallSemiImplicitEulerIsTooLowBy0147) {
  SecondOrderState s{{10}, {0}, 0};
  const double expected_y[] = {9.902, 9.706, 9.412}, expected_v[] = {-0.98, -1.96, -2.94};
  for (int i = 0; i < 3; ++i) {
    step_semi_implicit_euler(s, 0.1, kGravity);
    EXPECT_NEAR(s.x[0], expected_y[i], 1e-12) << i;
    EXPECT_NEAR(s.v[0], expected_v[i], 1e-12) << i;
  }
  EXPECT_NEAR((10 - 4.9 * 0.09) - s.x[0], 0.147, 1e-12);
  EXPECT_NEAR(s.t, 0.3, 1e-15);
}

TEST(Integrators, FallingBallVerletWithItsStartUpStepIsExact) {
  const SecondOrderState s0{{10}, {0}, 0};
  VerletState s = start_verlet(s0, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 9.951, 1e-12);
  step_verlet(s, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 9.804, 1e-12);
  step_verlet(s, 0.1, kGravity);
  EXPECT_NEAR(s.x[0], 9.559, 1e-12);
  EXPECT_NEAR(s.x[0], 10 - 4.9 * s.t * s.t, 1e-12);             // exact under constant acceleration
  EXPECT_NEAR(verlet_velocity(s, 0.1)[0], -9.8 * 0.25, 1e-12);  // the mid-step velocity
}

/// The spring listing's table: explicit and semi-implicit Euler, h = 0.1, printed as it prints.
std::string spring_table() {
  SecondOrderState e{{1}, {0}, 0}, si{{1}, {0}, 0};
  const AccelerationFn a = spring(1, 1);
  std::string out;
  char line[96];
  std::snprintf(line, sizeof line, "%4s  %10s  %8s  %10s  %8s\n", "step", "explicit x", "E",
                "semi x", "E");
  out += line;
  for (int n = 0; n <= 200; ++n) {
    if (n <= 3 || n % 50 == 0) {
      std::snprintf(line, sizeof line, "%4d  %10.6f  %8.5f  %10.6f  %8.5f\n", n, e.x[0],
                    spring_energy(e), si.x[0], spring_energy(si));
      out += line;
    }
    step_explicit_euler(e, 0.1, a);
    step_semi_implicit_euler(si, 0.1, a);
  }
  return out;
}

TEST(Integrators, SpringListingPrintsItsRowsExactly) {
  EXPECT_EQ(spring_table(),
            "step  explicit x         E      semi x         E\n"
            "   0    1.000000   0.50000    1.000000   0.50000\n"
            "   1    1.000000   0.50500    0.990000   0.49505\n"
            "   2    0.990000   0.51005    0.970100   0.49035\n"
            "   3    0.970000   0.51515    0.940499   0.48608\n"
            "  50    0.343355   0.82232    0.333638   0.51601\n"
            " 100   -1.408847   1.35241   -0.809385   0.47781\n"
            " 150   -1.532160   2.22421   -0.796058   0.52573\n"
            " 200    1.264886   3.65801    0.354578   0.48373\n");
}

TEST(Integrators, ExplicitEulerGainsExactlyOnePercentEnergyPerStepOnTheUnitSpring) {
  SecondOrderState s{{1}, {0}, 0};
  const double table_x[] = {1, 1, 0.99, 0.97}, table_v[] = {0, -0.1, -0.2, -0.299},
               table_e[] = {0.5, 0.505, 0.51005, 0.5151505};
  for (int n = 0; n <= 200; ++n) {
    if (n <= 3) {
      EXPECT_NEAR(s.x[0], table_x[n], 1e-12) << n;
      EXPECT_NEAR(s.v[0], table_v[n], 1e-12) << n;
      EXPECT_NEAR(spring_energy(s), table_e[n], 1e-12) << n;
    }
    if (n == 200) {
      EXPECT_NEAR(spring_energy(s) / 0.5, std::pow(1.01, 200), 1e-9);  // ≈ 7.32
    }
    step_explicit_euler(s, 0.1, spring(1, 1));
  }
  EXPECT_NEAR(std::pow(1.01, 200), 7.32, 0.005);
}

TEST(Integrators, SemiImplicitEnergyStaysBetween0476And0526) {
  SecondOrderState s{{1}, {0}, 0};
  double lo = 1, hi = 0;
  for (int n = 0; n < 100000; ++n) {
    lo = std::min(lo, spring_energy(s));
    hi = std::max(hi, spring_energy(s));
    step_semi_implicit_euler(s, 0.1, spring(1, 1));
  }
  EXPECT_NEAR(lo, 0.476, 0.0005);  // E0 / (1 + hω/2)
  EXPECT_NEAR(hi, 0.526, 0.0005);  // E0 / (1 − hω/2)
}

TEST(Integrators, Rk4ReachesCos20WithEnergy04999986) {
  SecondOrderState s{{1}, {0}, 0};
  for (int n = 0; n < 200; ++n) step_rk4(s, 0.1, spring(1, 1));
  char text[64];
  std::snprintf(text, sizeof text, "%.6f %.7f", s.x[0], spring_energy(s));
  EXPECT_EQ(std::string(text), "0.408097 0.4999986");
  EXPECT_NEAR(std::cos(20.0), 0.408082, 5e-7);
}

TEST(Integrators, Rk4ErrorFallsSixteenfoldAndMidpointFourfoldWhenTheStepHalves) {
  auto error_at_2s = [](double h, auto stepper) {
    SecondOrderState s{{1}, {0}, 0};
    for (int n = 0; n < int(std::lround(2 / h)); ++n) stepper(s, h, spring(1, 1));
    return std::abs(s.x[0] - std::cos(2.0));
  };
  const double rk4 = error_at_2s(0.1, step_rk4) / error_at_2s(0.05, step_rk4);
  const double mid = error_at_2s(0.1, step_midpoint) / error_at_2s(0.05, step_midpoint);
  EXPECT_NEAR(rk4, 16, 1.0);
  EXPECT_NEAR(mid, 4, 0.5);
}

TEST(Integrators, StiffSpringSemiImplicitExplodesPastTheLimit) {
  // k = 100, m = 1: ω = 10; at h = 0.25, hω = 2.5 > 2.
  SecondOrderState s{{1}, {0}, 0};
  std::string xs;
  for (int n = 0; n < 4; ++n) {
    char text[16];
    std::snprintf(text, sizeof text, n ? ", %.3g" : "%.3g", s.x[0]);
    xs += text;
    step_semi_implicit_euler(s, 0.25, spring(100, 1));
  }
  EXPECT_EQ(xs, "1, -5.25, 21.3, -85.3");  // 21.3125 and −85.328
  EXPECT_NEAR(semi_implicit_step_limit(100, 1), 0.2, 1e-15);
  // Explicit Euler at h = 0.1 (hω = 1) doubles the energy every step: ×1024 after 10 steps.
  SecondOrderState e{{1}, {0}, 0};
  for (int n = 0; n < 10; ++n) step_explicit_euler(e, 0.1, spring(100, 1));
  EXPECT_NEAR(spring_energy(e, 100) / 50, 1024, 1e-9);
}

TEST(Integrators, ImplicitEulerKeeps14PercentOfTheEnergyAfter20Seconds) {
  const StiffnessEntry k[] = {{0, 0, 1.0}};
  ImplicitSpringSystem system({1.0}, k);
  SecondOrderState s{{1}, {0}, 0};
  double previous = spring_energy(s);
  for (int n = 0; n < 200; ++n) {
    system.step(s, 0.1);
    const double e = spring_energy(s);
    EXPECT_NEAR(e / previous, 1 / 1.01, 1e-12) << n;  // 1/(1 + h²ω²) per step
    previous = e;
  }
  EXPECT_NEAR(spring_energy(s) / 0.5, std::pow(1.01, -200), 1e-12);
  EXPECT_NEAR(spring_energy(s) / 0.5, 0.14, 0.005);
}

TEST(Integrators, ImplicitEulerIsStableOnAStiffChainAtAnyStep) {
  // A chain of 50 unit masses joined by k = 1e6 springs, pinned by a spring to the origin: the
  // fastest mode needs h < 1 ms explicitly; implicit Euler at h = 0.1 s only loses energy.
  const int n = 50;
  std::vector<StiffnessEntry> k;
  auto add_spring = [&](int i, int j, double stiffness) {
    k.push_back({i, i, stiffness});
    if (j >= 0) k.insert(k.end(), {{j, j, stiffness}, {i, j, -stiffness}, {j, i, -stiffness}});
  };
  add_spring(0, -1, 1e6);
  for (int i = 1; i < n; ++i) add_spring(i, i - 1, 1e6);
  ImplicitSpringSystem system(std::vector<double>(n, 1.0), k);
  SecondOrderState s{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), 0};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  for (double& x : s.x) x = u(rng);
  auto energy = [&] {
    const std::vector<double> kx = system.stiffness_times(s.x);
    double e = 0;
    for (int i = 0; i < n; ++i)
      e += 0.5 * s.v[size_t(i)] * s.v[size_t(i)] + 0.5 * s.x[size_t(i)] * kx[size_t(i)];
    return e;
  };
  double previous = energy();
  for (int step = 0; step < 100; ++step) {
    system.step(s, 0.1);
    const double e = energy();
    EXPECT_LE(e, previous * (1 + 1e-12)) << step;
    previous = e;
  }
}

TEST(Integrators, StabilityLimitCriticalDampingAndSubsteps) {
  EXPECT_NEAR(critical_damping(1, 1), 2, 1e-15);
  EXPECT_NEAR(semi_implicit_step_limit(1, 1), 2, 1e-15);  // T/π = 2π/π
  // Cloth: a 10 g particle on k = 50 N/m needs h < 0.028 s (60 Hz is fine); k = 500: h < 0.0089 s,
  // two substeps a 60 Hz frame.
  EXPECT_NEAR(std::sqrt(50 / 0.01), 70.7, 0.05);
  EXPECT_NEAR(semi_implicit_step_limit(50, 0.01), 0.028, 0.0005);
  EXPECT_EQ(stable_substeps(1 / 60.0, 50, 0.01), 1);
  EXPECT_NEAR(std::sqrt(500 / 0.01), 224, 0.5);
  EXPECT_NEAR(semi_implicit_step_limit(500, 0.01), 0.0089, 0.00005);
  EXPECT_EQ(stable_substeps(1 / 60.0, 500, 0.01), 2);
  EXPECT_THROW(semi_implicit_step_limit(0, 1), Error);
  EXPECT_THROW(stable_substeps(-1, 1, 1), Error);
}

TEST(Integrators, CriticallyDampedSpringReturnsWithoutOvershooting) {
  auto min_x = [](double c) {
    SecondOrderState s{{1}, {0}, 0};
    const AccelerationFn a = [c](double, std::span<const double> x, std::span<const double> v,
                                 std::span<double> out) { out[0] = -x[0] - c * v[0]; };
    double lowest = 1;
    for (int n = 0; n < 2000; ++n) {
      step_rk4(s, 0.01, a);
      lowest = std::min(lowest, s.x[0]);
    }
    return lowest;
  };
  EXPECT_GE(min_x(critical_damping(1, 1)), 0);        // never crosses rest
  EXPECT_LT(min_x(0.5 * critical_damping(1, 1)), 0);  // under-damped: overshoots
}

TEST(Integrators, SemiImplicitEnergyStaysBoundedOver10000StepsBelowTheLimit) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 1000);
  for (int trial = 0; trial < 20; ++trial) {
    const double k = u(rng), m = u(rng) / 100;
    const double h = 0.9 * semi_implicit_step_limit(k, m);
    SecondOrderState s{{1}, {0}, 0};
    double hi = 0;
    for (int n = 0; n < 10000; ++n) {
      step_semi_implicit_euler(s, h, spring(k, m));
      hi = std::max(hi, spring_energy(s, k, m));
    }
    // Semi-implicit Euler conserves y² − hω·y·v + v² (y = ωx), so the energy from rest stays
    // within E0 / (1 − hω/2): 0.476–0.526 for the unit spring at h = 0.1, 10·E0 at hω = 1.8.
    const double omega = std::sqrt(k / m);
    EXPECT_LT(hi, 0.5 * k / (1 - h * omega / 2) * (1 + 1e-9)) << "k " << k << " m " << m;
  }
}

TEST(Integrators, ImplicitSystemRefusesBadInput) {
  const StiffnessEntry k[] = {{0, 0, 1.0}};
  EXPECT_THROW(ImplicitSpringSystem({0.0}, k), Error);
  EXPECT_THROW(ImplicitSpringSystem({std::numeric_limits<double>::quiet_NaN()}, k), Error);
  const StiffnessEntry outside[] = {{0, 3, 1.0}};
  EXPECT_THROW(ImplicitSpringSystem({1.0}, outside), Error);
  EXPECT_THROW(ImplicitSpringSystem({1.0}, k, {1.0, 2.0}), Error);
  ImplicitSpringSystem system({1.0}, k);
  SecondOrderState wrong{{1, 2}, {0, 0}, 0};
  EXPECT_THROW(system.step(wrong, 0.1), Error);
  SecondOrderState s{{1}, {0}, 0};
  EXPECT_THROW(system.step(s, 0), Error);
}

TEST(Spring, HookeWithDamperGivesTheWorkedForce) {
  // A at (0, 0), B at (3, 4), L0 = 4, k = 50: stretched by 1 m, 50 N towards each other.
  const Vec3 a{0, 0, 0}, b{3, 4, 0};
  const Vec3 f = spring_force_on_a(a, b, {0, 0, 0}, {0, 0, 0}, 4, 50, 0);
  EXPECT_NEAR(f.x, 30, 1e-12);
  EXPECT_NEAR(f.y, 40, 1e-12);
  // B moving away at (1, 2) m/s, c = 2: stretching at 2.2 m/s adds (2.64, 3.52).
  const Vec3 damped = spring_force_on_a(a, b, {0, 0, 0}, {1, 2, 0}, 4, 50, 2);
  EXPECT_NEAR(damped.x, 32.64, 1e-12);
  EXPECT_NEAR(damped.y, 43.52, 1e-12);
  const Vec3 on_b = spring_force_on_a(b, a, {1, 2, 0}, {0, 0, 0}, 4, 50, 2);
  EXPECT_NEAR(on_b.x, -32.64, 1e-12);  // equal and opposite
  EXPECT_NEAR(on_b.y, -43.52, 1e-12);
  const Vec3 none = spring_force_on_a(a, a, {0, 0, 0}, {1, 0, 0}, 1, 50, 2);
  EXPECT_EQ(none, (Vec3{0, 0, 0}));
}

}  // namespace
}  // namespace kinema
