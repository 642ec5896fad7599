// src/pipeline/motion_out.h — writing a job's result clip by OUT's extension (module-private;
// shared by the retarget and clean jobs).
#pragma once

#include <string>

#include "kinema/character/asset.h"

namespace kinema::pipeline {

/// Writes `written` (an avatar whose clip 0 is the result) to `out` atomically by extension:
/// .vrma (the clip alone, on the avatar's humanoid), .bvh (at `rate` frames per second), .fbx,
/// else .vrm .glb .gltf (the avatar with the clip). Throws kinema::Error as the writers do.
void write_motion(const Asset& written, const std::string& out, double rate);

}  // namespace kinema::pipeline
