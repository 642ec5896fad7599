// kinema/pipeline/lens.h — `kinema undistort` and `kinema distort` as a library call: a plate
// (or a numbered sequence) resampled through a Brown–Conrady lens (kinema/composite/lens.h), and
// optionally the ST-map itself written for Nuke or Fusion.
//
// The lens is a JSON file (or object) of OpenCV's calibration values:
//   {"fx": 1866.7, "fy": 1866.7, "cx": 959.5, "cy": 539.5,
//    "k1": -0.12, "k2": 0.03, "k3": 0, "p1": 0.001, "p2": -0.0005}
// fx is required; fy defaults to fx, (cx, cy) to the frame's centre ((W − 1)/2, (H − 1)/2), the
// coefficients to 0. Pixel coordinates are OpenCV's (u right, v down, the top-left pixel's
// centre at (0, 0)).
#pragma once

#include <string>
#include <vector>

#include "kinema/composite/lens.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

/// A lens as a file gives it: intrinsics that may default to the frame's size.
struct LensSpec {
  composite::BrownConrady lens;
  double fx = 0, fy = 0;  ///< fy = 0: same as fx
  bool has_centre = false;
  double cx = 0, cy = 0;
  /// The intrinsics for a width × height frame.
  composite::LensIntrinsics intrinsics(int width, int height) const;
};

/// Reads a lens JSON file. Throws kinema::Error naming the file and the JSON place.
LensSpec read_lens_file(const std::string& path);

struct LensRequest {
  std::string in;          ///< PNG or EXR; a pattern with #### or %04d: every frame found on disk
  std::string out;         ///< PNG or EXR; a pattern when `in` is one
  std::string lens;        ///< the lens JSON file
  bool distort = false;    ///< false: undistort (plate → pinhole); true: distort (CG → plate)
  bool linear = false;     ///< PNGs hold linear values (no sRGB curve either way)
  std::string st_map_out;  ///< EXR (float): the ST-map used; empty: not written
  Progress progress;       ///< stage "undistorting" / "distorting" (frames)
};

struct LensReport {
  int width = 0, height = 0, frames = 0;
  long pixels_without_source = 0;  ///< in the map: past where the lens folds over
  double map_seconds = 0;          ///< building the ST-map (once)
  double remap_seconds = 0;        ///< resampling, all frames
  std::vector<std::string> written;
};

/// Throws kinema::UsageError for an output that is an input, a pattern mismatch between in and
/// out, or extensions other than .png/.exr (.exr only for the ST-map); kinema::Error for bad
/// images, a bad lens file, frames of different sizes, no frames found.
LensReport run_lens(const LensRequest& request);

}  // namespace kinema::pipeline
