// Humanoid bone maps from joint names and the hierarchy (see kinema/retarget/humanoid.h).
#include "kinema/retarget/humanoid.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "humanoid_names.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

using humanoid_names::NameInfo;
using humanoid_names::Part;
using humanoid_names::Side;

struct LimbBone {
  const char* bone;  ///< VRM name without side
  Part part;
};
constexpr std::array<LimbBone, 4> kArm = {{{"Shoulder", Part::Shoulder},
                                           {"UpperArm", Part::UpperArm},
                                           {"LowerArm", Part::LowerArm},
                                           {"Hand", Part::Hand}}};
constexpr std::array<LimbBone, 4> kLeg = {{{"UpperLeg", Part::UpperLeg},
                                           {"LowerLeg", Part::LowerLeg},
                                           {"Foot", Part::Foot},
                                           {"Toes", Part::Toes}}};

class Recognizer {
 public:
  explicit Recognizer(const Skeleton& sk) : sk_(sk) {
    bool any_deform = false;
    for (int j = 0; j < sk.joint_count(); ++j) {
      info_.push_back(humanoid_names::classify(sk.joint(j).name));
      any_deform = any_deform || info_.back().deform;
    }
    // Rigify: when DEF- bones exist, only they deform; "hips", "torso", "head" are controls.
    for (const NameInfo& i : info_) usable_.push_back(!i.control && (!any_deform || i.deform));
  }

  HumanoidGuess run();

 private:
  bool is_ancestor(int a, int b) const {  // a strictly above b
    for (int p = b < 0 ? -1 : sk_.parent(b); p >= 0; p = sk_.parent(p))
      if (p == a) return true;
    return false;
  }
  bool used(int j) const {
    for (const auto& [bone, joint] : found_)
      if (joint == j) return true;
    return false;
  }
  int lowest_common_ancestor(int a, int b) const {
    for (int p = a; p >= 0; p = sk_.parent(p))
      if (p == b || is_ancestor(p, b)) return p;
    return -1;
  }
  /// The best joint for `part` on `side` below `under` (any joint when none is below it and
  /// `strict` is false): the usual words before the fallback words, then parents-first.
  int pick(Part part, Side side, int under, bool strict = false) const;
  int pick_finger(Side side, int finger, int segment, int hand) const;
  bool has_finger_under(Side side, int joint) const {
    for (int j = joint + 1; joint >= 0 && j < sk_.joint_count(); ++j)
      if (info_[static_cast<size_t>(j)].part == Part::Finger &&
          info_[static_cast<size_t>(j)].side == side && is_ancestor(joint, j))
        return true;
    return false;
  }
  int find(const std::string& bone) const {
    const auto it = found_.find(bone);
    return it == found_.end() ? -1 : it->second;
  }
  void put(const std::string& bone, int joint) {
    if (joint >= 0) found_[bone] = joint;
  }
  void arm(Side side, const std::string& prefix, int hips);
  void leg(Side side, const std::string& prefix, int hips);
  void head_and_neck(int hips);
  void spine_chain(int hips);
  std::string scheme() const;
  void explain_missing(HumanoidGuess& g) const;

  const Skeleton& sk_;
  std::vector<NameInfo> info_;
  std::vector<bool> usable_;
  std::map<std::string, int> found_;  // VRM bone → joint
};

int Recognizer::pick(Part part, Side side, int under, bool strict) const {
  int best = -1, best_key = 0;
  for (int j = 0; j < sk_.joint_count(); ++j) {
    const NameInfo& i = info_[static_cast<size_t>(j)];
    if (!usable_[static_cast<size_t>(j)] || i.side != side || used(j)) continue;
    if (i.part != part && i.alternative != part) continue;
    if (under >= 0 && !is_ancestor(under, j)) continue;
    // A trailing number marks a later segment or a copy (Rigify's upper_arm.L.001, an
    // exporter's Foot.L_45 mesh node): the plain name wins.
    const int key = (i.part == part ? 0 : 100) + 10 * i.rank + (i.index >= 0 ? 1 : 0);
    if (best < 0 || key < best_key) best = j, best_key = key;
  }
  if (best < 0 && under >= 0 && !strict) return pick(part, side, -1, true);
  return best;
}

