#include "kinema/clip/clip.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

namespace {

// Index k of the last key with times[k] <= t (clamped to [0, n-2]) and the fraction in [0, 1]
// between keys k and k+1. Binary search: O(log n), no allocation.
struct KeySpan {
  size_t k;
  double s;
  double dt;
};

KeySpan locate(const std::vector<double>& times, double t) {
  const size_t n = times.size();
  if (n < 2 || t <= times.front()) return {0, 0.0, n < 2 ? 0.0 : times[1] - times[0]};
  if (t >= times.back()) return {n - 2, 1.0, times[n - 1] - times[n - 2]};
  const size_t k =
      static_cast<size_t>(std::upper_bound(times.begin(), times.end(), t) - times.begin()) - 1;
  const double dt = times[k + 1] - times[k];
  return {k, dt > 0 ? (t - times[k]) / dt : 0.0, dt};
}

// glTF cubic Hermite: p = h00·v0 + h10·dt·out0 + h01·v1 + h11·dt·in1.
template <class V>
V hermite(const V& v0, const V& out0, const V& in1, const V& v1, double s, double dt) {
  const double s2 = s * s, s3 = s2 * s;
  const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2,
               h11 = s3 - s2;
  return v0 * h00 + out0 * (h10 * dt) + v1 * h01 + in1 * (h11 * dt);
}

template <class V>
bool finite_value(const V& v) {
  return is_finite(v);
}

template <class V>
void validate_keys(const Keyframes<V>& keys, const std::string& source, const std::string& place,
                   const char* what) {
  const size_t per_key = keys.interpolation == Interpolation::CubicSpline ? 3 : 1;
  if (keys.values.size() != keys.times.size() * per_key)
    throw Error(source, place,
                std::string(what) + " track has " + std::to_string(keys.values.size()) +
                    " values for " + std::to_string(keys.times.size()) + " keys");
  for (size_t i = 0; i < keys.times.size(); ++i) {
    if (!std::isfinite(keys.times[i]))
      throw Error(source, place,
                  std::string(what) + " key " + std::to_string(i) + " time is not finite");
    if (i > 0 && !(keys.times[i] > keys.times[i - 1]))
      throw Error(
          source, place,
          std::string(what) + " key times are not strictly increasing at key " + std::to_string(i));
  }
  for (size_t i = 0; i < keys.values.size(); ++i)
    if (!finite_value(keys.values[i]))
      throw Error(source, place,
                  std::string(what) + " value " + std::to_string(i) + " is not finite");
}

// Frame-rate inference, one rule for every reader and tool (the glTF reader's and the CLI's
// tolerances, which the test data agree with). A key may sit 1% of a spacing off its grid
// point: float32 times and exporters' rounding stay far inside that, adaptive keys (placed
// between frames by key reduction) fall far outside. A rate is snapped to a whole number within
// a millionth: float32 times blur 30 fps in the 7th digit, while real non-whole rates are much
// farther from one (29.97 fps by a thousandth; 120.0048 fps, which some mocap exports state, by
// 4e-5). The assimp reader once took the closest two keys alone, snapped within a thousandth;
// that gave adaptive-key FBX takes rates such as 326 fps, which now are 0.
constexpr double kGridTolerance = 1e-2;       // of a spacing
constexpr double kWholeRateTolerance = 1e-6;  // relative to the rate
constexpr double kMinSpacing = 1e-6;          // seconds: closer keys are not frames

/// Calls f(times) with the key times of every channel of `clip`, joint tracks then morph tracks.
template <class F>
void for_each_channel_times(const Clip& clip, F&& f) {
  for (const JointTrack& track : clip.tracks) {
    f(track.translation.times);
    f(track.rotation.times);
    f(track.scale.times);
  }
  for (const MorphTrack& morph : clip.morph_tracks) f(morph.times);
}

/// 1 / spacing when every key of `clip` lies on the grid first_key + k·spacing (within
/// kGridTolerance), snapped to a whole rate within kWholeRateTolerance; else 0.
double rate_of_grid(const Clip& clip, double first_key, double spacing) {
  if (!(spacing > kMinSpacing) || !std::isfinite(spacing)) return 0;
  bool on_grid = true;
  for_each_channel_times(clip, [&](const std::vector<double>& times) {
    for (size_t i = 0; i < times.size() && on_grid; ++i) {
      const double k = (times[i] - first_key) / spacing;
      on_grid = std::abs(k - std::round(k)) <= kGridTolerance;
    }
  });
  if (!on_grid) return 0;
  const double rate = 1.0 / spacing;
  const double whole = std::round(rate);
  return std::abs(rate - whole) < kWholeRateTolerance * rate ? whole : rate;
}

}  // namespace

