// tools/kinema/demo_printer.cpp — what `kinema demo` prints as each step starts and ends
// (print_demo_event, cli.h): one printer per kind of step, reusing the verbs' own printers where
// the demo runs the same job (`kinema play`, `match`, `ik feet`, `crowd`).
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>
#include <variant>

#include "cli.h"
#include "kinema/pipeline/demo.h"

namespace kinema::cli {

namespace {

namespace fs = std::filesystem;

std::string error_text(double metres) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g m (%.3g mm)", metres, metres * 1000);
  return buf;
}

/// Prints each step of the demo as it starts and ends.
struct DemoPrinter {
  std::ostream& out;
  using Phase = pipeline::DemoEvent::Phase;

  void operator()(Phase, const pipeline::DemoBundledData& s) const {
    out << "kinema demo on the bundled data in " << s.folder << '\n';
  }
  void operator()(Phase phase, const pipeline::DemoLoad& s) const {
    if (phase == Phase::Started)
      out << "\n== " << s.role << ": " << s.path << '\n';
    else
      print_info(*s.asset, s.path, out, /*show_tree=*/false);
  }
  void operator()(Phase phase, const pipeline::DemoRoundTrip& s) const {
    if (phase == Phase::Started) {
      out << "\n== round trip: " << s.motion << " → GLB → BVH\n";
      return;
    }
    out << "  " << s.glb << ": max joint position error " << error_text(s.glb_error.max) << " over "
        << s.bvh_error.frames << " frames × " << s.glb_error.joints << " joints\n";
    out << "  " << s.bvh << ": max joint position error " << error_text(s.bvh_error.max) << " over "
        << s.bvh_error.frames << " frames × " << s.bvh_error.joints << " joints\n";
    if (s.glb_error.max <= s.tolerance && s.bvh_error.max <= s.tolerance)
      out << "  round trip OK (tolerance 1 mm)\n";
  }
  void operator()(Phase phase, const pipeline::DemoRetarget& s) const {
    if (s.character.empty()) {
      if (phase == Phase::Started) out << "\n== retarget: skipped (no character given)\n";
      return;
    }
    if (phase == Phase::Started) {
      out << "\n== retarget: " << s.motion << " → " << s.character << '\n';
      return;
    }
    if (!s.skipped.empty()) {
      out << "  skipped: " << s.skipped << '\n';
      return;
    }
    out << "  humanoid bones: motion " << s.motion_bones << (s.motion_guessed ? " (guessed)" : "")
        << ", character " << s.character_bones << (s.character_guessed ? " (guessed)" : "") << '\n';
    out << "  wrote " << s.glb << ": " << s.result->skeleton.joint_count() << " joints, "
        << describe_clip(s.result->clips[0]) << '\n';
    const pipeline::RetargetResult& r = s.job;
    if (r.after) {
      auto skate = [](const FootSkate& k) {
        return k.speed ? format_number(k.speed->median, 2) + " cm/s" : std::string("no contacts");
      };
      out << "  grounded: foot skate median " << skate(r.before.skate) << " → "
          << skate(r.after->skate) << ", knee-angle jump max "
          << format_number(r.before.knee_jump_max, 2) << "° → "
          << format_number(r.after->knee_jump_max, 2) << "°, hips moved "
          << format_number(r.grounding.hips_offset_min * 100, 1) << " … "
          << format_number(r.grounding.hips_offset_max * 100, 1) << " cm\n";
    }
    if (!s.vrm.empty()) out << "  wrote " << s.vrm << " (VRM 1.0)\n";
    if (!s.vrma.empty()) out << "  wrote " << s.vrma << " (VRM Animation for it)\n";
    out << "  wrote " << s.preview << " (source above, result below)\n";
  }
  void operator()(Phase phase, const pipeline::DemoClean& s) const {
    if (phase == Phase::Started) {
      out << "\n== clean: the retargeted arms pushed out of the character's body, the side "
             "chosen over the whole clip\n";
      return;
    }
    if (!s.skipped.empty()) {
      out << "  skipped: " << s.skipped << '\n';
      return;
    }
    print_clean(s.request, s.result, "  ", out);
  }
  void operator()(Phase phase, const pipeline::DemoGraph& s) const {
    if (!s.skipped_folder.empty()) {
      out << "\n== graph: skipped (no locomotion.graph.json in " << s.skipped_folder << ")\n";
    } else if (phase == Phase::Started) {
      out << "\n== graph: " << s.request.graph
          << "\n  walk/run blend space driven by speed, ramping 1.5 → 4.5 m/s over 3 s, root "
             "motion baked\n  ";
    } else {
      print_play(s.request, s.result, out);
    }
  }
  void operator()(Phase phase, const pipeline::DemoMatchBuild& s) const {
    if (phase == Phase::Started)
      out << "\n== motion matching: database of the walk and run, mirrored, at 0.9/1/1.1× "
             "speed\n";
    else
      print_match_build(s.request, s.result, false, out);
  }
  void operator()(Phase phase, const pipeline::DemoMatchRun& s) const {
    if (phase == Phase::Started)
      out << "\n== motion matching: a stick walks 1.5 m/s, runs 4 m/s, walks veering 45° left "
             "(stick_path.json), locomotion warping on (stride and lower body warped to the "
             "character's motion, planted feet held)\n";
    else
      print_match_run(s.request, s.result, false, out);
  }
  void operator()(Phase phase, const pipeline::DemoMatchLearn& s) const {
    if (phase == Phase::Started) {
      out << "\n== learned motion matching: decompressor, stepper and projector trained on "
          << s.learn.database << " (libtorch, " << s.learn.train.hidden << " hidden units, "
          << s.learn.train.min_iterations
          << " iterations each), then the same stick with the model beside the database\n";
    } else {
      print_match_learn(s.learn, s.learned, false, out);
      print_match_run(s.run, s.result, false, out);
    }
  }
  void operator()(Phase phase, const pipeline::DemoFeet& s) const {
    if (!s.skipped_folder.empty()) {
      out << "\n== foot placement: skipped (no " << s.ground_file << " in " << s.skipped_folder
          << ")\n";
    } else if (phase == Phase::Started) {
      out << "\n== foot placement: " << s.request.in << " on " << s.request.ground << "\n  "
          << s.description
          << "; the body follows the ground, the pelvis drops for the lower foot, the legs are "
             "solved\n";
    } else {
      print_feet(s.request, s.result, /*json=*/false, "  ", out);
      note_feet_below_ground(s.request, s.result);
    }
  }
  void operator()(Phase phase, const pipeline::DemoCloth& s) const {
    if (phase == Phase::Started) {
      out << "\n== simulation: " << s.request.scene << " — " << s.what << "\n";
      return;
    }
    for (const pipeline::SimClothResult& c : s.result.cloths)
      out << "  " << c.cache_path << ": " << c.vertices << " vertices, " << s.result.frames
          << " frames, largest stretch " << format_number(100 * c.largest_stretch) << " % ("
          << format_number(100 * c.worst_stretch) << " % at worst), " << c.collider_contacts
          << " collider contacts\n";
    for (const pipeline::SimSoftBodyResult& b : s.result.soft_bodies)
      out << "  " << b.cache_path << ": " << b.name << ", " << b.tets << " tetrahedra, volume "
          << format_number(100 * b.volume_error) << " % at the end ("
          << format_number(100 * b.worst_volume_error) << " % at worst), " << b.collider_contacts
          << " collider contacts\n";
    if (s.result.hair)
      out << "  " << s.result.hair->cache_path << ": hair, " << s.result.hair->guides
          << " guides and " << s.result.hair->children << " children, largest stretch "
          << format_number(100 * s.result.hair->worst_stretch) << " %\n";
    if (!s.result.particle_cache_path.empty())
      out << "  " << s.result.particle_cache_path << ": " << s.result.particles_emitted
          << " particles emitted, at most " << s.result.particles_most_alive
          << " alive; when each lives and how it looks: " << s.result.particle_sidecar_path << "\n";
    if (s.result.liquid) {
      const pipeline::SimLiquidResult& l = *s.result.liquid;
      out << "  " << l.cache_path << ": " << l.particles << " particles in a tank of "
          << l.boundary_particles << " wall particles, " << s.result.frames << " frames ("
          << l.substeps << " substeps); compressed " << format_number(100 * l.largest_compression)
          << " % at most at the end";
      if (!l.surface_path.empty()) out << "; its surface at every frame: " << l.surface_path;
      out << "\n";
    }
    if (s.result.smoke) {
      const pipeline::SimSmokeResult& m = *s.result.smoke;
      out << "  " << m.pattern << ": " << m.frames << " OpenVDB frames of " << m.nx << " × " << m.ny
          << " × " << m.nz << " cells ("
          << (m.fire ? "density, temperature, flame, fuel" : "density, temperature") << "), "
          << m.substeps << " substeps; divergence after projection "
          << format_number(m.max_divergence, 6) << " 1/s at most\n";
    }
    if (!s.result.character_path.empty())
      out << "  " << s.result.character_path << ": the character with "
          << s.result.character_colliders
          << " colliders from its skin and its spring bones baked in\n";
  }
  void operator()(Phase phase, const pipeline::DemoSpringBones& s) const {
    if (phase == Phase::Started) {
      out << "\n== spring bones: " << s.request.avatar
          << " — the character's hair and ribbons simulated over the walk (three-vrm's "
             "algorithm)\n";
      return;
    }
    const pipeline::SpringBakeResult& r = s.result;
    out << "  " << s.request.out << ": " << r.springs << " springs, " << r.joints << " joints, "
        << r.colliders << " colliders, " << r.frames << " frames at 60 Hz, "
        << format_number(r.frames > 0 ? 1e6 * r.seconds / r.frames : 0.0)
        << " µs a frame; largest swing " << format_number(r.largest_swing_deg) << "°\n";
  }
  void operator()(Phase phase, const pipeline::DemoRagdoll& s) const {
    if (phase == Phase::Started) {
      out << "\n== hit reaction: " << s.request.character << " hit on the " << s.request.hit_bone
          << " at " << format_number(s.request.hit_time)
          << " s, falling as a powered ragdoll (its joints keep tracking the walk)\n";
      return;
    }
    const pipeline::RagdollResult& r = s.result;
    out << "  " << s.request.out << ": " << r.bodies << " bodies (" << format_number(r.mass)
        << " kg), " << r.joints << " joints, " << r.steps << " steps of 1/" << s.request.rate
        << " s, " << format_number(r.steps > 0 ? 1e6 * r.seconds / double(r.steps) : 0.0)
        << " µs a step; joints apart by " << format_number(1000 * r.worst_joint_error)
        << " mm at worst; she ends " << format_number(r.final_height)
        << " m above the ground (clip \"" << r.clip_name << "\")\n";
  }
  void operator()(Phase phase, const pipeline::DemoCrowd& s) const {
    if (!s.skipped_folder.empty()) {
      out << "\n== crowd: skipped (no crowd_square.json in " << s.skipped_folder << ")\n";
      return;
    }
    if (phase == Phase::Started) {
      out << "\n== crowd: " << s.request.scene
          << "\n  1,000 agents crossing a square round a fountain: A* paths, ORCA avoidance\n";
      return;
    }
    out << "  ";
    print_crowd(s.result, "  ", out);
  }
  void operator()(Phase phase, const pipeline::DemoGait& s) const {
    if (!s.skipped_folder.empty()) {
      out << "\n== procedural gaits: skipped (no stairs.obj in " << s.skipped_folder << ")\n";
      return;
    }
    if (phase == Phase::Started) {
      out << "\n== procedural gaits: up " << s.requests.front().ground
          << "\n  no clip: footsteps planned from the velocity, swings over the treads, legs by "
             "IK\n";
      return;
    }
    for (const pipeline::GaitReport& r : s.results) {
      out << "  ";
      print_gait(r, "  ", out);
    }
  }
  void operator()(Phase phase, const pipeline::DemoCompression& s) const {
    if (phase == Phase::Started) {
      out << "\n== compression: " << s.motion
          << " within 0.01 cm at virtual vertices 3 cm from every joint\n";
      return;
    }
    out << "  " << s.kmc << ": " << s.stats.raw_bytes << " → " << s.stats.compressed_bytes
        << " bytes (" << format_number(s.stats.ratio, 2) << " : 1), max error "
        << format_number(s.stats.error.max * 100, 5) << " cm, 99th percentile "
        << format_number(s.stats.error.p99 * 100, 5) << " cm over every joint, frame and "
        << "midpoint\n";
  }
  void operator()(Phase phase, const pipeline::DemoSheet& s) const {
    if (phase == Phase::Started)
      out << "\n== render: contact sheets of 6 frames, 320×240 each\n";
    else if (!s.skipped.empty())
      out << "  skipped " << s.png << ": " << s.skipped << '\n';
    else
      out << "  wrote " << s.png << ": " << s.what << " (" << s.gl_renderer << ")\n";
  }
  void operator()(Phase phase, const pipeline::DemoComposite& s) const {
    if (phase == Phase::Started) {
      out << "\n== composite: the walking character put into a filmed plate (lens k1 = "
          << format_number(s.k1, 3) << ", film grain, a contact shadow by differential "
          << "rendering)\n";
      return;
    }
    if (!s.skipped.empty()) {
      out << "  skipped " << s.png << ": " << s.skipped << '\n';
      return;
    }
    out << "  plate grain σ " << format_number(s.grain_sigma, 4) << ", measured back "
        << format_number(s.grain_measured, 4) << " and put on the character; "
        << format_number(1e3 * s.seconds) << " ms (" << s.gl_renderer << ")\n"
        << "  wrote " << s.png << " and the CG layer " << s.exr << '\n';
  }
  void operator()(Phase, const pipeline::DemoProduced& s) const {
    out << "\n== produced in " << s.out_dir << ":\n";
    for (const std::string& p : s.files) {
      std::error_code ec;
      const auto size = fs::file_size(p, ec);
      out << "  " << fs::path(p).filename().string() << "  "
          << (ec ? std::string("?") : format_bytes(size)) << '\n';
    }
    out << "Open the .glb/.vrm files in any glTF or VRM viewer or in Blender; the .bvh in "
           "Blender or MotionBuilder; the .png in any image viewer.\n";
  }
};

}  // namespace

void print_demo_event(const pipeline::DemoEvent& event, std::ostream& out) {
  const DemoPrinter printer{out};
  std::visit([&](const auto& step) { printer(event.phase, step); }, event.step);
}

}  // namespace kinema::cli
