// kinema/match/run_along_path.h — driving a character through a database along a scripted stick,
// offline: the controller (kinema/match/controller.h) updated once per database frame, its pose
// recorded as a clip, and how well it followed measured (how much its feet skate is measured on
// the clip: kinema/retarget/metrics.h, humanoid_foot_skate).
#pragma once

#include <functional>

#include "kinema/clip/clip.h"
#include "kinema/match/controller.h"
#include "kinema/match/database.h"
#include "kinema/match/inputs.h"
#include "kinema/match/learned.h"

namespace kinema::match {

struct PathRun {
  /// The animation: a LINEAR key per frame on every joint (translation and rotation), frames at
  /// i / db.fps from 0 to the path's duration, named "motion_matching".
  Clip clip;
  int frames = 0;
  size_t searches = 0, transitions = 0;
  /// The root's horizontal distance to the simulation (where the stick's springs say the
  /// character should be), metres: mean and largest over the frames.
  double trajectory_error_mean = 0, trajectory_error_max = 0;
  /// Mean |root speed − stick speed| over the frames after the first, m/s.
  double speed_error_mean = 0;
};

/// Runs a Controller over `db` (which must have poses) along `path` from frame 0 at the origin,
/// one update per database frame. `progress(done, total)` after each frame, may be empty. Throws
/// kinema::Error when the database has no poses or nothing to search.
PathRun run_along_path(const Database& db, const StickPath& path,
                       const ControllerOptions& options = {},
                       const std::function<void(int, int)>& progress = {});
/// The same with the learned backend (kinema/match/learned.h): the model's start state.
PathRun run_along_path(const LearnedModel& model, const StickPath& path,
                       const ControllerOptions& options = {},
                       const std::function<void(int, int)>& progress = {});
/// The same with a controller already built (either backend); it is reset at the origin first.
PathRun run_along_path(Controller& controller, const StickPath& path,
                       const std::function<void(int, int)>& progress = {});

}  // namespace kinema::match
