// kinema/pipeline/clean.h — `kinema clean` as a library call: a clip on a character, its arms
// pushed out of the character's body with the side chosen over the whole clip
// (kinema/retarget/arm_clearance.h), written as .vrma .vrm .glb .gltf .bvh or .fbx, with a JSON
// report, a contact sheet of the worst frames before and after, and a plot of the per-frame depth.
//
// The motion must already be on the character's skeleton (a `kinema retarget` result, or the
// character's own animation): its tracks are matched to the character's joints by name. A .vrma
// (whose nodes are VRM humanoid bones) is moved onto the character bone by bone instead.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/retarget/arm_clearance.h"

namespace kinema::pipeline {

struct CleanRequest {
  /// The motion on the character: .vrma (moved onto the character by humanoid bone, rotation
  /// mode), or .vrm .glb .gltf .bvh .fbx whose skeleton is the character's (tracks matched to
  /// its joints by name). Never modified.
  std::string in;
  std::string character;  ///< the character: VRM/GLB with a skinned mesh (never modified)
  /// OUT by extension: .vrma (needs a VRM 1.0 character), .vrm .glb .gltf (the character with
  /// the cleaned clip), .bvh, .fbx.
  std::string out;
  std::string clip;  ///< the clip of IN, by name or index; empty: the first
  /// Hand visibility, JSON {"left": [0–1 per frame], "right": [...]} (docs/formats.md); empty:
  /// none (no side term).
  std::string visibility;
  std::optional<Vec3> camera;  ///< camera position in the character's model space, metres
  std::string report;          ///< a JSON report to write; empty: none
  std::string preview;     ///< a PNG contact sheet of the worst frames, before above, after below
  std::string plot;        ///< a PNG plot of the per-frame depth before and after, per arm (mm)
  int preview_frames = 4;  ///< worst frames shown (1–16)
  int preview_separation = 10;  ///< frames at least this far apart
  /// When the preview cannot be rendered (no OpenGL), record why in CleanResult::preview_skipped
  /// and write the rest, instead of failing.
  bool preview_optional = false;
  ArmClearanceOptions options;
  LoadOptions load;  ///< how IN and the character are read
};

struct CleanResult {
  /// The character with the cleaned clip as its only clip (clearance.clip is moved here).
  Asset written;
  ArmClearanceResult clearance;  ///< metrics, per-frame depths, timings (its clip is empty)
  std::string clip_name;         ///< the clip of IN that was cleaned
  int matched_joints = 0;        ///< IN's animated joints found on the character (.vrma: bones)
  std::vector<long> preview_frame_indices;  ///< the worst frames shown, in time order
  std::string renderer;             ///< the GL renderer of the preview, when one was rendered
  std::string preview_skipped;      ///< why there is no preview (preview_optional), else empty
  double read_s = 0, render_s = 0;  ///< seconds reading inputs / rendering the pictures
};

/// Reads IN, the character and the visibility, cleans the arms and writes OUT, the report, the
/// preview and the plot, each atomically and only after everything else succeeded (on failure no
/// file is left). Throws UsageError for an OUT, report or picture that is an input, a folder or a
/// format not written; kinema::Error for unreadable input, an IN without animation, a clip for
/// another skeleton (naming IN and the joints the character lacks), a character without a skinned
/// torso (naming it), visibility that is not the documented JSON, whose values are outside
/// [0, 1] or whose length is not the clip's frame count (naming the file, the hand and both
/// lengths), a VRM Animation OUT for a character that is not VRM 1.0, and no OpenGL for a
/// preview that is not optional.
CleanResult clean_file(const CleanRequest& request, const Progress& progress = {});

/// Reads a visibility file: {"left": [...], "right": [...]}, each an array of numbers in [0, 1]
/// (one per frame), either may be missing (no evidence for that hand). Throws kinema::Error
/// naming `path` and the JSON place for anything else; `frames` > 0 also checks the lengths.
std::array<std::vector<double>, 2> read_visibility(const std::string& path, long frames);

/// The frames a preview shows: the largest max(left, right) depths, greedily, each at least
/// `separation` frames from those already taken, up to `count`, in time order.
std::vector<long> worst_frames(const std::array<std::vector<double>, 2>& depth, int count,
                               int separation);

}  // namespace kinema::pipeline
