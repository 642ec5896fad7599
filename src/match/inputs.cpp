// Motion matching's inputs besides clips: humanoid feature joints, TAGS.json and PATH.json
// (kinema/match/inputs.h).
#include "kinema/match/inputs.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/retarget/humanoid.h"

namespace kinema::match {

namespace {

nlohmann::json parse_json(std::string_view text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file, "", std::string("not valid JSON: ") + e.what());
  }
}

/// A horizontal direction [x, z] of key `k`, normalized; zero when absent and not required.
Vec3 read_direction(const nlohmann::json& k, const char* name, bool required,
                    const std::string& file, const std::string& at) {
  if (!k.contains(name)) {
    if (required) throw Error(file, at + "/" + name, "expected [x, z]");
    return {0, 0, 0};
  }
  const nlohmann::json& d = k[name];
  if (!d.is_array() || d.size() != 2 || !d[0].is_number() || !d[1].is_number())
    throw Error(file, at + "/" + name, "expected [x, z]");
  const Vec3 v{d[0].get<double>(), 0, d[1].get<double>()};
  const double len = std::hypot(v.x, v.z);
  if (!(len > 1e-9) || !std::isfinite(len))
    throw Error(file, at + "/" + name, "a direction needs a non-zero length");
  return v / len;
}

StickKey read_stick_key(const nlohmann::json& k, const std::string& file, const std::string& at,
                        double previous_time) {
  if (!k.is_object()) throw Error(file, at, "expected an object");
  StickKey key;
  if (!k.contains("time") || !k["time"].is_number())
    throw Error(file, at + "/time", "expected a number of seconds");
  key.time = k["time"].get<double>();
  if (!(key.time > previous_time) || !std::isfinite(key.time))
    throw Error(file, at + "/time", "times must increase");
  double speed = 0;
  if (k.contains("speed")) {
    if (!k["speed"].is_number() || !(k["speed"].get<double>() >= 0) ||
        !(k["speed"].get<double>() < 100))
      throw Error(file, at + "/speed", "expected metres per second, 0 to 100");
    speed = k["speed"].get<double>();
  }
  key.velocity = speed > 0 ? read_direction(k, "direction", true, file, at) * speed : Vec3{0, 0, 0};
  key.facing = read_direction(k, "facing", false, file, at);
  // Standing with a direction and no facing: face the direction.
  if (speed == 0 && k.contains("direction") && !k.contains("facing"))
    key.facing = read_direction(k, "direction", true, file, at);
  return key;
}

}  // namespace

FeatureJoints feature_joints_of(const Asset& character, const std::string& file) {
  const auto human = humanoid_of(character);
  const auto joint = [&](const char* bone) { return human ? human->find(bone) : -1; };
  FeatureJoints j{joint("hips"),         joint("leftFoot"),      joint("rightFoot"),
                  joint("leftUpperLeg"), joint("rightUpperLeg"), joint("leftLowerLeg"),
                  joint("rightLowerLeg")};
  if (j.hips < 0 || j.left_foot < 0 || j.right_foot < 0)
    throw Error(file, "skeleton",
                "cannot find the hips and both feet (the humanoid mapping found " +
                    std::string(human ? "some bones but not these" : "no humanoid") +
                    "); motion matching reads their positions");
  if (j.left_upper_leg < 0 || j.right_upper_leg < 0) j.left_upper_leg = j.right_upper_leg = -1;
  return j;
}

std::map<std::string, std::vector<TagRange>> parse_tag_ranges(
    std::string_view json_text, const std::string& file, std::span<const std::string> clip_names) {
  const nlohmann::json j = parse_json(json_text, file);
  if (!j.is_object() || !j.contains("tags") || !j["tags"].is_array())
    throw Error(file, "/tags", "expected an object with a \"tags\" array");
  std::map<std::string, std::vector<TagRange>> by_clip;
  for (size_t i = 0; i < j["tags"].size(); ++i) {
    const nlohmann::json& t = j["tags"][i];
    const std::string at = "/tags/" + std::to_string(i);
    if (!t.is_object()) throw Error(file, at, "expected an object");
    for (const char* key : {"clip", "tag"})
      if (!t.contains(key) || !t[key].is_string() || t[key].get<std::string>().empty())
        throw Error(file, at + "/" + key, "expected a non-empty string");
    for (const char* key : {"start", "end"})
      if (!t.contains(key) || !t[key].is_number())
        throw Error(file, at + "/" + key, "expected a number of seconds");
    const std::string clip = t["clip"].get<std::string>();
    bool known = false;
    for (const std::string& name : clip_names) known = known || name == clip;
    if (!known) {
      std::string names;
      for (const std::string& name : clip_names) names += (names.empty() ? "" : ", ") + name;
      throw Error(file, at + "/clip", "no clip \"" + clip + "\" among the inputs (" + names + ")");
    }
    const double start = t["start"].get<double>(), end = t["end"].get<double>();
    if (!(start <= end)) throw Error(file, at, "start is after end");
    by_clip[clip].push_back({t["tag"].get<std::string>(), start, end});
  }
  return by_clip;
}

std::map<std::string, std::vector<TagRange>> read_tag_ranges(
    const std::string& path, std::span<const std::string> clip_names) {
  return parse_tag_ranges(read_file(path), path, clip_names);
}

ControllerInput StickPath::at(double t) const {
  const StickKey* k = &keys.front();
  for (const StickKey& key : keys)
    if (key.time <= t + 1e-9) k = &key;
  return {k->velocity, k->facing};
}

StickPath parse_stick_path(std::string_view json_text, const std::string& file) {
  const nlohmann::json j = parse_json(json_text, file);
  StickPath p;
  if (!j.is_object() || !j.contains("duration") || !j["duration"].is_number())
    throw Error(file, "/duration", "expected a number of seconds");
  p.duration = j["duration"].get<double>();
  if (!(p.duration > 0) || !(p.duration <= 3600))
    throw Error(file, "/duration", "must be > 0 and at most an hour");
  if (!j.contains("keys") || !j["keys"].is_array() || j["keys"].empty())
    throw Error(file, "/keys", "expected a non-empty array of keys");
  double previous = -1;
  for (size_t i = 0; i < j["keys"].size(); ++i) {
    p.keys.push_back(read_stick_key(j["keys"][i], file, "/keys/" + std::to_string(i), previous));
    previous = p.keys.back().time;
  }
  return p;
}

StickPath read_stick_path(const std::string& path) {
  return parse_stick_path(read_file(path), path);
}

}  // namespace kinema::match
