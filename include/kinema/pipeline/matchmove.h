// kinema/pipeline/matchmove.h — `kinema track` and `kinema solve` as library calls: corners
// followed through a plate sequence into a tracks file, and the camera solved from it
// (kinema/matchmove/, docs/composite.md).
#pragma once

#include <string>
#include <vector>

#include "kinema/matchmove/camera_solve.h"
#include "kinema/matchmove/tracking.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct TrackRequest {
  std::string plates;   ///< a sequence pattern (plate.####.exr or %04d): every frame on disk
  std::string out;      ///< the tracks, .json
  std::string preview;  ///< PNG: the last frame with every track's path drawn; empty: none
  bool linear = false;  ///< PNG plates hold linear values
  matchmove::TrackOptions options;
  Progress progress;  ///< stage "reading plates" (frames)
};

struct TrackReport {
  int frames = 0, width = 0, height = 0;
  int first_frame = 0;  ///< the number of the sequence's first frame (tracks count from 0)
  std::size_t tracks = 0;
  double mean_length = 0;  ///< frames a track lives, on average
  double seconds = 0;      ///< tracking, without reading the plates
  std::vector<std::string> written;
};

/// Throws kinema::UsageError for a plates path that is not a sequence, an output that is not
/// .json (or a preview not .png) or is an input; kinema::Error for fewer than 2 frames, a bad or
/// missing image, frames of different sizes.
TrackReport run_track(const TrackRequest& request);

struct SolveRequest {
  std::string tracks;  ///< a tracks file (`kinema track`)
  std::string out;     ///< the solve, .json
  matchmove::SolveOptions options;
};

struct SolveReport {
  matchmove::CameraSolve solve;
  std::vector<std::string> written;
};

/// Throws kinema::UsageError for an output that is not .json or is the input; kinema::Error
/// naming the tracks file for a bad file, too few tracks or a shot without parallax (the reason
/// says what to change).
SolveReport run_solve(const SolveRequest& request);

}  // namespace kinema::pipeline
