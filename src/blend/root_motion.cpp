// Root motion and foot sliding. See kinema/blend/root_motion.h.
#include "kinema/blend/root_motion.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>

#include "kinema/core/error.h"
#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

// ---- ground motions ------------------------------------------------------------------------

namespace {

// R_y(yaw)·v: right-handed about +Y, so +Z turns toward +X for a positive yaw.
Vec3 rotate_y(double yaw, const Vec3& v) {
  const double c = std::cos(yaw), s = std::sin(yaw);
  return {c * v.x + s * v.z, v.y, -s * v.x + c * v.z};
}

RootDelta inverse(const RootDelta& d) { return {rotate_y(-d.yaw, -d.translation), -d.yaw}; }

// The whole-cycle motion applied `laps` times (negative: backwards), by repeated squaring.
RootDelta power(const RootDelta& cycle, long long laps) {
  RootDelta base = laps < 0 ? inverse(cycle) : cycle, result;
  unsigned long long n =
      laps < 0 ? static_cast<unsigned long long>(-laps) : static_cast<unsigned long long>(laps);
  while (n > 0) {
    if (n & 1u) result = compose(result, base);
    base = compose(base, base);
    n >>= 1u;
  }
  return result;
}

double wrap_pi(double a) { return std::remainder(a, 2.0 * kPi); }  // into [−π, π]

}  // namespace

void apply_root_motion(const RootDelta& delta, Vec3& world_translation, double& world_yaw) {
  world_translation += rotate_y(world_yaw, delta.translation);
  world_yaw += delta.yaw;
}

RootDelta compose(const RootDelta& first, const RootDelta& second) {
  return {first.translation + rotate_y(first.yaw, second.translation), first.yaw + second.yaw};
}

Transform ground_transform(const RootDelta& placement) {
  Transform t;
  t.translation = placement.translation;
  t.rotation = Quat::from_axis_angle(Vec3::unit_y(), placement.yaw);
  return t;
}

// ---- extraction ------------------------------------------------------------------------------

namespace {

const std::string kPlace = "root motion";

bool ends_with_ci(std::string_view name, std::string_view suffix) {
  if (name.size() < suffix.size()) return false;
  const std::string_view tail = name.substr(name.size() - suffix.size());
  for (size_t i = 0; i < tail.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(tail[i])) != suffix[i]) return false;
  // Whole name, or after a "prefix:" (mixamorig:Hips).
  return name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == ':';
}

int default_joint(const Skeleton& skeleton) {
  for (std::string_view want : {"hips", "hip", "pelvis"})
    for (int j = 0; j < skeleton.joint_count(); ++j)
      if (ends_with_ci(skeleton.joint(j).name, want)) return j;
  return skeleton.roots().front();
}

// Frames at i·duration/(n−1) for n = round(duration·rate) + 1 (at least 2).
int frame_count_for(double duration, double rate) {
  return static_cast<int>(std::max(1.0, std::round(duration * rate))) + 1;
}

double checked_rate(const Clip& clip, double requested) {
  double rate = requested;
  if (rate == 0) rate = sample_rate_or(clip);
  if (!std::isfinite(rate) || rate <= 0)
    throw Error({}, kPlace, "sample rate must be finite and positive");
  if (!std::isfinite(clip.duration) || clip.duration <= 0)
    throw Error({}, kPlace, "clip '" + clip.name + "' has no positive, finite duration");
  if (clip.duration * rate > 1e8) throw Error({}, kPlace, "too many frames");
  return rate;
}

// Model-space matrices of every joint at each of the n frames, one frame at a time.
template <class F>
void for_each_model_pose(const Clip& clip, const Skeleton& skeleton, int frames, F&& visit) {
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  std::vector<Mat4> model(local.size());
  for (int i = 0; i < frames; ++i) {
    const double t = i == frames - 1 ? clip.duration : clip.duration * i / (frames - 1);
    sample_pose(clip, skeleton, t, WrapMode::Clamp, local);
    local_to_model(skeleton.parents(), local, model);
    visit(i, t, std::span<const Transform>(local), std::span<const Mat4>(model));
  }
}

}  // namespace

