// Tests of the FLIP/PIC liquid (kinema/fluid/flip.h): a pool at rest, the
// divergence left by the projection, the Martin & Moyce dam break, FLIP against
// PIC, determinism, mass and bad input.
#include "kinema/fluid/flip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kG = 9.81;

FlipOptions options_2d(int nx, int ny, double dx) {
  FlipOptions o;
  o.nx = nx;
  o.ny = ny;
  o.nz = 1;
  o.dx = dx;
  o.gravity = {0, -kG, 0};
  o.threads = 1;
  return o;
}

double max_of(std::span<const double> a) { return *std::max_element(a.begin(), a.end()); }

double kinetic_energy(const FlipLiquid& f) {  // ½ Σ |v|² per unit particle mass
  double e = 0;
  for (size_t p = 0; p < f.count(); ++p)
    e += 0.5 * (f.vx()[p] * f.vx()[p] + f.vy()[p] * f.vy()[p] + f.vz()[p] * f.vz()[p]);
  return e;
}

// A pool 12 cells deep over the whole floor of a 32 × 32 box, at rest, for 2 s
// of 1/60 s steps. Hydrostatic pressure balances gravity to the CG tolerance,
// so nothing should move.
TEST(Flip, SettledPoolStaysAtRest) {
  FlipLiquid f(options_2d(32, 32, 0.05));
  f.add_block({0, 0, 0}, {1.6, 0.6, 0}, {0, 0, 0});
  const double top0 = max_of(f.py());
  for (int s = 0; s < 120; ++s) f.step(1.0 / 60);
  const double speed = f.max_speed(), top = max_of(f.py());
  std::printf("pool: max speed %.3g m/s, surface %.6f → %.6f m\n", speed, top0, top);
  EXPECT_LT(speed, 1e-4);                 // m/s, against √(g·depth) ≈ 2.4 m/s
  EXPECT_LT(std::abs(top - top0), 0.05);  // one cell
  EXPECT_LT(std::abs(top - top0), 1e-3);
}

// The same in 3-D: a 12³ box, the pool 5 cells deep, 1 s.
TEST(Flip, SettledPoolStaysAtRest3D) {
  FlipOptions o;
  o.nx = o.ny = o.nz = 12;
  o.dx = 0.05;
  o.threads = 1;
  FlipLiquid f(o);
  f.add_block({0, 0, 0}, {0.6, 0.25, 0.6}, {0, 0, 0});
  const double top0 = max_of(f.py());
  for (int s = 0; s < 60; ++s) f.step(1.0 / 60);
  const double speed = f.max_speed(), top = max_of(f.py());
  std::printf("3-D pool: max speed %.3g m/s, surface %.6f → %.6f m, divergence %.3g 1/s\n", speed,
              top0, top, f.max_divergence());
  EXPECT_LT(speed, 1e-4);
  EXPECT_LT(std::abs(top - top0), 1e-3);
  EXPECT_LT(f.max_divergence(), 1e-3);
}

// The projection leaves max |∇·u| ≤ tolerance · max |b| / dx in the fluid
// cells; in a splashing flow (a dam break) with tolerance 1e-6 that is far
// below 1e-3 1/s (velocities ~1 m/s, dx 2.5 cm).
TEST(Flip, DivergenceAfterProjectionIsSmall) {
  FlipLiquid f(options_2d(40, 24, 0.025));
  f.add_block({0, 0, 0}, {0.4, 0.4, 0}, {0, 0, 0});
  double worst = 0;
  for (int s = 0; s < 30; ++s) {
    f.step(1.0 / 60);
    worst = std::max(worst, f.max_divergence());
    EXPECT_LE(f.last_pressure_residual(), 1e-6);
  }
  std::printf("divergence: max %.3g 1/s, last CG %d iterations, residual %.3g\n", worst,
              f.last_pressure_iterations(), f.last_pressure_residual());
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(f.max_speed(), 0.5);  // it did flow
}

