// kinema/pipeline/drive.h — `kinema drive` as a library call: a file's clip with one joint channel
// keyed from an expression over the clip's own motion (kinema/procedural/clip_driver.h) — a car's
// wheels turning by the distance it travelled, a prop bobbing in time — written as a new file.
#pragma once

#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/procedural/clip_driver.h"

namespace kinema::pipeline {

struct DriveRequest {
  std::string in, out;
  std::string clip;   ///< by name or index; empty: the first
  std::string joint;  ///< the driven joint
  DrivenChannel channel = DrivenChannel::RotateX;
  std::string expression;
  double fps = 0;  ///< keys a second; 0: the clip's rate, else 30
  LoadOptions load;
};

struct DriveResult {
  std::string clip;  ///< the driven clip's name
  int keys = 0;      ///< keys written on the driven channel
};

/// Reads IN, drives the clip's channel and writes OUT (.glb .gltf .vrm .bvh) atomically. Throws
/// UsageError for an OUT that is IN, a folder or of another kind; kinema::Error for an unreadable
/// IN, a missing clip or joint, an expression that does not parse (its column) or a value that is
/// not finite (its time) — nothing is written then.
DriveResult run_drive_file(const DriveRequest& request);

}  // namespace kinema::pipeline
