// `kinema clean` as a library call (kinema/pipeline/clean.h).
#include "kinema/pipeline/clean.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/plot.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/retarget.h"
#include "motion_out.h"

namespace kinema::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr const char* kHands[2] = {"left", "right"};

/// "a, b, c and 4 more".
std::string name_list(const std::vector<std::string>& names, size_t shown = 8) {
  std::string s;
  for (size_t i = 0; i < std::min(names.size(), shown); ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
  return s;
}

/// A .vrma's clip on the character: its nodes are VRM humanoid bones, not the character's
/// joints, so it is moved bone by bone (retarget_clip, rotation mode, at the clip's rate).
Clip vrma_on_character(const Asset& motion, int clip_index, const Asset& character,
                       const Humanoid& map, const CleanRequest& rq, int& matched) {
  const Clip& source = motion.clips[size_t(clip_index)];
  const Humanoid source_map = require_humanoid(motion, rq.in);
  matched = 0;
  for (const auto& [bone, joint] : source_map.bones) matched += map.find(bone) >= 0;
  RetargetOptions options;
  options.sample_rate = source.sample_rate > 0 ? source.sample_rate : infer_frame_rate(source);
  Clip clip = retarget_clip(motion.skeleton, source_map, source, character.skeleton, map, options,
                            rq.in, rq.character);
  if (clip.name.empty()) clip.name = source.name;
  return clip;
}

/// IN's clip with its tracks moved onto the character's joints of the same names. Morph tracks
/// stay only when IN's meshes are the character's (same count and morph targets).
Clip clip_on_character(const Asset& motion, int clip_index, const Asset& character,
                       const CleanRequest& rq, int& matched) {
  const Clip& source = motion.clips[size_t(clip_index)];
  std::unordered_map<std::string, int> by_name;
  for (int j = 0; j < character.skeleton.joint_count(); ++j)
    by_name.emplace(character.skeleton.joint(j).name, j);
  Clip clip;
  clip.name = source.name;
  clip.duration = source.duration;
  clip.sample_rate = source.sample_rate;
  clip.tracks.resize(size_t(character.skeleton.joint_count()));
  std::vector<std::string> missing;
  matched = 0;
  for (size_t j = 0; j < source.tracks.size() && int(j) < motion.skeleton.joint_count(); ++j) {
    if (source.tracks[j].empty()) continue;
    const std::string& name = motion.skeleton.joint(int(j)).name;
    const auto it = by_name.find(name);
    if (it == by_name.end()) {
      missing.push_back(name);
      continue;
    }
    clip.tracks[size_t(it->second)] = source.tracks[j];
    ++matched;
  }
  if (!missing.empty() || matched == 0)
    throw Error(rq.in, "clip '" + source.name + "'",
                "is a clip for another skeleton: its animated joints " + name_list(missing) +
                    (missing.size() == 1 ? " is not a joint" : " are not joints") + " of " +
                    rq.character + " (" + std::to_string(matched) + " of " +
                    std::to_string(matched + int(missing.size())) +
                    " match by name); retarget it first: kinema retarget " + rq.in + " --onto " +
                    rq.character + " -o OUT");
  bool same_meshes = motion.meshes.size() == character.meshes.size();
  for (size_t m = 0; same_meshes && m < motion.meshes.size(); ++m)
    same_meshes = motion.meshes[m].morph_targets.size() == character.meshes[m].morph_targets.size();
  if (same_meshes) clip.morph_tracks = source.morph_tracks;
  return clip;
}

void check_outputs(const CleanRequest& rq) {
  static constexpr std::string_view kWritable[] = {"vrma", "vrm", "glb", "gltf", "bvh", "fbx"};
  static constexpr std::string_view kPng[] = {"png"}, kJson[] = {"json"};
  const NamedInput inputs[] = {
      {"IN", rq.in}, {"the --character", rq.character}, {"the --visibility file", rq.visibility}};
  check_output_file(rq.out, inputs, kWritable, "clean");
  const std::pair<const std::string*, const char*> others[] = {
      {&rq.report, "clean --report"}, {&rq.preview, "clean --preview"}, {&rq.plot, "clean --plot"}};
  std::vector<std::string> seen{rq.out};
  for (const auto& [path, job] : others) {
    if (path->empty()) continue;
    check_output_file(*path, inputs, path == &rq.report ? kJson : kPng, job);
    for (const std::string& s : seen)
      if (same_file(s, *path))
        throw UsageError(std::string(job) + ": " + *path + " is written twice");
    seen.push_back(*path);
  }
  if (rq.preview_frames < 1 || rq.preview_frames > 16)
    throw UsageError("clean: the preview shows 1–16 frames, not " +
                     std::to_string(rq.preview_frames));
}

nlohmann::json arm_json(const ArmClearanceMetrics& m) {
  const auto peak = [](const std::vector<double>& d) {
    return d.empty() ? 0.0 : *std::max_element(d.begin(), d.end()) * 1000;
  };
  return {{"frames_inside_before", m.frames_inside_before},
          {"frames_inside_after", m.frames_inside_after},
          {"switches_per_frame", m.switches_per_frame},
          {"switches", m.switches},
          {"jerk_peak_before_mm", m.jerk_peak_before_mm},
          {"jerk_p99_before_mm", m.jerk_p99_before_mm},
          {"jerk_peak_after_mm", m.jerk_peak_after_mm},
          {"jerk_p99_after_mm", m.jerk_p99_after_mm},
          {"added_mean_mm", m.added_mean_mm},
          {"added_max_mm", m.added_max_mm},
          {"depth_max_before_mm", peak(m.depth_before_m)},
          {"depth_max_after_mm", peak(m.depth_after_m)},
          {"acceleration_limit",
           {{"bound_mm", m.limit.bound_m * 1000},
            {"frames_changed", m.limit.frames_changed},
            {"max_violation_mm", m.limit.max_violation_m * 1000}}}};
}

std::string report_json(const CleanRequest& rq, const CleanResult& r) {
  const ArmClearanceResult& c = r.clearance;
  const ArmClearanceTimings& t = c.timings;
  long coupled = 0;
  for (double a : c.coupling) coupled += a > 0;
  nlohmann::json j{{"in", rq.in},
                   {"character", rq.character},
                   {"out", rq.out},
                   {"clip", r.clip_name},
                   {"frames", c.frames},
                   {"rate", c.rate},
                   {"matched_joints", r.matched_joints},
                   {"arms", {{"left", arm_json(c.arms[0])}, {"right", arm_json(c.arms[1])}}},
                   {"clasped_hands",
                    {{"frames", c.clasped.frames},
                     {"distance_before_m", c.clasped.distance_before_m},
                     {"distance_after_m", c.clasped.distance_after_m},
                     {"max_change_m", c.clasped.max_change_m},
                     {"frames_coupled", coupled}}},
                   {"body_vertices", c.body_vertices},
                   {"timings_s",
                    {{"read", r.read_s},
                     {"surface", t.surface_s},
                     {"candidates", t.candidates_s},
                     {"path", t.path_s},
                     {"coupling", t.coupling_s},
                     {"smoothing", t.smoothing_s},
                     {"acceleration_limit", t.limit_s},
                     {"write", t.write_s},
                     {"clear_arms_total", t.total_s},
                     {"render", r.render_s}}},
                   {"options",
                    {{"margin_m", rq.options.margin_m},
                     {"keep", rq.options.keep},
                     {"couple_hands", rq.options.couple_hands},
                     {"finger_pass_limit_m", rq.options.finger_pass_limit_m},
                     {"limit_acceleration", rq.options.limit_acceleration},
                     {"acceleration_allowance_m", rq.options.acceleration_allowance_m},
                     {"threads", rq.options.threads}}},
                   {"visibility", rq.visibility.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(rq.visibility)},
                   {"camera", rq.camera ? nlohmann::json{rq.camera->x, rq.camera->y, rq.camera->z}
                                        : nlohmann::json(nullptr)},
                   {"preview_frames", r.preview_frame_indices}};
  if (!r.preview_skipped.empty()) j["preview_skipped"] = r.preview_skipped;
  return j.dump(2) + "\n";
}

/// The worst frames on the character, the input above and the cleaned clip below, as PNG bytes.
std::string render_preview(const Asset& before, const Asset& after, const std::vector<long>& frames,
                           double rate, const std::string& file, std::string& renderer) {
  ClipRenderOptions options;
  options.target.width = 320;
  options.target.height = 360;
  options.camera = CameraMode::Front;
  ClipRenderer top(before, 0, options, file);
  ClipRenderer bottom(after, 0, options, file);
  std::vector<Image> tiles;
  for (ClipRenderer* r : {&top, &bottom})
    for (long f : frames) {
      // Framed around that moment (±0.25 s), not the whole clip: a walk's whole path would
      // leave the arms a few pixels wide.
      const double t = double(f) / rate;
      r->set_time_range(std::max(0.0, t - 0.25), std::min(r->duration(), t + 0.25));
      tiles.push_back(r->frame(t));
    }
  renderer = top.renderer().gl_renderer();
  return encode_png(contact_sheet(tiles, int(frames.size())));
}

/// Per-frame depth before and after for each arm, millimetres, as PNG bytes.
std::string render_plot(const ArmClearanceResult& c, const std::string& clip_name) {
  const auto mm = [](const std::vector<double>& m) {
    std::vector<double> v(m.size());
    std::transform(m.begin(), m.end(), v.begin(), [](double x) { return x * 1000; });
    return v;
  };
  std::vector<PlotSeries> series{
      {"left before", mm(c.arms[0].depth_before_m), {150, 190, 235}, 1.5f},
      {"right before", mm(c.arms[1].depth_before_m), {250, 190, 140}, 1.5f},
      {"left after", mm(c.arms[0].depth_after_m), {20, 80, 200}, 1.5f},
      {"right after", mm(c.arms[1].depth_after_m), {210, 70, 20}, 1.5f}};
  PlotOptions options;
  options.title = "arm depth inside the body" + (clip_name.empty() ? "" : ": " + clip_name);
  options.y_label = "depth (mm)";
  options.x_label = "frame";
  return encode_png(plot_lines(series, options));
}

/// Writes OUT and the other files; when one fails, removes those already written.
void write_all(const CleanRequest& rq, const CleanResult& r,
               const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> written;
  try {
    write_motion(r.written, rq.out, r.clearance.rate);
    written.push_back(rq.out);
    for (const auto& [path, bytes] : files) {
      write_file_atomically(path, bytes);
      written.push_back(path);
    }
  } catch (...) {
    std::error_code ec;
    for (const std::string& p : written) std::filesystem::remove(p, ec);
    throw;
  }
}

}  // namespace