// Martin & Moyce (1952), Phil. Trans. R. Soc. A 244, 312–324: the surge front Z
// = x/a against T = n·t·√(g/a) for a column of width a and height n²·a. The
// points below are the n² = 2 column (a = 2¼ in; T = t·√(2g/a)), as tabulated
// in the Lethe dam-break example (x_exp / y_exp) and, for four of them, in
// PySPH's db_exp_data.py ("n^2 = 2, a = 2.25 from Figure 3": (0.832, 1.217),
// (1.219, 1.474), (1.997, 2.292), (2.547, 2.995)); it is the column Koshizuka &
// Oka (1996) simulate (0.146 × 0.292 m). They are often quoted as the square
// column's; the sources we checked place them at n² = 2, so the simulated
// column is a wide and 2a high. Front: the largest x of any particle, measured
// from the wall behind the column.
//
// Like other inviscid simulations (Koshizuka & Oka's MPS, Colagrossi &
// Landrini's SPH), the front runs ahead of the experiment after T ≈ 0.8 — the
// experiment's column took time to be released and the floor's friction slows
// its front — here by up to 15 % (13–14 % at T = 1.2…1.8, 16 or 24 cells per a
// alike). The speed of the developed front, dZ/dT over T = 1.43…2.51, matches
// the experiment's within 10 %.
TEST(Flip, DamBreakFrontMatchesMartinMoyce) {
  struct Point {
    double t, z;
  };
  const Point data[] = {{0.41, 1.11}, {0.84, 1.22}, {1.19, 1.44}, {1.43, 1.67}, {1.63, 1.89},
                        {1.83, 2.11}, {1.98, 2.33}, {2.20, 2.56}, {2.32, 2.78}, {2.51, 3.00}};
  const double a = 0.05715;  // 2¼ in, as in the experiment (the flow is
                             // scale-free here anyway)
  const int cells = 16;      // per a
  const double dx = a / cells;
  FlipOptions o = options_2d(5 * cells, 2 * cells + 8, dx);
  FlipLiquid f(o);
  f.add_block({0, 0, 0}, {a, 2 * a, 0}, {0, 0, 0});
  const double scale = std::sqrt(2 * kG / a);  // T per second
  const double dT = 0.02;
  std::vector<double> Ts{0}, Zs{1};
  while (Ts.back() < 2.6) {
    f.step(dT / scale);
    Ts.push_back(f.time() * scale);
    Zs.push_back(max_of(f.px()) / a);
  }
  const auto front = [&](double t) {
    const size_t i = size_t(std::upper_bound(Ts.begin(), Ts.end(), t) - Ts.begin());
    const double s = (t - Ts[i - 1]) / (Ts[i] - Ts[i - 1]);
    return Zs[i - 1] + s * (Zs[i] - Zs[i - 1]);
  };
  std::printf("dam break (n² = 2, a = %d cells):\n     T   Z sim   Z exp   error\n", cells);
  for (const Point& p : data) {
    const double z = front(p.t), err = (z - p.z) / p.z;
    std::printf("  %.2f  %6.3f  %6.3f  %+5.1f%%\n", p.t, z, p.z, 100 * err);
    if (p.t >= 0.5) {
      EXPECT_LT(std::abs(err), 0.15) << "T = " << p.t;
    }
  }
  const double speed = (front(2.51) - front(1.43)) / (2.51 - 1.43);
  const double speed_exp = (3.00 - 1.67) / (2.51 - 1.43);
  std::printf("front speed dZ/dT over T = 1.43…2.51: %.3f (experiment %.3f)\n", speed, speed_exp);
  EXPECT_LT(std::abs(speed / speed_exp - 1), 0.10);
}

// The same dam break with flip_ratio 0.95 and 0 (PIC): PIC's averaging damps
// the flow, so after 1 s FLIP keeps more kinetic energy.
TEST(Flip, FlipKeepsMoreEnergyThanPic) {
  double energy[2];
  for (int run = 0; run < 2; ++run) {
    FlipOptions o = options_2d(32, 24, 0.05);
    o.flip_ratio = run == 0 ? 0.95 : 0.0;
    FlipLiquid f(o);
    f.add_block({0, 0, 0}, {0.6, 0.8, 0}, {0, 0, 0});
    for (int s = 0; s < 60; ++s) f.step(1.0 / 60);
    energy[run] = kinetic_energy(f) / double(f.count());
  }
  std::printf("kinetic energy per particle after 1 s: FLIP %.4f, PIC %.4f J/kg\n", energy[0],
              energy[1]);
  EXPECT_GT(energy[0], 1.2 * energy[1]);
}

