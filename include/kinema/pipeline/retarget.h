// kinema/pipeline/retarget.h — `kinema retarget` as a library call: a humanoid clip onto an
// avatar (kinema/retarget/retarget.h), its feet grounded (kinema/retarget/ground.h), measured
// before and after (kinema/retarget/metrics.h), written as .vrma .vrm .glb .gltf .bvh or .fbx,
// with an optional side-by-side preview picture.
#pragma once

#include <optional>
#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/retarget/ground.h"
#include "kinema/retarget/retarget.h"

namespace kinema::pipeline {

struct RetargetRequest {
  std::string in;    ///< the motion: .bvh .gltf .glb .vrm .vrma .fbx .dae (never modified)
  std::string onto;  ///< the avatar whose skeleton the motion goes onto (never modified)
  /// OUT by extension: .vrma (VRM Animation; needs a VRM 1.0 avatar), .vrm .glb .gltf (the
  /// avatar with the clip, its materials and extensions carried through), .bvh, .fbx.
  std::string out;
  std::string clip;         ///< the clip of IN, by name or index; empty: the first
  std::string map;          ///< a JSON humanoid map for IN (read_humanoid_map); empty: recognized
  std::string onto_map;     ///< a JSON humanoid map for the avatar; empty: its own or recognized
  RetargetOptions options;  ///< mode, frame rate (0: IN's), forearm twist, fingers
  bool ground = true;       ///< ground the feet (ground_feet) after retargeting
  GroundingOptions grounding;
  std::string preview;  ///< a PNG to render source and result side by side into; empty: none
  int preview_frames = 6;
  LoadOptions load;  ///< how IN and the avatar are read
};

struct RetargetResult {
  Asset written;  ///< the avatar with the retargeted clip as its only clip
  double rate = 0;
  long frames = 0;
  bool grounded = false;
  /// Metrics of the result before and after grounding (before only when not grounded).
  MotionMetrics before;
  std::optional<MotionMetrics> after;
  GroundingReport grounding;  ///< plants and hips offsets (when grounded)
  /// Joint-position error against the source, when IN and the avatar share a skeleton.
  std::optional<PoseError> pose_error;
  std::string renderer;  ///< the GL renderer of the preview, when one was rendered
};

/// Reads IN and the avatar, retargets, grounds, measures and writes OUT (and the preview)
/// atomically. Throws UsageError for an OUT that is an input, a folder or a format not written;
/// kinema::Error for unreadable input, a VRM Animation OUT for an avatar that is not VRM 1.0,
/// an IN without animation, humanoids that cannot be mapped (naming the bone and the candidates
/// seen), zero-length bones and non-finite keys.
RetargetResult retarget_file(const RetargetRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
