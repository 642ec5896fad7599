// tools/kinema/verb_sim.cpp — `kinema sim SCENE.json -o OUT.pc2|.glb|.gltf|.vdb [--threads N]
// [--json]`
// (its `springbones` subcommand lives in verb_sim_springbones.cpp).
//
// Parses the options and runs pipeline::run_sim_file (kinema/pipeline/sim.h, docs/physics.md):
// the scene's character, particles, cloths, soft bodies, hair, rigid bodies, liquid and smoke on
// the fixed-step clock (rigid bodies written as a glTF whose nodes are keyed at every frame), each
// cloth and soft body written as a PC2 point cache with its rest mesh as OBJ, or all of them as one
// glTF with a morph target per frame; hair as a point cache with its strands as OBJ polylines;
// smoke and fire as an OpenVDB sequence (OUT's stem + _smoke_%04d.vdb, or OUT.vdb for smoke alone).
// Prints per cloth: vertices, springs, frames and steps, time per step, the largest structural
// stretch (at the end and at any frame) and contacts; per soft body its volume error, stretch and
// contacts; the hair's stretch and contacts; the particles' counts; the character's output (as
// one JSON object with --json); the rigid bodies' counts, joint separation and contacts; the
// liquid's and smoke's figures and any warnings (pipeline::sim_fluid_summary).
//
// Exit codes: 1 for a command line that makes no sense (OUT of the wrong kind, a folder or an
// input); 2 for a bad scene or file (the message names the JSON
// pointer of the value at fault), a cloth that blew up, or a write failure — with no output
// written.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/sim.h"