int Clip::frame_count() const {
  if (sample_rate > 0) return static_cast<int>(std::llround(duration * sample_rate)) + 1;
  size_t most = 0;
  for (const JointTrack& t : tracks)
    most = std::max({most, t.translation.key_count(), t.rotation.key_count(), t.scale.key_count()});
  for (const MorphTrack& m : morph_tracks) most = std::max(most, m.times.size());
  return static_cast<int>(most);
}

size_t Clip::key_count() const {
  size_t n = 0;
  for (const JointTrack& t : tracks)
    n += t.translation.key_count() + t.rotation.key_count() + t.scale.key_count();
  for (const MorphTrack& m : morph_tracks) n += m.times.size();
  return n;
}

void Clip::validate(int joint_count, const std::string& source) const {
  const std::string clip_place = "clip '" + name + "'";
  if (!std::isfinite(duration) || duration < 0)
    throw Error(source, clip_place, "duration is negative or not finite");
  if (!std::isfinite(sample_rate) || sample_rate < 0)
    throw Error(source, clip_place, "sample rate is negative or not finite");
  if (static_cast<int>(tracks.size()) > joint_count)
    throw Error(source, clip_place,
                "has " + std::to_string(tracks.size()) + " joint tracks for a skeleton of " +
                    std::to_string(joint_count) + " joints");
  for (size_t j = 0; j < tracks.size(); ++j) {
    const std::string place = clip_place + ", joint " + std::to_string(j);
    validate_keys(tracks[j].translation, source, place, "translation");
    validate_keys(tracks[j].rotation, source, place, "rotation");
    validate_keys(tracks[j].scale, source, place, "scale");
    for (const Quat& q : tracks[j].rotation.values)
      if (tracks[j].rotation.interpolation != Interpolation::CubicSpline && length(q) < 1e-9)
        throw Error(source, place, "rotation key is a zero quaternion");
  }
  for (size_t m = 0; m < morph_tracks.size(); ++m) {
    const MorphTrack& t = morph_tracks[m];
    const std::string place = clip_place + ", morph track " + std::to_string(m);
    const size_t per_key = t.interpolation == Interpolation::CubicSpline ? 3 : 1;
    if (t.target_count < 0 ||
        t.values.size() != t.times.size() * per_key * static_cast<size_t>(t.target_count))
      throw Error(source, place, "value count does not match keys × targets");
    for (size_t i = 0; i < t.times.size(); ++i)
      if (!std::isfinite(t.times[i]) || (i > 0 && !(t.times[i] > t.times[i - 1])))
        throw Error(source, place, "key times are not finite and strictly increasing");
    for (double v : t.values)
      if (!std::isfinite(v)) throw Error(source, place, "weight is not finite");
  }
}

double infer_frame_rate(const Clip& clip) {
  if (clip.sample_rate > 0) return clip.sample_rate;
  const std::vector<double>* longest = nullptr;
  double first_key = std::numeric_limits<double>::infinity();
  double smallest_gap = std::numeric_limits<double>::infinity();
  for_each_channel_times(clip, [&](const std::vector<double>& times) {
    if (!longest || times.size() > longest->size()) longest = &times;
    if (!times.empty()) first_key = std::min(first_key, times.front());
    for (size_t i = 1; i < times.size(); ++i)
      smallest_gap = std::min(smallest_gap, times[i] - times[i - 1]);
  });
  if (!longest || longest->size() < 3) return 0;
  const double span = longest->back() - longest->front();
  const auto gaps = static_cast<double>(longest->size() - 1);
  // Most clips have a channel with a key on every frame (glTF and BVH exports, baked takes): its
  // spacing, measured end to end, is exact however long the clip and however blurred its times.
  if (const double rate = rate_of_grid(clip, first_key, span / gaps); rate > 0) return rate;
  // Key-reduced clips (FBX, Collada) skip frames in every channel: the smallest gap between two
  // keys is then one frame, made exact over the longest channel's span.
  if (!(smallest_gap > kMinSpacing)) return 0;
  const double frames = std::round(span / smallest_gap);
  return frames > gaps ? rate_of_grid(clip, first_key, span / frames) : 0;
}