double RootMotion::frame_time(int frame) const {
  const int n = frame_count();
  if (n < 2) return 0;
  if (frame >= n - 1) return duration_;
  return duration_ * std::max(frame, 0) / (n - 1);
}

RootMotion RootMotion::extract(const Clip& clip, const Skeleton& skeleton,
                               const RootMotionOptions& options) {
  if (skeleton.empty()) throw Error({}, kPlace, "skeleton has no joints");
  clip.validate(skeleton.joint_count());
  const double rate = checked_rate(clip, options.sample_rate);
  const int joint = options.joint < 0 ? default_joint(skeleton) : options.joint;
  if (joint >= skeleton.joint_count())
    throw Error({}, kPlace, "joint " + std::to_string(joint) + " is out of range");

  RootMotion m;
  m.joint_ = joint;
  m.duration_ = clip.duration;
  if (options.forward_axis) {
    const Vec3& f = *options.forward_axis;
    if (!is_finite(f) || !(length(f) > 1e-12))
      throw Error({}, kPlace, "forward axis is zero or not finite");
    m.forward_ = normalize(f);
  } else {
    // The joint-local direction that is +Z (the character's forward) in the rest pose.
    const Mat4 rest = rest_model_matrices(skeleton)[static_cast<size_t>(joint)];
    m.forward_ = normalize(rotate(conjugate(rotation_of(rest)), Vec3::unit_z()));
  }

  const int n = frame_count_for(clip.duration, rate);
  m.rate_ = (n - 1) / clip.duration;
  m.path_.resize(static_cast<size_t>(n));
  std::vector<Vec3> ground(static_cast<size_t>(n));
  std::vector<double> heading(static_cast<size_t>(n));
  double last = 0;
  for_each_model_pose(clip, skeleton, n, [&](int i, double, auto, std::span<const Mat4> model) {
    const Mat4& mj = model[static_cast<size_t>(joint)];
    const Vec3 p = mj.translation_part();
    const Vec3 f = mj.transform_vector(m.forward_);
    ground[static_cast<size_t>(i)] = {p.x, 0, p.z};
    // Heading of the forward axis on the ground; keep the last one where it points up or down.
    double h = last;
    const double horizontal = std::hypot(f.x, f.z);
    if (horizontal > 1e-6 * length(f)) {
      const double raw = std::atan2(f.x, f.z);
      h = i == 0 ? raw : last + wrap_pi(raw - last);  // unwrapped: turning clips go past ±π
    }
    heading[static_cast<size_t>(i)] = last = h;
  });
  m.start_ = {ground[0], heading[0]};
  for (size_t i = 0; i < m.path_.size(); ++i)
    m.path_[i] = {rotate_y(-heading[0], ground[i] - ground[0]), heading[i] - heading[0]};
  return m;
}

RootDelta RootMotion::at(double t) const {
  if (path_.empty()) return {};
  const double f = std::clamp(t, 0.0, duration_) * rate_;
  const size_t last = path_.size() - 1;
  const size_t i = std::min(static_cast<size_t>(f), last);
  if (i == last) return path_[last];
  const double a = f - static_cast<double>(i);
  const RootDelta &p = path_[i], &q = path_[i + 1];
  return {lerp(p.translation, q.translation, a), p.yaw + (q.yaw - p.yaw) * a};
}

bool RootMotion::delta(double t0, double t1, WrapMode mode, RootDelta& out) const {
  if (!std::isfinite(t0) || !std::isfinite(t1) || path_.size() < 2) return false;
  if (mode == WrapMode::Clamp) {
    out = compose(inverse(at(t0)), at(t1));
    return true;
  }
  // Looping: t = lap·duration + u with u in [0, duration); the path at t is
  // cycle^lap ∘ path(u), so the delta is path(u0)⁻¹ ∘ cycle^(lap1 − lap0) ∘ path(u1).
  const double lap0 = std::floor(t0 / duration_), lap1 = std::floor(t1 / duration_);
  if (std::abs(lap1 - lap0) > 4e15) return false;  // beyond exact integers
  const double u0 = std::clamp(t0 - lap0 * duration_, 0.0, duration_);
  const double u1 = std::clamp(t1 - lap1 * duration_, 0.0, duration_);
  const RootDelta laps = power(path_.back(), static_cast<long long>(lap1 - lap0));
  out = compose(compose(inverse(at(u0)), laps), at(u1));
  return true;
}

