// Humanoid bone-name guessing (see kinema/character/humanoid.h).
#include "kinema/character/humanoid.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "kinema/core/error.h"

namespace kinema {
namespace {

std::string normalize_name(std::string_view raw, bool* vroid_center = nullptr) {
  std::string s;
  for (char ch : raw)
    if (std::isalnum(static_cast<unsigned char>(ch)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* prefix : {"mixamorig", "ccbase", "jbip", "bip001", "bip01"}) {
    const std::string p = prefix;
    if (s.size() > p.size() && s.compare(0, p.size(), p) == 0) {
      s = s.substr(p.size());
      if (p == "jbip" && s.size() > 1 && s[0] == 'c') {  // VRoid J_Bip_C_Hips
        s = s.substr(1);
        if (vroid_center) *vroid_center = true;
      }
      break;
    }
  }
  return s;
}

/// Side-less token → VRM bone suffix (with "left"/"right" prepended later).
const std::map<std::string, std::string>& sided_tokens() {
  static const std::map<std::string, std::string> t = {
      {"shoulder", "Shoulder"}, {"collar", "Shoulder"},   {"clavicle", "Shoulder"},
      {"arm", "UpperArm"},      {"upperarm", "UpperArm"}, {"shldr", "UpperArm"},
      {"forearm", "LowerArm"},  {"lowerarm", "LowerArm"}, {"hand", "Hand"},
      {"upleg", "UpperLeg"},    {"upperleg", "UpperLeg"}, {"thigh", "UpperLeg"},
      {"leg", "LowerLeg"},      {"lowerleg", "LowerLeg"}, {"shin", "LowerLeg"},
      {"calf", "LowerLeg"},     {"foot", "Foot"},         {"toebase", "Toes"},
      {"toe", "Toes"},          {"toes", "Toes"},         {"eye", "Eye"}};
  return t;
}

/// Finger token ("thumb1", "handindex2", "thumbmetacarpal", "middleproximal") → VRM suffix.
std::string finger_bone(std::string s) {
  if (s.rfind("hand", 0) == 0) s = s.substr(4);
  static const std::array<std::pair<const char*, const char*>, 7> fingers = {
      {{"thumb", "Thumb"},
       {"index", "Index"},
       {"middle", "Middle"},
       {"mid", "Middle"},
       {"ring", "Ring"},
       {"pinky", "Little"},
       {"little", "Little"}}};
  for (const auto& [token, vrm] : fingers) {
    const std::string t = token;
    if (s.rfind(t, 0) != 0) continue;
    const std::string rest = s.substr(t.size());
    const bool thumb = t == "thumb";
    if (rest == "1") return std::string(vrm) + (thumb ? "Metacarpal" : "Proximal");
    if (rest == "2") return std::string(vrm) + (thumb ? "Proximal" : "Intermediate");
    if (rest == "3") return std::string(vrm) + "Distal";
    for (const char* seg : {"metacarpal", "proximal", "intermediate", "distal"})
      if (rest == seg) {
        std::string v = seg;
        v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
        return std::string(vrm) + v;
      }
    return {};
  }
  return {};
}

std::string sided_bone(const std::string& rest) {
  if (auto it = sided_tokens().find(rest); it != sided_tokens().end()) return it->second;
  return finger_bone(rest);
}

/// VRM bone of a sided joint name, or "".
std::string side_bone(const std::string& s) {
  auto try_side = [&](const std::string& side, const std::string& rest) -> std::string {
    const std::string b = sided_bone(rest);
    return b.empty() ? std::string() : side + b;
  };
  for (const auto& [word, side] : {std::pair{"left", "left"}, std::pair{"right", "right"}}) {
    const std::string w = word;
    if (s.size() > w.size() && s.compare(0, w.size(), w) == 0)
      if (auto b = try_side(side, s.substr(w.size())); !b.empty()) return b;
    if (s.size() > w.size() && s.compare(s.size() - w.size(), w.size(), w) == 0)
      if (auto b = try_side(side, s.substr(0, s.size() - w.size())); !b.empty()) return b;
  }
  if (s.size() > 1 && (s[0] == 'l' || s[0] == 'r'))
    if (auto b = try_side(s[0] == 'l' ? "left" : "right", s.substr(1)); !b.empty()) return b;
  if (s.size() > 1 && (s.back() == 'l' || s.back() == 'r'))
    if (auto b = try_side(s.back() == 'l' ? "left" : "right", s.substr(0, s.size() - 1));
        !b.empty())
      return b;
  return {};
}

constexpr std::array<const char*, 15> kRequired = {
    "hips",         "spine",         "head",          "leftUpperArm",  "leftLowerArm",
    "leftHand",     "rightUpperArm", "rightLowerArm", "rightHand",     "leftUpperLeg",
    "leftLowerLeg", "leftFoot",      "rightUpperLeg", "rightLowerLeg", "rightFoot"};

}  // namespace

std::optional<Humanoid> guess_humanoid(const Skeleton& sk) {
  std::map<std::string, int> found;  // VRM bone → joint (first in parents-first order wins)
  auto put = [&](const std::string& bone, int j) {
    if (!bone.empty() && !found.count(bone)) found[bone] = j;
  };
  std::map<std::string, int> center;  // normalized center name → joint
  for (int j = 0; j < sk.joint_count(); ++j) {
    const std::string s = normalize_name(sk.joint(j).name);
    put(side_bone(s), j);
    if (!center.count(s)) center[s] = j;
  }
  auto first_of = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (auto it = center.find(n); it != center.end()) return it->second;
    return -1;
  };
  const int hips = first_of({"hips", "hip", "pelvis"});
  const int head = first_of({"head"});
  const int neck = first_of({"neck", "neck1", "necktwist01"});
  if (hips < 0 || head < 0) return std::nullopt;
  found["hips"] = hips;
  found["head"] = head;
  if (neck >= 0) found["neck"] = neck;
  if (const int jaw = first_of({"jaw"}); jaw >= 0) found["jaw"] = jaw;
  // Spine chain: joints strictly between the hips and the neck (or head).
  std::vector<int> chain;
  for (int p = sk.parent(neck >= 0 ? neck : head); p >= 0 && p != hips; p = sk.parent(p))
    chain.push_back(p);
  if (!chain.empty() && sk.parent(chain.back()) == hips) {
    std::reverse(chain.begin(), chain.end());
    found["spine"] = chain[0];
    if (chain.size() >= 2) found["chest"] = chain[1];
    if (chain.size() >= 3) found["upperChest"] = chain.back();
  }
  for (const char* b : kRequired)
    if (!found.count(b)) return std::nullopt;
  Humanoid h;
  for (const auto& [bone, joint] : found) h.bones.emplace_back(bone, joint);
  std::sort(h.bones.begin(), h.bones.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  return h;
}

std::optional<Humanoid> humanoid_of(const Asset& asset, bool* guessed) {
  if (guessed) *guessed = false;
  if (asset.humanoid && !asset.humanoid->bones.empty()) return asset.humanoid;
  std::optional<Humanoid> h = guess_humanoid(asset.skeleton);
  if (h && guessed) *guessed = true;
  return h;
}

}  // namespace kinema