int Recognizer::pick_finger(Side side, int finger, int segment, int hand) const {
  auto on_hand = [&](int j) {
    const NameInfo& i = info_[static_cast<size_t>(j)];
    return usable_[static_cast<size_t>(j)] && i.side == side && i.part == Part::Finger &&
           (hand < 0 || is_ancestor(hand, j));
  };
  // VRM 0.x's thumb words (proximal, intermediate, distal) are VRM 1.0's metacarpal, proximal,
  // distal: read them so when the hand has an "intermediate" thumb.
  bool vrm0_thumb = false;
  for (int j = 0; j < sk_.joint_count() && finger == 0; ++j)
    vrm0_thumb =
        vrm0_thumb || (on_hand(j) && info_[static_cast<size_t>(j)].thumb_intermediate_word);
  for (int j = 0; j < sk_.joint_count(); ++j) {
    const NameInfo& i = info_[static_cast<size_t>(j)];
    if (!on_hand(j) || i.finger != finger || used(j)) continue;
    const int s = vrm0_thumb && i.thumb_proximal_word ? 0 : i.segment;
    if (s == segment) return j;
  }
  return -1;
}

void Recognizer::arm(Side side, const std::string& prefix, int hips) {
  const int shoulder = pick(Part::Shoulder, side, hips);
  int upper = pick(Part::UpperArm, side, shoulder >= 0 ? shoulder : hips, shoulder >= 0);
  put(prefix + "Shoulder", shoulder);
  if (upper < 0) upper = pick(Part::UpperArm, side, hips);  // beside the shoulder
  if (upper < 0 && shoulder >= 0 &&
      info_[static_cast<size_t>(shoulder)].alternative == Part::UpperArm) {
    // "LeftShoulder → LeftElbow": with no upper arm anywhere, the shoulder is the upper arm.
    found_.erase(prefix + "Shoulder");
    upper = shoulder;
  }
  put(prefix + "UpperArm", upper);
  const int lower = pick(Part::LowerArm, side, upper);
  put(prefix + "LowerArm", lower);
  const int hand = pick(Part::Hand, side, lower >= 0 ? lower : upper);
  put(prefix + "Hand", hand);
  if (hand < 0) return;
  // Fingers hang from the hand; where the "hand" is a mesh node beside the arm (some game
  // rigs), from the lower arm, else anywhere on that side.
  int anchor = hand;
  if (!has_finger_under(side, anchor)) anchor = has_finger_under(side, lower) ? lower : -1;
  for (int f = 0; f < 5; ++f)
    for (int s = 0; s < 3; ++s)
      put(prefix + humanoid_names::finger_bone(f, s), pick_finger(side, f, s, anchor));
}

void Recognizer::leg(Side side, const std::string& prefix, int hips) {
  int previous = hips;
  for (const LimbBone& b : kLeg) {
    const bool optional = b.part == Part::Toes;
    if (optional && previous < 0) return;
    const int j = pick(b.part, side, previous, optional);
    put(prefix + b.bone, j);
    if (j >= 0) previous = j;
  }
}

void Recognizer::head_and_neck(int hips) {
  const int head = pick(Part::Head, Side::None, hips);
  if (head >= 0) {
    put("head", head);
    int neck = pick(Part::Neck, Side::None, hips);
    for (int p = sk_.parent(head); p >= 0; p = sk_.parent(p))  // the neck nearest the hips
      if (info_[static_cast<size_t>(p)].part == Part::Neck && usable_[static_cast<size_t>(p)])
        neck = p;
    put("neck", neck);
    return;
  }
  // No joint is called head: Rigify's spine chain goes on above the shoulders (spine.004 the
  // neck … spine.006 the head). Follow the joints named like the one the arms hang from.
  const int l = find("leftShoulder") >= 0 ? find("leftShoulder") : find("leftUpperArm");
  const int r = find("rightShoulder") >= 0 ? find("rightShoulder") : find("rightUpperArm");
  if (l < 0 || r < 0) return;
  const int chest = lowest_common_ancestor(l, r);
  if (chest < 0 || info_[static_cast<size_t>(chest)].base.empty()) return;
  std::vector<int> above;
  for (int cur = chest, next = -1; cur >= 0; cur = next, next = -1) {
    for (int j = cur + 1; j < sk_.joint_count() && next < 0; ++j)
      if (sk_.parent(j) == cur && usable_[static_cast<size_t>(j)] &&
          info_[static_cast<size_t>(j)].side == Side::None &&
          info_[static_cast<size_t>(j)].base == info_[static_cast<size_t>(chest)].base)
        next = j;
    if (next >= 0) above.push_back(next);
  }
  if (above.empty()) return;
  put("head", above.back());
  if (above.size() >= 2) put("neck", above.front());
}

void Recognizer::spine_chain(int hips) {
  const int top = find("neck") >= 0 ? find("neck") : find("head");
  if (top < 0 || hips < 0) return;
  std::vector<int> chain;
  for (int p = sk_.parent(top); p >= 0 && p != hips; p = sk_.parent(p)) chain.push_back(p);
  if (chain.empty() || sk_.parent(chain.back()) != hips) return;
  std::reverse(chain.begin(), chain.end());
  put("spine", chain[0]);
  if (chain.size() >= 2) put("chest", chain[1]);
  if (chain.size() >= 3) put("upperChest", chain.back());
}

