// The JSON `kinema view` sends the page for kinema's own formats (kinema/pipeline/view.h).
#pragma once

#include <string>

#include "kinema/pipeline/view.h"

namespace kinema::pipeline {

/// A ground (.png height map or .obj mesh) sampled into a height grid, and — when `clip_file` is
/// not empty — the feet goals of that file's first clip on it: each humanoid ankle per frame, the
/// ground under it and whether the foot is planted there (what foot placement pins it to).
std::string ground_json(const std::string& ground, const std::string& clip_file,
                        const ViewOptions& options);

/// A motion-matching database run along a stick path (the controller of `kinema match run`, one
/// update per database frame): the skeleton's joint positions per frame, the root's and the
/// stick simulation's paths, the predicted trajectory the search used, and the database frame
/// and clip variant playing at each frame.
std::string match_debug_json(const std::string& kmm, const std::string& stick_path,
                             const ViewOptions& options);

}  // namespace kinema::pipeline
