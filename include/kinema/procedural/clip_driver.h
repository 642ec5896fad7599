// kinema/procedural/clip_driver.h — drivers on clips: one channel of a joint keyed at every frame
// from an expression over the clip's own motion (kinema/procedural/driver.h). A car's wheels turn
// θ = d / r for the distance d the car has travelled along whatever path it was animated on:
//
//   drive_clip(clip, skeleton, "wheel_front_l", DrivenChannel::RotateX, "car_dist / 0.3")
//
// The variables, per frame (joint names with characters other than letters, digits and
// underscores have each replaced by '_', and a leading digit gets a '_' before it):
//   t, frame                 — seconds, and the frame's index;
//   JOINT_tx, _ty, _tz       — the joint's local translation (m);
//   JOINT_px, _py, _pz       — its model-space position (m);
//   JOINT_dist               — the distance its model-space position has travelled since t = 0,
//                              summed frame to frame (m).
#pragma once

#include <cstdint>
#include <string>

#include "kinema/clip/clip.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

/// The channel a clip driver sets: a turn about one of the joint's local axes added to its
/// animated rotation (radians), or one component of its local translation (m).
enum class DrivenChannel : std::uint8_t {
  RotateX,
  RotateY,
  RotateZ,
  TranslateX,
  TranslateY,
  TranslateZ
};

/// The variable name a joint's values go by in a clip driver's expression (without the suffix).
std::string driver_variable_name(const std::string& joint_name);

/// A copy of `clip` with `joint`'s channel keyed at every frame at `fps` (0: the clip's rate, else
/// 30) from `expression`: RotateX…Z keys the rotation as the animated (or rest) rotation followed
/// by a turn of the value about that local axis; TranslateX…Z replaces that component of the
/// translation. The joint's other channels are kept as they were, sampled at the same frames.
/// Throws kinema::Error for an unknown joint, two joints whose variable names collide, an
/// expression that does not parse (with its column) or a value that is not finite at some frame
/// (with its time).
Clip drive_clip(const Clip& clip, const Skeleton& skeleton, const std::string& joint,
                DrivenChannel channel, const std::string& expression, double fps = 0);

}  // namespace kinema
