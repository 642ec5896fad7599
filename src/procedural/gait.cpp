// Procedural gaits (kinema/procedural/gait.h): footstep planning, swing arcs, the body over the
// feet, and two-bone legs.
#include "kinema/procedural/gait.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/ik/foot_placement.h"  // critically_damped_spring
#include "kinema/ik/two_bone.h"
#include "kinema/math/scalar.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "gait";
constexpr int kGroundSamples = 8;  ///< rays along a swing for the highest ground under it
/// A swing shorter than this (m) is skipped: a standing creature does not march on the spot.
constexpr double kMinStep = 0.02;
// The swing's three overlapping parts, as fractions of it: the foot rises over [0, kRise], travels
// along the ground over [kTravel, 1 − kTravel] and comes down over [kDescend, 1]. It is mostly up
// before it moves and mostly over the landing before it drops, so it clears the ground between.
constexpr double kRise = 0.4, kTravel = 0.2, kDescend = 0.6;

void require(bool ok, const std::string& reason) {
  if (!ok) throw Error({}, kPlace, reason);
}

bool finite_nonnegative(double x) { return std::isfinite(x) && x >= 0; }

double smoothstep(double s) {
  s = std::clamp(s, 0.0, 1.0);
  return s * s * (3 - 2 * s);
}

double fraction(double x) { return x - std::floor(x); }

/// Angle in (−π, π].
double wrap_angle(double a) {
  a = std::fmod(a + kPi, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  return a - kPi;
}

Quat yaw_rotation(double heading) { return Quat::from_axis_angle(Vec3{0, 1, 0}, heading); }

/// Horizontal part of v.
Vec3 flat(const Vec3& v) { return {v.x, 0, v.z}; }

bool is_below(const Skeleton& skeleton, int joint, int ancestor) {
  for (int j = skeleton.parent(joint); j >= 0; j = skeleton.parent(j))
    if (j == ancestor) return true;
  return false;
}

/// Foot tilt from up to the ground normal n.
Quat tilt_to(const Vec3& n) { return from_to(Vec3{0, 1, 0}, normalize(n, Vec3{0, 1, 0})); }

/// The sole's place at swing fraction s ∈ [0, 1] from lift-off `from` to landing `to` over an arc
/// whose top is at height `top`.
Vec3 swing_point(const Vec3& from, const Vec3& to, double top, double s) {
  const double along = smoothstep((s - kTravel) / (1 - 2 * kTravel));
  Vec3 p = from + (to - from) * along;
  p.y = s < kDescend ? from.y + (top - from.y) * smoothstep(s / kRise)
                     : top + (to.y - top) * smoothstep((s - kDescend) / (1 - kDescend));
  return p;
}

}  // namespace

