// python/src/bind_jobs.cpp — whole jobs on files, as the CLI's verbs run them: convert,
// retarget, clean, compress / decompress, simulate, ragdoll. Each releases the GIL and reports
// progress through an optional callback(stage, done, total).
#include "common.h"
#include "kinema/pipeline/clean.h"
#include "kinema/pipeline/compress.h"
#include "kinema/pipeline/convert.h"
#include "kinema/pipeline/ragdoll.h"
#include "kinema/pipeline/retarget.h"
#include "kinema/pipeline/sim.h"

namespace kinema::python {
namespace {

py::object skate_median(const FootSkate& s) {
  return s.speed ? py::object(py::float_(s.speed->median)) : py::object(py::none());
}

py::dict metrics_dict(const MotionMetrics& m) {
  py::dict d;
  d["frames"] = m.frames;
  d["rate"] = m.rate;
  d["planted_frames"] = m.skate.planted_frames;
  d["skate_median_cm_s"] = skate_median(m.skate);
  d["skate_p90_cm_s"] = m.skate.speed ? py::object(py::float_(m.skate.speed->p90)) : py::none();
  d["penetration_max_cm"] = m.penetration_max;
  d["float_max_cm"] = m.float_max;
  d["knee_jump_max_deg"] = m.knee_jump_max;
  d["bone_length_error_max_m"] = m.bone_length_error_max;
  return d;
}

// Runs `job` with the GIL released.
template <class F>
auto released(F&& job) {
  py::gil_scoped_release unlocked;
  return job();
}

py::dict convert(const std::string& in, const std::string& out, const std::string& clip,
                 const std::string& onto, double fps) {
  pipeline::ConvertRequest request;
  request.in = in, request.out = out, request.clip = clip, request.onto = onto, request.fps = fps;
  const auto r = released([&] { return pipeline::convert_file(request); });
  py::dict d;
  d["frames"] = r.frames;
  d["rate"] = r.rate;
  d["retargeted"] = r.retargeted;
  d["rest_pose_only"] = r.rest_pose_only;
  return d;
}

py::dict retarget(const std::string& in, const std::string& onto, const std::string& out,
                  const std::string& clip, const std::string& map, const std::string& onto_map,
                  bool ground, const std::string& preview, const py::object& progress) {
  pipeline::RetargetRequest request;
  request.in = in, request.onto = onto, request.out = out, request.clip = clip;
  request.map = map, request.onto_map = onto_map, request.ground = ground;
  request.preview = preview;
  const auto callback = progress_callback(progress);
  const auto r = released([&] { return pipeline::retarget_file(request, callback); });
  py::dict d;
  d["frames"] = r.frames;
  d["rate"] = r.rate;
  d["grounded"] = r.grounded;
  d["before"] = metrics_dict(r.before);
  if (r.after) d["after"] = metrics_dict(*r.after);
  if (r.pose_error) d["pose_error_mean_m"] = r.pose_error->mean_joint_error;
  d["asset"] = r.written;
  return d;
}

py::dict clean(const std::string& in, const std::string& character, const std::string& out,
               const std::string& clip, const std::string& visibility, const std::string& report,
               const std::string& plot, const std::string& preview, const py::object& progress) {
  pipeline::CleanRequest request;
  request.in = in, request.character = character, request.out = out, request.clip = clip;
  request.visibility = visibility, request.report = report, request.plot = plot;
  request.preview = preview;
  request.preview_optional = true;
  const auto callback = progress_callback(progress);
  auto r = released([&] { return pipeline::clean_file(request, callback); });
  py::dict d;
  d["clip"] = r.clip_name;
  d["frames"] = r.clearance.frames;
  d["rate"] = r.clearance.rate;
  d["matched_joints"] = r.matched_joints;
  py::list arms;
  for (const auto& arm : r.clearance.arms) {
    py::dict a;
    a["frames_inside_before"] = arm.frames_inside_before;
    a["frames_inside_after"] = arm.frames_inside_after;
    a["switches"] = arm.switches;
    a["added_mean_mm"] = arm.added_mean_mm;
    a["added_max_mm"] = arm.added_max_mm;
    a["depth_before_m"] = arm.depth_before_m;
    a["depth_after_m"] = arm.depth_after_m;
    arms.append(a);
  }
  d["arms"] = arms;  // left, right
  d["preview_skipped"] = r.preview_skipped;
  d["asset"] = std::move(r.written);
  return d;
}

py::dict compress_files(const std::vector<std::string>& inputs, const std::string& out_dir,
                        double max_error, double vertex_distance, const py::object& progress) {
  pipeline::CompressRequest request;
  request.inputs = inputs;
  request.out_dir = out_dir;
  request.options.max_error = max_error;
  request.options.vertex_distance = vertex_distance;
  const auto callback = progress_callback(progress);
  const auto r = released([&] { return pipeline::compress_files(request, callback); });
  py::dict d;
  d["outputs"] = r.outputs;
  d["file_bytes"] = r.file_bytes;
  d["raw_bytes"] = r.raw_bytes;
  d["compressed_bytes"] = r.compressed_bytes;
  d["ratio"] = r.ratio;
  d["max_error"] = r.max_error;
  d["p99_error"] = r.p99_error;
  d["seconds"] = r.seconds;
  py::list clips;
  for (const auto& c : r.clips) {
    py::dict cd;
    cd["file"] = c.file;
    cd["name"] = c.name;
    cd["ratio"] = c.stats.ratio;
    cd["max_error"] = c.stats.error.max;
    cd["compressed_bytes"] = c.stats.compressed_bytes;
    clips.append(cd);
  }
  d["clips"] = clips;
  return d;
}

py::dict simulate(const std::string& scene, const std::string& out, int threads,
                  const std::string& character, const py::object& progress) {
  pipeline::SimRequest request;
  request.scene = scene, request.out = out, request.threads = threads;
  request.character_file = character;
  request.progress = progress_callback(progress);
  const auto r = released([&] { return pipeline::run_sim_file(request); });
  py::dict d;
  d["frames"] = r.frames;
  d["steps"] = r.steps;
  py::list cloths;
  for (const auto& c : r.cloths) {
    py::dict cd;
    cd["name"] = c.name;
    cd["cache_path"] = c.cache_path;
    cd["mesh_path"] = c.mesh_path;
    cd["vertices"] = c.vertices;
    cd["largest_stretch"] = c.largest_stretch;
    cd["worst_stretch"] = c.worst_stretch;
    cloths.append(cd);
  }
  d["cloths"] = cloths;
  py::list bodies;
  for (const auto& b : r.soft_bodies) {
    py::dict bd;
    bd["name"] = b.name;
    bd["cache_path"] = b.cache_path;
    bd["vertices"] = b.vertices;
    bd["volume_error"] = b.volume_error;
    bodies.append(bd);
  }
  d["soft_bodies"] = bodies;
  d["character_path"] = r.character_path;
  d["particle_cache_path"] = r.particle_cache_path;
  d["particles_emitted"] = r.particles_emitted;
  if (r.rigid) {
    py::dict rd;
    rd["path"] = r.rigid->path;
    rd["bodies"] = r.rigid->bodies;
    rd["joints"] = r.rigid->joints;
    rd["worst_joint_error"] = r.rigid->worst_joint_error;
    d["rigid"] = rd;
  }
  if (r.hair) d["hair_cache_path"] = r.hair->cache_path;
  if (r.liquid) {
    py::dict ld;
    ld["cache_path"] = r.liquid->cache_path;
    ld["particles"] = r.liquid->particles;
    d["liquid"] = ld;
  }
  if (r.smoke) d["smoke_paths"] = r.smoke->paths;
  d["warnings"] = r.warnings;
  return d;
}

py::dict ragdoll(const std::string& character, const std::string& out, const std::string& hit_bone,
                 const std::array<double, 3>& impulse, double hit_time, bool powered,
                 double seconds_after, const std::string& clip, const py::object& progress) {
  pipeline::RagdollRequest request;
  request.character = character, request.out = out, request.hit_bone = hit_bone;
  request.hit_impulse = {impulse[0], impulse[1], impulse[2]};
  request.hit_time = hit_time, request.powered = powered, request.seconds_after = seconds_after;
  request.clip = clip;
  request.progress = progress_callback(progress);
  const auto r = released([&] { return pipeline::run_ragdoll(request); });
  py::dict d;
  d["clip"] = r.clip_name;
  d["bodies"] = r.bodies;
  d["joints"] = r.joints;
  d["mass"] = r.mass;
  d["hit_body"] = r.hit_body;
  d["frames"] = r.frames;
  d["steps"] = r.steps;
  d["worst_joint_error"] = r.worst_joint_error;
  d["final_height"] = r.final_height;
  return d;
}

}  // namespace

void bind_jobs(py::module_& m) {
  m.def("convert", &convert, py::arg("input"), py::arg("out"), py::kw_only(), py::arg("clip") = "",
        py::arg("onto") = "", py::arg("fps") = 0.0,
        "`kinema convert`: reads IN, picks a clip (name or index; '' the first), retargets it onto "
        "an avatar (onto), resamples (fps > 0) and writes OUT atomically. Returns a report dict.");
  m.def("retarget", &retarget, py::arg("input"), py::arg("onto"), py::arg("out"), py::kw_only(),
        py::arg("clip") = "", py::arg("map") = "", py::arg("onto_map") = "",
        py::arg("ground") = true, py::arg("preview") = "", py::arg("progress") = py::none(),
        R"(`kinema retarget`: the motion of `input` onto the avatar `onto`, feet grounded, written
to `out` (.vrma .vrm .glb .gltf .bvh .fbx). Returns a report dict: frames, rate, metrics before
and after grounding (foot skate cm/s, penetration, knee jumps) and the written asset.)");
  m.def("clean", &clean, py::arg("input"), py::arg("character"), py::arg("out"), py::kw_only(),
        py::arg("clip") = "", py::arg("visibility") = "", py::arg("report") = "",
        py::arg("plot") = "", py::arg("preview") = "", py::arg("progress") = py::none(),
        R"(`kinema clean`: pushes the arms of a retargeted clip out of the character's body.
Returns a report dict with per-arm metrics (left, right) and the written asset.)");
  m.def("compress_files", &compress_files, py::arg("inputs"), py::arg("out_dir"), py::kw_only(),
        py::arg("max_error") = 1e-4, py::arg("vertex_distance") = 0.03,
        py::arg("progress") = py::none(),
        "`kinema compress`: each input becomes OUT_DIR/<stem>.kmc. Returns a report dict.");
  m.def(
      "decompress_file",
      [](const std::string& in, const std::string& out, const std::string& clip) {
        pipeline::DecompressRequest request{in, out, clip};
        const auto r = released([&] { return pipeline::decompress_file(request); });
        return r.clips_written;
      },
      py::arg("input"), py::arg("out"), py::kw_only(), py::arg("clip") = "",
      "`kinema decompress`: a .kmc to .glb .gltf .bvh. Returns the number of clips written.");
  m.def("simulate", &simulate, py::arg("scene"), py::arg("out"), py::kw_only(),
        py::arg("threads") = 0, py::arg("character") = "", py::arg("progress") = py::none(),
        R"(`kinema sim`: runs a scene JSON (cloth, soft bodies, hair, particles, rigid bodies,
liquids, smoke) and writes its caches next to `out`. The result does not depend on `threads`.
Returns a report dict with the paths written.)");
  m.def("ragdoll", &ragdoll, py::arg("character"), py::arg("out"), py::kw_only(),
        py::arg("hit_bone"), py::arg("impulse"), py::arg("hit_time") = 0.0,
        py::arg("powered") = false, py::arg("seconds_after") = 3.0, py::arg("clip") = "",
        py::arg("progress") = py::none(),
        R"(`kinema ragdoll`: hits a character's bone with an impulse (N·s, world axes) at
hit_time and bakes the fall into `out`. Returns a report dict.)");
}

}  // namespace kinema::python
