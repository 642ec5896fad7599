// Drivers on clips (kinema/procedural/clip_driver.h).
#include "kinema/procedural/clip_driver.h"

#include <cctype>
#include <cmath>
#include <set>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/procedural/driver.h"

namespace kinema {

namespace {
constexpr const char* kPlace = "driver";
}  // namespace

std::string driver_variable_name(const std::string& joint_name) {
  std::string name = joint_name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

Clip drive_clip(const Clip& clip, const Skeleton& skeleton, const std::string& joint,
                DrivenChannel channel, const std::string& expression, double fps) {
  const int target = skeleton.find(joint);
  if (target < 0) throw Error({}, kPlace, "no joint named '" + joint + "' in the skeleton");
  const int joints = skeleton.joint_count();
  // Variables: t, frame, then seven per joint.
  static constexpr const char* kSuffixes[] = {"_tx", "_ty", "_tz", "_px", "_py", "_pz", "_dist"};
  std::vector<std::string> names{"t", "frame"};
  std::set<std::string> seen(names.begin(), names.end());
  for (int j = 0; j < joints; ++j) {
    const std::string base = driver_variable_name(skeleton.joint(j).name);
    for (const char* suffix : kSuffixes) {
      if (!seen.insert(base + suffix).second)
        throw Error({}, kPlace,
                    "joints '" + skeleton.joint(j).name + "' and another both give the variable '" +
                        base + suffix + "'");
      names.push_back(base + suffix);
    }
  }
  Driver driver(expression, names);

  const double rate = fps > 0 ? fps : sample_rate_or(clip);
  const int frames =
      clip.duration > 0 ? std::max(1, int(std::lround(clip.duration * rate))) + 1 : 1;
  const std::size_t count = std::size_t(joints);
  std::vector<Transform> local(count, Transform{});
  std::vector<Mat4> model(count);
  std::vector<Vec3> previous(count, Vec3{0, 0, 0});
  std::vector<double> distance(count, 0.0), values(names.size(), 0.0);
  JointTrack driven;
  for (int f = 0; f < frames; ++f) {
    const double t = f + 1 == frames ? clip.duration : std::min(clip.duration, f / rate);
    sample_pose(clip, skeleton, t, WrapMode::Clamp, local);
    local_to_model(skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(model));
    values[0] = t;
    values[1] = f;
    for (int j = 0; j < joints; ++j) {
      const Vec3 position = model[std::size_t(j)].translation_part();
      if (f > 0) distance[std::size_t(j)] += length(position - previous[std::size_t(j)]);
      previous[std::size_t(j)] = position;
      const Vec3 tr = local[std::size_t(j)].translation;
      double* v = &values[2 + 7 * std::size_t(j)];
      v[0] = tr.x, v[1] = tr.y, v[2] = tr.z;
      v[3] = position.x, v[4] = position.y, v[5] = position.z;
      v[6] = distance[std::size_t(j)];
    }
    double value = 0;
    try {
      value = driver.evaluate(values);
    } catch (const Error& e) {
      throw Error({}, "t = " + std::to_string(t) + " s", e.reason());
    }
    Transform x = local[std::size_t(target)];
    switch (channel) {
      case DrivenChannel::RotateX:
      case DrivenChannel::RotateY:
      case DrivenChannel::RotateZ: {
        const Vec3 axis = channel == DrivenChannel::RotateX   ? Vec3{1, 0, 0}
                          : channel == DrivenChannel::RotateY ? Vec3{0, 1, 0}
                                                              : Vec3{0, 0, 1};
        x.rotation = normalize(x.rotation * Quat::from_axis_angle(axis, value));
        break;
      }
      case DrivenChannel::TranslateX:
        x.translation.x = value;
        break;
      case DrivenChannel::TranslateY:
        x.translation.y = value;
        break;
      case DrivenChannel::TranslateZ:
        x.translation.z = value;
        break;
    }
    append_key(driven, t, x);
  }
  Clip out = clip;
  if (out.tracks.size() < std::size_t(joints)) out.tracks.resize(std::size_t(joints));
  out.tracks[std::size_t(target)] = std::move(driven);
  return out;
}

}  // namespace kinema
