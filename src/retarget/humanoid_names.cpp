// What a joint name says about its body part (see humanoid_names.h).
#include "humanoid_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

namespace kinema::humanoid_names {
namespace {

bool is_number(const std::string& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

struct Word {
  Part part;
  int rank;
  Part alternative = Part::None;
};

/// Body words of a sided joint, joined without separators.
const std::map<std::string, Word>& sided_words() {
  static const std::map<std::string, Word> w = {
      {"shoulder", {Part::Shoulder, 0, Part::UpperArm}},
      {"collar", {Part::Shoulder, 0}},
      {"clavicle", {Part::Shoulder, 0}},
      {"collarbone", {Part::Shoulder, 0}},
      {"arm", {Part::UpperArm, 0}},
      {"upperarm", {Part::UpperArm, 0}},
      {"uparm", {Part::UpperArm, 0}},
      {"shldr", {Part::UpperArm, 0}},
      {"shldrbend", {Part::UpperArm, 0}},  // Daz Genesis 3 and later
      {"forearm", {Part::LowerArm, 0}},
      {"forearmbend", {Part::LowerArm, 0}},
      {"lowerarm", {Part::LowerArm, 0}},
      {"lowarm", {Part::LowerArm, 0}},
      {"elbow", {Part::LowerArm, 1}},
      {"hand", {Part::Hand, 0}},
      {"fist", {Part::Hand, 0}},
      {"wrist", {Part::Hand, 1}},
      {"upleg", {Part::UpperLeg, 0}},
      {"upperleg", {Part::UpperLeg, 0}},
      {"thigh", {Part::UpperLeg, 0}},
      {"thighbend", {Part::UpperLeg, 0}},
      {"hip", {Part::UpperLeg, 1}},
      {"leg", {Part::LowerLeg, 0}},
      {"lowerleg", {Part::LowerLeg, 0}},
      {"lowleg", {Part::LowerLeg, 0}},
      {"shin", {Part::LowerLeg, 0}},
      {"calf", {Part::LowerLeg, 0}},
      {"knee", {Part::LowerLeg, 1}},
      {"foot", {Part::Foot, 0}},
      {"ankle", {Part::Foot, 1}},
      {"toe", {Part::Toes, 0}},
      {"toes", {Part::Toes, 0}},
      {"toebase", {Part::Toes, 0}},
      {"ball", {Part::Toes, 0}},
      {"eye", {Part::Eye, 0}},
  };
  return w;
}

/// Body words of a joint on the midline, joined without separators.
const std::map<std::string, Word>& center_words() {
  static const std::map<std::string, Word> w = {
      {"hips", {Part::Hips, 0}},          {"hip", {Part::Hips, 1}},
      {"pelvis", {Part::Hips, 2}},        {"spine", {Part::Spine, 0}},
      {"chest", {Part::Spine, 0}},        {"upperchest", {Part::Spine, 0}},
      {"torso", {Part::Spine, 0}},        {"abdomen", {Part::Spine, 0}},
      {"waist", {Part::Spine, 0}},        {"lowerback", {Part::Spine, 0}},
      {"neck", {Part::Neck, 0}},          {"necklower", {Part::Neck, 0}},
      {"necktwist", {Part::Neck, 1}},  // Reallusion CC's NeckTwist01
      {"abdomenlower", {Part::Spine, 0}}, {"chestupper", {Part::Spine, 0}},
      {"head", {Part::Head, 0}},          {"jaw", {Part::Jaw, 0}},
  };
  return w;
}

int finger_of(const std::string& t) {
  static const std::map<std::string, int> f = {{"thumb", 0},  {"index", 1},  {"pointer", 1},
                                               {"middle", 2}, {"mid", 2},    {"ring", 3},
                                               {"pinky", 4},  {"pinkie", 4}, {"little", 4}};
  const auto it = f.find(t);
  return it == f.end() ? -1 : it->second;
}

/// Segment of a finger from a word ("proximal", "medial"…), or -1 (a non-thumb metacarpal is
/// no VRM bone).
int segment_word(int finger, const std::string& t) {
  const bool thumb = finger == 0;
  if (t == "metacarpal") return thumb ? 0 : -1;
  if (t == "proximal") return thumb ? 1 : 0;
  if (t == "intermediate" || t == "medial") return 1;
  if (t == "distal") return 2;
  return -1;
}

/// Finger and segment from the tokens left after the side ("hand index 2", "thumb 01",
/// "finger 2 medial" (Rokoko, 1 = thumb), "finger 12" (3ds Max Biped, 0 = thumb)).
bool parse_finger(std::vector<std::string> t, NameInfo& out) {
  if (t.size() >= 2 && (t[0] == "hand" || t[0] == "f") && finger_of(t[1]) >= 0) t.erase(t.begin());
  if (t.size() == 1 && t[0].rfind("hand", 0) == 0 && finger_of(t[0].substr(4)) >= 0)
    t[0] = t[0].substr(4);
  int finger = -1, segment = -1;
  if (t.size() == 2 && finger_of(t[0]) >= 0) {
    finger = finger_of(t[0]);
    if (is_number(t[1])) {
      const int n = std::stoi(t[1]);
      segment = n >= 1 && n <= 3 ? n - 1 : -1;
    } else {
      segment = segment_word(finger, t[1]);
      out.thumb_intermediate_word = finger == 0 && t[1] == "intermediate";
      out.thumb_proximal_word = finger == 0 && t[1] == "proximal";
    }
  } else if (t.size() == 3 && t[0] == "finger" && t[1].size() == 1 && is_number(t[1])) {
    finger = t[1][0] - '1';  // Rokoko: Finger1 is the thumb
    segment = finger >= 0 && finger <= 4 ? segment_word(finger, t[2]) : -1;
  } else if (t.size() == 2 && t[0] == "finger" && is_number(t[1]) && t[1].size() <= 2) {
    finger = t[1][0] - '0';  // Biped: Finger0 thumb … Finger4 pinky; Finger01 its second bone
    segment = t[1].size() == 1 ? 0 : t[1][1] - '0';
    if (finger > 4 || segment > 2) segment = -1;
  }
  if (finger < 0 || segment < 0) return false;
  out.part = Part::Finger;
  out.finger = finger;
  out.segment = segment;
  return true;
}

/// Reads the words (after prefixes and the side) as a body part of the given side.
bool read_part(const std::vector<std::string>& words, bool sided, NameInfo& out) {
  std::vector<std::string> w = words;
  std::string digits;
  if (!w.empty() && is_number(w.back())) {
    digits = w.back();
    out.index = std::stoi(digits.substr(0, 6));
  }
  std::string joined;
  for (size_t k = 0; k + (digits.empty() ? 0 : 1) < w.size(); ++k) joined += w[k];
  out.base = joined;
  if (sided && parse_finger(w, out)) return true;
  const auto& table = sided ? sided_words() : center_words();
  const auto it = table.find(joined);
  if (it == table.end()) return false;
  out.part = it->second.part;
  out.rank = it->second.rank;
  out.alternative = it->second.alternative;
  return true;
}

/// Names whose side is glued to the word in lower case ("lhand", "rcollar", "lefthand",
/// "handl"): the side is tried at either end, as the original name guesser did.
bool read_glued_side(const std::string& joined, NameInfo& out) {
  struct Glue {
    const char* text;
    Side side;
  };
  static const std::array<Glue, 4> glues = {
      {{"left", Side::Left}, {"right", Side::Right}, {"l", Side::Left}, {"r", Side::Right}}};
  for (const Glue& g : glues) {
    const std::string s = g.text;
    if (joined.size() <= s.size()) continue;
    for (const bool front : {true, false}) {
      const bool match = front ? joined.compare(0, s.size(), s) == 0
                               : joined.compare(joined.size() - s.size(), s.size(), s) == 0;
      if (!match) continue;
      std::string rest =
          front ? joined.substr(s.size()) : joined.substr(0, joined.size() - s.size());
      NameInfo info = out;
      if (read_part(tokenize(rest), true, info)) {
        info.side = g.side;
        out = info;
        return true;
      }
    }
  }
  return false;
}

/// Drops rig prefixes and filler words; sets `deform` / `control`.
void strip_prefixes(std::vector<std::string>& t, NameInfo& out) {
  static const std::array<const char*, 8> control = {"org", "mch", "ctrl", "wgt",
                                                     "vis", "tgt", "ik",   "fk"};
  if (!t.empty() && std::find(control.begin(), control.end(), t[0]) != control.end())
    out.control = true;
  auto drop = [&](size_t n) { t.erase(t.begin(), t.begin() + static_cast<long>(n)); };
  for (bool again = true; again && t.size() > 1;) {
    again = true;
    if (t[0] == "mixamorig" || t[0] == "b" || t[0] == "bn" || t[0] == "jnt" || t[0] == "joint" ||
        t[0] == "bone" || t[0] == "rig")
      drop(1);
    else if (t[0] == "def") {
      out.deform = true;
      drop(1);
    } else if (t.size() > 2 &&
               ((t[0] == "cc" && t[1] == "base") || (t[0] == "j" && t[1] == "bip") ||
                (t[0] == "valve" && t[1] == "biped")))
      drop(2);
    else if (t.size() > 2 && t[0] == "bip" && is_number(t[1]))
      drop(2);
    else
      again = false;
  }
  while (t.size() > 1 && (t.back() == "jnt" || t.back() == "joint" || t.back() == "bone" ||
                          t.back() == "armature"))  // Godot's "thigh.l_Armature"
    t.pop_back();
}

}  // namespace

std::vector<std::string> tokenize(std::string_view name) {
  if (const size_t cut = name.find_last_of(":|"); cut != std::string_view::npos)
    name = name.substr(cut + 1);
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) tokens.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    if (!cur.empty()) {
      const auto p = static_cast<unsigned char>(name[i - 1]);
      const bool digit_edge = (std::isdigit(c) != 0) != (std::isdigit(p) != 0);
      const bool lower_upper = std::isupper(c) && std::islower(p);
      const bool acronym_end = std::isupper(c) && std::isupper(p) && i + 1 < name.size() &&
                               std::islower(static_cast<unsigned char>(name[i + 1]));
      if (digit_edge || lower_upper || acronym_end) flush();
    }
    cur += static_cast<char>(std::tolower(c));
  }
  flush();
  return tokens;
}

