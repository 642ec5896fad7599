// Driving a motion-matching controller along a scripted stick, offline
// (kinema/match/run_along_path.h).
#include "kinema/match/run_along_path.h"

#include <cmath>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::match {

PathRun run_along_path(const Database& db, const StickPath& path, const ControllerOptions& options,
                       const std::function<void(int, int)>& progress) {
  if (path.keys.empty()) throw Error("", "", "the stick path has no keys");
  Controller controller(db, options);
  return run_along_path(controller, path, progress);
}

PathRun run_along_path(const LearnedModel& model, const StickPath& path,
                       const ControllerOptions& options,
                       const std::function<void(int, int)>& progress) {
  if (path.keys.empty()) throw Error("", "", "the stick path has no keys");
  Controller controller(model, options);
  return run_along_path(controller, path, progress);
}

PathRun run_along_path(Controller& controller, const StickPath& path,
                       const std::function<void(int, int)>& progress) {
  if (path.keys.empty()) throw Error("", "", "the stick path has no keys");
  const double fps = controller.fps();
  const double dt = 1.0 / fps;
  PathRun run;
  run.frames = int(std::floor(path.duration * fps + 1e-9)) + 1;
  const int joints = controller.skeleton().joint_count();
  Clip& clip = run.clip;
  clip.name = "motion_matching";
  clip.duration = (run.frames - 1) * dt;
  clip.sample_rate = fps;
  clip.tracks.resize(size_t(joints));
  double error_sum = 0, speed_error_sum = 0;
  int settled = 0;
  for (int f = 0; f < run.frames; ++f) {
    const double t = f * dt;
    const ControllerInput input = path.at(t);
    if (f == 0) controller.reset(0);
    controller.update(input);
    // Trajectory error: the root's distance to the simulation, where the stick's springs say the
    // character should be.
    const Vec3 pos = controller.root_position(), ideal = controller.simulation_position();
    const double err = std::hypot(pos.x - ideal.x, pos.z - ideal.z);
    error_sum += err;
    run.trajectory_error_max = std::max(run.trajectory_error_max, err);
    const double speed = std::hypot(controller.root_velocity().x, controller.root_velocity().z);
    if (f > 0) {
      speed_error_sum += std::abs(speed - std::hypot(input.velocity.x, input.velocity.z));
      ++settled;
    }
    const std::span<const Transformf> pose = controller.pose();
    for (int j = 0; j < joints; ++j) {
      const Transform x(pose[size_t(j)]);
      JointTrack& track = clip.tracks[size_t(j)];
      track.translation.times.push_back(t);
      track.translation.values.push_back(x.translation);
      track.rotation.times.push_back(t);
      track.rotation.values.push_back(x.rotation);
    }
    if (progress) progress(f + 1, run.frames);
  }
  run.searches = controller.searches();
  run.transitions = controller.transitions();
  run.trajectory_error_mean = error_sum / run.frames;
  run.speed_error_mean = settled ? speed_error_sum / settled : 0;
  return run;
}

}  // namespace kinema::match
