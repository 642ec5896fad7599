// Crossfade and inertialization (Bollo, GDC 2018). See kinema/blend/transition.h.
#include "kinema/blend/transition.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kinema/blend/pose_ops.h"
#include "kinema/core/error.h"

namespace kinema {

// ---- crossfade -----------------------------------------------------------------------------

namespace {

float shape(float s, FadeCurve curve) {
  return curve == FadeCurve::Smoothstep ? s * s * (3.0f - 2.0f * s) : s;
}

bool good_duration(float d) { return std::isfinite(d) && d >= 0.0f; }

}  // namespace

bool crossfade_weight(float t, float duration, FadeCurve curve, float& weight) {
  if (std::isnan(t) || !good_duration(duration)) return false;
  if (t < 0.0f) {
    weight = 0.0f;
  } else if (!(t < duration)) {  // also the zero-duration cut
    weight = 1.0f;
  } else {
    weight = shape(std::clamp(t / duration, 0.0f, 1.0f), curve);
  }
  return true;
}

bool CrossfadeRamp::start(float duration_s, FadeCurve shape_) {
  if (!good_duration(duration_s)) return false;
  duration = duration_s;
  curve = shape_;
  elapsed = 0.0f;
  return true;
}

bool CrossfadeRamp::advance(float dt) {
  if (!good_duration(dt)) return false;
  elapsed += dt;
  return true;
}

float CrossfadeRamp::weight() const {
  float w = 1.0f;
  // A ramp whose fields were set by hand to bad values reads as finished.
  if (!crossfade_weight(elapsed, duration, curve, w)) return 1.0f;
  return w;
}

bool crossfade(std::span<const SoaTransform> from, std::span<const SoaTransform> to, float weight,
               int joint_count, std::span<SoaTransform> out) {
  if (joint_count < 0 || !(weight >= 0.0f && weight <= 1.0f)) return false;
  const size_t n = static_cast<size_t>(soa_count(joint_count));
  if (from.size() != n || to.size() != n || out.size() != n) return false;
  const BlendLayer layers[2] = {{from, 1.0f - weight, {}}, {to, weight, {}}};
  // The weights always sum to 1, so blend's rest-pose fill never kicks in; `from` stands in.
  return blend(layers, from, joint_count, out);
}

// ---- inertialization: the scalar curve -----------------------------------------------------

namespace {

// Coefficients of the quintic, with the overshoot guards (see InertializationCurve::make).
// Shared by the double reference and the float per-frame state; no validation here.
template <class T>
void quintic(T x0, T v0, T blend_time, bool shorten, T& v_out, T& t_out, T& c1, T& c3, T& c4,
             T& c5) {
  if (!(blend_time > T(0)) || x0 == T(0)) {
    // Nothing to hide (or a hard cut): no offset at all.
    v_out = 0, t_out = 0, c1 = c3 = c4 = c5 = 0;
    return;
  }
  if (x0 * v0 >= T(0)) v0 = 0;  // moving away from zero: would overshoot, so start at rest
  // With zero initial acceleration, x(s) = x0·(1 − s)³·(1 + (3 − k)s + (6 − 3k)s²) for
  // V = −k·x0; that stays on x0's side of zero exactly when k ≤ 2.5.
  if (shorten && std::abs(v0) * blend_time > T(2.5) * std::abs(x0))
    blend_time = T(2.5) * std::abs(x0 / v0);
  const T V = v0 * blend_time;
  v_out = v0, t_out = blend_time, c1 = V;
  c3 = -(T(10) * x0 + T(6) * V);
  c4 = T(15) * x0 + T(8) * V;
  c5 = -(T(6) * x0 + T(3) * V);
}

template <class T>
T quintic_value(T x0, T c1, T c3, T c4, T c5, T blend_time, T t) {
  if (!(t < blend_time)) return T(0);
  if (t <= T(0)) return x0;
  const T s = t / blend_time;
  return x0 + s * (c1 + s * s * (c3 + s * (c4 + s * c5)));
}

}  // namespace

InertializationCurve InertializationCurve::make(double x0, double v0, double blend_time,
                                                bool shorten_blend) {
  if (!std::isfinite(x0) || !std::isfinite(v0))
    throw Error({}, "inertialization", "offset or its velocity is not finite");
  if (!std::isfinite(blend_time) || blend_time < 0)
    throw Error({}, "inertialization",
                "blend time must be finite and non-negative, got " + std::to_string(blend_time));
  InertializationCurve c;
  c.x0 = x0;
  double c1 = 0;
  quintic(x0, v0, blend_time, shorten_blend, c.v0, c.blend_time, c1, c.c3, c.c4, c.c5);
  return c;
}

double InertializationCurve::value(double t) const {
  return quintic_value(x0, v0 * blend_time, c3, c4, c5, blend_time, t);
}

double InertializationCurve::velocity(double t) const {
  if (!(t < blend_time)) return 0.0;
  if (t <= 0) return v0;
  const double s = t / blend_time, V = v0 * blend_time;
  // dx/dt = (V + 3·c3·s² + 4·c4·s³ + 5·c5·s⁴) / T
  return (V + s * s * (3 * c3 + s * (4 * c4 + s * 5 * c5))) / blend_time;
}

double inertialize_offset(double x0, double v0, double blend_time, double t, bool shorten_blend) {
  if (std::isnan(t)) throw Error({}, "inertialization", "time is NaN");
  return InertializationCurve::make(x0, v0, blend_time, shorten_blend).value(t);
}

// ---- inertialization: whole poses ----------------------------------------------------------

namespace {

bool all_finite(std::span<const SoaTransform> pose) {
  for (const SoaTransform& s : pose)
    for (const float* c : {s.tx, s.ty, s.tz, s.qx, s.qy, s.qz, s.qw, s.sx, s.sy, s.sz})
      for (int l = 0; l < 4; ++l)
        if (!std::isfinite(c[l])) return false;
  return true;
}

// Rotation vector of the shortest arc, from the vector part's length (atan2), which keeps full
// float precision for the tiny per-frame rotations that velocities are made of (the angle from
// w alone loses about half the digits near the identity).
Vec3f rotation_vector(const Quatf& q_in) {
  const Quatf q = q_in.w < 0.0f ? -q_in : q_in;
  const Vec3f v = q.vec();
  const float len = length(v);
  if (!(len > 0.0f)) return Vec3f::zero();
  return v * (2.0f * std::atan2(len, q.w) / len);
}

Vec3f component(const Transformf& t, int which) { return which == 0 ? t.translation : t.scale; }

}  // namespace

void Inertializer::reset(int joint_count) {
  joint_count_ = std::max(joint_count, 0);
  joints_.assign(static_cast<size_t>(joint_count_), JointState{});
  elapsed_ = longest_ = 0.0f;
}

bool Inertializer::transition(std::span<const SoaTransform> old_previous,
                              std::span<const SoaTransform> old_current,
                              std::span<const SoaTransform> new_previous,
                              std::span<const SoaTransform> new_current, float dt, float blend_time,
                              bool shorten_blend) {
  const size_t n = static_cast<size_t>(soa_count(joint_count_));
  if (old_previous.size() != n || old_current.size() != n || new_previous.size() != n ||
      new_current.size() != n)
    return false;
  if (!(std::isfinite(dt) && dt > 0.0f) || !good_duration(blend_time)) return false;
  if (!all_finite(old_previous) || !all_finite(old_current) || !all_finite(new_previous) ||
      !all_finite(new_current))
    return false;

  const float inv_dt = 1.0f / dt;
  float longest = 0.0f;
  auto set = [&](Channel& c, float x0, float v0) {
    float c1 = 0.0f;  // V = v·t, recomputed when evaluating
    quintic(x0, v0, blend_time, shorten_blend, c.v, c.t, c1, c.c3, c.c4, c.c5);
    c.x0 = c.t > 0.0f ? x0 : 0.0f;
    longest = std::max(longest, c.t);
  };
  for (int j = 0; j < joint_count_; ++j) {
    const Transformf op = get_joint(old_previous, j), oc = get_joint(old_current, j);
    const Transformf np = get_joint(new_previous, j), nc = get_joint(new_current, j);
    JointState& st = joints_[static_cast<size_t>(j)];

    // Rotation: old = q_off·new, so q_off = old·new⁻¹ (parent space), decayed about its axis.
    const Quatf off_now = normalize(oc.rotation * conjugate(normalize(nc.rotation)));
    const Quatf off_prev = normalize(op.rotation * conjugate(normalize(np.rotation)));
    const Vec3f r = rotation_vector(off_now);  // shortest arc: angle in [0, π]
    const float angle = length(r);
    // The offset's angular velocity; its component along the axis is the angle's rate (the
    // old/new angular-velocity difference projected on the axis).
    const Vec3f w = rotation_vector(off_now * conjugate(off_prev)) * inv_dt;
    if (angle > 0.0f) {
      st.axis = r / angle;
      set(st.ch[0], angle, dot(w, st.axis));
    } else {
      st.axis = Vec3f::unit_x();
      set(st.ch[0], 0.0f, 0.0f);
    }
    // Translation (which = 0) and scale (which = 1): per component, in parent space.
    for (int which = 0; which < 2; ++which) {
      const Vec3f x0 = component(oc, which) - component(nc, which);
      const Vec3f v0 = ((component(oc, which) - component(op, which)) -
                        (component(nc, which) - component(np, which))) *
                       inv_dt;
      for (int a = 0; a < 3; ++a) set(st.ch[1 + 3 * which + a], x0[a], v0[a]);
    }
  }
  elapsed_ = 0.0f;
  longest_ = longest;
  return true;
}

bool Inertializer::advance(float dt) {
  if (!good_duration(dt)) return false;
  elapsed_ += dt;
  return true;
}

bool Inertializer::apply(std::span<const SoaTransform> new_pose,
                         std::span<SoaTransform> out) const {
  const size_t n = static_cast<size_t>(soa_count(joint_count_));
  if (new_pose.size() != n || out.size() != n) return false;
  // Copy first (padding lanes included); memmove because out may alias new_pose.
  if (n > 0 && out.data() != new_pose.data())
    std::memmove(out.data(), new_pose.data(), n * sizeof(SoaTransform));
  if (!active()) return true;
  const float t = elapsed_;
  auto value = [t](const Channel& c) {
    return quintic_value(c.x0, c.v * c.t, c.c3, c.c4, c.c5, c.t, t);
  };
  for (int j = 0; j < joint_count_; ++j) {
    const JointState& st = joints_[static_cast<size_t>(j)];
    Transformf p = get_joint(out, j);
    const float angle = value(st.ch[0]);
    if (angle != 0.0f) p.rotation = Quatf::from_axis_angle(st.axis, angle) * p.rotation;
    for (int a = 0; a < 3; ++a) {
      p.translation[a] += value(st.ch[1 + a]);
      p.scale[a] += value(st.ch[4 + a]);
    }
    set_joint(out, j, p);
  }
  return true;
}

InertializationCurve Inertializer::curve(int joint, int channel) const {
  InertializationCurve c;
  if (joint < 0 || joint >= joint_count_ || channel < 0 || channel > 6) return c;
  const Channel& ch = joints_[static_cast<size_t>(joint)].ch[channel];
  c.x0 = ch.x0, c.v0 = ch.v, c.blend_time = ch.t, c.c3 = ch.c3, c.c4 = ch.c4, c.c5 = ch.c5;
  return c;
}

Vec3f Inertializer::rotation_axis(int joint) const {
  if (joint < 0 || joint >= joint_count_) return Vec3f::unit_x();
  return joints_[static_cast<size_t>(joint)].axis;
}

}  // namespace kinema
