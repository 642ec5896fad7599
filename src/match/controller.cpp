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

const FeatureGroup* find_group(std::span<const FeatureGroup> groups, std::string_view name) {
  for (const FeatureGroup& g : groups)
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
    : db_(&db), options_(options) {
  if (!db.has_poses())
    throw Error("", "database",
                "the database has no poses (built with --features-only): the controller plays "
                "poses");
  fps_ = db.fps;
  skeleton_ = &db.skeleton;
  joints_ = db.joints;
  trajectory_times_ = db.trajectory_times;
  mean_ = db.mean;
  trajectory_position_ = find_group(db.groups, "trajectory_position");
  trajectory_direction_ = find_group(db.groups, "trajectory_direction");
  init();
  search_ = BoundedTreeSearch(db.features);
  contacts_ = database_foot_contacts(db, options.contact_height, options.contact_speed);
  reset(0);
}

Controller::Controller(const LearnedModel& model, const ControllerOptions& options)
    : model_(&model), options_(options) {
  if (!options.filter.is_default())
    throw Error("", "controller options",
                "a learned model has no frames to filter by tag (the projector searches them all)");
  fps_ = model.fps;
  skeleton_ = &model.skeleton;
  joints_ = model.joints;
  trajectory_times_ = model.trajectory_times;
  mean_ = model.mean;
  trajectory_position_ = find_group(model.groups, "trajectory_position");
  trajectory_direction_ = find_group(model.groups, "trajectory_direction");
  init();
  player_ = std::make_unique<LearnedPlayer>(model);
  reset(0);
}

Controller::~Controller() = default;
Controller::Controller(Controller&&) noexcept = default;

void Controller::init() {
  if (!trajectory_position_ || !trajectory_direction_)
    throw Error("", "database", "the database has no trajectory features");
  const ControllerOptions& options = options_;
  if (!(options.blend_time >= 0) || !(options.search_interval >= 0))
    throw Error("", "controller options", "blend_time and search_interval must be ≥ 0");
  const int joints = skeleton_->joint_count();
  const size_t soa = size_t(soa_count(joints));
  inertializer_.reset(joints);
  for (auto* v : {&shown_previous_, &shown_, &source_, &source_previous_}) v->resize(soa);
  aos_.resize(size_t(joints));
  world_pose_.resize(size_t(joints));
  query_.resize(mean_.size());
  raw_.resize(mean_.size());
  predicted_.resize(trajectory_times_.size());
  ik_local_.resize(size_t(joints));
  ik_model_.resize(size_t(joints));
  const FeatureJoints& J = joints_;
  const bool legs = J.left_lower_leg >= 0 && J.right_lower_leg >= 0 && J.left_upper_leg >= 0 &&
                    J.right_upper_leg >= 0;
  if (options.foot_locking && !legs)
    throw Error("", "database",
                "foot locking needs the upper and lower legs (the humanoid mapping found none)");
  if (options.locomotion_warping) {
    if (!legs || J.hips < 0)
      throw Error("", "database",
                  "locomotion warping needs the hips and the upper and lower legs (the humanoid "
                  "mapping found none)");
    if (!(options.warp_min_scale > 0) || !(options.warp_max_scale >= options.warp_min_scale) ||
        !std::isfinite(options.warp_max_scale) || !(options.warp_max_angle >= 0) ||
        !std::isfinite(options.warp_max_angle))
      throw Error("", "controller options",
                  "warp scales must satisfy 0 < min ≤ max and the angle must be ≥ 0, finite");
    spine_ = spine_above(*skeleton_, J);
  }
}

void Controller::root_relative_pose(uint32_t frame, std::span<SoaTransform> out) const {
  // Skeleton roots are re-expressed in the frame's root frame, so poses of different clips
  // (different places and headings in their capture) can be blended and placed anywhere.
  const std::span<const Transformf> pose = db_->pose(frame);
  const RootSample& r = db_->roots[frame];
  const Quatf unturn = Quatf(Quat::from_axis_angle({0, 1, 0}, -yaw_of(sample_facing(r))));
  for (int j = 0; j < skeleton_->joint_count(); ++j) {
    Transformf t = pose[size_t(j)];
    if (skeleton_->parent(j) == kNoParent) {
      t.translation = rotate(unturn, t.translation - Vec3f{r.x, 0, r.z});
      t.rotation = unturn * t.rotation;
    }
    set_joint(out, j, t);
  }
}

void Controller::decompressed_pose(std::span<SoaTransform> out, RootStep& step) {
  decode_pose(player_->decompress(), aos_, step, contact_);
  for (int j = 0; j < skeleton_->joint_count(); ++j) set_joint(out, j, aos_[size_t(j)]);
}

float Controller::cost(std::span<const float> query, std::span<const float> features) const {
  float sum = 0;
  for (size_t d = 0; d < query.size(); ++d)
    sum += (features[d] - query[d]) * (features[d] - query[d]);
  return sum;
}

void Controller::reset(uint32_t frame, const Vec3& position, const Vec3& facing) {
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
  inertializer_.reset(skeleton_->joint_count());
  if (db_) {
    frame_ = std::min<uint32_t>(frame, uint32_t(db_->frames() - 1));
    root_relative_pose(frame_, shown_);
    for (int i = 0; i < 2; ++i) contact_[i] = contacts_[2 * size_t(frame_) + size_t(i)] != 0;
  } else {
    frame_ = 0;
    player_->reset();
    RootStep step;
    decompressed_pose(shown_, step);
  }
  shown_previous_ = shown_;
  place_in_world();
}

void Controller::place_in_world() {
  to_aos(shown_, aos_);
  const Quatf turn = Quatf(Quat::from_axis_angle({0, 1, 0}, yaw_of(facing_)));
  for (int j = 0; j < skeleton_->joint_count(); ++j) {
    Transformf t = aos_[size_t(j)];
    if (skeleton_->parent(j) == kNoParent) {
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

SearchResult Controller::search(const ControllerInput& input, std::span<const float> continuation) {
  // Query: the pose features of the continuation, the trajectory the stick asks for.
  std::copy(continuation.begin(), continuation.end(), query_.begin());
  const double vh = options_.velocity_halflife, fh = options_.facing_halflife;
  const double goal = goal_yaw(input);
  const double y = spring_y(fh);
  const double j0 = wrap_angle(yaw_of(sim_facing_) - goal);
  const double j1 = sim_yaw_velocity_ + j0 * y;
  const FeatureGroup& tp = *trajectory_position_;
  const FeatureGroup& td = *trajectory_direction_;
  for (size_t i = 0; i < trajectory_times_.size(); ++i) {
    const double t = trajectory_times_[i];
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
      query_[d] = (raw_[d] - mean_[d]) / g->scale * g->weight;
  ++searches_;
  since_search_ = 0;
  continuation_cost_ = cost(query_, continuation);
  SearchResult best;
  if (db_) {
    best = search_.search(query_, options_.filter);
  } else {
    best.cost = player_->project(query_);
    best.frame = 0;
  }
  best_cost_ = best.cost;
  return best;
}

bool Controller::advance_database(const ControllerInput& input, FrameMotion& motion) {
  const Database& db = *db_;
  const DatabaseClip& clip = db.clip_of(frame_);
  const bool at_end = frame_ + 1 >= clip.first_frame + clip.frame_count;
  // At a clip's end there is no continuation: the search must jump (or hold the last frame).
  uint32_t target = at_end ? frame_ : frame_ + 1;
  bool jump = false;
  if (at_end || since_search_ + 1e-9 >= options_.search_interval ||
      continuation_cost_ > options_.continuation_threshold) {
    const uint32_t next = std::min<uint32_t>(frame_ + 1, uint32_t(db.frames() - 1));
    const SearchResult best = search(
        input,
        std::span<const float>(db.features.values).subspan(size_t(next) * db.dims(), db.dims()));
    if (best.found()) {
      const bool nearby =
          &db.clip_of(best.frame) == &clip &&
          std::abs(int64_t(best.frame) - int64_t(target)) <= options_.ignore_nearby_frames;
      if (at_end || (!nearby && best.cost < continuation_cost_)) {
        target = best.frame;
        jump = true;
      }
    }
  }
  // Root motion of the frame played: the step into `target` within its own clip (the
  // continuation's step when `target` starts its clip).
  const DatabaseClip& tc = db.clip_of(target);
  const uint32_t from = target > tc.first_frame ? target - 1 : target;
  const uint32_t to =
      from == target && target + 1 < tc.first_frame + tc.frame_count ? target + 1 : target;
  const RootSample &r0 = db.roots[from], &r1 = db.roots[to];
  motion.step = to_local(sample_facing(r0), sample_position(r1) - sample_position(r0));
  motion.turn = wrap_angle(yaw_of(sample_facing(r1)) - yaw_of(sample_facing(r0)));
  root_relative_pose(target, source_);
  if (jump) root_relative_pose(from, source_previous_);
  frame_ = target;
  for (int i = 0; i < 2; ++i) contact_[i] = contacts_[2 * size_t(frame_) + size_t(i)] != 0;
  return jump;
}

bool Controller::advance_learned(const ControllerInput& input, FrameMotion& motion) {
  // The stepper gives the continuation; the projector the best match for the query.
  player_->step();
  bool jump = false;
  if (since_search_ + 1e-9 >= options_.search_interval ||
      continuation_cost_ > options_.continuation_threshold) {
    const SearchResult best = search(input, player_->features());
    if (best.cost < continuation_cost_) {
      player_->jump_to_candidate();
      jump = true;
    }
  }
  RootStep step;
  decompressed_pose(source_, step);
  if (jump) source_previous_ = source_;
  motion.step = {step.x, 0, step.z};
  motion.turn = step.turn;
  return jump;
}

void Controller::update(const ControllerInput& input) {
  const double dt = 1.0 / fps_;
  simulate(input, dt);
  since_search_ += dt;
  FrameMotion motion;
  const bool jump = db_ ? advance_database(input, motion) : advance_learned(input, motion);
  const double turn = motion.turn;
  const Vec3 old_position = position_;
  const Vec3 moved = to_world(facing_, motion.step);
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
  if (jump) {
    inertializer_.transition(shown_previous_, shown_, source_previous_, source_, float(dt),
                             float(options_.blend_time));
    ++transitions_;
  } else {
    inertializer_.advance(float(dt));
  }
  shown_previous_ = shown_;
  inertializer_.apply(source_, shown_);

  place_in_world();
  if (options_.locomotion_warping)
    warp_locomotion(moved, position_ - old_position, dt);
  else if (options_.foot_locking)
    lock_feet(dt);
}

void Controller::warp_locomotion(const Vec3& animated, const Vec3& actual, double dt) {
  const size_t n = world_pose_.size();
  for (size_t j = 0; j < n; ++j) ik_local_[j] = Transform(world_pose_[j]);
  const std::span<const int> parents = skeleton_->parents();
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
    apply_orientation_warp(warp_angle_, joints_.hips, spine_, parents, ik_local_);
  local_to_model(parents, ik_local_, ik_model_);
  const FeatureJoints& J = joints_;
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
  local_to_model(skeleton_->parents(), ik_local_, ik_model_);
  const FeatureJoints& J = joints_;
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
    changed = apply_two_bone(r, skeleton_->parents(), hip, knee, ankle, ik_local_) || changed;
  }
  if (changed)
    for (size_t j = 0; j < n; ++j) world_pose_[j] = Transformf(ik_local_[j]);
}

}  // namespace kinema::match
