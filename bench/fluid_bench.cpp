// kinema_fluid_bench — the fluid module's benchmarks (kinema/fluid/*.h, docs/fluid.md; the
// figures and the commands that reproduce them are in BENCHMARKS.md, "Fluids"): SPH, grid smoke,
// FLIP and surfaces, each section below with its own note.
#include <benchmark/benchmark.h>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kinema/fluid/flip.h"
#include "kinema/fluid/grid_fluid.h"
#include "kinema/fluid/marching_cubes.h"
#include "kinema/fluid/sph.h"

// Benchmark for kinema/fluid/sph.h: a 3D block of water collapsing in a tank of
// boundary particles (two layers), weakly compressible solver, one thread.
// items_processed counts particle-substeps (particles × substeps actually
// taken).
//
// Memory traffic, a rough estimate per particle-substep (doubles, h = 2Δx, ~33
// neighbours of 27 cells × ~8 candidates): the counting sort reads and writes
// the 6 position/velocity arrays and the ids (≈ 2 × 52 B) plus a key (4 B) and
// the cell table; the neighbour lists are written once (≈ 33 × 4 B = 132 B,
// plus the fluid–boundary list) and read twice (density, forces); density reads
// positions and writes ρ, p (16 B); forces read positions, velocities, ρ, p of
// the neighbours (mostly from cache, thanks to the sort) and write a (24 B);
// integration reads and writes x, v, a (≈ 96 B). Altogether about 0.7–0.9 KB of
// DRAM-level traffic per particle- substep; the neighbour-candidate scans touch
// ≈ 5 KB more, served from L1/L2.
namespace {

using kinema::SphFluid;
using kinema::SphOptions;

// An nx × ny × nz block at spacing 1 cm in the corner of a tank twice as long.
SphFluid make_collapse(int nx, int ny, int nz) {
  const double dx = 0.01;
  const double lx = 2.5 * nx * dx, ly = 1.2 * ny * dx, lz = nz * dx;
  SphOptions o;
  o.dimensions = 3;
  o.spacing = dx;
  o.domain_min = {-0.05, -0.05, -0.05};
  o.domain_max = {lx + 0.05, ly + 0.05, lz + 0.05};
  o.fluid_height = ny * dx;
  o.artificial_viscosity = 0.1;
  o.threads = 1;
  SphFluid f(o);
  f.add_block({0, 0, 0}, {nx * dx, ny * dx, nz * dx});
  f.set_boundary_particles(kinema::sph_box_boundary({0, 0, 0}, {lx, ly, lz}, dx, 2, 3));
  return f;
}

void BM_SphDamBreak3D(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  SphFluid f = n == 10    ? make_collapse(20, 25, 20)
               : n == 100 ? make_collapse(40, 50, 50)
                          : make_collapse(100, 100, 100);
  f.step(0.005);  // past the first substeps
  long substeps = 0;
  for (auto _ : state) {
    substeps += f.step(0.0005);
    benchmark::DoNotOptimize(f.px().data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(f.count()) * substeps);
  state.counters["particles"] = static_cast<double>(f.count());
  state.counters["substeps_per_iteration"] =
      static_cast<double>(substeps) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SphDamBreak3D)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// This machine's memory bandwidth, in the same process as the solvers: memcpy of a buffer far
// larger than the caches (256 MiB), bytes read + written per second — the yardstick the fluid
// figures are held against in BENCHMARKS.md.
void BM_MemoryCopy256MiB(benchmark::State& state) {
  const size_t bytes = size_t(256) << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * int64_t(2 * bytes));
}
BENCHMARK(BM_MemoryCopy256MiB)->Unit(benchmark::kMillisecond);

}  // namespace