HumanoidGuess Recognizer::run() {
  int hips = pick(Part::Hips, Side::None, -1);
  for (const auto& [side, prefix] :
       {std::pair{Side::Left, "left"}, std::pair{Side::Right, "right"}})
    leg(side, prefix, hips);
  if (hips < 0 && find("leftUpperLeg") >= 0 && find("rightUpperLeg") >= 0)
    hips = lowest_common_ancestor(find("leftUpperLeg"), find("rightUpperLeg"));  // Rigify
  put("hips", hips);
  for (const auto& [side, prefix] :
       {std::pair{Side::Left, "left"}, std::pair{Side::Right, "right"}})
    arm(side, prefix, hips);
  head_and_neck(hips);
  spine_chain(hips);
  if (const int head = find("head"); head >= 0) {
    put("jaw", pick(Part::Jaw, Side::None, head, true));
    put("leftEye", pick(Part::Eye, Side::Left, head, true));
    put("rightEye", pick(Part::Eye, Side::Right, head, true));
  }
  HumanoidGuess g;
  for (const auto& [bone, joint] : found_) g.map.bones.emplace_back(bone, joint);
  std::sort(g.map.bones.begin(), g.map.bones.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const std::string& b : required_humanoid_bones())
    if (!found_.count(b)) g.missing.push_back(b);
  if (g.missing.empty()) g.scheme = scheme();
  explain_missing(g);
  return g;
}

std::string Recognizer::scheme() const {
  auto name_of = [&](const char* bone) {
    const int j = find(bone);
    return j < 0 ? std::string() : sk_.joint(j).name;
  };
  auto has_prefix = [&](const char* p) {
    for (int j = 0; j < sk_.joint_count(); ++j)
      if (sk_.joint(j).name.rfind(p, 0) == 0) return true;
    return false;
  };
  const std::string hips = name_of("hips"), thigh = name_of("leftUpperLeg");
  const std::vector<std::string> hips_words = humanoid_names::tokenize(hips);
  if (hips.find("mixamorig") != std::string::npos) return "Mixamo";
  if (hips.rfind("CC_Base_", 0) == 0) return "Reallusion CC";
  if (hips.rfind("J_Bip_", 0) == 0) return "VRoid";
  if (hips.rfind("ValveBiped", 0) == 0) return "Valve biped";
  if (hips_words.size() >= 2 && hips_words[0] == "bip") return "3ds Max Biped";
  if (has_prefix("DEF-")) return "Blender Rigify";
  if (hips == "pelvis" && thigh == "thigh_l") return "Unreal mannequin";
  if (thigh == "LeftThigh" && name_of("leftLowerLeg") == "LeftShin") return "Rokoko";
  if (thigh == "UpperLeg_L") return "Bandai Namco / Motive";
  if (hips == "hip" && thigh == "lThigh") return "Daz";
  if (thigh == "LeftUpLeg") return "CMU / MotionBuilder";
  if (thigh == "leftUpperLeg") return "VRM names";
  return "generic names";
}

void Recognizer::explain_missing(HumanoidGuess& g) const {
  if (g.missing.empty()) return;
  const std::string& bone = g.missing.front();
  // The bone before it in its chain: its candidates are the joints below that one.
  static const std::map<std::string, std::string> before = {{"spine", "hips"},
                                                            {"head", "neck"},
                                                            {"leftUpperArm", "leftShoulder"},
                                                            {"leftLowerArm", "leftUpperArm"},
                                                            {"leftHand", "leftLowerArm"},
                                                            {"rightUpperArm", "rightShoulder"},
                                                            {"rightLowerArm", "rightUpperArm"},
                                                            {"rightHand", "rightLowerArm"},
                                                            {"leftLowerLeg", "leftUpperLeg"},
                                                            {"leftFoot", "leftLowerLeg"},
                                                            {"rightLowerLeg", "rightUpperLeg"},
                                                            {"rightFoot", "rightLowerLeg"}};
  constexpr size_t kMax = 8;
  if (const auto it = before.find(bone); it != before.end() && find(it->second) >= 0) {
    const int parent = find(it->second);
    for (int j = parent + 1; j < sk_.joint_count() && g.candidates.size() < kMax; ++j)
      if (is_ancestor(parent, j)) g.candidates.push_back(sk_.joint(j).name);
    g.candidates_seen = "under " + sk_.joint(parent).name;
    return;
  }
  const bool left = bone.rfind("left", 0) == 0, right = bone.rfind("right", 0) == 0;
  const std::string part = left ? bone.substr(4) : right ? bone.substr(5) : bone;
  static const std::map<std::string, Part> parts = {
      {"hips", Part::Hips},         {"spine", Part::Spine},       {"head", Part::Head},
      {"UpperArm", Part::UpperArm}, {"LowerArm", Part::LowerArm}, {"Hand", Part::Hand},
      {"UpperLeg", Part::UpperLeg}, {"LowerLeg", Part::LowerLeg}, {"Foot", Part::Foot}};
  const std::vector<std::string>& words = humanoid_names::words_of(parts.at(part));
  const Side side = left ? Side::Left : right ? Side::Right : Side::None;
  for (int j = 0; j < sk_.joint_count() && g.candidates.size() < kMax; ++j) {
    const Side s = info_[static_cast<size_t>(j)].side;
    if (side != Side::None && s != side && s != Side::None) continue;
    for (const std::string& t : humanoid_names::tokenize(sk_.joint(j).name))
      if (std::find(words.begin(), words.end(), t) != words.end()) {
        g.candidates.push_back(sk_.joint(j).name);
        break;
      }
  }
  g.candidates_seen = "with";
  for (size_t k = 0; k < words.size(); ++k)
    g.candidates_seen += (k == 0 ? " " : k + 1 == words.size() ? " or " : ", ") + words[k];
  g.candidates_seen += " in the name";
}

