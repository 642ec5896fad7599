// tools/kinema/info_summary.cpp — what `kinema info` prints about an asset (the joint tree,
// counts, clips, source, humanoid mapping) and about a .kmc's compression, as text or JSON
// (tools/kinema/info_summary.h; the verb itself is tools/kinema/verb_info.cpp).
#include "info_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli.h"
#include "kinema/compress/summary.h"
#include "kinema/io/bvh.h"
#include "kinema/retarget/humanoid.h"

namespace kinema::cli {

namespace {

/// joint index → VRM bone name, for marking the tree.
std::map<int, std::string> bones_by_joint(const std::optional<Humanoid>& humanoid) {
  std::map<int, std::string> out;
  if (!humanoid) return out;
  for (const auto& [bone, joint] : humanoid->bones)
    if (joint >= 0) out.emplace(joint, bone);
  return out;
}

void print_tree(const Asset& asset, const std::map<int, std::string>& bones, std::ostream& out) {
  const Skeleton& sk = asset.skeleton;
  std::map<int, std::vector<std::string>> meshes_at;
  for (const Mesh& m : asset.meshes)
    if (m.node >= 0) meshes_at[m.node].push_back(m.name.empty() ? "(unnamed)" : m.name);
  // Depth-first from each root, children in stored order.
  std::vector<int> stack;
  const std::vector<int> roots = sk.roots();
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back(*it);
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    out << "  " << std::string(static_cast<size_t>(2 * sk.depth(j)), ' ') << sk.joint(j).name;
    if (auto b = bones.find(j); b != bones.end()) out << "  ★ " << b->second;
    if (auto m = meshes_at.find(j); m != meshes_at.end()) {
      out << "  [mesh";
      for (const std::string& name : m->second) out << ' ' << name;
      out << ']';
    }
    out << '\n';
    const std::vector<int> kids = sk.children(j);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
}

/// Per joint with BVH position channels: how they were read and why.
nlohmann::ordered_json bvh_translation_json(const Asset& asset) {
  nlohmann::ordered_json joints = nlohmann::ordered_json::array();
  const int n = std::min(asset.skeleton.joint_count(), int(asset.bvh_layout.size()));
  for (int i = 0; i < n; ++i) {
    const BvhJointLayout& l = asset.bvh_layout[size_t(i)];
    const bool has_position =
        std::any_of(l.channels.begin(), l.channels.end(),
                    [](const std::string& c) { return c.find("position") != std::string::npos; });
    if (!has_position) continue;
    static constexpr const char* kBasis[] = {"requested", "offset_zero", "measured", "rule"};
    joints.push_back(
        {{"joint", asset.skeleton.joint(i).name},
         {"reading", std::string(to_string(l.translation))},
         {"basis", kBasis[int(l.translation_basis)]},
         {"offset_ratio", std::isfinite(l.offset_ratio) ? nlohmann::ordered_json(l.offset_ratio)
                                                        : nlohmann::ordered_json(nullptr)}});
  }
  return joints;
}

}  // namespace

nlohmann::ordered_json asset_json(const Asset& asset, const std::string& file) {
  using json = nlohmann::ordered_json;
  const Skeleton& sk = asset.skeleton;
  const AssetCounts c = count_contents(asset);
  json j;
  j["file"] = file;
  j["format"] = asset.source.format;
  j["joint_count"] = c.joints;
  j["root_count"] = c.roots;
  json joints = json::array();
  for (int i = 0; i < sk.joint_count(); ++i) {
    const int p = sk.parent(i);
    joints.push_back({{"name", sk.joint(i).name},
                      {"parent", p},
                      {"parent_name", p >= 0 ? json(sk.joint(p).name) : json(nullptr)}});
  }
  j["joints"] = std::move(joints);
  json clips = json::array();
  for (const Clip& clip : asset.clips)
    clips.push_back({{"name", clip.name},
                     {"duration", clip.duration},
                     {"sample_rate", clip.sample_rate},
                     {"frame_count", clip.frame_count()},
                     {"key_count", clip.key_count()}});
  j["clips"] = std::move(clips);
  json meshes = json::array();
  for (const Mesh& m : asset.meshes)
    meshes.push_back({{"name", m.name},
                      {"vertex_count", m.vertex_count()},
                      {"triangle_count", m.indices.size() / 3},
                      {"morph_target_count", m.morph_targets.size()},
                      {"skinned", m.skin >= 0}});
  j["meshes"] = std::move(meshes);
  json skins = json::array();
  for (const Skin& s : asset.skins)
    skins.push_back({{"name", s.name}, {"joint_count", s.joints.size()}});
  j["skins"] = std::move(skins);
  j["vertex_count"] = c.vertices;
  j["triangle_count"] = c.triangles;
  j["morph_target_count"] = c.morph_targets;
  const SourceInfo& src = asset.source;
  j["source"] = {{"unit_in_meters", src.unit_in_meters},
                 {"unit_name", src.unit_name},
                 {"unit_detected", src.unit_detected},
                 {"up_axis", src.up_axis},
                 {"forward_axis", src.forward_axis},
                 {"generator", src.generator},
                 {"warnings", src.warnings}};
  if (!asset.bvh_layout.empty()) j["bvh_translation"] = bvh_translation_json(asset);
  bool guessed = false;
  const std::optional<Humanoid> humanoid = humanoid_of(asset, &guessed);
  if (humanoid) {
    json h = json::object();
    for (const auto& [bone, joint] : humanoid->bones)
      if (joint >= 0 && joint < sk.joint_count()) h[bone] = sk.joint(joint).name;
    j["humanoid"] = std::move(h);
    j["humanoid_source"] = guessed ? "guessed" : "file";
  } else {
    j["humanoid"] = nullptr;
    j["humanoid_source"] = nullptr;
  }
  // How the names were read: the scheme they look like, or what is missing and the candidates.
  const HumanoidGuess guess = humanoid && !guessed ? HumanoidGuess{} : recognize_humanoid(sk);
  j["humanoid_scheme"] = guess.scheme.empty() ? json(nullptr) : json(guess.scheme);
  if (!humanoid && !guess.missing.empty())
    j["humanoid_missing"] = {{"bone", guess.missing.front()},
                             {"candidates", guess.candidates},
                             {"candidates_seen", guess.candidates_seen}};
  return j;
}

/// What a .kmc adds to `info`: the bound, and per clip its size, ratio and bit rates.
nlohmann::ordered_json compressed_json(const CompressedAnimation& a) {
  nlohmann::ordered_json clips = nlohmann::ordered_json::array();
  for (const CompressedClip& c : a.clips) {
    const CompressedClipSummary summary = summarize(c);
    clips.push_back({{"name", c.name()},
                     {"frames", c.frame_count()},
                     {"sample_rate", c.sample_rate()},
                     {"raw_bytes", summary.raw_bytes},
                     {"compressed_bytes", summary.compressed_bytes},
                     {"ratio", summary.ratio},
                     {"animated_tracks", c.animated_track_count()},
                     {"constant_tracks", c.constant_track_count()},
                     {"segment_frames", c.segment_frames()},
                     {"segments", c.segment_count()},
                     {"mean_bits_per_component", summary.mean_bits_per_component}});
  }
  return {{"source", a.source},
          {"source_unit", a.source_unit_name},
          {"error_bound_cm", a.max_error * 100},
          {"vertex_distance_cm", a.vertex_distance * 100},
          {"clips", std::move(clips)}};
}

void print_compressed(const CompressedAnimation& a, std::ostream& out) {
  out << "  compressed from " << a.source << " (" << a.source_unit_name << ") within "
      << format_number(a.max_error * 100, 5) << " cm at virtual vertices "
      << format_number(a.vertex_distance * 100) << " cm from each joint\n";
  for (size_t i = 0; i < a.clips.size(); ++i) {
    const CompressedClip& c = a.clips[i];
    const CompressedClipSummary summary = summarize(c);
    out << "    [" << i << "] " << format_bytes(summary.compressed_bytes) << " (raw "
        << format_bytes(summary.raw_bytes) << ", " << format_number(summary.ratio, 2) << " : 1), "
        << c.animated_track_count() << " animated and " << c.constant_track_count()
        << " constant tracks, " << c.segment_count() << " segments of " << c.segment_frames()
        << " frames, " << format_number(summary.mean_bits_per_component, 2)
        << " bits a component\n";
  }
}

void print_info(const Asset& asset, const std::string& file, std::ostream& out, bool show_tree) {
  const AssetCounts c = count_contents(asset);
  const SourceInfo& src = asset.source;
  bool guessed = false;
  const std::optional<Humanoid> humanoid = humanoid_of(asset, &guessed);
  const std::map<int, std::string> bones = bones_by_joint(humanoid);

  out << file << " (" << (src.format.empty() ? "?" : src.format) << ")\n";
  out << "  joints " << c.joints << ", roots " << c.roots << ", meshes " << c.meshes
      << ", vertices " << c.vertices << ", triangles " << c.triangles << ", skins " << c.skins
      << ", morph targets " << c.morph_targets << '\n';
  out << "  source: unit " << src.unit_name << " (" << format_number(src.unit_in_meters, 6) << " m"
      << (src.unit_detected ? ", detected" : "") << "), up " << src.up_axis << ", forward "
      << src.forward_axis;
  if (!src.generator.empty()) out << ", generator \"" << src.generator << '"';
  out << '\n';
  for (const std::string& line : describe_bvh_translation(asset))
    out << "  BVH position channels: " << line << '\n';
  const HumanoidGuess guess =
      humanoid && !guessed ? HumanoidGuess{} : recognize_humanoid(asset.skeleton);
  if (humanoid)
    out << "  humanoid: " << bones.size() << " bones"
        << (guessed ? " (guessed from names: " + guess.scheme + ")" : "") << '\n';
  else
    out << "  humanoid: none ("
        << (guess.missing.empty() ? "names do not map to humanoid bones" : describe_missing(guess))
        << ")\n";
  out << "  clips: " << asset.clips.size() << '\n';
  for (size_t i = 0; i < asset.clips.size(); ++i) {
    const Clip& clip = asset.clips[i];
    out << "    [" << i << "] " << (clip.name.empty() ? "(unnamed)" : '"' + clip.name + '"') << ": "
        << format_number(clip.duration, 3) << " s, "
        << (clip.sample_rate > 0 ? format_number(clip.sample_rate, 3) + " fps"
                                 : std::string("keys at arbitrary times"))
        << ", " << clip.frame_count() << " frames, " << clip.key_count() << " keys\n";
  }
  for (const Skin& s : asset.skins)
    out << "  skin " << (s.name.empty() ? "(unnamed)" : '"' + s.name + '"') << ": "
        << s.joints.size() << " joints\n";
  for (const Mesh& m : asset.meshes)
    out << "  mesh " << (m.name.empty() ? "(unnamed)" : '"' + m.name + '"') << ": "
        << m.vertex_count() << " vertices, " << m.indices.size() / 3 << " triangles"
        << (m.skin >= 0 ? ", skinned" : "")
        << (m.morph_targets.empty()
                ? ""
                : ", " + std::to_string(m.morph_targets.size()) + " morph targets")
        << '\n';
  for (const std::string& w : src.warnings) out << "  warning: " << w << '\n';
  if (show_tree && c.joints > 0) {
    out << "  joint tree" << (bones.empty() ? "" : " (★ = humanoid bone)") << ":\n";
    print_tree(asset, bones, out);
  }
}

}  // namespace kinema::cli