// Benchmark of the MAC-grid smoke solver (kinema/fluid/grid_fluid.h): a smoke
// plume rising from a spherical inflow in a unit cube (walls, open top),
// MacCormack advection, buoyancy, vorticity confinement, MIC(0)-PCG pressure.
// One step per iteration after a few warm-up steps; items_processed = cells ×
// steps. Counters: the share of the step spent in the pressure solve, the CG
// iterations and substeps of the last step. Args: resolution per side, threads.
namespace {

using namespace kinema;

GridFluidOptions plume_options(int n, int threads) {
  GridFluidOptions o;
  o.nx = o.ny = o.nz = n;
  o.dx = 1.0 / n;
  o.boundary[3] = FluidBoundary::Open;
  o.advection = FluidAdvection::MacCormack;
  o.buoyancy_alpha = 0.1;
  o.buoyancy_beta = 4.0;
  o.vorticity = 0.5;
  o.pressure_tolerance = 1e-4;
  o.threads = threads;
  return o;
}

void add_inflow(GridFluid& f) {
  FluidSource s;
  s.region = FluidRegion::sphere({0.5, 0.12, 0.5}, 0.08);
  s.density = 1;
  s.temperature = 1;
  s.velocity = Vec3{0, 0.5, 0};
  f.add_source(s);
}

void BM_SmokePlume(benchmark::State& state) {
  const int n = int(state.range(0)), threads = int(state.range(1));
  GridFluid f(plume_options(n, threads));
  const double dt = 1.0 / 48;    // two steps a frame at 24 fps
  for (int s = 0; s < 8; ++s) {  // warm-up: a plume already rising
    add_inflow(f);
    f.step(dt);
  }
  double pressure = 0, total = 0;
  for (auto _ : state) {
    add_inflow(f);
    f.step(dt);
    pressure += f.last_timings().pressure;
    total += f.last_timings().total;
  }
  state.SetItemsProcessed(state.iterations() * int64_t(n) * n * n);
  state.counters["pressure_share"] = total > 0 ? pressure / total : 0;
  state.counters["cg_iterations"] = f.last_pressure_iterations();
  state.counters["substeps"] = f.last_substeps();
  state.counters["s_per_step"] = total / double(state.iterations());
}

BENCHMARK(BM_SmokePlume)
    ->Args({64, 1})
    ->Args({64, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SmokePlume)
    ->Args({128, 1})
    ->Args({128, 2})
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

// Benchmark of the FLIP liquid (kinema/fluid/flip.h): a 3-D dam break in a 1 m
// box at 64³ cells, a column 0.4 × 0.8 × 1 m (8 particles a cell, about 650,000
// particles) collapsing under gravity, flip_ratio 0.95, cfl 1, CG tolerance
// 1e-6. One iteration = one 1/24 s frame (substeps chosen by the CFL condition)
// after two warm-up frames, so the column is already falling. Counters:
// particle_steps and cell_steps per second (particles or cells × substeps /
// wall time), s_per_frame, substeps and CG iterations of the last frame. Args:
// resolution per side, threads. For reference, Blender's Mantaflow FLIP liquid
// at 64³ takes 1.15 s a frame on the same machine.
namespace {

using namespace kinema;

void BM_FlipDamBreak(benchmark::State& state) {
  const int n = int(state.range(0)), threads = int(state.range(1));
  FlipOptions o;
  o.nx = o.ny = o.nz = n;
  o.dx = 1.0 / n;
  o.threads = threads;
  FlipLiquid f(o);
  f.add_block({0, 0, 0}, {0.4, 0.8, 1.0}, {0, 0, 0});
  const double frame = 1.0 / 24;
  for (int s = 0; s < 2; ++s) f.step(frame);
  double particle_steps = 0, cell_steps = 0, seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    f.step(frame);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    particle_steps += double(f.count()) * f.last_substeps();
    cell_steps += double(n) * n * n * f.last_substeps();
  }
  state.counters["particles"] = double(f.count());
  state.counters["particle_steps_per_s"] = particle_steps / seconds;
  state.counters["cell_steps_per_s"] = cell_steps / seconds;
  state.counters["s_per_frame"] = seconds / double(state.iterations());
  state.counters["substeps"] = f.last_substeps();
  state.counters["cg_iterations"] = f.last_pressure_iterations();
}

BENCHMARK(BM_FlipDamBreak)
    ->Args({64, 1})
    ->Args({64, 2})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

// Surfaces for fluids: marching cubes on 128³ grids (a sphere's signed distance, and uniform noise,
// the worst case: nearly every cube crossed, many ambiguous faces), and the Zhu–Bridson field of
// 100k particles. Argument: thread count (0: all cores).
namespace kinema {
namespace {

ScalarGrid sphere_grid(int n) {
  ScalarGrid g;
  g.nx = g.ny = g.nz = n;
  g.origin = Vec3{-1, -1, -1};
  g.spacing = 2.0 / (n - 1);
  g.values.resize(std::size_t(n) * n * n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        g.values[g.index(i, j, k)] = float(length(g.position(i, j, k)) - 0.8);
  return g;
}

ScalarGrid noise_grid(int n) {
  ScalarGrid g = sphere_grid(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& v : g.values) v = u(rng);
  return g;
}

void run_marching_cubes(benchmark::State& state, const ScalarGrid& g) {
  const int threads = int(state.range(0));
  std::size_t triangles = 0;
  for (auto _ : state) {
    const SurfaceMesh m = marching_cubes(g, 0, true, threads);
    triangles = m.triangle_count();
    benchmark::DoNotOptimize(m.triangles.data());
  }
  const double cells = double(g.nx - 1) * (g.ny - 1) * (g.nz - 1);
  state.counters["cells/s"] =
      benchmark::Counter(cells, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["triangles"] = double(triangles);
}

void BM_MarchingCubesSphere128(benchmark::State& state) {
  static const ScalarGrid g = sphere_grid(128);
  run_marching_cubes(state, g);
}
BENCHMARK(BM_MarchingCubesSphere128)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_MarchingCubesNoise128(benchmark::State& state) {
  static const ScalarGrid g = noise_grid(128);
  run_marching_cubes(state, g);
}
BENCHMARK(BM_MarchingCubesNoise128)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_ParticleField100k(benchmark::State& state) {
  // A ball of ~100k touching particles (step h = 2 cm, radius 1 cm), sampled every 1 cm.
  const double h = 0.02, r = 0.5765;
  std::vector<Vec3> particles;
  const int n = int(r / h);
  for (int k = -n; k <= n; ++k)
    for (int j = -n; j <= n; ++j)
      for (int i = -n; i <= n; ++i)
        if (const Vec3 p = Vec3{double(i), double(j), double(k)} * h; length(p) <= r)
          particles.push_back(p);
  ParticleFieldOptions o;
  o.threads = int(state.range(0));
  std::size_t samples = 0;
  for (auto _ : state) {
    const ScalarGrid g = particle_field(particles, h / 2, h / 2, o);
    samples = g.values.size();
    benchmark::DoNotOptimize(g.values.data());
  }
  state.counters["particles"] = double(particles.size());
  state.counters["samples"] = double(samples);
  state.counters["particles/s"] =
      benchmark::Counter(double(particles.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParticleField100k)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
