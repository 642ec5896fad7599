// kinema/pipeline/comp.h — `kinema comp` as a library call: a small compositing script, a JSON
// list of nodes evaluated in order, over one frame or a numbered sequence.
//
//   {"kinema_comp": 1,
//    "frames": {"first": 1, "last": 24, "fps": 24},          (optional: one frame, number 0)
//    "nodes": [
//      {"id": "plate", "op": "read", "path": "plate.####.png"},
//      {"id": "fg", "op": "key", "input": "plate", "screen": "green"},
//      {"id": "sky", "op": "read", "path": "sky.exr"},
//      {"id": "comp", "op": "over", "a": "fg", "b": "sky"},
//      {"op": "write", "input": "comp", "path": "out.####.png"}]}
//
// Each node names its inputs by the ids of earlier nodes, so a script reads top to bottom and
// cannot loop. A node's value is an image (premultiplied linear RGBA) or a matte (one channel);
// docs/composite.md lists every op, its fields and which it takes and gives. Paths are relative
// to the script's folder; a path with #### or %04d is a sequence, read or written per frame.
//
// Nothing is written unless every frame of every output succeeds: outputs are staged beside
// their targets and renamed into place at the end (removed on failure). No output may be an
// input or another output.
#pragma once

#include <string>
#include <vector>

#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct CompRequest {
  std::string script;  ///< the JSON script
  /// Frames to do instead of the script's range (both set, first ≤ last); unset: the script's.
  int first_frame = 0, last_frame = -1;
  Progress progress;  ///< stage "compositing" (frames)
};

struct CompReport {
  int frames = 0;
  int nodes = 0;
  int width = 0, height = 0;  ///< the last written image's size
  double seconds = 0;         ///< evaluating nodes, without file reading and writing
  std::vector<std::string> written;
};

/// Throws kinema::Error naming the script and the JSON place (/nodes/3/input) for a bad script,
/// or the image file for bad images, sizes that differ, missing frames; kinema::UsageError for
/// outputs that overwrite inputs or each other, or an extension other than .png/.exr.
CompReport run_comp(const CompRequest& request);

}  // namespace kinema::pipeline
