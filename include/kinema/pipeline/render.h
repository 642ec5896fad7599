// kinema/pipeline/render.h — `kinema render` as a library call: a file's clip drawn headless
// (kinema/render/clip_render.h, docs/render.md) into one PNG, a contact sheet, numbered PNGs or
// an MP4 through the ffmpeg program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/render/clip_render.h"

namespace kinema::pipeline {

struct RenderRequest {
  std::string in;
  /// More files drawn with `in`, each playing its first clip (the cloth `kinema sim` simulated
  /// around a character, a prop); the frames follow `in`'s clip.
  std::vector<std::string> with;
  /// out.png (one frame, or a contact sheet), a pattern with one %d or %0Nd such as
  /// out_%04d.png (one PNG per frame), or out.mp4.
  std::string out;
  std::string clip;                       ///< by name or index; empty: the first
  std::optional<double> time;             ///< one frame at this time (seconds; default 0)
  int first_frame = -1, last_frame = -1;  ///< frames A:B at the clip's rate; -1: all
  int contact_sheet = 0;                  ///< tile this many frames into one PNG (0: none)
  ClipRenderOptions options;              ///< image (or tile) size, samples, camera, skinning
  LoadOptions load;
};

struct RenderResult {
  size_t frames = 0;
  int width = 0, height = 0;  ///< of one frame (or tile)
  double seconds = 0;         ///< rendering and encoding, wall clock
  std::string gl_renderer;    ///< what drew it ("llvmpipe (LLVM 15.0.6, 256 bits)", a GPU…)
};

/// Checks the request before reading anything, renders every frame and writes the output: PNGs
/// atomically after every frame is encoded, an MP4 to a temporary file renamed at the end, so a
/// failure leaves no partial output. Progress stage: "render" (frames). Throws UsageError for a
/// request that makes no sense (an output kind and options that do not go together, frames or a
/// time outside the clip); kinema::Error for unreadable input, no OpenGL, a missing or failing
/// ffmpeg, a write failure.
RenderResult render_file(const RenderRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
