// Cloth steps: a 64 × 64 flag, 1 m square, pinned at its two top corners in a 3 m/s wind, and the
// same cloth dropped 0.3 m onto a 0.4 m sphere. Time per 60 Hz step and, as counters, the largest
// stretch of a structural (grid-neighbour) spring at the end, in percent, and its median and
// largest over 300 more steps (untimed), and the largest over those steps of two more runs with
// the wind or the sphere perturbed (cloth_bench.h). kinema's XPBD solver
// with inextensible structural constraints and tethers runs at two settings: 8 substeps of one
// sweep (fast) and 16 substeps of two sweeps (stiff); implicit Euler with 10⁵ N/m structural
// springs and at most 20 conjugate-gradient iterations a step (to a 10⁻³ residual), preconditioned
// by multigrid or by block Jacobi (bend springs in the solve or as explicit forces); block Jacobi
// at 10 iterations with a 0.3 % strain limit (8 sweeps, and 32 sweeps over-relaxed by 1.8);
// multigrid at 4 iterations, and at 3 with slack springs keeping 3·10⁻⁴ of their stiffness across
// them in the system. With -DKINEMA_BULLET_ROOT… (see bench/CMakeLists.txt) Bullet's btSoftBody
// runs the same scenes with 10 position iterations (bench/peers/bullet_cloth_peer.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "cloth_bench.h"
#include "kinema/physics/cloth.h"

