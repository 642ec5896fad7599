// kinema/clip/clip.h — raw (offline) animation clips: keys at arbitrary times.
//
// A Clip holds, per joint, optional translation / rotation / scale key tracks, plus morph-weight
// tracks. A joint whose track is empty holds its rest value. Times are seconds, strictly
// increasing within a track. Interpolation follows glTF 2.0: STEP, LINEAR (rotations by slerp or
// nlerp with the hemisphere check) and CUBICSPLINE (Hermite, three values per key:
// in-tangent, value, out-tangent; tangents are per second).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

class Skeleton;

enum class Interpolation { Step, Linear, CubicSpline };

/// How sampling treats a time outside [0, duration].
enum class WrapMode { Clamp, Loop };

/// How LINEAR rotation keys are interpolated.
enum class RotationInterp { Slerp, Nlerp };

/// Keys of one channel. For CubicSpline, values holds 3 entries per key
/// (in-tangent, value, out-tangent), exactly as glTF stores them.
template <class V>
struct Keyframes {
  Interpolation interpolation = Interpolation::Linear;
  std::vector<double> times;
  std::vector<V> values;

  bool empty() const { return times.empty(); }
  size_t key_count() const { return times.size(); }
  /// The value of key i (skips tangents for CubicSpline).
  const V& key_value(size_t i) const {
    return interpolation == Interpolation::CubicSpline ? values[3 * i + 1] : values[i];
  }
};

struct JointTrack {
  Keyframes<Vec3> translation;  ///< metres, local to the parent
  Keyframes<Quat> rotation;     ///< unit quaternions (x, y, z, w)
  Keyframes<Vec3> scale;
  bool empty() const { return translation.empty() && rotation.empty() && scale.empty(); }
};

/// Morph-target weights of one mesh: `target_count` weights per key (×3 for CubicSpline).
struct MorphTrack {
  int mesh = -1;  ///< index into Asset::meshes
  int target_count = 0;
  Interpolation interpolation = Interpolation::Linear;
  std::vector<double> times;
  std::vector<double> values;
};

struct Clip {
  std::string name;
  double duration = 0;     ///< seconds; sampling covers [0, duration]
  double sample_rate = 0;  ///< nominal frames per second of the source (0: keys at arbitrary times)
  std::vector<JointTrack> tracks;  ///< one per skeleton joint (may be shorter: missing = rest)
  std::vector<MorphTrack> morph_tracks;

  /// Frames at the nominal rate (round(duration·rate) + 1), else the largest key count.
  int frame_count() const;
  /// Total number of keys over all channels (what a file stores).
  size_t key_count() const;
  /// Throws kinema::Error when a track's times are not strictly increasing or not finite, when a
  /// value count does not match its keys, a quaternion is not finite or zero, or when there are
  /// more tracks than joints. `source` names the file for the message.
  void validate(int joint_count, const std::string& source = {}) const;
};

/// Frames per second kinema samples a clip at when neither the caller nor the clip gives a rate.
inline constexpr double kDefaultSampleRate = 30.0;

/// The clip's frame rate in frames per second: its sample_rate when it has one (> 0), else the
/// rate of the grid its key times lie on, else 0 (keys at arbitrary times, or fewer than 3 keys
/// in every channel).
///
/// The grid's spacing is that of the channel with the most keys, first to last key over the key
/// count − 1 (so float rounding of the stored times does not accumulate); when not every key
/// fits that grid (every channel skips frames, as key-reduced FBX takes do), it is the smallest
/// gap between two keys, made exact over the same span. Every key of every channel, joint and
/// morph tracks alike, must lie within 1% of a spacing of a grid point counted from the clip's
/// earliest key. A rate within a millionth of a whole number is that number: float32 key times
/// (glTF) blur 30 fps into 29.9999997, while 29.97 or 120.0048 fps stay as they are.
double infer_frame_rate(const Clip& clip);

/// The clip's sample_rate when it has one (> 0), else `fallback`. Key times are not examined
/// (infer_frame_rate does that).
double sample_rate_or(const Clip& clip, double fallback = kDefaultSampleRate);

/// Maps t into [0, duration]: clamped, or wrapped for looping (t = duration stays at the end).
double wrap_time(double t, double duration, WrapMode mode);

/// Value of a channel at time t (already wrapped); t before the first key holds the first value,
/// after the last key the last value. `fallback` is returned for an empty track.
Vec3 sample(const Keyframes<Vec3>& keys, double t, const Vec3& fallback);
Quat sample(const Keyframes<Quat>& keys, double t, const Quat& fallback,
            RotationInterp rotation_interp = RotationInterp::Slerp);
/// Morph weights at time t into `out` (size target_count). Returns false on a size mismatch.
bool sample(const MorphTrack& track, double t, std::span<double> out);

/// Samples a whole local pose at time t. Joints without a track take the skeleton's rest value.
/// `out` must have skeleton.joint_count() entries; returns false otherwise. Never allocates.
bool sample_pose(const Clip& clip, const Skeleton& skeleton, double t, WrapMode mode,
                 std::span<Transform> out, RotationInterp rotation_interp = RotationInterp::Slerp);

/// Model-space matrices of the whole pose at time t: sample_pose, then local_to_model. An offline
/// convenience (it allocates the result), e.g. for comparing two animations joint by joint.
std::vector<Mat4> sample_model_pose(const Clip& clip, const Skeleton& skeleton, double t,
                                    WrapMode mode = WrapMode::Clamp);

/// Appends one key at time t (after the track's last) to each of the track's three channels: how
/// a simulation or a controller records the poses it makes into a clip.
void append_key(JointTrack& track, double t, const Transform& x);

/// Resamples a clip to `rate` frames per second with LINEAR keys on every animated channel
/// (the duration is kept; the last frame lands exactly on it).
Clip resample(const Clip& clip, const Skeleton& skeleton, double rate);

}  // namespace kinema
