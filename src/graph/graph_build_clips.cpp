// Building a graph's clips (see graph_builder_internal.h): loading each clip file once, the
// graph's skeleton (the first file's), moving other files' tracks onto it by joint name, then
// extracting root motion and building each clip's runtime or compressed form.
#include <filesystem>

#include "graph_builder_internal.h"
#include "ground_motion.h"
#include "kinema/compress/compress.h"

namespace kinema {

namespace fs = std::filesystem;

const Asset& GraphBuilder::load_file(const std::string& path, const Json& where) {
  if (const auto it = files_.find(path); it != files_.end()) return it->second;
  Asset asset;
  try {
    if (!opt_.load_file)
      fail(where.ptr,
           "no clip loader given (GraphBuildOptions::load_file; load_anim_graph in "
           "kinema/io/graph_file.h reads clip files)");
    std::error_code ec;
    if (opt_.clips_are_files && !fs::is_regular_file(path, ec))
      fail(where.ptr, "clip file not found: " + path);
    asset = opt_.load_file(path);
  } catch (const Error& e) {
    if (e.file() == g_.file_) throw;
    fail(where.ptr, "cannot load '" + get_string(where) + "': " + e.what());
  }
  return files_.emplace(path, std::move(asset)).first->second;
}

std::vector<int> GraphBuilder::joint_map(const Asset& asset, const std::string& path,
                                         const Json& where) const {
  const Skeleton& ref = out_.character.skeleton;
  const Skeleton& sk = asset.skeleton;
  const std::string differs =
      "the skeleton of " + path + " differs from that of " + skeleton_file_ + " (the graph's): ";
  std::vector<int> map(static_cast<size_t>(sk.joint_count()), -1);
  for (int j = 0; j < sk.joint_count(); ++j) {
    const std::string& name = sk.joint(j).name;
    const int r = ref.find(name);
    if (r < 0) fail(where.ptr, differs + "joint '" + name + "' is not in the graph's skeleton");
    const int p = sk.parent(j), rp = ref.parent(r);
    const std::string pn = p < 0 ? "(none)" : sk.joint(p).name;
    const std::string rpn = rp < 0 ? "(none)" : ref.joint(rp).name;
    if (pn != rpn)
      fail(where.ptr,
           differs + "joint '" + name + "' has parent " + pn + " here but " + rpn + " there");
    map[static_cast<size_t>(j)] = r;
  }
  if (sk.joint_count() != ref.joint_count()) {
    for (int r = 0; r < ref.joint_count(); ++r)
      if (sk.find(ref.joint(r).name) < 0)
        fail(where.ptr, differs + "joint '" + ref.joint(r).name + "' is missing");
  }
  return map;
}

const Clip& GraphBuilder::select_clip(const Json& c, const Asset& asset,
                                      GraphClipSource& source) const {
  if (c.has("clip")) {
    const Json which = c.at("clip");
    source.clip_name = get_name(which);
    for (const Clip& k : asset.clips)
      if (k.name == source.clip_name) return k;
    std::string list;
    for (const Clip& k : asset.clips) list += (list.empty() ? "'" : ", '") + k.name + "'";
    fail(which.ptr, "no clip '" + source.clip_name + "' in " + source.file +
                        (list.empty() ? " (it has no animation)" : " (clips: " + list + ")"));
  }
  if (asset.clips.size() != 1)
    fail(c.ptr + "/clip", source.file + " has " + std::to_string(asset.clips.size()) +
                              " clips; name one with \"clip\"");
  source.clip_name = asset.clips[0].name;
  return asset.clips[0];
}

void GraphBuilder::parse_clips(const Json& j) {
  expect_array(j);
  if (j.v.empty()) fail(j.ptr, "a graph needs at least one clip (its file gives the skeleton)");
  for (size_t i = 0; i < j.v.size(); ++i) {
    const Json c = j.at(i);
    check_members(c, {"name", "file", "clip", "sample_rate"});
    GraphClipSource source;
    const Json name = require(c, "name");
    source.name = get_name(name);
    if (const auto it = clip_ptr_.find(source.name); it != clip_ptr_.end())
      fail(name.ptr, "duplicate clip '" + source.name + "' (first defined at " + it->second + ")");
    const Json file = require(c, "file");
    source.file = get_name(file);
    const fs::path p(source.file);
    source.path =
        (p.is_absolute() || dir_.empty() ? p : fs::path(dir_) / p).lexically_normal().string();
    const Asset& asset = load_file(source.path, file);
    if (i == 0) {  // the first file is the character every clip plays on
      skeleton_file_ = source.path;
      out_.character = asset;
      out_.character.clips.clear();
      if (out_.character.skeleton.empty()) fail(file.ptr, source.path + " has no skeleton");
      g_.runtime_skeleton_ = RuntimeSkeleton::build(out_.character.skeleton);
    }
    RawClip raw;
    raw.clip = select_clip(c, asset, source);
    raw.clip.morph_tracks.clear();  // the graph plays skeletal motion only
    if (i > 0 && source.path != skeleton_file_) {
      // Same joints by name, maybe in another order: move the tracks to the graph's order.
      const std::vector<int> map = joint_map(asset, source.path, file);
      std::vector<JointTrack> tracks(static_cast<size_t>(out_.character.skeleton.joint_count()));
      for (size_t k = 0; k < raw.clip.tracks.size() && k < map.size(); ++k)
        tracks[static_cast<size_t>(map[k])] = std::move(raw.clip.tracks[k]);
      raw.clip.tracks = std::move(tracks);
    }
    if (c.has("sample_rate")) {
      const Json rate = c.at("sample_rate");
      raw.sample_rate = get_number(rate);
      if (!(raw.sample_rate > 0) || raw.sample_rate > 1000)
        fail(rate.ptr, "sample_rate must be in (0, 1000] frames per second");
    }
    raw.ptr = c.ptr;
    raw_.push_back(std::move(raw));
    clip_ptr_[source.name] = c.ptr;
    GraphClip& clip = g_.clips_.emplace_back();
    clip.name = source.name;
    out_.clips.push_back(std::move(source));
  }
}

void GraphBuilder::build_clips() {
  const Skeleton& skeleton = out_.character.skeleton;
  const CompressionConfig& compression = out_.compression;
  for (size_t i = 0; i < g_.clips_.size(); ++i) {
    GraphClip& clip = g_.clips_[i];
    const GraphClipSource& source = out_.clips[i];
    RawClip& raw = raw_[i];
    try {
      RuntimeClipOptions options;
      options.sample_rate = raw.sample_rate;
      if (g_.root_motion_.enabled) {
        RootMotionOptions motion;
        motion.joint = g_.root_motion_.joint;
        motion.sample_rate = raw.sample_rate;
        clip.root = RootMotion::extract(raw.clip, skeleton, motion);
        clip.has_root_motion = true;
        g_.root_motion_.joint = clip.root.joint();
        RootDelta cycle;
        if (g_.root_motion_.rotation) {
          raw.clip = make_in_place(raw.clip, skeleton, clip.root);
          clip.root.delta(0, clip.root.duration(), WrapMode::Clamp, cycle);
        } else {
          raw.clip = remove_ground_translation(raw.clip, skeleton, clip.root);
          ground_translation(clip.root, 0, clip.root.duration(), false, cycle);
        }
        if (clip.root.duration() > 0)
          clip.root_speed = static_cast<float>(length(cycle.translation) / clip.root.duration());
      }
      if (compression.enabled) {
        CompressOptions compress_options;
        compress_options.max_error = compression.max_error;
        compress_options.vertex_distance = compression.vertex_distance;
        compress_options.sample_rate = raw.sample_rate;
        clip.compressed = compress(raw.clip, skeleton, compress_options);
      } else {
        clip.runtime = RuntimeClip::build(raw.clip, skeleton, options);
      }
    } catch (const Error& e) {
      if (e.file() == g_.file_) throw;
      fail(raw.ptr, "clip '" + source.clip_name + "' of " + source.file + ": " + e.what());
    }
  }
  raw_.clear();
}

}  // namespace kinema
