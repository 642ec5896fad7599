// kinema_mantaflow_scene — kinema's grid smoke (kinema/fluid/grid_fluid.h) on the scene that
// scripts/mantaflow_smoke.py builds in Blender for its Mantaflow smoke, timed frame by frame, so
// that scripts/bench_vs_mantaflow.sh can run the two side by side (BENCHMARKS.md, "Fluids"). A
// plain program, not Google Benchmark: the peer is a separate process and both are timed the same
// way, per frame, from the start of the first frame to the end of the last.
//
//   kinema_mantaflow_scene [--res 64] [--frames 50] [--threads 1] [--radius 0.25]
//                          [--emit-cells 1.5] [--max-divergence 2.5e-3] [--tolerance 1e-10]
//                          [--semi-lagrangian] [--vdb DIR]
//
// The scene, in Blender's terms (z up) and kinema's (y up; Blender (x, y, z) → kinema (x, z, −y)):
//   - domain: a 2 m cube centred at the origin, res³ cells of 2/res m, every side open (Blender's
//     default: no border collisions; Mantaflow's open sides are outflow cells at pressure 0);
//   - flow: a sphere of radius --radius at Blender (0, 0, −0.65) that raises density and
//     temperature to 1 (Blender's flow defaults: density 1, temperature 1, no initial velocity),
//     in every substep. Mantaflow emits from the mesh surface out to surface_distance = 1.5 cells
//     (strength √(1 − d/1.5), none from the volume); kinema's sources are solid regions, so the
//     ball here reaches --emit-cells beyond the sphere, by default the outer edge of Mantaflow's
//     emission shell (a larger source than Mantaflow's: kinema's plume runs a little faster and
//     takes more substeps, which counts against it);
//   - buoyancy as Mantaflow's addBuoyancy with Blender's alpha = beta = 1: Blender scales both by
//     1/domain size (m) and gravity into grid units, which comes to an upward acceleration of
//     |g|·alpha/L per unit density plus |g|·beta/L per unit temperature (L = 2 m): 4.905 m/s²
//     each. Vorticity 0 (Blender's default). Ambient temperature 0.
//   - time: 24 fps, each 1/24 s frame split into 1 to 4 equal substeps by CFL 4 (Blender's
//     adaptive default: CFL 4, 1 to 4 steps a frame); MacCormack advection (Mantaflow's
//     advectSemiLagrange order 2 is MacCormack with clamping);
//   - pressure: MIC(0)-PCG until max |∇·u| ≤ --max-divergence (1/s; relative tolerance
//     --tolerance, by default too small to matter). Mantaflow's solvePressure (multigrid-
//     preconditioned CG) stops at a max-norm residual of 1e-3 in its units, cells per time unit,
//     where Blender's time unit is 0.4 s (frame length 0.1·25/fps): a divergence of 2.5e-3 1/s.
//     The JSON reports kinema's max divergence per frame.
// --vdb DIR writes density and temperature of every frame as DIR/kinema_NNNN.vdb (Mantaflow's bake
// writes its cache every frame; off by default).
//
// Prints one line "KINEMA_RESULT {json}": per-frame wall seconds, substeps, CG iterations of the
// last substep, max divergence after the last projection, the stage totals from
// GridFluid::last_timings(), cell-steps per second and the settings. Exit status 0, 2 on bad
// arguments.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kinema/fluid/grid_fluid.h"
#include "kinema/fluid/volume_file.h"

namespace {

using namespace kinema;

struct Args {
  int res = 64, frames = 50, threads = 1;
  double radius = 0.25, tolerance = 1e-10, max_divergence = 2.5e-3, emit_cells = 1.5;
  bool semi_lagrangian = false;
  std::string vdb;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kinema_mantaflow_scene: %s\nusage: kinema_mantaflow_scene [--res N (8..1024)] "
               "[--frames N] [--threads N (0: all)] [--radius M] [--emit-cells C] "
               "[--max-divergence D] [--tolerance T] "
               "[--semi-lagrangian] [--vdb DIR]\n",
               why);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + k).c_str());
      return argv[++i];
    };
    auto number = [&](double lo, double hi) {
      const std::string v = value();
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(x >= lo && x <= hi))
        usage((k + " " + v + ": out of range").c_str());
      return x;
    };
    if (k == "--res") {
      a.res = int(number(8, 1024));
    } else if (k == "--frames") {
      a.frames = int(number(1, 100000));
    } else if (k == "--threads") {
      a.threads = int(number(0, 4096));
    } else if (k == "--radius") {
      a.radius = number(1e-3, 0.9);
    } else if (k == "--max-divergence") {
      a.max_divergence = number(0, 1e6);
    } else if (k == "--emit-cells") {
      a.emit_cells = number(0, 10);
    } else if (k == "--tolerance") {
      a.tolerance = number(1e-12, 1);
    } else if (k == "--semi-lagrangian") {
      a.semi_lagrangian = true;
    } else if (k == "--vdb") {
      a.vdb = value();
    } else {
      usage(("unknown argument " + k).c_str());
    }
  }
  return a;
}