std::array<std::vector<double>, 2> read_visibility(const std::string& path, long frames) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path, "byte " + std::to_string(e.byte), "is not JSON: " + std::string(e.what()));
  }
  if (!j.is_object())
    throw Error(path, "", R"(must be a JSON object {"left": [0–1 per frame], "right": [...]})");
  if (!j.contains("left") && !j.contains("right"))
    throw Error(path, "", R"(has neither "left" nor "right" (arrays of 0–1 per frame))");
  std::array<std::vector<double>, 2> out;
  for (int hand = 0; hand < 2; ++hand) {
    if (!j.contains(kHands[hand])) continue;
    const nlohmann::json& a = j[kHands[hand]];
    const std::string place = std::string("/") + kHands[hand];
    if (!a.is_array()) throw Error(path, place, "must be an array of numbers 0–1, one per frame");
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number()) throw Error(path, place + "/" + std::to_string(i), "is not a number");
      const double v = a[i].get<double>();
      if (!(v >= 0 && v <= 1))
        throw Error(path, place + "/" + std::to_string(i),
                    "is " + std::to_string(v) + ", outside [0, 1]");
      out[size_t(hand)].push_back(v);
    }
    if (frames > 0 && long(a.size()) != frames)
      throw Error(path, place,
                  std::string("the ") + kHands[hand] + " hand's visibility has " +
                      std::to_string(a.size()) + " values; the clip has " + std::to_string(frames) +
                      " frames");
  }
  return out;
}