Gait::Gait(const Skeleton& skeleton, int body, std::vector<GaitLeg> legs, GaitSettings settings,
           const Ground* ground)
    : skeleton_(&skeleton),
      body_(body),
      legs_(std::move(legs)),
      settings_(settings),
      ground_(ground) {
  const int n = skeleton.joint_count();
  require(body >= 0 && body < n, "the body joint " + std::to_string(body) +
                                     " is not a joint of the " + std::to_string(n) +
                                     "-joint skeleton");
  require(!legs_.empty(), "a gait needs at least one leg");
  const GaitSettings& s = settings_;
  require(std::isfinite(s.cycle_duration) && s.cycle_duration > 0,
          "cycle_duration must be finite and > 0");
  require(std::isfinite(s.min_cycle_duration) && s.min_cycle_duration > 0 &&
              s.min_cycle_duration <= s.cycle_duration,
          "min_cycle_duration must be > 0 and at most cycle_duration");
  require(finite_nonnegative(s.max_stride), "max_stride must be finite and ≥ 0");
  require(std::isfinite(s.duty_factor) && s.duty_factor > 0 && s.duty_factor < 1,
          "duty_factor must lie in (0, 1)");
  require(finite_nonnegative(s.step_height), "step_height must be finite and ≥ 0");
  require(finite_nonnegative(s.crouch), "crouch must be finite and ≥ 0");
  require(finite_nonnegative(s.bob_amplitude) && finite_nonnegative(s.bob_per_cycle),
          "bob_amplitude and bob_per_cycle must be finite and ≥ 0");
  require(finite_nonnegative(s.body_half_life) && finite_nonnegative(s.tilt_half_life),
          "half-lives must be finite and ≥ 0");
  require(std::isfinite(s.tilt_weight) && s.tilt_weight >= 0 && s.tilt_weight <= 1,
          "tilt_weight must lie in [0, 1]");
  require(finite_nonnegative(s.max_tilt) && finite_nonnegative(s.tilt_ridge),
          "max_tilt and tilt_ridge must be finite and ≥ 0");
  require(std::isfinite(s.turn_rate) && s.turn_rate > 0, "turn_rate must be finite and > 0");
  require(std::isfinite(s.reach) && s.reach > 0 && s.reach <= 1, "reach must lie in (0, 1]");
  require(std::isfinite(s.ray_up) && s.ray_up > 0 && std::isfinite(s.ray_down) && s.ray_down > 0,
          "ray_up and ray_down must be finite and > 0");

  // The rest pose in model space: where the legs stand and how they bend.
  const std::vector<Transform> rest = skeleton.rest_pose();
  model_.resize(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const int p = skeleton.parent(j);
    model_[static_cast<std::size_t>(j)] =
        p < 0 ? rest[static_cast<std::size_t>(j)]
              : model_[static_cast<std::size_t>(p)] * rest[static_cast<std::size_t>(j)];
  }
  double lowest = model_[0].translation.y;
  for (const Transform& m : model_) lowest = std::min(lowest, m.translation.y);
  const Transform& body_rest = model_[static_cast<std::size_t>(body)];
  body_rest_rotation_ = body_rest.rotation;

  double mean_sole_y = 0;
  for (std::size_t i = 0; i < legs_.size(); ++i) {
    GaitLeg& leg = legs_[i];
    const std::string name = "leg " + std::to_string(i);
    require(leg.hip >= 0 && leg.hip < n && leg.knee >= 0 && leg.knee < n && leg.foot >= 0 &&
                leg.foot < n,
            name + " has a joint index outside the skeleton");
    require(is_below(skeleton, leg.knee, leg.hip) && is_below(skeleton, leg.foot, leg.knee),
            name + ": the knee must hang below the hip and the foot below the knee");
    require(is_below(skeleton, leg.hip, body), name + ": the hip must hang below the body joint");
    for (std::size_t k = 0; k < i; ++k)
      require(legs_[k].hip != leg.hip && legs_[k].foot != leg.foot,
              name + " shares its hip or foot with leg " + std::to_string(k));
    require(std::isfinite(leg.phase_offset), name + ": phase_offset must be finite");
    leg.phase_offset = fraction(leg.phase_offset);
    const Vec3 hip = model_[static_cast<std::size_t>(leg.hip)].translation;
    const Vec3 knee = model_[static_cast<std::size_t>(leg.knee)].translation;
    const Vec3 foot = model_[static_cast<std::size_t>(leg.foot)].translation;
    if (leg.ankle_height < 0) leg.ankle_height = foot.y - lowest;
    require(std::isfinite(leg.ankle_height), name + ": ankle_height must be finite");
    const double l1 = distance(hip, knee), l2 = distance(knee, foot);
    require(l1 > 1e-6 && l2 > 1e-6, name + " has a zero-length bone");
    lengths_.push_back(l1 + l2);

    LegRest r;
    const Vec3 sole = foot - Vec3{0, leg.ankle_height, 0};
    r.neutral = flat(sole - body_rest.translation);
    // The knee's side of the hip-foot line is the way it bends; a straight rest leg bends forward
    // (towards the body's +Z at heading 0).
    const Vec3 axis = normalize(foot - hip, Vec3{0, -1, 0});
    const Vec3 off = (knee - hip) - axis * dot(knee - hip, axis);
    r.knee_dir =
        length(off) > 1e-6 * l1 ? normalize(off) : normalize(Vec3{0, 0, 1} - axis * axis.z);
    r.foot_rest = model_[static_cast<std::size_t>(leg.foot)].rotation;
    rest_.push_back(r);
    mean_sole_y += sole.y;
  }
  mean_sole_y /= static_cast<double>(legs_.size());
  body_rest_height_ = body_rest.translation.y - mean_sole_y - settings_.crouch;
  if (!(settings_.max_stride > 0))
    settings_.max_stride = 0.8 * *std::min_element(lengths_.begin(), lengths_.end());
  feet_.resize(legs_.size());
  window_.assign(legs_.size(), 0);
  reset(Vec3{0, 0, 0}, 0);
}