// ---- in-place clips --------------------------------------------------------------------------

Clip make_in_place(const Clip& clip, const Skeleton& skeleton, const RootMotion& motion) {
  if (skeleton.empty()) throw Error({}, kPlace, "skeleton has no joints");
  clip.validate(skeleton.joint_count());
  const int joint = motion.joint();
  if (joint < 0 || joint >= skeleton.joint_count() || motion.frame_count() < 2)
    throw Error({}, kPlace, "root motion was not extracted for this skeleton");
  if (!(std::abs(motion.duration() - clip.duration) <= 1e-9 * std::max(1.0, clip.duration)))
    throw Error({}, kPlace,
                "root motion lasts " + std::to_string(motion.duration()) + " s but clip '" +
                    clip.name + "' lasts " + std::to_string(clip.duration) + " s");

  Clip out = clip;
  if (out.tracks.size() <= static_cast<size_t>(joint))
    out.tracks.resize(static_cast<size_t>(joint) + 1);
  JointTrack& track = out.tracks[static_cast<size_t>(joint)];
  const int n = motion.frame_count();
  Keyframes<Vec3> translation;
  Keyframes<Quat> rotation;
  translation.times.resize(static_cast<size_t>(n));
  translation.values.resize(static_cast<size_t>(n));
  rotation.times.resize(static_cast<size_t>(n));
  rotation.values.resize(static_cast<size_t>(n));
  const int parent = skeleton.parent(joint);
  for_each_model_pose(clip, skeleton, n, [&](int i, double t, auto, std::span<const Mat4> model) {
    // The character's placement at this frame: start ∘ path(t) = (ground position, heading).
    const Transform placement = ground_transform(compose(motion.start(), motion.path()[i]));
    // Model matrix of the joint under the placement, so placement · new model = old model.
    const Mat4 joint_model =
        rigid_inverse(placement.to_matrix()) * model[static_cast<size_t>(joint)];
    Mat4 parent_inv = Mat4::identity();
    if (parent >= 0 && !inverse(model[static_cast<size_t>(parent)], parent_inv))
      throw Error({}, kPlace, "parent of joint '" + skeleton.joint(joint).name + "' is singular");
    const Transform local = Transform::from_matrix(parent_inv * joint_model);
    Quat q = local.rotation;
    // Keep consecutive keys in one hemisphere (interpolation takes the short way anyway).
    if (i > 0 && dot(q, rotation.values[static_cast<size_t>(i) - 1]) < 0) q = -q;
    translation.times[static_cast<size_t>(i)] = rotation.times[static_cast<size_t>(i)] = t;
    translation.values[static_cast<size_t>(i)] = local.translation;
    rotation.values[static_cast<size_t>(i)] = q;
  });
  track.translation = std::move(translation);
  track.rotation = std::move(rotation);
  return out;
}

// ---- foot sliding ----------------------------------------------------------------------------

namespace {

const std::string kFeet = "foot sliding";

void check_positions(std::span<const Vec3> positions, int foot_count, double dt) {
  if (foot_count <= 0) throw Error({}, kFeet, "foot count must be positive");
  if (positions.size() % static_cast<size_t>(foot_count) != 0)
    throw Error({}, kFeet,
                std::to_string(positions.size()) +
                    " positions are not a whole number of frames of " + std::to_string(foot_count) +
                    " feet");
  if (!std::isfinite(dt) || dt <= 0) throw Error({}, kFeet, "dt must be finite and positive");
  for (size_t i = 0; i < positions.size(); ++i)
    if (!is_finite(positions[i]))
      throw Error({}, kFeet, "position " + std::to_string(i) + " is not finite");
}

double horizontal(const Vec3& a, const Vec3& b) { return std::hypot(b.x - a.x, b.z - a.z); }

void add_segment(FootSliding& s, double distance, double dt) {
  ++s.contact_segments;
  s.drift_distance += distance;
  s.max_speed = std::max(s.max_speed, distance / dt);
}

void finish(FootSliding& s, double dt) {
  s.mean_speed = s.contact_segments > 0 ? s.drift_distance / (s.contact_segments * dt) : 0.0;
}

}  // namespace

