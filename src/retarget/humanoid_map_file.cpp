// Humanoid maps written by hand as JSON (see kinema/retarget/humanoid.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "humanoid_names.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/retarget/humanoid.h"

namespace kinema {
namespace {

/// JSON pointer of an object member (RFC 6901: '~' → "~0", '/' → "~1").
std::string pointer(const std::string& parent, const std::string& key) {
  std::string p = parent + "/";
  for (char c : key)
    p += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return p;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// The (at most) `count` names nearest to `wanted`: the same body part and side first ("Bip01 L
/// Shin" finds "Bip01 L Calf"), then the most words in common, then the fewest edits.
std::vector<std::string> closest(const std::string& wanted, const std::vector<std::string>& names,
                                 size_t count) {
  const humanoid_names::NameInfo want = humanoid_names::classify(wanted);
  const std::vector<std::string> want_words = humanoid_names::tokenize(wanted);
  std::vector<std::pair<std::tuple<int, long, size_t>, std::string>> scored;
  for (const std::string& n : names) {
    const humanoid_names::NameInfo info = humanoid_names::classify(n);
    const bool same_part = want.part != humanoid_names::Part::None && info.part == want.part &&
                           info.side == want.side && info.finger == want.finger;
    long shared = 0;
    for (const std::string& w : humanoid_names::tokenize(n))
      shared += std::count(want_words.begin(), want_words.end(), w) > 0 ? 1 : 0;
    scored.push_back({{same_part ? 0 : 1, -shared, edit_distance(lower(wanted), lower(n))}, n});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t k = 0; k < scored.size() && k < count; ++k) out.push_back(scored[k].second);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (size_t k = 0; k < names.size(); ++k) s += (k ? ", " : "") + names[k];
  return s;
}

}  // namespace

Humanoid parse_humanoid_map(const std::string& json_text, const Skeleton& skeleton,
                            const std::string& file) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file, "byte " + std::to_string(e.byte), std::string("malformed JSON: ") + e.what());
  }
  std::string base;
  if (doc.is_object() && doc.contains("humanBones")) {
    doc = doc["humanBones"];
    base = "/humanBones";
  }
  if (!doc.is_object())
    throw Error(file, base.empty() ? "/" : base,
                "a humanoid map is a JSON object of VRM bone name → joint name, e.g. "
                "{\"hips\": \"Bip01 Pelvis\", \"leftUpperLeg\": \"Bip01 L Thigh\"}");
  const std::vector<std::string>& bones = vrm_humanoid_bones();
  std::vector<std::string> joint_names;
  for (int j = 0; j < skeleton.joint_count(); ++j) joint_names.push_back(skeleton.joint(j).name);
  std::map<int, std::string> bone_of_joint;
  Humanoid h;
  for (const auto& [key, value] : doc.items()) {
    const std::string place = pointer(base, key);
    if (std::find(bones.begin(), bones.end(), key) == bones.end())
      throw Error(file, place,
                  "\"" + key + "\" is not a VRM 1.0 humanoid bone (nearest: " +
                      joined(closest(key, bones, 3)) + ")");
    if (!value.is_string())
      throw Error(file, place,
                  "expected the joint's name as a string, got " + std::string(value.type_name()));
    const std::string name = value.get<std::string>();
    const int joint = skeleton.find(name);
    if (joint < 0)
      throw Error(file, place,
                  "no joint \"" + name + "\" in the skeleton (closest: " +
                      joined(closest(name, joint_names, 3)) + ")");
    if (const auto it = bone_of_joint.find(joint); it != bone_of_joint.end())
      throw Error(file, place, "joint \"" + name + "\" is already " + it->second);
    bone_of_joint[joint] = key;
    h.bones.emplace_back(key, joint);
  }
  std::vector<std::string> missing;
  for (const std::string& b : required_humanoid_bones())
    if (h.find(b) < 0) missing.push_back(b);
  if (!missing.empty())
    throw Error(file, base.empty() ? "/" : base,
                "the map lacks required bones: " + joined(missing) +
                    " (a humanoid needs hips, spine, head and both arms and legs)");
  std::sort(h.bones.begin(), h.bones.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  return h;
}

Humanoid read_humanoid_map(const std::string& json_path, const Skeleton& skeleton) {
  return parse_humanoid_map(read_file(json_path), skeleton, json_path);
}

}  // namespace kinema