double sample_rate_or(const Clip& clip, double fallback) {
  return clip.sample_rate > 0 ? clip.sample_rate : fallback;
}

double wrap_time(double t, double duration, WrapMode mode) {
  if (!(duration > 0) || !std::isfinite(t)) return 0.0;
  if (mode == WrapMode::Clamp) return std::clamp(t, 0.0, duration);
  if (t >= 0 && t <= duration) return t;
  double r = std::fmod(t, duration);
  if (r < 0) r += duration;
  return r;
}

Vec3 sample(const Keyframes<Vec3>& keys, double t, const Vec3& fallback) {
  const size_t n = keys.times.size();
  if (n == 0) return fallback;
  if (n == 1) return keys.key_value(0);
  const KeySpan sp = locate(keys.times, t);
  switch (keys.interpolation) {
    case Interpolation::Step:
      return keys.values[sp.s >= 1.0 ? sp.k + 1 : sp.k];
    case Interpolation::Linear:
      return lerp(keys.values[sp.k], keys.values[sp.k + 1], sp.s);
    case Interpolation::CubicSpline: {
      const auto& v = keys.values;
      return hermite(v[3 * sp.k + 1], v[3 * sp.k + 2], v[3 * (sp.k + 1)], v[3 * (sp.k + 1) + 1],
                     sp.s, sp.dt);
    }
  }
  return fallback;
}

Quat sample(const Keyframes<Quat>& keys, double t, const Quat& fallback,
            RotationInterp rotation_interp) {
  const size_t n = keys.times.size();
  if (n == 0) return fallback;
  if (n == 1) return normalize(keys.key_value(0));
  const KeySpan sp = locate(keys.times, t);
  switch (keys.interpolation) {
    case Interpolation::Step:
      return keys.values[sp.s >= 1.0 ? sp.k + 1 : sp.k];
    case Interpolation::Linear: {
      const Quat& a = keys.values[sp.k];
      const Quat& b = keys.values[sp.k + 1];
      // On a key (clips sampled at their own frame rate): what slerp and nlerp give at s = 0,
      // without their acos and sines.
      if (sp.s == 0.0) return normalize(a);
      return rotation_interp == RotationInterp::Slerp ? slerp(a, b, sp.s) : nlerp(a, b, sp.s);
    }
    case Interpolation::CubicSpline: {
      const auto& v = keys.values;
      return normalize(hermite(v[3 * sp.k + 1], v[3 * sp.k + 2], v[3 * (sp.k + 1)],
                               v[3 * (sp.k + 1) + 1], sp.s, sp.dt));
    }
  }
  return fallback;
}

bool sample(const MorphTrack& track, double t, std::span<double> out) {
  const size_t m = static_cast<size_t>(std::max(0, track.target_count));
  if (out.size() != m) return false;
  const size_t n = track.times.size();
  const size_t per_key = track.interpolation == Interpolation::CubicSpline ? 3 : 1;
  if (track.values.size() != n * per_key * m) return false;
  if (n == 0) {
    std::fill(out.begin(), out.end(), 0.0);
    return true;
  }
  auto value = [&](size_t key, size_t slot, size_t target) {
    return track.values[(key * per_key + slot) * m + target];
  };
  const size_t value_slot = per_key == 3 ? 1 : 0;
  if (n == 1) {
    for (size_t i = 0; i < m; ++i) out[i] = value(0, value_slot, i);
    return true;
  }
  const KeySpan sp = locate(track.times, t);
  for (size_t i = 0; i < m; ++i) {
    switch (track.interpolation) {
      case Interpolation::Step:
        out[i] = value(sp.s >= 1.0 ? sp.k + 1 : sp.k, 0, i);
        break;
      case Interpolation::Linear:
        out[i] = lerp(value(sp.k, 0, i), value(sp.k + 1, 0, i), sp.s);
        break;
      case Interpolation::CubicSpline:
        out[i] = hermite(value(sp.k, 1, i), value(sp.k, 2, i), value(sp.k + 1, 0, i),
                         value(sp.k + 1, 1, i), sp.s, sp.dt);
        break;
    }
  }
  return true;
}