namespace kinema {
namespace {

using namespace cloth_bench;

enum Scene { kFlag = 0, kSphere = 1 };
enum Setting {
  kXpbdFast = 0,
  kXpbdStiff = 1,
  kImplicit = 2,
  kImplicitJacobi = 3,
  kImplicitJacobiExplicitBend = 4,
  kImplicitJacobiLimited = 5,
  kImplicitFewMultigrid = 6,
  kImplicitMultigridSlack = 7,
  kImplicitJacobiRelaxedLimit = 8
};

// `perturbation`: −1, 0 or +1 times the wind's or the sphere's perturbation (cloth_bench.h).
Cloth make_cloth(Scene scene, Setting setting, int threads, double perturbation = 0) {
  ClothOptions o;
  o.threads = threads;
  o.material.mass_per_area = kMass / (kSize * kSize);
  if (setting >= kImplicit) {
    // Stiff springs, a game's budget of conjugate-gradient iterations.
    o.solver = ClothSolver::ImplicitEuler;
    const bool multigrid = setting == kImplicit || setting == kImplicitFewMultigrid ||
                           setting == kImplicitMultigridSlack;
    o.preconditioner =
        multigrid ? ClothPreconditioner::Multigrid : ClothPreconditioner::BlockJacobi;
    o.material.stretch_stiffness = 1e5;
    o.material.shear_stiffness = 2e4;
    const bool limited =
        setting == kImplicitJacobiLimited || setting == kImplicitJacobiRelaxedLimit;
    o.cg_max_iterations = limited                              ? 10
                          : setting == kImplicitFewMultigrid   ? 4
                          : setting == kImplicitMultigridSlack ? 3
                                                               : 20;
    o.cg_tolerance = 1e-3;
    o.implicit_bend = setting == kImplicit || setting == kImplicitJacobi;
    // The loose solve trimmed by a strain limit of 0.3 % (8 sweeps, with the tethers), or by
    // 32 sweeps over-relaxed by 1.8.
    if (limited) o.strain_limit = 0.003;
    if (setting == kImplicitJacobiRelaxedLimit) {
      o.strain_limit_passes = 32;
      o.strain_limit_relaxation = 1.8;
    }
    // Slack springs keep 3·10⁻⁴ of their stiffness across them in the system.
    if (setting == kImplicitMultigridSlack) o.slack_stiffness = 3e-4;
  } else {
    o.solver = ClothSolver::Xpbd;
    o.material.stretch_stiffness = std::numeric_limits<double>::infinity();
    o.substeps = setting == kXpbdFast ? 8 : 16;
    o.iterations = setting == kXpbdFast ? 1 : 2;
  }
  if (scene == kFlag) {
    o.pinned = {0, kResolution - 1};
    o.wind = {0, 0, kWind + perturbation * kWindPerturbation};
    return Cloth(make_grid_cloth(kResolution, kResolution, kSize, kSize, {0, kSize, 0}, {1, 0, 0},
                                 {0, -1, 0}),
                 o);
  }
  o.colliders = {Collider{ColliderShape::Sphere,
                          {kSize / 2 + perturbation * kSpherePerturbation, 0, kSize / 2},
                          {},
                          {0, 1, 0},
                          kSphereRadius}};
  return Cloth(make_grid_cloth(kResolution, kResolution, kSize, kSize, {0, kDropHeight, 0},
                               {1, 0, 0}, {0, 0, 1}),
               o);
}

void BM_KinemaCloth(benchmark::State& state) {
  Cloth cloth = make_cloth(Scene(state.range(0)), Setting(state.range(1)), int(state.range(2)));
  for (int i = 0; i < kSettleSteps; ++i) cloth.step(kStep);
  long cg_iterations = 0, steps = 0;
  double cg_residual = 0;
  for (auto _ : state) {
    const ClothStepStats stats = cloth.step(kStep);
    cg_iterations += stats.cg_iterations;
    cg_residual = stats.cg_residual;
    ++steps;
  }
  state.counters["stretch_pct"] = 100 * cloth.largest_stretch();
  const StretchOverRun run =
      stretch_over_run([&] { cloth.step(kStep); }, [&] { return cloth.largest_stretch(); });
  state.counters["stretch_median_pct"] = run.median_pct;
  state.counters["stretch_max_pct"] = run.largest_pct;
  state.counters["stretch_max_of_3_pct"] = largest_over_perturbed_runs(
      run.largest_pct,
      [&](double sign) {
        return std::make_unique<Cloth>(
            make_cloth(Scene(state.range(0)), Setting(state.range(1)), int(state.range(2)), sign));
      },
      [](Cloth& c) { c.step(kStep); }, [](const Cloth& c) { return c.largest_stretch(); });
  if (Setting(state.range(1)) >= kImplicit) {
    // How far the solve got: iterations a step, and the last step's relative residual (%).
    state.counters["cg_iterations"] = double(cg_iterations) / double(std::max(1L, steps));
    state.counters["cg_residual_pct"] = 100 * cg_residual;
  }
}
// Scene (0 flag, 1 sphere), setting (0 XPBD 8×1, 1 XPBD 16×2, 2 implicit ≤ 20 CG with multigrid,
// 3 the same with block Jacobi, 4 block Jacobi with the bend springs as explicit forces, 5 block
// Jacobi with explicit bend, ≤ 10 CG iterations and a 0.3 % strain limit, 6 multigrid with
// explicit bend and ≤ 4 CG iterations, 7 the same at ≤ 3 iterations with slack_stiffness 3·10⁻⁴,
// 8 the same as 5 with 32 sweeps over-relaxed by 1.8), threads.
BENCHMARK(BM_KinemaCloth)
    ->ArgNames({"scene", "setting", "threads"})
    ->Args({kFlag, kXpbdFast, 1})
    ->Args({kFlag, kXpbdStiff, 1})
    ->Args({kFlag, kImplicit, 1})
    ->Args({kFlag, kImplicitJacobi, 1})
    ->Args({kFlag, kImplicitJacobiExplicitBend, 1})
    ->Args({kFlag, kImplicitJacobiLimited, 1})
    ->Args({kFlag, kImplicitFewMultigrid, 1})
    ->Args({kFlag, kImplicitMultigridSlack, 1})
    ->Args({kFlag, kImplicitJacobiRelaxedLimit, 1})
    ->Args({kFlag, kXpbdFast, 2})
    ->Args({kSphere, kXpbdFast, 1})
    ->Args({kSphere, kXpbdStiff, 1})
    ->Args({kSphere, kImplicit, 1})
    ->Args({kSphere, kImplicitJacobi, 1})
    ->Args({kSphere, kImplicitJacobiExplicitBend, 1})
    ->Args({kSphere, kImplicitJacobiLimited, 1})
    ->Args({kSphere, kImplicitFewMultigrid, 1})
    ->Args({kSphere, kImplicitMultigridSlack, 1})
    ->Args({kSphere, kImplicitJacobiRelaxedLimit, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema
BENCHMARK_MAIN();
