// kinema/matchmove/matchmove_json.h — tracks and camera solves as JSON, for `kinema track` and
// `kinema solve` and for other tools to read.
//
// Tracks:
//   {"format": "kinema-tracks", "version": 1, "width": 640, "height": 360, "frame_count": 48,
//    "tracks": [{"id": 0, "observations": [[frame, u, v], ...]}, ...]}
// with u, v in pixels as in tracking.h (v down, (0, 0) the top-left pixel's centre).
//
// A camera solve ("format": "kinema-camera-solve") holds the plate size, the intrinsics
// {"fx", "fy", "cx", "cy"}, the lens {"k1", "k2", "k3", "p1", "p2"}, the error summary, the
// initial pair, the camera convention as a string, one camera per frame {"frame", "solved",
// "position": [x, y, z], "rotation": [x, y, z, w] (world → camera, OpenCV axes), "observations",
// "mean_error_px"} and the points {"track", "position", "observations"}.
#pragma once

#include <string>
#include <string_view>

#include "kinema/matchmove/camera_solve.h"
#include "kinema/matchmove/tracking.h"

namespace kinema::matchmove {

/// The tracks as JSON text (compact when indent < 0, else pretty-printed with that indent).
std::string tracks_to_json(const TrackSet& tracks, int indent = -1);

/// Parses tracks_to_json()'s format. Throws kinema::Error naming `file` (may be empty) and the
/// JSON pointer of the bad value (e.g. "/tracks/3/observations/2") for malformed JSON, a missing
/// or mistyped member, an unknown format or version, a non-positive size, a duplicate id, an
/// observation off the frame or out of frame order, a non-finite number.
TrackSet tracks_from_json(std::string_view text, const std::string& file = {});

/// The solve as JSON text (compact when indent < 0).
std::string camera_solve_to_json(const CameraSolve& solve, int indent = 2);

/// Parses camera_solve_to_json()'s format back (numbers round-trip exactly). Throws
/// kinema::Error naming `file` and the JSON pointer of the bad value for malformed JSON, a missing
/// or mistyped member, an unknown format or version, a non-positive size or focal length, cameras
/// not listed frame by frame from 0, a rotation that is not a unit quaternion, a non-finite
/// number.
CameraSolve camera_solve_from_json(std::string_view text, const std::string& file = {});

}  // namespace kinema::matchmove