std::vector<long> worst_frames(const std::array<std::vector<double>, 2>& depth, int count,
                               int separation) {
  const size_t n = std::max(depth[0].size(), depth[1].size());
  std::vector<double> worst(n, -INFINITY);
  for (const auto& d : depth)
    for (size_t i = 0; i < d.size(); ++i) worst[i] = std::max(worst[i], d[i]);
  std::vector<long> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = long(i);
  // Deepest first; ties by time so the choice does not depend on the sort.
  std::stable_sort(order.begin(), order.end(),
                   [&](long a, long b) { return worst[size_t(a)] > worst[size_t(b)]; });
  std::vector<long> chosen;
  for (long f : order) {
    if (int(chosen.size()) >= count) break;
    const bool apart = std::all_of(chosen.begin(), chosen.end(),
                                   [&](long c) { return std::labs(c - f) >= separation; });
    if (apart) chosen.push_back(f);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

CleanResult clean_file(const CleanRequest& rq, const Progress& progress) {
  check_outputs(rq);
  const Clock::time_point start = Clock::now();
  report(progress, "reading", 0, 2);
  const Asset motion = load_asset(rq.in, rq.load);
  report(progress, "reading", 1, 2);
  Asset character = load_asset(rq.character, rq.load);
  report(progress, "reading", 2, 2);
  if (motion.clips.empty()) throw Error(rq.in, "", "has no animation to clean");
  if (extension_of(rq.out) == "vrma" && character.source.format != "vrm1")
    throw Error(rq.character, "",
                "is not a VRM 1.0 avatar, and a VRM Animation (.vrma) plays on VRM 1.0 avatars; "
                "write .vrm or .glb, or convert it first (kinema convert " +
                    rq.character + " avatar1.vrm)");
  const int clip_index = rq.clip.empty() ? 0 : find_clip(motion, rq.clip, rq.in);
  const Humanoid map = require_humanoid(character, rq.character);
  character.humanoid = map;

  CleanResult r;
  r.clip_name = motion.clips[size_t(clip_index)].name;
  Clip clip = extension_of(rq.in) == "vrma"
                  ? vrma_on_character(motion, clip_index, character, map, rq, r.matched_joints)
                  : clip_on_character(motion, clip_index, character, rq, r.matched_joints);
  // A glTF clip has key times, not a rate: sample it on the grid its keys lie on.
  if (clip.sample_rate <= 0) clip.sample_rate = infer_frame_rate(clip);
  const double rate = sample_rate_or(clip);
  const long frames = std::lround(clip.duration * rate) + 1;
  ArmClearanceInputs inputs;
  if (!rq.visibility.empty()) inputs.visibility = read_visibility(rq.visibility, frames);
  inputs.camera = rq.camera;
  r.read_s = seconds_since(start);

  r.clearance = clear_arms(character, map, clip, inputs, rq.options, rq.character,
                           [&](const std::string& stage, double done) {
                             report(progress, stage, std::lround(done * 1000), 1000);
                           });
  if (r.clearance.rate <= 0) r.clearance.rate = rate;
  Asset before = character;
  before.clips = {std::move(clip)};
  r.written = std::move(character);
  r.written.clips.clear();
  r.written.clips.push_back(std::move(r.clearance.clip));
  r.clearance.clip = Clip{};
  if (r.written.clips[0].name.empty()) r.written.clips[0].name = r.clip_name;
  r.preview_frame_indices =
      worst_frames({r.clearance.arms[0].depth_before_m, r.clearance.arms[1].depth_before_m},
                   rq.preview_frames, rq.preview_separation);

  std::vector<std::pair<std::string, std::string>> files;
  const Clock::time_point render_start = Clock::now();
  if (!rq.preview.empty()) {
    report(progress, "rendering the preview", 0, 1);
    try {
      files.emplace_back(rq.preview, render_preview(before, r.written, r.preview_frame_indices,
                                                    r.clearance.rate, rq.character, r.renderer));
    } catch (const Error& e) {
      if (!rq.preview_optional || e.file() != "OpenGL") throw;
      r.preview_skipped = e.what();
    }
    report(progress, "rendering the preview", 1, 1);
  }
  if (!rq.plot.empty()) files.emplace_back(rq.plot, render_plot(r.clearance, r.clip_name));
  r.render_s = seconds_since(render_start);
  if (!rq.report.empty()) files.insert(files.begin(), {rq.report, report_json(rq, r)});
  report(progress, "writing", 0, 1);
  write_all(rq, r, files);
  report(progress, "writing", 1, 1);
  return r;
}

}  // namespace kinema::pipeline