// 1 and 2 threads give the same bits (3-D, a solid sphere in the way).
TEST(Flip, DeterministicAcrossThreadCounts) {
  std::vector<double> runs[2];
  for (int t = 0; t < 2; ++t) {
    FlipOptions o;
    o.nx = o.ny = o.nz = 16;
    o.dx = 0.05;
    o.threads = t + 1;
    o.solids.push_back(FlipSolid::sphere({0.5, 0.15, 0.4}, 0.1));
    FlipLiquid f(o);
    f.add_block({0, 0, 0}, {0.3, 0.6, 0.8}, {0.5, 0, 0});
    for (int s = 0; s < 6; ++s) f.step(1.0 / 30);
    for (auto span : {f.px(), f.py(), f.pz(), f.vx(), f.vy(), f.vz(), f.u(), f.v(), f.w()})
      runs[t].insert(runs[t].end(), span.begin(), span.end());
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  EXPECT_TRUE(runs[0] == runs[1]);
}

// Particles are neither made nor lost, stay inside the domain and out of the
// obstacle, and the liquid's volume (cells holding particles) stays within −10
// %…+40 % of the start: a column collapsing onto a box, 2 s.
TEST(Flip, MassIsKeptAndParticlesStayInside) {
  FlipOptions o = options_2d(48, 32, 0.025);
  o.solids.push_back(FlipSolid::box({0.8, 0.1, 0}, {0.1, 0.1, 1}));
  FlipLiquid f(o);
  const size_t n = f.add_block({0, 0, 0}, {0.4, 0.5, 0}, {0, 0, 0});
  const size_t cells0 = f.occupied_cells();
  EXPECT_EQ(n, size_t(16 * 20 * 4));
  size_t lo = cells0, hi = cells0;
  for (int s = 0; s < 120; ++s) {
    f.step(1.0 / 60);
    ASSERT_EQ(f.count(), n);
    const size_t c = f.occupied_cells();
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  std::printf("volume: %zu cells at start, %zu…%zu during\n", cells0, lo, hi);
  EXPECT_GE(double(lo), 0.9 * cells0);
  EXPECT_LE(double(hi), 1.4 * cells0);
  for (size_t p = 0; p < f.count(); ++p) {
    EXPECT_GT(f.px()[p], 0);
    EXPECT_LT(f.px()[p], 48 * 0.025);
    EXPECT_GT(f.py()[p], 0);
    EXPECT_LT(f.py()[p], 32 * 0.025);
    EXPECT_GE(o.solids[0].distance({f.px()[p], f.py()[p], f.pz()[p]}), 0);
  }
}

TEST(Flip, BadInputThrows) {
  const auto bad = [](auto edit) {
    FlipOptions o = options_2d(8, 8, 0.1);
    edit(o);
    EXPECT_THROW(FlipLiquid{o}, Error);
  };
  bad([](FlipOptions& o) { o.nx = 0; });
  bad([](FlipOptions& o) { o.ny = 1025; });
  bad([](FlipOptions& o) { o.dx = 0; });
  bad([](FlipOptions& o) { o.dx = NAN; });
  bad([](FlipOptions& o) { o.pressure_tolerance = -1; });
  bad([](FlipOptions& o) { o.pressure_tolerance = INFINITY; });
  bad([](FlipOptions& o) { o.flip_ratio = 1.5; });
  bad([](FlipOptions& o) { o.flip_ratio = -0.1; });
  bad([](FlipOptions& o) { o.cfl = 0; });
  bad([](FlipOptions& o) { o.gravity.y = NAN; });
  bad([](FlipOptions& o) { o.solids.push_back(FlipSolid::sphere({0, 0, 0}, -1)); });
  FlipLiquid f(options_2d(8, 8, 0.1));
  EXPECT_THROW(f.add_block({-0.1, 0, 0}, {0.5, 0.5, 0}, {0, 0, 0}),
               Error);  // outside
  EXPECT_THROW(f.add_block({0, 0, 0}, {0.9, 0.5, 0}, {0, 0, 0}),
               Error);  // outside
  EXPECT_THROW(f.add_block({0.5, 0, 0}, {0.2, 0.5, 0}, {0, 0, 0}),
               Error);  // empty
  EXPECT_THROW(f.add_block({0, 0, 0}, {0.5, 0.5, 0}, {NAN, 0, 0}), Error);
  EXPECT_THROW(f.add_block({0, 0, 0}, {0.5, 0.5, 0}, {0, INFINITY, 0}), Error);
  EXPECT_THROW(f.step(0), Error);
  EXPECT_THROW(f.step(-1), Error);
  EXPECT_THROW(f.step(NAN), Error);
  try {
    f.step(0);
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "flip");
    EXPECT_EQ(e.place(), "dt");
  }
  EXPECT_EQ(f.count(), 0u);
}

}  // namespace
}  // namespace kinema
