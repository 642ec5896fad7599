// Arm clearance of a clip on a skinned character (kinema/retarget/arm_clearance.h): the arms per
// frame, the body's field per frame, the solve, the clip written back, and the figures.
#include "kinema/retarget/arm_clearance.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kinema/blend/foot_contact.h"
#include "kinema/core/error.h"
#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"

namespace kinema {

namespace {

const std::string kPlace = "arm clearance";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The clip's frame times: its nominal rate over [0, duration], the last on the duration.
std::vector<double> frame_times(const Clip& clip, double rate) {
  const long frames = std::max(1L, std::lround(clip.duration * rate) + 1);
  std::vector<double> t(static_cast<size_t>(frames));
  for (long i = 0; i < frames; ++i) t[size_t(i)] = std::min(clip.duration, double(i) / rate);
  t.back() = clip.duration;
  return t;
}

void check_inputs(const Asset& character, const Clip& clip, const ArmClearanceInputs& in,
                  long frames, const std::string& file) {
  const int joints = character.skeleton.joint_count();
  if (static_cast<int>(clip.tracks.size()) > joints)
    throw Error(file, kPlace,
                "the clip has tracks for " + std::to_string(clip.tracks.size()) +
                    " joints but the character has " + std::to_string(joints) +
                    ": a clip for another skeleton");
  clip.validate(joints, file);
  const char* hands[2] = {"left", "right"};
  for (int h = 0; h < 2; ++h) {
    const auto& v = in.visibility[size_t(h)];
    if (v.empty()) continue;
    if (static_cast<long>(v.size()) != frames)
      throw Error(
          file, std::string("visibility of the ") + hands[h] + " hand",
          std::to_string(v.size()) + " values for a clip of " + std::to_string(frames) + " frames");
    for (size_t i = 0; i < v.size(); ++i)
      if (!(v[i] >= 0 && v[i] <= 1))
        throw Error(
            file,
            std::string("visibility of the ") + hands[h] + " hand, frame " + std::to_string(i),
            "a visibility must lie in [0, 1]");
  }
  if (in.camera &&
      !(std::isfinite(in.camera->x) && std::isfinite(in.camera->y) && std::isfinite(in.camera->z)))
    throw Error(file, "camera", "the camera position is not finite");
}

/// One arm's pose from the model-space joint matrices.
ArmPose arm_pose(const ArmJoints& arm, std::span<const Mat4> model) {
  ArmPose p;
  auto at = [&](int j) { return model[size_t(j)].translation_part(); };
  p.shoulder = at(arm.shoulder);
  p.elbow = at(arm.elbow);
  p.wrist = at(arm.wrist);
  p.hand_tip = arm.hand_tip_joint >= 0 ? at(arm.hand_tip_joint)
                                       : p.wrist + normalize(p.wrist - p.elbow) * arm.hand_length_m;
  p.fingertips.resize(arm.fingertip_joints.size());
  for (size_t f = 0; f < arm.fingertip_joints.size(); ++f)
    p.fingertips[f] =
        model[size_t(arm.fingertip_joints[f])].transform_point(arm.fingertip_offsets[f]);
  return p;
}

/// The character's horizontal forward from its upper legs ((left − right) × up), else +Z.
Vec3 forward_of(const Humanoid& map, std::span<const Mat4> model) {
  const int l = map.find("leftUpperLeg"), r = map.find("rightUpperLeg");
  if (l < 0 || r < 0) return {0, 0, 1};
  Vec3 f = cross(model[size_t(l)].translation_part() - model[size_t(r)].translation_part(),
                 Vec3{0, 1, 0});
  f.y = 0;
  return length(f) > 1e-9 ? normalize(f) : Vec3{0, 0, 1};
}

double percentile_of(std::vector<double> v, double p) { return v.empty() ? 0 : percentile(v, p); }

/// Wrist |second difference| per frame, mm/frame².
std::vector<double> wrist_jerk_mm(const std::vector<Vec3>& wrist) {
  if (wrist.size() < 3) return {};
  const std::vector<double> norms = second_difference_norms(wrist);  // 0 at both ends
  std::vector<double> out(norms.begin() + 1, norms.end() - 1);
  for (double& x : out) x *= 1000;
  return out;
}

}  // namespace

namespace {

/// Quaternion of a model matrix's rotation (scale removed).
Quat model_rotation(const Mat4& m) { return normalize(rotation_of(m)); }

/// Is `joint` `ancestor` or below it?
bool in_subtree(const Skeleton& s, int joint, int ancestor) {
  for (int j = joint; j >= 0; j = s.parent(j))
    if (j == ancestor) return true;
  return false;
}

/// The local rotations of the upper arm, lower arm and hand that put the arm at `after`
/// (shoulder fixed, bone lengths kept, the hand's model orientation kept).
std::array<Quat, 3> arm_local_rotations(const Skeleton& s, const ArmJoints& arm,
                                        std::span<const Mat4> model, const ArmPose& before,
                                        const ArmPose& after) {
  const Quat q_upper = from_to(before.elbow - before.shoulder, after.elbow - after.shoulder);
  const Quat q_fore =
      from_to(rotate(q_upper, before.wrist - before.elbow), after.wrist - after.elbow) * q_upper;
  auto delta_of = [&](int j) {  // the model delta a joint inherits from the arm's joints
    if (in_subtree(s, j, arm.elbow)) return q_fore;
    if (in_subtree(s, j, arm.shoulder)) return q_upper;
    return Quat{};
  };
  auto local = [&](int j, const Quat& new_model) {
    const int p = s.parent(j);
    const Quat parent = p < 0 ? Quat{} : delta_of(p) * model_rotation(model[size_t(p)]);
    return normalize(inverse(parent) * new_model);
  };
  return {local(arm.shoulder, q_upper * model_rotation(model[size_t(arm.shoulder)])),
          local(arm.elbow, q_fore * model_rotation(model[size_t(arm.elbow)])),
          local(arm.wrist, model_rotation(model[size_t(arm.wrist)]))};
}

}  // namespace

ArmClearanceOptions options_at_frame_rate(const ArmClearanceOptions& o, double rate) {
  ArmClearanceOptions out = o;
  if (!(rate > 0) || !(o.reference_rate > 0)) return out;
  const double ratio = rate / o.reference_rate;
  out.carry = std::pow(o.carry, 1 / ratio);
  out.transition_weight = o.transition_weight * ratio * ratio;
  auto frames = [&](int n) { return n > 0 ? std::max(1, int(std::lround(n * ratio))) : n; };
  out.switch_window_frames = frames(o.switch_window_frames);
  out.ease_radius_frames = frames(o.ease_radius_frames);
  out.hold_radius_frames = frames(o.hold_radius_frames);
  out.smooth_radius_frames = frames(o.smooth_radius_frames);
  out.reference_rate = rate;
  return out;
}

ArmClearanceResult clear_arms(const Asset& character, const Humanoid& map, const Clip& clip,
                              const ArmClearanceInputs& inputs, const ArmClearanceOptions& o,
                              const std::string& file, const ArmClearanceProgress& progress) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  auto report = [&](const char* stage, double done) {
    if (progress) progress(stage, done);
  };
  const Skeleton& skeleton = character.skeleton;
  const double rate = sample_rate_or(clip, kDefaultSampleRate);
  const std::vector<double> times = frame_times(clip, rate);
  const long n = static_cast<long>(times.size());
  check_inputs(character, clip, inputs, n, file);
  tbb::task_arena arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic);
  ArmClearanceOptions solve_options = options_at_frame_rate(o, rate);
  solve_options.threads = 0;  // the arena above already holds the thread count

  ArmClearanceResult result;
  result.rate = rate;
  result.frames = n;
  report("body surface", 0);
  const BodySurfaceModel body(character, map, o.surface, file);
  result.body_vertices = body.vertex_count();
  const std::array<ArmJoints, 2>& arms = body.arms();

  // The arms per frame, from the input clip.
  std::array<ArmTrack, 2> tracks;
  std::vector<Vec3> forward(static_cast<size_t>(n));
  for (int a = 0; a < 2; ++a) {
    tracks[size_t(a)].frames.resize(static_cast<size_t>(n));
    tracks[size_t(a)].radii = body.arm_radii()[size_t(a)];
  }
  Vec3 hips0{0, 0, 0};
  arena.execute([&] {
    tbb::parallel_for(0L, n, [&](long i) {
      const std::vector<Mat4> model = sample_model_pose(clip, skeleton, times[size_t(i)]);
      for (int a = 0; a < 2; ++a)
        tracks[size_t(a)].frames[size_t(i)] = arm_pose(arms[size_t(a)], model);
      forward[size_t(i)] = forward_of(map, model);
      if (i == 0 && map.find("hips") >= 0)
        hips0 = model[size_t(map.find("hips"))].translation_part();
    });
  });
  if (!inputs.visibility[0].empty() || !inputs.visibility[1].empty()) {
    const Vec3 camera = inputs.camera ? *inputs.camera : hips0 + forward[0] * 3.0;
    for (int a = 0; a < 2; ++a) {
      ArmTrack& t = tracks[size_t(a)];
      if (inputs.visibility[size_t(a)].empty()) continue;  // no evidence for this hand
      t.seen = inputs.visibility[size_t(a)];
      t.toward.resize(static_cast<size_t>(n));
      for (long i = 0; i < n; ++i) {
        Vec3 to = camera - t.frames[size_t(i)].wrist;
        to.y = 0;
        t.toward[size_t(i)] = length(to) > 1e-9 ? normalize(to) : forward[size_t(i)];
      }
    }
  }
  result.timings.surface_s = seconds_since(t_start);

  // Each frame's field: the body skinned at that frame's pose, indexed for nearest queries.
  double max_radius = 0;
  for (const ArmTrack& t : tracks)
    for (const RadiusProfile* p : {&t.radii.upper, &t.radii.fore, &t.radii.hand})
      for (double r : p->radius_m) max_radius = std::max(max_radius, r);
  const double max_clearance = max_radius + o.margin_m;
  const ClearanceFieldAt field_at = [&](long i, ClearanceField& scratch) -> const ClearanceField& {
    thread_local BodySurface surface;
    const std::vector<Mat4> model = sample_model_pose(clip, skeleton, times[size_t(i)]);
    body.surface(model, surface);
    scratch.build(surface.points, surface.normals, o.field, max_clearance);
    return scratch;
  };

  report("candidates", 0);
  std::vector<ArmTrackSolution> solved =
      arena.execute([&] { return solve_arm_tracks(field_at, tracks, solve_options); });
  result.timings.candidates_s = solved[0].candidates_s;
  result.timings.path_s = solved[0].path_s;
  auto t0 = Clock::now();
  report("coupling", 0);
  result.coupling = arena.execute([&] {
    return couple_hands(field_at, {&tracks[0], &tracks[1]}, {&solved[0], &solved[1]},
                        solve_options);
  });
  result.timings.coupling_s = seconds_since(t0);
  report("smoothing", 0);
  t0 = Clock::now();
  arena.execute([&] {
    smooth_arm_paths(field_at, {&tracks[0], &tracks[1]}, {&solved[0], &solved[1]}, solve_options);
  });
  result.timings.smoothing_s = seconds_since(t0);
  report("limiting", 0);
  t0 = Clock::now();
  const std::array<ArmAccelerationLimit, 2> limits = arena.execute([&] {
    return limit_arm_accelerations(field_at, {&tracks[0], &tracks[1]}, {&solved[0], &solved[1]},
                                   solve_options);
  });
  result.timings.limit_s = seconds_since(t0);

  report("writing", 0);
  t0 = Clock::now();
  result.clip = clip;
  if (result.clip.tracks.size() < size_t(skeleton.joint_count()))
    result.clip.tracks.resize(size_t(skeleton.joint_count()));
  std::vector<std::array<std::array<Quat, 3>, 2>> locals(static_cast<size_t>(n));
  arena.execute([&] {
    tbb::parallel_for(0L, n, [&](long i) {
      const std::vector<Mat4> model = sample_model_pose(clip, skeleton, times[size_t(i)]);
      for (int a = 0; a < 2; ++a)
        locals[size_t(i)][size_t(a)] = arm_local_rotations(
            skeleton, arms[size_t(a)], model, tracks[size_t(a)].frames[size_t(i)],
            solved[size_t(a)].chosen[size_t(i)].pose);
    });
  });
  for (int a = 0; a < 2; ++a) {
    const int joints[3] = {arms[size_t(a)].shoulder, arms[size_t(a)].elbow, arms[size_t(a)].wrist};
    for (int b = 0; b < 3; ++b) {
      Keyframes<Quat>& keys = result.clip.tracks[size_t(joints[b])].rotation;
      keys = {};
      keys.interpolation = Interpolation::Linear;
      keys.times = times;
      keys.values.resize(static_cast<size_t>(n));
      for (long i = 0; i < n; ++i) {
        Quat q = locals[size_t(i)][size_t(a)][size_t(b)];
        if (i > 0 && dot(q, keys.values[size_t(i - 1)]) < 0) q = q * -1.0;  // the short way
        keys.values[size_t(i)] = q;
      }
    }
  }
  result.timings.write_s = seconds_since(t0);

  // The figures.
  for (int a = 0; a < 2; ++a) {
    const ArmTrack& t = tracks[size_t(a)];
    const ArmTrackSolution& s = solved[size_t(a)];
    ArmClearanceMetrics& m = result.arms[size_t(a)];
    m.depth_before_m = s.depth_before;
    m.limit = limits[size_t(a)];
    std::vector<Vec3> per_frame(static_cast<size_t>(n)), chosen(static_cast<size_t>(n)),
        before(static_cast<size_t>(n)), after(static_cast<size_t>(n));
    double added_sum = 0;
    for (long i = 0; i < n; ++i) {
      const ArmCandidate& c = s.chosen[size_t(i)];
      m.depth_after_m.push_back(c.inside_m);
      m.frames_inside_before += s.depth_before[size_t(i)] > o.inside_tolerance_m;
      m.frames_inside_after += c.inside_m > o.inside_tolerance_m;
      per_frame[size_t(i)] = s.per_frame[size_t(i)].wrist_offset;
      chosen[size_t(i)] = c.wrist_offset;
      before[size_t(i)] = t.frames[size_t(i)].wrist;
      after[size_t(i)] = c.pose.wrist;
      const double added = 1000 * length(c.wrist_offset);
      added_sum += added;
      m.added_max_mm = std::max(m.added_max_mm, added);
    }
    m.added_mean_mm = added_sum / double(n);
    m.switches_per_frame =
        count_reverting_switches(per_frame, forward, solve_options.switch_window_frames);
    m.switches = count_reverting_switches(chosen, forward, solve_options.switch_window_frames);
    const std::vector<double> jb = wrist_jerk_mm(before), ja = wrist_jerk_mm(after);
    m.jerk_peak_before_mm = jb.empty() ? 0 : *std::max_element(jb.begin(), jb.end());
    m.jerk_peak_after_mm = ja.empty() ? 0 : *std::max_element(ja.begin(), ja.end());
    m.jerk_p99_before_mm = percentile_of(jb, 99);
    m.jerk_p99_after_mm = percentile_of(ja, 99);
  }
  ClaspedHandsMetrics& c = result.clasped;
  for (long i = 0; i < n; ++i) {
    const double before =
        length(tracks[0].frames[size_t(i)].wrist - tracks[1].frames[size_t(i)].wrist);
    if (before > o.couple_near_m) continue;
    const double after =
        length(solved[0].chosen[size_t(i)].pose.wrist - solved[1].chosen[size_t(i)].pose.wrist);
    ++c.frames;
    c.distance_before_m += before;
    c.distance_after_m += after;
    c.max_change_m = std::max(c.max_change_m, std::abs(after - before));
  }
  if (c.frames > 0) {
    c.distance_before_m /= double(c.frames);
    c.distance_after_m /= double(c.frames);
  }
  result.timings.total_s = seconds_since(t_start);
  report("done", 1);
  return result;
}

}  // namespace kinema
