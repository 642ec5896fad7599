// Meshes whose positions are given at every frame, written as glTF morph targets (module-private:
// the sim and grow jobs).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/io/point_cache.h"

namespace kinema::pipeline {

/// A mesh a job writes as a point cache or a glTF morph-target mesh: rest positions and
/// triangles, and its positions at every written frame.
struct MeshFrames {
  std::string name;
  std::vector<Vec3> rest;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  const PointCache* frames = nullptr;
};

/// The meshes as one glTF asset: each a mesh on its own node with one morph target per frame (the
/// frame's positions minus the rest positions, and its area-weighted normals minus the rest
/// normals) and one clip named `clip_name` whose weights go one-hot from frame to frame,
/// linearly: between frames k and k + 1 a viewer shows the straight blend of the two, as the
/// point cache would.
Asset morph_frames_asset(const std::vector<MeshFrames>& meshes, int fps, int frames,
                         const std::string& clip_name);

}  // namespace kinema::pipeline
