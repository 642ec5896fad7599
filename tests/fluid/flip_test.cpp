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
  std::printf(
      "3-D pool: max speed %.3g m/s, surface %.6f → %.6f m, divergence "
      "%.3g 1/s\n",
      speed, top0, top, f.max_divergence());
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

// Martin & Moyce (1952), Phil. Trans. R. Soc. A 244, 312–324, Fig. 3: the surge
// front Z = x/a of a column of width a and height 2a (n² = 2) against T =
// n·t·√(g/a) = t·√(2g/a). The points, the front and the tank are those of the
// SPH test (sph_test.cpp): the a = 2¼ in series as digitised in PySPH's
// db_exp_data.py ("n^2 = 2, a = 2.25 from Figure 3"), T ≤ 2.6; the front is the
// largest x of any particle plus half the particle spacing (the particle's own
// extent), from the wall behind the column, so Z = 1 at T = 0, interpolated
// linearly between steps; a tank 4a wide and 3a high.
struct DamBreakFront {
  std::vector<double> T{0}, Z{1};
  double at(double t) const {  // Z at T = t, linear between samples
    const size_t i = size_t(std::upper_bound(T.begin(), T.end(), t) - T.begin());
    const double s = (t - T[i - 1]) / (T[i] - T[i - 1]);
    return Z[i - 1] + s * (Z[i] - Z[i - 1]);
  }
};

// The front of the n² = 2 column with `cells` cells per a, every ΔT = 0.02 up to
// T = 2.6. a = 2¼ in as in the experiment (the inviscid flow is scale-free).
DamBreakFront dam_break_front(int cells) {
  const double a = 0.05715;
  const double dx = a / cells;
  FlipLiquid f(options_2d(4 * cells, 3 * cells, dx));
  f.add_block({0, 0, 0}, {a, 2 * a, 0}, {0, 0, 0});
  const double scale = std::sqrt(2 * kG / a);  // T per second
  const double half = 0.5 * dx / f.options().particles_per_axis;
  DamBreakFront r;
  while (r.T.back() < 2.6) {
    f.step(0.02 / scale);
    r.T.push_back(f.time() * scale);
    r.Z.push_back((max_of(f.px()) + half) / a);
  }
  return r;
}

constexpr double kMoyceT[] = {0.832, 1.219, 1.997, 2.547};
constexpr double kMoyceZ[] = {1.217, 1.474, 2.292, 2.995};

// At 8 cells per a the front is within 10 % of every point (+1.9…+5.9 %). That
// match is partly the coarse grid's damping of the first collapse: the
// inviscid solution converges to a front 14–20 % ahead at 16–48 cells per a,
// the lead all built up before T ≈ 1.2, as if the experiment's column took
// ΔT ≈ 0.2–0.3 to be released (the Lethe example shifts its simulated T by
// 0.175; printed below, not checked). What depends neither on the clock nor on
// the grid, the speed of the developed front between the last two points, is
// checked on the finer grid: +8 % at 8–48 cells.
TEST(Flip, DamBreakFrontWithinTenPercentOfMartinMoyce) {
  const DamBreakFront coarse = dam_break_front(8);
  std::printf("dam break (n² = 2), a = 8 cells:\n     T   Z sim   Z exp   error\n");
  for (int i = 0; i < 4; ++i) {
    const double z = coarse.at(kMoyceT[i]);
    std::printf("  %.3f  %6.3f  %6.3f  %+5.1f%%\n", kMoyceT[i], z, kMoyceZ[i],
                100 * (z / kMoyceZ[i] - 1));
    EXPECT_NEAR(z / kMoyceZ[i], 1, 0.10) << "T = " << kMoyceT[i];
  }
  const DamBreakFront fine = dam_break_front(16);
  std::printf("a = 16 cells: error");
  for (int i = 0; i < 4; ++i)
    std::printf(" %+5.1f%%", 100 * (fine.at(kMoyceT[i]) / kMoyceZ[i] - 1));
  std::printf("; with T shifted by 0.175:");
  for (int i = 0; i < 4; ++i)
    std::printf(" %+5.1f%%", 100 * (fine.at(kMoyceT[i] - 0.175) / kMoyceZ[i] - 1));
  const double speed = (fine.at(kMoyceT[3]) - fine.at(kMoyceT[2])) / (kMoyceT[3] - kMoyceT[2]);
  const double speed_exp = (kMoyceZ[3] - kMoyceZ[2]) / (kMoyceT[3] - kMoyceT[2]);
  std::printf("\nfront speed dZ/dT over T = %.3f…%.3f: %.3f (experiment %.3f)\n", kMoyceT[2],
              kMoyceT[3], speed, speed_exp);
  EXPECT_NEAR(speed / speed_exp, 1, 0.10);
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
