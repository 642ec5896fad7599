// kinema/match/inputs.h — what motion matching reads besides clips: which joints of a humanoid
// character the features use, tag ranges (TAGS.json) and a scripted stick (PATH.json).
//
// TAGS.json: {"tags": [{"clip": "02_01", "start": 0.0, "end": 2.5, "tag": "walk"}, …]}, times
// in seconds of the source clip, "clip" the clip's name in the database.
// PATH.json: {"duration": S, "keys": [{"time": T, "direction": [x, z], "speed": V,
// "facing": [x, z]}, …]}: keys at increasing times, each held until the next; direction and
// facing are horizontal world directions (normalized on reading), speed in m/s (0…100, default
// 0: standing), facing optional (default: the direction, also when standing). Errors name the
// file, the JSON pointer and the reason.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/match/controller.h"
#include "kinema/match/database.h"

namespace kinema::match {

/// The joints features are read from, found by the character's humanoid map (its own, or guessed
/// from joint names): hips, feet, upper and lower legs. Without both upper legs the root's facing
/// comes from the hips (FeatureJoints). Throws kinema::Error naming `file` when the hips or a
/// foot cannot be found.
FeatureJoints feature_joints_of(const Asset& character, const std::string& file);

/// Tag ranges by clip name from TAGS.json text; every "clip" must be one of `clip_names`.
std::map<std::string, std::vector<TagRange>> parse_tag_ranges(
    std::string_view json_text, const std::string& file, std::span<const std::string> clip_names);
/// The same from a file.
std::map<std::string, std::vector<TagRange>> read_tag_ranges(
    const std::string& path, std::span<const std::string> clip_names);

/// One key of a scripted stick: from `time` on (seconds), the wanted velocity (m/s, world,
/// horizontal) and facing (unit, horizontal; zero: follow the velocity).
struct StickKey {
  double time = 0;
  Vec3 velocity{0, 0, 0};
  Vec3 facing{0, 0, 0};
};

/// A scripted stick: keys held until the next one, over `duration` seconds.
struct StickPath {
  double duration = 0;
  std::vector<StickKey> keys;  ///< increasing times, at least one

  /// The stick at time `t` (the last key at or before t; the first before it).
  ControllerInput at(double t) const;
};

/// A stick path from PATH.json text (duration > 0 and at most an hour).
StickPath parse_stick_path(std::string_view json_text, const std::string& file);
/// The same from a file.
StickPath read_stick_path(const std::string& path);

}  // namespace kinema::match