double Gait::cycle_at(double speed) const noexcept {
  if (!(speed > 0)) return settings_.cycle_duration;
  return std::clamp(settings_.max_stride / speed, settings_.min_cycle_duration,
                    settings_.cycle_duration);
}

bool Gait::ground_at(double x, double z, double from_y, GroundHit& hit) const noexcept {
  if (!ground_) {
    hit.point = {x, 0, z};
    hit.normal = {0, 1, 0};
    hit.distance = from_y;
    return true;
  }
  return ground_->ray_down(Vec3{x, from_y, z}, settings_.ray_up + settings_.ray_down, hit);
}

double Gait::highest_ground(const Vec3& from, const Vec3& to) const noexcept {
  double top = std::max(from.y, to.y);
  for (int k = 1; k < kGroundSamples; ++k) {
    const double t = static_cast<double>(k) / kGroundSamples;
    const Vec3 p = from + (to - from) * t;
    GroundHit hit;
    if (ground_at(p.x, p.z, body_y_ + settings_.ray_up, hit)) top = std::max(top, hit.point.y);
  }
  return top;
}

Vec3 Gait::landing_point(std::size_t leg, double time_to_touchdown, double stance_time,
                         Vec3& normal, bool& on_ground) const noexcept {
  const double heading = heading_ + yaw_rate_ * time_to_touchdown;
  const Vec3 body = position_ + velocity_ * time_to_touchdown;
  // Half a stance ahead: the body then passes over the foot at mid-stance.
  Vec3 p = body + rotate(yaw_rotation(heading), rest_[leg].neutral) + velocity_ * (stance_time / 2);
  GroundHit hit;
  on_ground = ground_at(p.x, p.z, body_y_ + settings_.ray_up, hit);
  if (on_ground) {
    p.y = hit.point.y;
    normal = hit.normal;
  } else {
    p.y = feet_[leg].planted.y;  // over a hole: keep the last height
    normal = {0, 1, 0};
  }
  return p;
}

void Gait::reset(const Vec3& position, double heading) noexcept {
  if (!is_finite(position) || !std::isfinite(heading)) return;
  position_ = flat(position);
  velocity_ = {0, 0, 0};
  heading_ = wrap_angle(heading);
  yaw_rate_ = 0;
  phase_ = 0;
  cycle_ = settings_.cycle_duration;
  // The ground under the body first: the highest surface below 1 km above position.y (the rays of
  // the feet then start from the body's height), then the feet, then the body over them.
  GroundHit under;
  const bool found =
      ground_ ? ground_->ray_down(Vec3{position_.x, position.y + 1e3, position_.z}, 2e3, under)
              : ground_at(position_.x, position_.z, 0, under);
  body_y_ = (found ? under.point.y : 0) + body_rest_height_;
  for (std::size_t i = 0; i < legs_.size(); ++i) {
    GaitFoot& f = feet_[i];
    f = GaitFoot{};
    f.planted = landing_point(i, 0, 0, f.normal, f.on_ground);
    f.sole = f.landing = f.planted;
    f.landing_normal = f.normal;
    window_[i] = 0;
  }
  body_y_velocity_ = pitch_velocity_ = roll_velocity_ = 0;
  settle_body(0);
}