/// "leftLowerLeg" → "left lower leg".
std::string spoken(const std::string& bone) {
  std::string s;
  for (char c : bone) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      s += ' ';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    s += c;
  }
  return s;
}

}  // namespace

const std::vector<std::string>& vrm_humanoid_bones() {
  static const std::vector<std::string> bones = [] {
    std::vector<std::string> b = {"hips", "spine",   "chest",    "upperChest", "neck",
                                  "head", "leftEye", "rightEye", "jaw"};
    for (const std::string side : {"left", "right"})
      for (const char* p : {"UpperLeg", "LowerLeg", "Foot", "Toes"}) b.push_back(side + p);
    for (const std::string side : {"left", "right"})
      for (const char* p : {"Shoulder", "UpperArm", "LowerArm", "Hand"}) b.push_back(side + p);
    for (const std::string side : {"left", "right"})
      for (int f = 0; f < 5; ++f)
        for (int s = 0; s < 3; ++s) b.push_back(side + humanoid_names::finger_bone(f, s));
    return b;
  }();
  return bones;
}

const std::vector<std::string>& required_humanoid_bones() {
  static const std::vector<std::string> bones = {
      "hips",         "spine",         "head",          "leftUpperArm",  "leftLowerArm",
      "leftHand",     "rightUpperArm", "rightLowerArm", "rightHand",     "leftUpperLeg",
      "leftLowerLeg", "leftFoot",      "rightUpperLeg", "rightLowerLeg", "rightFoot"};
  return bones;
}

HumanoidGuess recognize_humanoid(const Skeleton& skeleton) { return Recognizer(skeleton).run(); }

std::optional<Humanoid> guess_humanoid(const Skeleton& skeleton) {
  HumanoidGuess g = recognize_humanoid(skeleton);
  if (!g.complete()) return std::nullopt;
  return std::move(g.map);
}

std::optional<Humanoid> humanoid_of(const Asset& asset, bool* guessed) {
  if (guessed) *guessed = false;
  if (asset.humanoid && !asset.humanoid->bones.empty()) return asset.humanoid;
  std::optional<Humanoid> h = guess_humanoid(asset.skeleton);
  if (h && guessed) *guessed = true;
  return h;
}

Humanoid require_humanoid(const Asset& asset, const std::string& file,
                          const std::string& map_json) {
  if (!map_json.empty()) return read_humanoid_map(map_json, asset.skeleton);
  if (asset.humanoid && !asset.humanoid->bones.empty()) return *asset.humanoid;
  HumanoidGuess g = recognize_humanoid(asset.skeleton);
  if (g.complete()) return std::move(g.map);
  throw Error(file, g.missing.front(),
              "no humanoid: " + describe_missing(g) +
                  ". Map the bones by hand in a JSON file of VRM bone → joint name (--map "
                  "MAP.json, see docs/retarget.md)");
}

std::string describe_missing(const HumanoidGuess& g) {
  if (g.missing.empty()) return {};
  const std::string& bone = g.missing.front();
  std::string s = "no " + spoken(bone) + " (" + bone + ")";
  if (g.candidates.empty()) return s + "; no joint " + g.candidates_seen;
  s += "; candidates seen " + g.candidates_seen + ": ";
  for (size_t k = 0; k < g.candidates.size(); ++k) s += (k ? ", " : "") + g.candidates[k];
  return s;
}

}  // namespace kinema