bool sample_pose(const Clip& clip, const Skeleton& skeleton, double t, WrapMode mode,
                 std::span<Transform> out, RotationInterp rotation_interp) {
  if (out.size() != static_cast<size_t>(skeleton.joint_count()) || clip.tracks.size() > out.size())
    return false;
  const double tw = wrap_time(t, clip.duration, mode);
  for (size_t j = 0; j < out.size(); ++j) {
    const Transform& rest = skeleton.joint(static_cast<int>(j)).rest;
    if (j >= clip.tracks.size()) {
      out[j] = rest;
      continue;
    }
    const JointTrack& track = clip.tracks[j];
    out[j].translation = sample(track.translation, tw, rest.translation);
    out[j].rotation = sample(track.rotation, tw, rest.rotation, rotation_interp);
    out[j].scale = sample(track.scale, tw, rest.scale);
  }
  return true;
}

std::vector<Mat4> sample_model_pose(const Clip& clip, const Skeleton& skeleton, double t,
                                    WrapMode mode) {
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  std::vector<Mat4> model(local.size());
  if (!sample_pose(clip, skeleton, t, mode, local))
    throw Error("", "clip '" + clip.name + "'",
                "has " + std::to_string(clip.tracks.size()) + " joint tracks for a skeleton of " +
                    std::to_string(skeleton.joint_count()) + " joints");
  local_to_model(skeleton.parents(), local, model);
  return model;
}

void append_key(JointTrack& track, double t, const Transform& x) {
  track.translation.times.push_back(t);
  track.translation.values.push_back(x.translation);
  track.rotation.times.push_back(t);
  track.rotation.values.push_back(x.rotation);
  track.scale.times.push_back(t);
  track.scale.values.push_back(x.scale);
}

Clip resample(const Clip& clip, const Skeleton& skeleton, double rate) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw Error("", "clip '" + clip.name + "'", "resample rate must be positive");
  Clip out;
  out.name = clip.name;
  out.duration = clip.duration;
  out.sample_rate = rate;
  const int frames = static_cast<int>(std::llround(clip.duration * rate)) + 1;
  std::vector<double> times(static_cast<size_t>(frames));
  for (int f = 0; f < frames; ++f)
    times[static_cast<size_t>(f)] = f == frames - 1 ? clip.duration : f / rate;
  if (frames == 1) times[0] = 0;
  out.tracks.resize(clip.tracks.size());
  for (size_t j = 0; j < clip.tracks.size(); ++j) {
    const JointTrack& src = clip.tracks[j];
    JointTrack& dst = out.tracks[j];
    const Transform& rest = skeleton.joint(static_cast<int>(j)).rest;
    if (!src.translation.empty()) {
      dst.translation.times = times;
      for (double t : times)
        dst.translation.values.push_back(sample(src.translation, t, rest.translation));
    }
    if (!src.rotation.empty()) {
      dst.rotation.times = times;
      Quat previous = Quat::identity();
      for (size_t f = 0; f < times.size(); ++f) {
        Quat q = sample(src.rotation, times[f], rest.rotation);
        if (f > 0 && dot(q, previous) < 0) q = -q;  // keep consecutive keys in one hemisphere
        dst.rotation.values.push_back(q);
        previous = q;
      }
    }
    if (!src.scale.empty()) {
      dst.scale.times = times;
      for (double t : times) dst.scale.values.push_back(sample(src.scale, t, rest.scale));
    }
  }
  for (const MorphTrack& m : clip.morph_tracks) {
    MorphTrack r;
    r.mesh = m.mesh;
    r.target_count = m.target_count;
    r.times = times;
    std::vector<double> w(static_cast<size_t>(std::max(0, m.target_count)));
    for (double t : times) {
      sample(m, t, w);
      r.values.insert(r.values.end(), w.begin(), w.end());
    }
    out.morph_tracks.push_back(std::move(r));
  }
  return out;
}

}  // namespace kinema
