// Joint limits from JSON (kinema/retarget/joint_limits_file.h).
#include "kinema/retarget/joint_limits_file.h"

#include <cmath>
#include <initializer_list>
#include <numbers>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema {

namespace {

using nlohmann::json;

struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& place, const std::string& reason) const {
    throw Error(file, place, reason);
  }
  void only(const json& object, const std::string& place,
            std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : object.items()) {
      bool ok = false;
      std::string list;
      for (const char* k : known) {
        ok = ok || key == k;
        list += std::string(list.empty() ? "" : ", ") + k;
      }
      if (!ok) fail(place + "/" + key, "unknown key \"" + key + "\" (known: " + list + ")");
    }
  }
  double degrees(const json& v, const std::string& place) const {
    if (!v.is_number()) fail(place, "must be a number of degrees");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < -180 || d > 180) fail(place, "must be between -180 and 180");
    return d * std::numbers::pi / 180;
  }
  void range(const json& v, const std::string& place, double& low, double& high) const {
    if (!v.is_array() || v.size() != 2) fail(place, "must be [min, max] in degrees");
    low = degrees(v[0], place + "/0");
    high = degrees(v[1], place + "/1");
    if (low > high) fail(place, "min is greater than max");
  }
  Vec3 axis(const json& v, const std::string& place) const {
    if (!v.is_array() || v.size() != 3) fail(place, "must be an axis [x, y, z]");
    Vec3 a;
    for (int i = 0; i < 3; ++i) {
      if (!v[size_t(i)].is_number()) fail(place + "/" + std::to_string(i), "must be a number");
      a[i] = v[size_t(i)].get<double>();
    }
    if (!is_finite(a) || !(length(a) > 1e-12)) fail(place, "must be a finite, non-zero axis");
    return a;
  }
};

JointLimit read_limit(const Reader& r, const json& v, const std::string& place) {
  if (!v.is_object())
    r.fail(place,
           "a limit is an object: {\"hinge\": axis, \"range\": [min, max]} or "
           "{\"twist_axis\": axis, \"swing\": degrees, \"twist\": [min, max]}");
  try {
    if (v.contains("hinge")) {
      r.only(v, place, {"hinge", "range"});
      if (!v.contains("range")) r.fail(place, "a hinge needs \"range\": [min, max]");
      double low = 0, high = 0;
      r.range(v["range"], place + "/range", low, high);
      return JointLimit::of(make_hinge_limit(r.axis(v["hinge"], place + "/hinge"), low, high));
    }
    r.only(v, place, {"twist_axis", "swing_axis", "swing", "twist"});
    for (const char* key : {"twist_axis", "swing", "twist"})
      if (!v.contains(key))
        r.fail(place, std::string("a swing-twist limit needs \"") + key +
                          "\" (or give \"hinge\" for a hinge)");
    const Vec3 twist_axis = r.axis(v["twist_axis"], place + "/twist_axis");
    double twist_low = 0, twist_high = 0;
    r.range(v["twist"], place + "/twist", twist_low, twist_high);
    const json& swing = v["swing"];
    if (swing.is_array()) {
      if (swing.size() != 2) r.fail(place + "/swing", "must be one half-angle or two [a, b]");
      if (!v.contains("swing_axis"))
        r.fail(place, "two swing half-angles need \"swing_axis\" (the first one's axis)");
      const double a = r.degrees(swing[0], place + "/swing/0");
      const double b = r.degrees(swing[1], place + "/swing/1");
      if (a < 0 || b < 0) r.fail(place + "/swing", "half-angles must be ≥ 0");
      return JointLimit::of(make_swing_twist_limit(
          twist_axis, r.axis(v["swing_axis"], place + "/swing_axis"), a, b, twist_low, twist_high));
    }
    const double cone = r.degrees(swing, place + "/swing");
    if (cone < 0) r.fail(place + "/swing", "the half-angle must be ≥ 0");
    return JointLimit::of(make_swing_twist_limit(twist_axis, cone, twist_low, twist_high));
  } catch (const Error& e) {
    if (e.file() == r.file && !e.place().empty()) throw;
    r.fail(place, e.reason());  // a builder's refusal (e.g. swing axis along the twist axis)
  }
}

}  // namespace

std::vector<JointLimit> parse_joint_limits(const std::string& json_text, const Asset& character,
                                           const std::string& file) {
  const Reader r{file};
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    r.fail(at_line_and_column(json_text, e.byte > 0 ? e.byte - 1 : 0),
           std::string("malformed JSON: ") + e.what());
  } catch (const json::exception& e) {
    r.fail("/", std::string("malformed JSON: ") + e.what());
  }
  if (!doc.is_object()) r.fail("/", "joint limits are a JSON object of joint name → limit");
  std::vector<JointLimit> limits(size_t(character.skeleton.joint_count()));
  for (const auto& [name, value] : doc.items()) {
    const std::string place = "/" + name;
    int joint = character.skeleton.find(name);
    if (joint < 0 && character.humanoid) joint = character.humanoid->find(name);
    if (joint < 0)
      r.fail(place, "the character has no joint or humanoid bone named \"" + name + "\"");
    limits[size_t(joint)] = read_limit(r, value, place);
  }
  return limits;
}

std::vector<JointLimit> load_joint_limits(const std::string& path, const Asset& character) {
  return parse_joint_limits(read_file(path), character, path);
}

}  // namespace kinema