void Gait::settle_body(double dt) noexcept {
  // Where the feet stand or will stand: their mean height and the plane through them.
  const std::size_t n = legs_.size();
  const Quat unyaw = conjugate(yaw_rotation(heading_));
  double mean_y = 0, mean_u = 0, mean_w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 support = feet_[i].swinging ? feet_[i].landing : feet_[i].planted;
    const Vec3 local = rotate(unyaw, support - position_);
    mean_y += support.y;
    mean_u += local.z;  // forward
    mean_w += local.x;  // left
  }
  mean_y /= static_cast<double>(n);
  mean_u /= static_cast<double>(n);
  mean_w /= static_cast<double>(n);
  double suu = 0, suw = 0, sww = 0, suy = 0, swy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 support = feet_[i].swinging ? feet_[i].landing : feet_[i].planted;
    const Vec3 local = rotate(unyaw, support - position_);
    const double u = local.z - mean_u, w = local.x - mean_w, y = support.y - mean_y;
    suu += u * u;
    suw += u * w;
    sww += w * w;
    suy += u * y;
    swy += w * y;
  }
  // Ridge regression y = a·u + b·w: a direction the feet barely spread in gets no slope.
  const double ridge = settings_.tilt_ridge * static_cast<double>(n);
  const double a11 = suu + ridge, a22 = sww + ridge, det = a11 * a22 - suw * suw;
  double slope_forward = 0, slope_left = 0;
  if (det > 1e-12) {
    slope_forward = (a22 * suy - suw * swy) / det;
    slope_left = (a11 * swy - suw * suy) / det;
  }
  const double max_tilt = settings_.max_tilt, w = settings_.tilt_weight;
  const double pitch_goal = w * std::clamp(std::atan(slope_forward), -max_tilt, max_tilt);
  const double roll_goal = w * std::clamp(std::atan(slope_left), -max_tilt, max_tilt);

  // The body bobs bob_per_cycle times a cycle, highest when leg 0 is mid-swing (its partner at
  // mid-stance), and only as much as it walks: a standing body stays still.
  const double walk_speed = 0.5 * settings_.max_stride / settings_.cycle_duration;
  const double activity = std::min(1.0, length(velocity_) / walk_speed);
  const double peak = legs_[0].phase_offset + (1 - settings_.duty_factor) / 2;
  const double bob = settings_.bob_amplitude * activity *
                     std::cos(2 * kPi * settings_.bob_per_cycle * (phase_ - peak));
  const double height_goal = mean_y + body_rest_height_ + bob;
  if (dt > 0) {
    critically_damped_spring(body_y_, body_y_velocity_, height_goal, settings_.body_half_life, dt);
    critically_damped_spring(pitch_, pitch_velocity_, pitch_goal, settings_.tilt_half_life, dt);
    critically_damped_spring(roll_, roll_velocity_, roll_goal, settings_.tilt_half_life, dt);
  } else {
    body_y_ = height_goal;
    pitch_ = pitch_goal;
    roll_ = roll_goal;
  }
}

bool Gait::update(double dt, const Vec3& velocity, double heading, std::span<const Transform> base,
                  std::span<Transform> local) noexcept {
  const std::size_t n = static_cast<std::size_t>(skeleton_->joint_count());
  if (!(std::isfinite(dt) && dt > 0) || !is_finite(velocity) || !std::isfinite(heading) ||
      (!base.empty() && base.size() != n) || local.size() != n)
    return false;
  for (const Transform& t : base)
    if (!is_finite(t)) return false;

  velocity_ = flat(velocity);
  const double speed = length(velocity_);
  const double turn = std::clamp(wrap_angle(heading - heading_), -settings_.turn_rate * dt,
                                 settings_.turn_rate * dt);
  yaw_rate_ = turn / dt;
  heading_ = wrap_angle(heading_ + turn);
  position_ = position_ + velocity_ * dt;
  cycle_ = cycle_at(speed);
  phase_ = fraction(phase_ + dt / cycle_);

  const double swing_share = 1 - settings_.duty_factor;
  const double stance_time = settings_.duty_factor * cycle_;
  for (std::size_t i = 0; i < legs_.size(); ++i) {
    GaitFoot& f = feet_[i];
    const double psi = fraction(phase_ - legs_[i].phase_offset);
    const bool in_window = psi < swing_share;
    const double time_left = (swing_share - psi) * cycle_;
    if (in_window && !window_[i]) {
      // Lift-off, unless the step would be too short to be worth taking.
      Vec3 normal;
      bool on_ground = false;
      const Vec3 landing = landing_point(i, time_left, stance_time, normal, on_ground);
      f.swinging = distance(flat(landing), flat(f.planted)) >= kMinStep;
      f.swinging_planned = false;
    }
    if (!in_window && f.swinging) {  // touch-down where the swing was last aimed
      f.swinging = false;
      f.planted = f.sole = f.landing;
      f.normal = f.landing_normal;
      f.on_ground = f.landing_on_ground;
    }
    window_[i] = in_window ? 1 : 0;
    if (!f.swinging) {
      f.sole = f.planted;
      continue;
    }
    // The landing is replanned while the foot rises and travels, and kept once it comes down.
    const double s = psi / swing_share;
    if (s < kDescend || !f.swinging_planned) {
      f.landing = landing_point(i, time_left, stance_time, f.landing_normal, f.landing_on_ground);
      f.swing_top = highest_ground(f.planted, f.landing) + settings_.step_height;
      f.swinging_planned = true;
    }
    f.sole = swing_point(f.planted, f.landing, f.swing_top, s);
    // Never below the ground under the sole (a riser the arc's samples missed).
    GroundHit hit;
    if (ground_at(f.sole.x, f.sole.z, body_y_ + settings_.ray_up, hit))
      f.sole.y = std::max(f.sole.y, hit.point.y);
  }
  settle_body(dt);
  return write_pose(base, local);
}