namespace kinema::cli {

namespace {

struct SimArgs {
  pipeline::SimRequest request;
  bool json = false;
};

const char* solver_name(ClothSolver s) {
  switch (s) {
    case ClothSolver::Xpbd:
      return "xpbd";
    case ClothSolver::ImplicitEuler:
      return "implicit";
    case ClothSolver::SemiImplicit:
      return "semi-implicit";
  }
  return "?";
}

double ms_per_step(double seconds, long steps) {
  return steps > 0 ? 1e3 * seconds / double(steps) : 0.0;
}

/// The soft bodies' and hair's figures in the --json report.
void add_bodies_json(const pipeline::SimResult& r, nlohmann::ordered_json& j) {
  for (const pipeline::SimSoftBodyResult& b : r.soft_bodies)
    j["soft_bodies"].push_back({{"name", b.name},
                                {"cache", b.cache_path},
                                {"mesh", b.mesh_path},
                                {"vertices", b.vertices},
                                {"tets", b.tets},
                                {"surface_vertices", b.surface_vertices},
                                {"surface_triangles", b.surface_triangles},
                                {"steps", b.steps},
                                {"ms_per_step", ms_per_step(b.seconds, b.steps)},
                                {"volume_error", b.volume_error},
                                {"worst_volume_error", b.worst_volume_error},
                                {"largest_stretch", b.largest_stretch},
                                {"worst_stretch", b.worst_stretch},
                                {"collider_contacts", b.collider_contacts}});
  if (r.hair) {
    const pipeline::SimHairResult& h = *r.hair;
    j["hair"] = {{"cache", h.cache_path},
                 {"mesh", h.mesh_path},
                 {"guides", h.guides},
                 {"children", h.children},
                 {"points", h.points},
                 {"steps", h.steps},
                 {"ms_per_step", ms_per_step(h.seconds, h.steps)},
                 {"worst_stretch", h.worst_stretch},
                 {"collider_contacts", h.collider_contacts}};
  }
}

/// The rigid bodies' figures in the --json report and their line of the summary.
void add_rigid_json(const pipeline::SimResult& r, nlohmann::ordered_json& j) {
  if (!r.rigid) return;
  const pipeline::SimRigidResult& g = *r.rigid;
  j["rigid"] = {{"out", g.path},
                {"bodies", g.bodies},
                {"dynamic_bodies", g.dynamic_bodies},
                {"joints", g.joints},
                {"joints_broken", g.joints_broken},
                {"debris_bursts", g.debris_bursts},
                {"steps", g.steps},
                {"substeps", g.substeps},
                {"ms_per_step", ms_per_step(g.seconds, g.steps)},
                {"worst_joint_error_m", g.worst_joint_error},
                {"most_contacts", g.most_contacts}};
}

void print_rigid(const pipeline::SimResult& r) {
  if (!r.rigid) return;
  const pipeline::SimRigidResult& g = *r.rigid;
  std::cout << "  rigid bodies: " << g.dynamic_bodies << " moving, " << g.bodies - g.dynamic_bodies
            << " static, " << g.joints << " joints (" << g.joints_broken << " broken"
            << (g.debris_bursts > 0 ? ", " + std::to_string(g.debris_bursts) + " threw debris" : "")
            << "); " << g.steps << " steps (" << g.substeps << " substeps), "
            << format_number(ms_per_step(g.seconds, g.steps)) << " ms a step; joints apart by "
            << format_number(1000 * g.worst_joint_error) << " mm at worst; at most "
            << g.most_contacts << " contact points\n    " << g.path
            << " (glTF: a node per body, clip \"simulation\"; kinema render " << g.path << ")\n";
}

/// The soft bodies' and hair's lines of the summary.
void print_bodies(const pipeline::SimResult& r) {
  for (const pipeline::SimSoftBodyResult& b : r.soft_bodies)
    std::cout << "  " << b.name << " (soft body): " << b.vertices << " vertices, " << b.tets
              << " tetrahedra, " << b.steps << " steps, "
              << format_number(ms_per_step(b.seconds, b.steps)) << " ms a step; volume "
              << format_number(100 * b.volume_error) << " % at the end, "
              << format_number(100 * b.worst_volume_error) << " % at worst; largest stretch "
              << format_number(100 * b.worst_stretch) << " %; contacts " << b.collider_contacts
              << " with colliders\n    "
              << (b.cache_path == b.mesh_path
                      ? b.cache_path + " (glTF: its surface, a morph target per frame)"
                      : b.cache_path + " (point cache of its surface), " + b.mesh_path +
                            " (rest surface)")
              << '\n';
  if (r.hair) {
    const pipeline::SimHairResult& h = *r.hair;
    std::cout << "  hair: " << h.guides << " guides, " << h.children << " children, " << h.steps
              << " steps, " << format_number(ms_per_step(h.seconds, h.steps))
              << " ms a step; largest stretch " << format_number(100 * h.worst_stretch)
              << " %; contacts " << h.collider_contacts << " with colliders\n    " << h.cache_path
              << " (point cache, " << h.points << " points), " << h.mesh_path
              << " (rest strands as polylines)\n";
  }
}

int run_sim(SimArgs& a, const GlobalOptions& global) {
  JobProgress bars(global.progress_enabled());
  a.request.progress = bars.callback();
  const pipeline::SimResult r = pipeline::run_sim_file(a.request);
  bars.done();
  const pipeline::SimScene& scene = r.scene;
  if (a.json) {
    nlohmann::ordered_json j;
    j["scene"] = a.request.scene;
    j["duration_s"] = scene.duration;
    j["fps"] = scene.fps;
    j["rate"] = scene.rate;
    j["frames"] = r.frames;
    j["steps"] = r.steps;
    for (size_t i = 0; i < r.cloths.size(); ++i) {
      const pipeline::SimClothResult& c = r.cloths[i];
      const long steps = r.steps / long(r.cloths.size());
      j["cloth"].push_back({{"name", c.name},
                            {"cache", c.cache_path},
                            {"mesh", c.mesh_path},
                            {"solver", solver_name(scene.cloths[i].options.solver)},
                            {"vertices", c.vertices},
                            {"springs", c.springs},
                            {"ms_per_step", steps > 0 ? 1e3 * c.seconds / double(steps) : 0.0},
                            {"largest_stretch", c.largest_stretch},
                            {"worst_stretch", c.worst_stretch},
                            {"collider_contacts", c.collider_contacts},
                            {"self_contacts", c.self_contacts},
                            {"attached_inside_colliders", c.attached_inside}});
    }
    add_bodies_json(r, j);
    add_rigid_json(r, j);
    const auto fluids = nlohmann::ordered_json::parse(pipeline::sim_fluid_json(r));
    for (const auto& [key, value] : fluids.items()) j[key] = value;  // liquid, smoke, warnings
    if (!r.character_path.empty())
      j["character"] = {
          {"file", scene.character->file},
          {"out", r.character_path},
          {"colliders", r.character_colliders},
          {"spring_joints",
           scene.character->spring_bones ? scene.character->asset->spring_bones.joint_count() : 0}};
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema sim: " << a.request.scene << ", " << format_number(scene.duration)
              << " s: " << r.frames << " frames at " << scene.fps << " fps, steps of 1/"
              << scene.rate << " s\n";
    for (size_t i = 0; i < r.cloths.size(); ++i) {
      const pipeline::SimClothResult& c = r.cloths[i];
      const long steps = r.steps / long(r.cloths.size());
      std::cout << "  " << c.name << " (" << solver_name(scene.cloths[i].options.solver)
                << "): " << c.vertices << " vertices, " << c.springs << " springs, "
                << format_number(steps > 0 ? 1e3 * c.seconds / double(steps) : 0.0)
                << " ms a step; largest stretch " << format_number(100 * c.largest_stretch)
                << " % at the end, " << format_number(100 * c.worst_stretch)
                << " % at worst; contacts " << c.collider_contacts << " with colliders, "
                << c.self_contacts << " with itself\n"
                << "    "
                << (c.cache_path == c.mesh_path
                        ? c.cache_path + " (glTF: a morph target per frame, clip \"simulation\")"
                        : c.cache_path + " (point cache), " + c.mesh_path + " (rest mesh)")
                << '\n';
      if (c.attached_inside > 0)
        std::cout << "    warning: " << c.attached_inside
                  << " attached vertices start inside the character's colliders, so the cloth "
                     "stretches there: move the cloth out, or leave that joint out of "
                     "collider_joints\n";
    }
    if (scene.particles) {
      const double steps = double(r.frames - 1) * scene.rate / scene.fps;
      std::cout << "  particles: " << r.particles_emitted << " emitted, at most "
                << r.particles_most_alive << " alive, "
                << format_number(steps > 0 ? 1e3 * r.particle_seconds / steps : 0.0)
                << " ms a step\n    " << r.particle_cache_path << " (point cache, a vertex per "
                << "particle), " << r.particle_mesh_path << " (their first positions), "
                << r.particle_sidecar_path << " (when each is alive, its size, colour, opacity)\n";
    }
    print_bodies(r);
    print_rigid(r);
    std::cout << pipeline::sim_fluid_summary(r);
    if (!r.character_path.empty())
      std::cout << "  character " << scene.character->file << ": " << r.character_colliders
                << " colliders from its skin, "
                << (scene.character->spring_bones
                        ? scene.character->asset->spring_bones.joint_count()
                        : 0)
                << " spring-bone joints\n    " << r.character_path
                << " (its clip with the spring bones baked in; draw both with kinema render "
                << r.character_path << " --with " << a.request.out << ")\n";
  }
  return kExitOk;
}

}  // namespace

VerbRun register_sim(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "Run a JSON scene of cloths, soft bodies, hair, particles, rigid bodies and joints, liquids, "
      "colliders and a character playing a clip on the fixed-step clock: each cloth and soft "
      "body as a PC2 point cache with its rest mesh as OBJ (or all of them as glTF morph "
      "targets), hair, particles and liquids as point caches, rigid bodies as a glTF of keyed "
      "nodes, liquid surfaces as glTF, smoke and fire as OpenVDB frames, the "
      "character with its spring bones baked as glTF (docs/physics.md); or `sim springbones "
      "AVATAR` to bake an avatar's spring bones");
  sub->add_option("SCENE", args->request.scene, "The scene, JSON (never modified)");
  sub->add_option("-o,--out", args->request.out,
                  "The .pc2 to write (several cloths or soft bodies: OUT's stem + _NAME.pc2 each; "
                  "the rest mesh goes beside it as .obj), or a .glb/.gltf with every cloth and "
                  "soft body as a mesh with a morph target per frame; smoke alone: a .vdb "
                  "pattern such as smoke_%04d.vdb");
  sub->add_option("--threads", args->request.threads, "Threads (0: all cores; same result)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print the summary as one JSON object");

  const SubVerb springs = register_sim_springbones(*sub, global);
  return [args, springs, &global] {
    if (springs.app->parsed()) return springs.run();
    if (args->request.scene.empty() || args->request.out.empty())
      throw UsageError("kinema sim needs SCENE.json and -o OUT, or `springbones AVATAR -o OUT`");
    return run_sim(*args, global);
  };
}

}  // namespace kinema::cli
