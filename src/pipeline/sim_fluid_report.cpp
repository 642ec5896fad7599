// `kinema sim`'s report of a scene's liquid and smoke (kinema/pipeline/sim.h): the summary's
// lines and the --json figures, kept beside the runs so that the CLI verb stays small.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kinema/pipeline/format_number.h"
#include "kinema/pipeline/sim.h"

namespace kinema::pipeline {

namespace {

double ms_per_step(double seconds, long steps) {
  return steps > 0 ? 1e3 * seconds / double(steps) : 0.0;
}

}  // namespace

std::string sim_fluid_summary(const SimResult& r) {
  std::ostringstream out;
  if (r.liquid) {
    const SimLiquidResult& l = *r.liquid;
    out << "  liquid" << (l.flip ? " (FLIP)" : "") << ": " << l.particles << " particles";
    if (!l.flip) out << " (" << l.boundary_particles << " in the tank's walls)";
    out << ", " << l.steps << " steps (" << l.substeps
        << " substeps, split by the solver's stability limit), "
        << format_number(ms_per_step(l.seconds, l.steps)) << " ms a step; ";
    if (l.flip)
      out << "max |∇·u| " << format_number(l.max_divergence, 6) << " 1/s at the end";
    else
      out << "compressed " << format_number(100 * l.mean_compression) << " % on average, "
          << format_number(100 * l.largest_compression) << " % at most at the end";
    out << "; fastest " << format_number(l.fastest) << " m/s\n    " << l.cache_path
        << " (point cache, a vertex per particle), " << l.mesh_path << ", " << l.sidecar_path
        << " (drawn by kinema render --with " << l.cache_path << ")";
    if (!l.surface_path.empty())
      out << "\n    " << l.surface_path << " (its surface at every frame, " << l.surface_triangles
          << " triangles in all; " << format_number(l.surface_seconds) << " s meshing)";
    out << '\n';
  }
  if (r.smoke) {
    const SimSmokeResult& k = *r.smoke;
    out << "  smoke" << (k.fire ? " and fire" : "") << ": " << k.nx << " × " << k.ny << " × "
        << k.nz << " cells of " << format_number(100 * k.cell_size, 2) << " cm, " << k.obstacles
        << " obstacles";
    if (k.moving_obstacles > 0) out << " and " << k.moving_obstacles << " moving";
    out << "; " << k.steps << " steps (" << k.substeps << " substeps), "
        << format_number(ms_per_step(k.seconds, k.steps)) << " ms a step; smoke mass "
        << format_number(k.smoke_mass, 4) << " at the end, max |∇·u| "
        << format_number(k.max_divergence, 6) << " 1/s, hottest " << format_number(k.hottest)
        << " above ambient\n    " << k.pattern << " (" << k.frames
        << " OpenVDB frames: density, temperature" << (k.fire ? ", flame, fuel" : "") << "; "
        << format_number(k.write_seconds)
        << " s writing; Blender: Import > OpenVDB, rotate +90° about X)\n";
  }
  for (const std::string& w : r.warnings) out << "  warning: " << w << '\n';
  return out.str();
}

std::string sim_fluid_json(const SimResult& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (r.liquid) {
    const SimLiquidResult& l = *r.liquid;
    j["liquid"] = {{"out", l.cache_path},
                   {"surface", l.surface_path},
                   {"solver", l.flip ? "flip" : "sph"},
                   {"particles", l.particles},
                   {"boundary_particles", l.boundary_particles},
                   {"steps", l.steps},
                   {"substeps", l.substeps},
                   {"ms_per_step", ms_per_step(l.seconds, l.steps)},
                   {"mean_compression", l.mean_compression},
                   {"largest_compression", l.largest_compression},
                   {"fastest_m_per_s", l.fastest},
                   {"steps_at_max_substeps", l.steps_at_max_substeps},
                   {"max_divergence", l.max_divergence},
                   {"surface_triangles", l.surface_triangles},
                   {"surface_seconds", l.surface_seconds}};
  }
  if (r.smoke) {
    const SimSmokeResult& k = *r.smoke;
    j["smoke"] = {{"out", k.pattern},
                  {"frames", k.frames},
                  {"cells", {k.nx, k.ny, k.nz}},
                  {"cell_size_m", k.cell_size},
                  {"fire", k.fire},
                  {"obstacles", k.obstacles},
                  {"moving_obstacles", k.moving_obstacles},
                  {"steps", k.steps},
                  {"substeps", k.substeps},
                  {"steps_split", k.steps_split},
                  {"steps_at_max_substeps", k.steps_at_max_substeps},
                  {"ms_per_step", ms_per_step(k.seconds, k.steps)},
                  {"max_divergence", k.max_divergence},
                  {"smoke_mass", k.smoke_mass},
                  {"hottest", k.hottest},
                  {"write_seconds", k.write_seconds}};
  }
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  return j.dump();
}

}  // namespace kinema::pipeline