std::string json_list(const std::vector<double>& v, const char* fmt) {
  std::string s = "[";
  char buf[64];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, fmt, v[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  constexpr double kDomain = 2.0, kGravity = 9.81, kFps = 24, kAlpha = 1, kBeta = 1;
  GridFluidOptions o;
  o.nx = o.ny = o.nz = a.res;
  o.dx = kDomain / a.res;
  o.origin = {-kDomain / 2, -kDomain / 2, -kDomain / 2};
  for (auto& b : o.boundary) b = FluidBoundary::Open;
  o.advection = a.semi_lagrangian ? FluidAdvection::SemiLagrangian : FluidAdvection::MacCormack;
  o.max_cfl = 4;
  o.max_substeps = 4;
  o.pressure_tolerance = a.tolerance;
  o.pressure_max_divergence = a.max_divergence;
  o.pressure_max_iterations = 1000;
  // Mantaflow: Δv = −g·dt·(alpha / L)·density (and beta for heat), upwards; kinema's buoyancy is
  // (−α·density + β·(T − T_ambient))·ŷ, so α < 0 lifts the smoke as Blender's alpha > 0 does.
  o.buoyancy_alpha = -kGravity * kAlpha / kDomain;
  o.buoyancy_beta = kGravity * kBeta / kDomain;
  o.ambient_temperature = 0;
  o.vorticity = 0;
  o.threads = a.threads;
  GridFluid fluid(o);

  FluidSource source;
  const double source_radius = a.radius + a.emit_cells * o.dx;
  source.region = FluidRegion::sphere({0, -0.65, 0}, source_radius);
  source.density = 1;
  source.temperature = 1;

  if (!a.vdb.empty()) std::filesystem::create_directories(a.vdb);
  const double dt = 1 / kFps;
  std::vector<double> frame_s, substeps, iterations, divergence;
  GridFluidTimings stages;
  double cell_steps = 0;
  const double cells = double(a.res) * a.res * a.res;
  for (int f = 1; f <= a.frames; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    fluid.add_source(source);
    fluid.step(dt);
    if (!a.vdb.empty()) {
      VolumeGrid d, t;
      for (VolumeGrid* g : {&d, &t}) {
        g->nx = g->ny = g->nz = a.res;
        g->origin = fluid.cell_center(0, 0, 0);
        g->voxel_size = o.dx;
      }
      d.name = "density";
      t.name = "temperature";
      d.values.assign(fluid.density().begin(), fluid.density().end());
      t.values.assign(fluid.temperature().begin(), fluid.temperature().end());
      char name[32];
      std::snprintf(name, sizeof name, "/kinema_%04d.vdb", f);
      VdbWriteOptions w;
      w.save_float_as_half = true;
      w.frame = f;
      const VolumeGrid grids[2] = {std::move(d), std::move(t)};
      write_vdb(a.vdb + name, grids, w);
    }
    frame_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    substeps.push_back(fluid.last_substeps());
    iterations.push_back(fluid.last_pressure_iterations());
    divergence.push_back(fluid.max_divergence());
    cell_steps += cells * fluid.last_substeps();
    const GridFluidTimings& s = fluid.last_timings();
    stages.advection += s.advection;
    stages.forces += s.forces;
    stages.diffusion += s.diffusion;
    stages.pressure += s.pressure;
    stages.total += s.total;
  }
  double total = 0, steps = 0;
  for (double s : frame_s) total += s;
  for (double s : substeps) steps += s;
  std::printf(
      "KINEMA_RESULT {\"tool\": \"kinema\", \"res\": %d, \"frames\": %d, \"threads\": %d, "
      "\"total_s\": %.6f, \"s_per_frame\": %.6f, \"cell_steps_per_s\": %.1f, "
      "\"substeps_total\": %.0f, \"frame_s\": %s, \"substeps\": %s, \"cg_iterations\": %s, "
      "\"max_divergence_per_s\": %s, \"stage_s\": {\"advection\": %.6f, \"forces\": %.6f, "
      "\"diffusion\": %.6f, \"pressure\": %.6f, \"step_total\": %.6f}, \"smoke_mass\": %.6g, "
      "\"settings\": {\"domain_size_m\": %.3f, \"cell_size_m\": %.6g, \"boundary\": \"open\", "
      "\"advection\": \"%s\", \"max_cfl\": %.1f, \"max_substeps\": %d, \"pressure_tolerance\": "
      "%.3g, \"pressure_max_divergence_per_s\": %.3g, \"buoyancy_alpha\": %.6g, \"buoyancy_beta\": "
      "%.6g, \"vorticity\": %.3g, "
      "\"source_centre_m\": [0, -0.65, 0], \"source_radius_m\": %.6g, \"sphere_radius_m\": %.6g, "
      "\"source_density\": 1, \"source_temperature\": 1, \"fps\": %.0f, \"vdb\": %s}}\n",
      a.res, a.frames, a.threads, total, total / a.frames, cell_steps / total, steps,
      json_list(frame_s, "%.6f").c_str(), json_list(substeps, "%.0f").c_str(),
      json_list(iterations, "%.0f").c_str(), json_list(divergence, "%.3g").c_str(),
      stages.advection, stages.forces, stages.diffusion, stages.pressure, stages.total,
      fluid.smoke_mass(), kDomain, o.dx, a.semi_lagrangian ? "semi-Lagrangian" : "MacCormack",
      o.max_cfl, o.max_substeps, o.pressure_tolerance, o.pressure_max_divergence, o.buoyancy_alpha,
      o.buoyancy_beta, o.vorticity, source_radius, a.radius, kFps,
      a.vdb.empty() ? "false" : "true");
  return 0;
}
