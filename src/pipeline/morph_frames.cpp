// glTF morph-target meshes from per-frame positions (morph_frames.h).
#include "morph_frames.h"

namespace kinema::pipeline {

Asset morph_frames_asset(const std::vector<MeshFrames>& outputs, int fps, int frames,
                         const std::string& clip_name) {
  Asset asset;
  std::vector<Joint> joints;
  for (const MeshFrames& m : outputs) joints.push_back(Joint{m.name, kNoParent, {}, {}});
  asset.skeleton = Skeleton::build(std::move(joints));
  Clip clip;
  clip.name = clip_name;
  clip.duration = double(frames - 1) / fps;
  clip.sample_rate = fps;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const MeshFrames& source = outputs[i];
    const PointCache& cache = *source.frames;
    Mesh mesh;
    mesh.name = source.name;
    mesh.node = int(i);
    for (const Vec3& p : source.rest) mesh.positions.push_back(Vec3f(p));
    for (const auto& t : source.triangles)
      mesh.indices.insert(mesh.indices.end(), t.begin(), t.end());
    // Area-weighted vertex normals of each frame, so that folds shade (the morph targets carry
    // their change from the rest normals).
    auto normals_of = [&](auto&& position) {
      std::vector<Vec3> sum(mesh.positions.size(), Vec3{0, 0, 0});
      for (const auto& t : source.triangles) {
        const Vec3 a = position(t[0]), n = cross(position(t[1]) - a, position(t[2]) - a);
        for (std::uint32_t v : t) sum[v] += n;
      }
      std::vector<Vec3f> out;
      for (const Vec3& n : sum) out.push_back(Vec3f(length(n) > 0 ? normalize(n) : Vec3{0, 1, 0}));
      return out;
    };
    mesh.normals = normals_of([&](std::uint32_t v) { return source.rest[v]; });
    MorphTrack track;
    track.mesh = int(i);
    track.target_count = frames;
    for (int f = 0; f < frames; ++f) {
      MorphTarget target;
      target.name = "frame_" + std::to_string(f);
      target.position_deltas.resize(mesh.positions.size());
      for (size_t v = 0; v < mesh.positions.size(); ++v)
        target.position_deltas[v] = cache.at(f, int(v)) - mesh.positions[v];
      target.normal_deltas = normals_of([&](std::uint32_t v) { return Vec3(cache.at(f, int(v))); });
      for (size_t v = 0; v < mesh.positions.size(); ++v)
        target.normal_deltas[v] = target.normal_deltas[v] - mesh.normals[v];
      mesh.morph_targets.push_back(std::move(target));
      track.times.push_back(double(f) / fps);
      for (int k = 0; k < frames; ++k) track.values.push_back(k == f ? 1.0 : 0.0);
    }
    mesh.default_weights.assign(size_t(frames), 0.0);
    mesh.default_weights[0] = 1;
    asset.meshes.push_back(std::move(mesh));
    clip.morph_tracks.push_back(std::move(track));
  }
  clip.tracks.resize(outputs.size());
  asset.clips.push_back(std::move(clip));
  return asset;
}

}  // namespace kinema::pipeline