bool Gait::pose(std::span<const Transform> base, std::span<Transform> local) noexcept {
  const std::size_t n = static_cast<std::size_t>(skeleton_->joint_count());
  if ((!base.empty() && base.size() != n) || local.size() != n) return false;
  for (const Transform& t : base)
    if (!is_finite(t)) return false;
  return write_pose(base, local);
}

bool Gait::write_pose(std::span<const Transform> base, std::span<Transform> local) noexcept {
  const Skeleton& skeleton = *skeleton_;
  const int n = skeleton.joint_count();
  for (int j = 0; j < n; ++j)
    local[static_cast<std::size_t>(j)] =
        base.empty() ? skeleton.joint(j).rest : base[static_cast<std::size_t>(j)];
  const std::size_t b = static_cast<std::size_t>(body_);
  const Quat motion = yaw_rotation(heading_) *
                      Quat::from_axis_angle(Vec3{1, 0, 0}, -pitch_) *  // nose up: +Z rises
                      Quat::from_axis_angle(Vec3{0, 0, 1}, roll_);     // right (−X) side down
  // Lower the body when a foot would be out of reach (a long stride, a step down), then place it.
  for (int pass = 0; pass < 2; ++pass) {
    body_world_.translation = {position_.x, body_y_, position_.z};
    body_world_.rotation = motion * body_rest_rotation_;
    const int parent = skeleton.parent(body_);
    Transform parent_model;
    for (int j = 0; j < body_; ++j) {
      const int p = skeleton.parent(j);
      model_[static_cast<std::size_t>(j)] =
          p < 0 ? local[static_cast<std::size_t>(j)]
                : model_[static_cast<std::size_t>(p)] * local[static_cast<std::size_t>(j)];
    }
    if (parent >= 0) parent_model = model_[static_cast<std::size_t>(parent)];
    body_world_.scale = local[b].scale * (parent >= 0 ? parent_model.scale.x : 1.0);
    Transform body_local = inverse(parent_model) * body_world_;
    body_local.scale = local[b].scale;
    local[b] = body_local;
    for (int j = body_; j < n; ++j) {
      const int p = skeleton.parent(j);
      model_[static_cast<std::size_t>(j)] =
          p < 0 ? local[static_cast<std::size_t>(j)]
                : model_[static_cast<std::size_t>(p)] * local[static_cast<std::size_t>(j)];
    }
    if (pass == 1) break;
    double drop = 0;
    for (std::size_t i = 0; i < legs_.size(); ++i) {
      const Vec3 hip = model_[static_cast<std::size_t>(legs_[i].hip)].translation;
      const Vec3 target = feet_[i].sole + Vec3{0, legs_[i].ankle_height, 0};
      const double reach = settings_.reach * lengths_[i];
      const Vec3 d = hip - target;
      const double across2 = d.x * d.x + d.z * d.z;
      if (across2 >= reach * reach || d.y <= 0) continue;  // lowering cannot help
      drop = std::max(drop, d.y - std::sqrt(reach * reach - across2));
    }
    if (!(drop > 0)) break;
    body_y_ -= drop;
  }

  const std::span<const int> parents = skeleton.parents();
  for (std::size_t i = 0; i < legs_.size(); ++i) {
    const GaitLeg& leg = legs_[i];
    const GaitFoot& f = feet_[i];
    const Transform& hip = model_[static_cast<std::size_t>(leg.hip)];
    const Transform& knee = model_[static_cast<std::size_t>(leg.knee)];
    const Transform& foot = model_[static_cast<std::size_t>(leg.foot)];
    TwoBoneInput in;
    in.root = hip.translation;
    in.mid = knee.translation;
    in.end = foot.translation;
    in.target = f.sole + Vec3{0, leg.ankle_height, 0};
    in.pole = (in.root + in.target) * 0.5 + rotate(motion, rest_[i].knee_dir) * lengths_[i];
    in.match_end_rotation = true;
    in.end_rotation = foot.rotation;
    Quat ground_tilt = Quat::identity();
    if (settings_.align_feet) {
      if (f.swinging) {
        const double s = fraction(phase_ - leg.phase_offset) / (1 - settings_.duty_factor);
        ground_tilt = slerp(tilt_to(f.normal), tilt_to(f.landing_normal), smoothstep(s));
      } else {
        ground_tilt = tilt_to(f.normal);
      }
    }
    in.target_rotation = ground_tilt * yaw_rotation(heading_) * rest_[i].foot_rest;
    const TwoBoneResult solved = solve_two_bone(in);
    apply_two_bone(solved, parents, leg.hip, leg.knee, leg.foot, local);
  }
  return true;
}