NameInfo classify(std::string_view name) {
  NameInfo out;
  std::vector<std::string> t = tokenize(name);
  strip_prefixes(t, out);
  if (t.size() > 1 && t[0] == "c") t.erase(t.begin());  // VRoid's J_Bip_C_ (center)
  for (size_t k = 0; k < t.size(); ++k) {
    const std::string& w = t[k];
    const Side s = w == "l" || w == "left"    ? Side::Left
                   : w == "r" || w == "right" ? Side::Right
                                              : Side::None;
    if (s == Side::None || t.size() == 1) continue;
    out.side = s;
    t.erase(t.begin() + static_cast<long>(k));
    break;
  }
  if (out.side != Side::None) {
    if (!read_part(t, true, out)) out.part = Part::None;
    return out;
  }
  if (read_part(t, false, out)) return out;
  std::string joined;
  for (const std::string& w : t) joined += w;
  read_glued_side(joined, out);
  return out;
}

std::string finger_bone(int finger, int segment) {
  static const std::array<const char*, 5> fingers = {"Thumb", "Index", "Middle", "Ring", "Little"};
  static const std::array<const char*, 3> thumb = {"Metacarpal", "Proximal", "Distal"};
  static const std::array<const char*, 3> other = {"Proximal", "Intermediate", "Distal"};
  if (finger < 0 || finger > 4 || segment < 0 || segment > 2) return {};
  const auto s = static_cast<size_t>(segment);
  return std::string(fingers[static_cast<size_t>(finger)]) + (finger == 0 ? thumb[s] : other[s]);
}

const std::vector<std::string>& words_of(Part part) {
  static const std::map<Part, std::vector<std::string>> words = {
      {Part::Hips, {"hips", "hip", "pelvis", "root"}},
      {Part::Spine, {"spine", "chest", "torso", "abdomen", "waist", "back"}},
      {Part::Neck, {"neck"}},
      {Part::Head, {"head"}},
      {Part::Shoulder, {"shoulder", "collar", "clavicle"}},
      {Part::UpperArm, {"arm", "upper", "upperarm", "shldr", "shoulder"}},
      {Part::LowerArm, {"forearm", "fore", "lower", "lowerarm", "elbow", "arm"}},
      {Part::Hand, {"hand", "wrist", "fist"}},
      {Part::UpperLeg, {"thigh", "upleg", "upper", "upperleg", "leg", "hip"}},
      {Part::LowerLeg, {"leg", "lower", "lowerleg", "shin", "calf", "knee"}},
      {Part::Foot, {"foot", "ankle"}},
      {Part::Toes, {"toe", "toes", "ball"}},
  };
  static const std::vector<std::string> none;
  const auto it = words.find(part);
  return it == words.end() ? none : it->second;
}

}  // namespace kinema::humanoid_names
