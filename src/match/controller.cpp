// The motion-matching controller: trajectory prediction by springs, periodic search, jumps
// hidden by inertialization, root motion from the database's root frames. See
// kinema/match/controller.h.
#include "kinema/match/controller.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kinema/blend/root_motion.h"
#include "kinema/core/error.h"
#include "kinema/ik/two_bone.h"

namespace kinema::match {

namespace {

constexpr double kLn2 = 0.69314718055994530942;

/// y of the critically damped spring whose half-life is h: x decays as (1 + y·t)·e^(−y·t).
double spring_y(double halflife) { return 2 * kLn2 / std::max(halflife, 1e-5); }

double wrap_angle(double a) {
  while (a > std::numbers::pi) a -= 2 * std::numbers::pi;
  while (a < -std::numbers::pi) a += 2 * std::numbers::pi;
  return a;
}

/// Yaw (about +Y) that turns +Z into the horizontal direction f.
double yaw_of(const Vec3& f) { return std::atan2(f.x, f.z); }
Vec3 facing_of(double yaw) { return {std::sin(yaw), 0, std::cos(yaw)}; }

/// v expressed in the frame facing `f` (x to its left, z along it).
Vec3 to_local(const Vec3& f, const Vec3& v) {
  return {v.x * f.z - v.z * f.x, v.y, v.x * f.x + v.z * f.z};
}
/// The inverse of to_local.
Vec3 to_world(const Vec3& f, const Vec3& v) {
  return {v.x * f.z + v.z * f.x, v.y, -v.x * f.x + v.z * f.z};
}

Vec3 sample_position(const RootSample& r) { return {r.x, 0, r.z}; }
Vec3 sample_facing(const RootSample& r) { return {r.facing_x, 0, r.facing_z}; }

/// The spine for the orientation warp: from the hips' one child that is not above a leg, up the
/// chain of single children, to (and with) the first joint with several children (the chest).
/// Empty when the hips have no such child.
std::vector<int> spine_above(const Skeleton& skeleton, const FeatureJoints& joints) {
  const int n = skeleton.joint_count();
  const auto above = [&](int a, int j) {
    for (; j >= 0; j = skeleton.parent(j))
      if (j == a) return true;
    return false;
  };
  std::vector<int> children_of_hips;
  for (int j = 0; j < n; ++j)
    if (skeleton.parent(j) == joints.hips && !above(j, joints.left_upper_leg) &&
        !above(j, joints.right_upper_leg))
      children_of_hips.push_back(j);
  std::vector<int> spine;
  if (children_of_hips.size() != 1) return spine;
  for (int j = children_of_hips[0];;) {
    spine.push_back(j);
    int only = -1, count = 0;
    for (int k = 0; k < n; ++k)
      if (skeleton.parent(k) == j) only = k, ++count;
    if (count != 1) break;
    j = only;
  }
  return spine;
}

const FeatureGroup* find_group(const Database& db, std::string_view name) {
  for (const FeatureGroup& g : db.groups)
    if (g.name == name) return &g;
  return nullptr;
}

}  // namespace

SpringState spring_predict(SpringState s, double goal_velocity, double halflife, double t) {
  const double y = spring_y(halflife);
  const double j0 = s.v - goal_velocity;
  const double j1 = s.a + j0 * y;
  const double e = std::exp(-y * t);
  SpringState out;
  out.x =
      e * (-j1 / (y * y) + (-j0 - j1 * t) / y) + j1 / (y * y) + j0 / y + goal_velocity * t + s.x;
  out.v = e * (j0 + j1 * t) + goal_velocity;
  out.a = e * (s.a - j1 * y * t);
  return out;
}

Controller::Controller(const Database& db, const ControllerOptions& options)
    : db_(db), options_(options) {
  if (!db.has_poses())
    throw Error("", "database",
                "the database has no poses (built with --features-only): the controller plays "
                "poses");
  if (!find_group(db, "trajectory_position") || !find_group(db, "trajectory_direction"))
    throw Error("", "database", "the database has no trajectory features");
  if (!(options.blend_time >= 0) || !(options.search_interval >= 0))
    throw Error("", "controller options", "blend_time and search_interval must be ≥ 0");
  search_ = BoundedTreeSearch(db.features);
  const int joints = db.skeleton.joint_count();
  const size_t soa = size_t(soa_count(joints));
  inertializer_.reset(joints);
  for (auto* v : {&shown_previous_, &shown_, &source_, &source_previous_}) v->resize(soa);
  aos_.resize(size_t(joints));
  world_pose_.resize(size_t(joints));
  query_.resize(db.dims());
  raw_.resize(db.dims());
  predicted_.resize(db.trajectory_times.size());
  ik_local_.resize(size_t(joints));
  ik_model_.resize(size_t(joints));
  // Foot contacts of every database frame, detected per clip variant on its own motion.
  contacts_.assign(2 * db.frames(), 0);
  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(static_cast<size_t>(joints));
  for (const DatabaseClip& c : db.clips) {
    if (c.frame_count < 2) continue;
    std::vector<Vec3> feet;
    for (uint32_t f = c.first_frame; f < c.first_frame + c.frame_count; ++f) {
      const std::span<const Transformf> pose = db.pose(f);
      for (size_t j = 0; j < local.size(); ++j) local[j] = Transform(pose[j]);
      local_to_model(db.skeleton.parents(), local, model);
      feet.push_back(model[size_t(db.joints.left_foot)].translation_part());
      feet.push_back(model[size_t(db.joints.right_foot)].translation_part());
    }
    const std::vector<uint8_t> flags = detect_foot_contacts(
        feet, 2, 1.0 / db.fps, {options.contact_height, options.contact_speed});
    std::copy(flags.begin(), flags.end(), contacts_.begin() + 2 * size_t(c.first_frame));
  }
  const bool legs = db.joints.left_lower_leg >= 0 && db.joints.right_lower_leg >= 0 &&
                    db.joints.left_upper_leg >= 0 && db.joints.right_upper_leg >= 0;
  if (options.foot_locking && !legs)
    throw Error("", "database",
                "foot locking needs the upper and lower legs (the humanoid mapping found none)");
  if (options.locomotion_warping) {
    if (!legs || db.joints.hips < 0)
      throw Error("", "database",
                  "locomotion warping needs the hips and the upper and lower legs (the humanoid "
                  "mapping found none)");
    if (!(options.warp_min_scale > 0) || !(options.warp_max_scale >= options.warp_min_scale) ||
        !std::isfinite(options.warp_max_scale) || !(options.warp_max_angle >= 0) ||
        !std::isfinite(options.warp_max_angle))
      throw Error("", "controller options",
                  "warp scales must satisfy 0 < min ≤ max and the angle must be ≥ 0, finite");
    spine_ = spine_above(db.skeleton, db.joints);
  }
  reset(0);
}

void Controller::root_relative_pose(uint32_t frame, std::span<SoaTransform> out) const {
  // Skeleton roots are re-expressed in the frame's root frame, so poses of different clips
  // (different places and headings in their capture) can be blended and placed anywhere.
  const std::span<const Transformf> pose = db_.pose(frame);
  const RootSample& r = db_.roots[frame];
  const Quatf unturn = Quatf(Quat::from_axis_angle({0, 1, 0}, -yaw_of(sample_facing(r))));
  for (int j = 0; j < db_.skeleton.joint_count(); ++j) {
    Transformf t = pose[size_t(j)];
    if (db_.skeleton.parent(j) == kNoParent) {
      t.translation = rotate(unturn, t.translation - Vec3f{r.x, 0, r.z});
      t.rotation = unturn * t.rotation;
    }
    set_joint(out, j, t);
  }
}

float Controller::cost(std::span<const float> query, uint32_t frame) const {
  const float* row = db_.features.values.data() + size_t(frame) * db_.dims();
  float sum = 0;
  for (size_t d = 0; d < db_.dims(); ++d) sum += (row[d] - query[d]) * (row[d] - query[d]);
  return sum;
}

void Controller::reset(uint32_t frame, const Vec3& position, const Vec3& facing) {
  frame_ = std::min<uint32_t>(frame, uint32_t(db_.frames() - 1));
  position_ = {position.x, 0, position.z};
  const double len = std::hypot(facing.x, facing.z);
  facing_ = len > 1e-9 ? Vec3{facing.x / len, 0, facing.z / len} : Vec3{0, 0, 1};
  velocity_ = {0, 0, 0};
  sim_position_ = position_;
  sim_velocity_ = sim_acceleration_ = {0, 0, 0};
  sim_facing_ = facing_;
  sim_yaw_velocity_ = 0;
  since_search_ = 1e9;
  searches_ = transitions_ = 0;
  feet_[0] = feet_[1] = FootLock{};
  warp_state_.reset();
  stride_scale_ = 1, warp_angle_ = 0;
  inertializer_.reset(db_.skeleton.joint_count());
  root_relative_pose(frame_, shown_);
  shown_previous_ = shown_;
  place_in_world();
}

void Controller::place_in_world() {
  to_aos(shown_, aos_);
  const Quatf turn = Quatf(Quat::from_axis_angle({0, 1, 0}, yaw_of(facing_)));
  for (int j = 0; j < db_.skeleton.joint_count(); ++j) {
    Transformf t = aos_[size_t(j)];
    if (db_.skeleton.parent(j) == kNoParent) {
      t.translation = rotate(turn, t.translation) + Vec3f(position_);
      t.rotation = turn * t.rotation;
    }
    world_pose_[size_t(j)] = t;
  }
}

double Controller::goal_yaw(const ControllerInput& input) const {
  if (std::hypot(input.facing.x, input.facing.z) > 1e-6) return yaw_of(input.facing);
  if (std::hypot(input.velocity.x, input.velocity.z) > 0.05) return yaw_of(input.velocity);
  return yaw_of(sim_facing_);
}

void Controller::simulate(const ControllerInput& input, double dt) {
  const double vh = options_.velocity_halflife;
  const SpringState sx = spring_predict({sim_position_.x, sim_velocity_.x, sim_acceleration_.x},
                                        input.velocity.x, vh, dt);
  const SpringState sz = spring_predict({sim_position_.z, sim_velocity_.z, sim_acceleration_.z},
                                        input.velocity.z, vh, dt);
  sim_position_ = {sx.x, 0, sz.x};
  sim_velocity_ = {sx.v, 0, sz.v};
  sim_acceleration_ = {sx.a, 0, sz.a};
  const double y = spring_y(options_.facing_halflife), goal = goal_yaw(input);
  const double j0 = wrap_angle(yaw_of(sim_facing_) - goal);
  const double j1 = sim_yaw_velocity_ + j0 * y;
  const double e = std::exp(-y * dt);
  sim_facing_ = facing_of(goal + e * (j0 + j1 * dt));
  sim_yaw_velocity_ = e * (sim_yaw_velocity_ - j1 * y * dt);
}

SearchResult Controller::search(const ControllerInput& input) {
  // Query: the pose features of the continuation, the trajectory the stick asks for.
  const uint32_t next = std::min<uint32_t>(frame_ + 1, uint32_t(db_.frames() - 1));
  const size_t D = db_.dims();
  std::copy_n(db_.features.values.data() + size_t(next) * D, D, query_.data());
  const double vh = options_.velocity_halflife, fh = options_.facing_halflife;
  const double goal = goal_yaw(input);
  const double y = spring_y(fh);
  const double j0 = wrap_angle(yaw_of(sim_facing_) - goal);
  const double j1 = sim_yaw_velocity_ + j0 * y;
  const FeatureGroup& tp = *find_group(db_, "trajectory_position");
  const FeatureGroup& td = *find_group(db_, "trajectory_direction");
  for (size_t i = 0; i < db_.trajectory_times.size(); ++i) {
    const double t = db_.trajectory_times[i];
    const SpringState sx = spring_predict({sim_position_.x, sim_velocity_.x, sim_acceleration_.x},
                                          input.velocity.x, vh, t);
    const SpringState sz = spring_predict({sim_position_.z, sim_velocity_.z, sim_acceleration_.z},
                                          input.velocity.z, vh, t);
    predicted_[i] = {sx.x, 0, sz.x};
    const double future_yaw = goal + std::exp(-y * t) * (j0 + j1 * t);
    const Vec3 p = to_local(sim_facing_, predicted_[i] - sim_position_);
    const Vec3 f = to_local(sim_facing_, facing_of(future_yaw));
    raw_[tp.offset + 2 * i] = float(p.x), raw_[tp.offset + 2 * i + 1] = float(p.z);
    raw_[td.offset + 2 * i] = float(f.x), raw_[td.offset + 2 * i + 1] = float(f.z);
  }
  for (const FeatureGroup* g : {&tp, &td})
    for (uint32_t d = g->offset; d < g->offset + g->dims; ++d)
      query_[d] = (raw_[d] - db_.mean[d]) / g->scale * g->weight;
  ++searches_;
  since_search_ = 0;
  continuation_cost_ = cost(query_, next);
  const SearchResult best = search_.search(query_, options_.filter);
  best_cost_ = best.cost;
  return best;
}

void Controller::update(const ControllerInput& input) {
  const double dt = 1.0 / db_.fps;
  simulate(input, dt);
  const DatabaseClip& clip = db_.clip_of(frame_);
  const bool at_end = frame_ + 1 >= clip.first_frame + clip.frame_count;
  since_search_ += dt;
  // At a clip's end there is no continuation: the search must jump (or hold the last frame).
  uint32_t target = at_end ? frame_ : frame_ + 1;
  bool jump = false;
  if (at_end || since_search_ + 1e-9 >= options_.search_interval ||
      continuation_cost_ > options_.continuation_threshold) {
    const SearchResult best = search(input);
    if (best.found()) {
      const bool nearby =
          &db_.clip_of(best.frame) == &clip &&
          std::abs(int64_t(best.frame) - int64_t(target)) <= options_.ignore_nearby_frames;
      if (at_end || (!nearby && best.cost < continuation_cost_)) {
        target = best.frame;
        jump = true;
      }
    }
  }
  // Root motion of the frame played: the step into `target` within its own clip (the
  // continuation's step when `target` starts its clip).
  const DatabaseClip& tc = db_.clip_of(target);
  const uint32_t from = target > tc.first_frame ? target - 1 : target;
  const uint32_t to =
      from == target && target + 1 < tc.first_frame + tc.frame_count ? target + 1 : target;
  const RootSample &r0 = db_.roots[from], &r1 = db_.roots[to];
  const Vec3 step = to_local(sample_facing(r0), sample_position(r1) - sample_position(r0));
  const double turn = wrap_angle(yaw_of(sample_facing(r1)) - yaw_of(sample_facing(r0)));
  const Vec3 old_position = position_;
  const Vec3 moved = to_world(facing_, step);
  position_ = position_ + moved;
  double yaw = yaw_of(facing_) + turn;
  // Pull towards the simulation: a fraction of the gap, at most a ratio of the animation's own
  // motion this frame, then clamp the gap.
  const double pull = 1 - std::exp(-kLn2 * dt / std::max(options_.adjust_halflife, 1e-5));
  Vec3 gap = sim_position_ - position_;
  Vec3 adjust = gap * pull;
  const double limit = options_.adjust_max_ratio * length(moved);
  if (length(adjust) > limit) adjust = adjust * (limit / length(adjust));
  position_ = position_ + adjust;
  const double yaw_gap = wrap_angle(yaw_of(sim_facing_) - yaw);
  const double yaw_limit = options_.adjust_max_ratio * std::abs(turn) + 1e-12;
  yaw += std::clamp(yaw_gap * pull, -yaw_limit, yaw_limit);
  if (options_.clamp_distance > 0) {
    gap = position_ - sim_position_;
    if (length(gap) > options_.clamp_distance)
      position_ = sim_position_ + gap * (options_.clamp_distance / length(gap));
  }
  if (options_.clamp_angle > 0) {
    const double d = wrap_angle(yaw - yaw_of(sim_facing_));
    if (std::abs(d) > options_.clamp_angle)
      yaw = yaw_of(sim_facing_) + std::copysign(options_.clamp_angle, d);
  }
  facing_ = facing_of(yaw);
  velocity_ = (position_ - old_position) / dt;

  // Pose: the target relative to its root, through the inertializer.
  root_relative_pose(target, source_);
  if (jump) {
    root_relative_pose(from, source_previous_);
    inertializer_.transition(shown_previous_, shown_, source_previous_, source_, float(dt),
                             float(options_.blend_time));
    ++transitions_;
  } else {
    inertializer_.advance(float(dt));
  }
  shown_previous_ = shown_;
  inertializer_.apply(source_, shown_);
  frame_ = target;

  place_in_world();
  if (options_.locomotion_warping)
    warp_locomotion(moved, position_ - old_position, dt);
  else if (options_.foot_locking)
    lock_feet(dt);
}

void Controller::warp_locomotion(const Vec3& animated, const Vec3& actual, double dt) {
  const size_t n = world_pose_.size();
  for (size_t j = 0; j < n; ++j) ik_local_[j] = Transform(world_pose_[j]);
  const std::span<const int> parents = db_.skeleton.parents();
  // How the character's motion differs from the frame's: speed ratio and turn, where both move.
  const double animated_speed = std::hypot(animated.x, animated.z) / dt;
  const double actual_speed = std::hypot(actual.x, actual.z) / dt;
  constexpr double kMoving = 0.05;  // m/s
  const bool moving = animated_speed > kMoving && actual_speed > kMoving;
  stride_scale_ = moving ? std::clamp(actual_speed / animated_speed, options_.warp_min_scale,
                                      options_.warp_max_scale)
                         : 1.0;
  warp_angle_ = moving && !spine_.empty()
                    ? orientation_warp_angle(animated, actual, options_.warp_max_angle)
                    : 0.0;
  if (warp_angle_ != 0)
    apply_orientation_warp(warp_angle_, db_.joints.hips, spine_, parents, ik_local_);
  local_to_model(parents, ik_local_, ik_model_);
  const FeatureJoints& J = db_.joints;
  const StrideWarpJoints chains[2] = {{J.left_upper_leg, J.left_lower_leg, J.left_foot},
                                      {J.right_upper_leg, J.right_lower_leg, J.right_foot}};
  StrideWarpLeg legs[2];
  for (int i = 0; i < 2; ++i) {
    const StrideWarpJoints& c = chains[i];
    legs[i].hip = ik_model_[size_t(c.hip)].translation_part();
    legs[i].knee = ik_model_[size_t(c.knee)].translation_part();
    legs[i].ankle = ik_model_[size_t(c.ankle)].translation_part();
    legs[i].ankle_rotation = rotation_of(ik_model_[size_t(c.ankle)]);
    legs[i].planted = foot_contact(i);
  }
  StrideWarpSettings s;
  s.stride_scale = stride_scale_;
  s.direction = moving ? actual : facing_;
  s.forward = rotate(Quat::from_axis_angle({0, 1, 0}, warp_angle_), facing_);
  s.pelvis = ik_model_[size_t(J.hips)].translation_part();
  StrideWarpLegResult out[2];
  const StrideWarpResult r = solve_stride_warp(legs, s, dt, warp_state_, out);
  apply_stride_warp(r, out, chains, J.hips, parents, ik_local_);
  for (size_t j = 0; j < n; ++j) world_pose_[j] = Transformf(ik_local_[j]);
}

void Controller::lock_feet(double dt) {
  const size_t n = world_pose_.size();
  for (size_t j = 0; j < n; ++j) ik_local_[j] = Transform(world_pose_[j]);
  local_to_model(db_.skeleton.parents(), ik_local_, ik_model_);
  const FeatureJoints& J = db_.joints;
  const int chains[2][3] = {{J.left_upper_leg, J.left_lower_leg, J.left_foot},
                            {J.right_upper_leg, J.right_lower_leg, J.right_foot}};
  bool changed = false;
  for (int i = 0; i < 2; ++i) {
    FootLock& lock = feet_[i];
    const auto [hip, knee, ankle] = chains[i];
    const Vec3 animated = ik_model_[size_t(ankle)].translation_part();
    const bool contact = foot_contact(i);
    if (lock.locked &&
        (!contact || distance(lock.position, animated) > options_.lock_release_distance)) {
      lock.locked = false;
      lock.since_release = 0;
      lock.released_at = lock.position;
    } else if (!lock.locked && contact) {
      lock.locked = true;
      lock.position = animated;
    }
    lock.since_release += lock.locked ? 0 : dt;
    Vec3 target;
    if (lock.locked) {
      target = lock.position;
    } else if (lock.since_release < options_.lock_blend_time) {
      const double s = lock.since_release / options_.lock_blend_time, w = s * s * (3 - 2 * s);
      target = lock.released_at * (1 - w) + animated * w;
    } else {
      continue;
    }
    TwoBoneInput in;
    in.root = ik_model_[size_t(hip)].translation_part();
    in.mid = ik_model_[size_t(knee)].translation_part();
    in.end = animated;
    in.target = target;
    in.pole = in.mid + facing_ * 0.5;
    in.soft_distance = 0.01;
    in.match_end_rotation = true;
    in.end_rotation = in.target_rotation = rotation_of(ik_model_[size_t(ankle)]);
    const TwoBoneResult r = solve_two_bone(in);
    changed = apply_two_bone(r, db_.skeleton.parents(), hip, knee, ankle, ik_local_) || changed;
  }
  if (changed)
    for (size_t j = 0; j < n; ++j) world_pose_[j] = Transformf(ik_local_[j]);
}

}  // namespace kinema::match