bool gait_creature_from_name(const std::string& name, GaitCreature& creature) {
  if (name == "biped")
    creature = GaitCreature::kBiped;
  else if (name == "quadruped")
    creature = GaitCreature::kQuadruped;
  else if (name == "hexapod")
    creature = GaitCreature::kHexapod;
  else if (name == "spider")
    creature = GaitCreature::kSpider;
  else
    return false;
  return true;
}

namespace {

/// Adds a joint with a model-space rest position under `parent` (all rest rotations identity, so
/// local offsets are differences of model positions).
int add_joint(std::vector<Joint>& joints, std::vector<Vec3>& at, const std::string& name,
              int parent, const Vec3& position) {
  Joint j;
  j.name = name;
  j.parent = parent;
  j.rest.translation = parent < 0 ? position : position - at[static_cast<std::size_t>(parent)];
  joints.push_back(std::move(j));
  at.push_back(position);
  return static_cast<int>(joints.size()) - 1;
}

std::string joint_name(std::string leg, const char* part) {
  std::replace(leg.begin(), leg.end(), ' ', '_');
  return leg + "_" + part;
}

}  // namespace

GaitRig make_gait_creature(GaitCreature creature) {
  struct LegSpec {
    std::string name;
    Vec3 hip, knee, foot;  // model space at rest; the foot joint on the sole (y = 0)
    double phase;
  };
  std::vector<LegSpec> specs;
  std::vector<Joint> joints;
  std::vector<Vec3> at;
  GaitSettings s;
  int body = -1;
  switch (creature) {
    case GaitCreature::kBiped: {
      // A walker about 1.7 m tall: knees bent a little forward, a spine and a head to see it by.
      body = add_joint(joints, at, "body", -1, {0, 0.95, 0});
      const int spine = add_joint(joints, at, "spine", body, {0, 1.25, 0});
      const int neck = add_joint(joints, at, "neck", spine, {0, 1.5, 0});
      add_joint(joints, at, "head", neck, {0, 1.7, 0});
      for (int side = 0; side < 2; ++side) {
        const double x = side == 0 ? 0.1 : -0.1;  // glTF: a character's left is +X
        specs.push_back(
            {side == 0 ? "left" : "right", {x, 0.9, 0}, {x, 0.49, 0.04}, {x, 0, 0}, side * 0.5});
      }
      s.cycle_duration = 1.0;
      s.duty_factor = 0.6;
      s.step_height = 0.08;
      s.crouch = 0.05;  // the rest legs are nearly straight
      s.bob_amplitude = 0.015;
      s.tilt_weight = 0;  // people stay upright on stairs and slopes
      break;
    }
    case GaitCreature::kQuadruped: {
      // A dog-sized body 0.8 m long: hind knees forward, fore elbows back.
      body = add_joint(joints, at, "body", -1, {0, 0.55, 0});
      const int neck = add_joint(joints, at, "neck", body, {0, 0.65, 0.4});
      add_joint(joints, at, "head", neck, {0, 0.75, 0.55});
      add_joint(joints, at, "tail", body, {0, 0.6, -0.55});
      const char* names[4] = {"hind left", "fore left", "hind right", "fore right"};
      for (int k = 0; k < 4; ++k) {
        const bool fore = k % 2 == 1;
        const double x = k < 2 ? 0.12 : -0.12, z = fore ? 0.35 : -0.35;
        specs.push_back({names[k],
                         {x, 0.5, z},
                         {x, 0.26, z + (fore ? -0.05 : 0.06)},
                         {x, 0, z},
                         0.25 * k});  // lateral sequence: LH, LF, RH, RF a quarter apart
      }
      s.cycle_duration = 0.8;
      s.min_cycle_duration = 0.3;
      s.duty_factor = 0.65;
      s.step_height = 0.07;
      s.bob_amplitude = 0.01;
      break;
    }
    case GaitCreature::kHexapod:
    case GaitCreature::kSpider: {
      const bool spider = creature == GaitCreature::kSpider;
      const int pairs = spider ? 4 : 3;
      body = add_joint(joints, at, "body", -1, {0, spider ? 0.22 : 0.25, 0});
      add_joint(joints, at, "head", body, {0, spider ? 0.24 : 0.27, spider ? 0.2 : 0.25});
      for (int side = 0; side < 2; ++side) {
        const double sx = side == 0 ? 1 : -1;
        for (int k = 0; k < pairs; ++k) {
          // Front to back; feet splay out and fore/aft further than the hips.
          const double z = (spider ? 0.15 : 0.2) - k * (spider ? 0.1 : 0.2);
          const Vec3 hip{sx * 0.08, at[0].y, z};
          const Vec3 foot{sx * (spider ? 0.5 : 0.4), 0, z * (spider ? 2.6 : 1.4)};
          const Vec3 knee{sx * (spider ? 0.28 : 0.22), spider ? 0.42 : 0.38,
                          z * (spider ? 1.9 : 1.2)};
          // Alternating tripods / tetrapods: left 1, right 2, left 3 (, right 4) together.
          const double phase = ((k + side) % 2) * 0.5;
          specs.push_back({std::string(side == 0 ? "left " : "right ") + std::to_string(k + 1), hip,
                           knee, foot, phase});
        }
      }
      s.cycle_duration = spider ? 0.7 : 0.6;
      s.min_cycle_duration = 0.25;
      s.duty_factor = 0.55;
      s.step_height = 0.06;
      s.bob_amplitude = 0.005;
      break;
    }
  }
  GaitRig rig;
  for (const LegSpec& spec : specs) {
    GaitLeg leg;
    leg.hip = add_joint(joints, at, joint_name(spec.name, "hip"), body, spec.hip);
    leg.knee = add_joint(joints, at, joint_name(spec.name, "knee"), leg.hip, spec.knee);
    leg.foot = add_joint(joints, at, joint_name(spec.name, "foot"), leg.knee, spec.foot);
    leg.phase_offset = spec.phase;
    leg.ankle_height = 0;
    rig.legs.push_back(leg);
    rig.leg_names.push_back(spec.name);
  }
  rig.skeleton = Skeleton::build(std::move(joints), true, "gait creature");
  rig.body = body;
  rig.settings = s;
  return rig;
}

}  // namespace kinema