std::vector<uint8_t> detect_foot_contacts(std::span<const Vec3> positions, int foot_count,
                                          double dt, const FootContactOptions& options) {
  check_positions(positions, foot_count, dt);
  if (!std::isfinite(options.height_threshold) || options.height_threshold <= 0 ||
      !std::isfinite(options.speed_threshold) || options.speed_threshold <= 0)
    throw Error({}, kFeet, "contact thresholds must be finite and positive");
  const size_t feet = static_cast<size_t>(foot_count), frames = positions.size() / feet;
  std::vector<uint8_t> contacts(positions.size(), 0);
  for (size_t k = 0; k < feet; ++k) {
    auto at = [&](size_t f) { return positions[f * feet + k]; };
    double lowest = INFINITY;
    for (size_t f = 0; f < frames; ++f) lowest = std::min(lowest, at(f).y);
    for (size_t f = 0; f < frames; ++f) {
      // Central difference inside, one-sided at the ends (0 for a single frame).
      const size_t a = f > 0 ? f - 1 : f, b = f + 1 < frames ? f + 1 : f;
      const double speed = b > a ? horizontal(at(a), at(b)) / (static_cast<double>(b - a) * dt) : 0;
      contacts[f * feet + k] =
          at(f).y - lowest <= options.height_threshold && speed <= options.speed_threshold;
    }
  }
  return contacts;
}

FootSlidingReport measure_foot_sliding(std::span<const Vec3> positions, int foot_count, double dt,
                                       std::span<const uint8_t> contacts) {
  check_positions(positions, foot_count, dt);
  if (contacts.size() != positions.size())
    throw Error({}, kFeet,
                std::to_string(contacts.size()) + " contact flags for " +
                    std::to_string(positions.size()) + " positions");
  const size_t feet = static_cast<size_t>(foot_count), frames = positions.size() / feet;
  FootSlidingReport r;
  r.feet.resize(feet);
  for (size_t f = 0; f + 1 < frames; ++f)
    for (size_t k = 0; k < feet; ++k) {
      if (!contacts[f * feet + k] || !contacts[(f + 1) * feet + k]) continue;
      const double d = horizontal(positions[f * feet + k], positions[(f + 1) * feet + k]);
      add_segment(r.feet[k], d, dt);
      add_segment(r.total, d, dt);
    }
  for (FootSliding& s : r.feet) finish(s, dt);
  finish(r.total, dt);
  return r;
}

FootSlidingReport measure_foot_sliding(std::span<const Vec3> positions, int foot_count, double dt,
                                       const FootContactOptions& options) {
  const std::vector<uint8_t> contacts = detect_foot_contacts(positions, foot_count, dt, options);
  return measure_foot_sliding(positions, foot_count, dt, contacts);
}

int sampled_frame_count(const Clip& clip, double sample_rate) {
  return frame_count_for(clip.duration, checked_rate(clip, sample_rate));
}

std::vector<Vec3> foot_world_positions(const Clip& clip, const Skeleton& skeleton,
                                       std::span<const int> feet, double sample_rate,
                                       std::span<const Transform> character) {
  clip.validate(skeleton.joint_count());
  if (!std::isfinite(sample_rate) || sample_rate <= 0)
    throw Error({}, kFeet, "sample rate must be finite and positive");
  const int n = sampled_frame_count(clip, sample_rate);
  for (int f : feet)
    if (f < 0 || f >= skeleton.joint_count())
      throw Error({}, kFeet, "foot joint " + std::to_string(f) + " is out of range");
  if (!character.empty() && character.size() != static_cast<size_t>(n))
    throw Error({}, kFeet,
                std::to_string(character.size()) + " character transforms for " +
                    std::to_string(n) + " frames");
  std::vector<Vec3> out;
  out.reserve(static_cast<size_t>(n) * feet.size());
  for_each_model_pose(clip, skeleton, n, [&](int i, double, auto, std::span<const Mat4> model) {
    for (int f : feet) {
      const Vec3 p = model[static_cast<size_t>(f)].translation_part();
      out.push_back(character.empty() ? p : character[static_cast<size_t>(i)].transform_point(p));
    }
  });
  return out;
}

}  // namespace kinema
