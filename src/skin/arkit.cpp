// ARKit's 52 face coefficients, their FACS action units and a morph-name mapper.
#include "kinema/skin/arkit.h"

#include <cctype>
#include <string>

namespace kinema {

namespace {

// Apple's order (ARFaceAnchor.BlendShapeLocation). FACS: the nearest action unit(s) (Ekman,
// Friesen & Hager 2002 numbering: AU61–AU64 eye turns, AU45 blink, AU19 tongue show…).
constexpr std::array<ArkitShapeInfo, kArkitShapeCount> kShapes{{
    {"eyeBlinkLeft", "AU45", "left eyelid closes"},
    {"eyeLookDownLeft", "AU64", "left eye looks down"},
    {"eyeLookInLeft", "AU62", "left eye looks toward the nose (to the right)"},
    {"eyeLookOutLeft", "AU61", "left eye looks outward (to the left)"},
    {"eyeLookUpLeft", "AU63", "left eye looks up"},
    {"eyeSquintLeft", "AU44", "left eye squints"},
    {"eyeWideLeft", "AU5", "left upper lid raises"},
    {"eyeBlinkRight", "AU45", "right eyelid closes"},
    {"eyeLookDownRight", "AU64", "right eye looks down"},
    {"eyeLookInRight", "AU61", "right eye looks toward the nose (to the left)"},
    {"eyeLookOutRight", "AU62", "right eye looks outward (to the right)"},
    {"eyeLookUpRight", "AU63", "right eye looks up"},
    {"eyeSquintRight", "AU44", "right eye squints"},
    {"eyeWideRight", "AU5", "right upper lid raises"},
    {"jawForward", "AU29", "jaw thrusts forward"},
    {"jawLeft", "AU30", "jaw moves to the left"},
    {"jawRight", "AU30", "jaw moves to the right"},
    {"jawOpen", "AU26", "jaw drops"},
    {"mouthClose", "", "lips close while the jaw is open"},
    {"mouthFunnel", "AU22", "lips funnel"},
    {"mouthPucker", "AU18", "lips pucker"},
    {"mouthLeft", "", "both lips move to the left"},
    {"mouthRight", "", "both lips move to the right"},
    {"mouthSmileLeft", "AU12", "left lip corner pulls up"},
    {"mouthSmileRight", "AU12", "right lip corner pulls up"},
    {"mouthFrownLeft", "AU15", "left lip corner pulls down"},
    {"mouthFrownRight", "AU15", "right lip corner pulls down"},
    {"mouthDimpleLeft", "AU14", "left lip corner tightens backward"},
    {"mouthDimpleRight", "AU14", "right lip corner tightens backward"},
    {"mouthStretchLeft", "AU20", "left lip corner stretches sideways"},
    {"mouthStretchRight", "AU20", "right lip corner stretches sideways"},
    {"mouthRollLower", "AU28", "lower lip rolls in"},
    {"mouthRollUpper", "AU28", "upper lip rolls in"},
    {"mouthShrugLower", "AU17", "lower lip pushes up (chin raiser)"},
    {"mouthShrugUpper", "", "upper lip pushes up"},
    {"mouthPressLeft", "AU24", "left side of the lips presses together"},
    {"mouthPressRight", "AU24", "right side of the lips presses together"},
    {"mouthLowerDownLeft", "AU16", "left lower lip pulls down"},
    {"mouthLowerDownRight", "AU16", "right lower lip pulls down"},
    {"mouthUpperUpLeft", "AU10", "left upper lip raises"},
    {"mouthUpperUpRight", "AU10", "right upper lip raises"},
    {"browDownLeft", "AU4", "left brow lowers"},
    {"browDownRight", "AU4", "right brow lowers"},
    {"browInnerUp", "AU1", "inner brows raise"},
    {"browOuterUpLeft", "AU2", "left outer brow raises"},
    {"browOuterUpRight", "AU2", "right outer brow raises"},
    {"cheekPuff", "AU34", "cheeks puff out"},
    {"cheekSquintLeft", "AU6", "left cheek raises"},
    {"cheekSquintRight", "AU6", "right cheek raises"},
    {"noseSneerLeft", "AU9", "left side of the nose wrinkles"},
    {"noseSneerRight", "AU9", "right side of the nose wrinkles"},
    {"tongueOut", "AU19", "tongue shows"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Steps 1 and 2 of the matching rules, lower-cased.
std::string strip_prefixes(std::string_view name) {
  const size_t cut = name.find_last_of(".|:");
  if (cut != std::string_view::npos) name = name.substr(cut + 1);
  std::string s = lower(name);
  for (std::string_view p : {"arkit_", "arkit-", "blendshape_", "bs_", "a_"})
    if (s.size() > p.size() && s.compare(0, p.size(), p) == 0) {
      s.erase(0, p.size());
      break;
    }
  return s;
}

/// Steps 3 and 4 on an already lower-cased name.
std::string squash(std::string s) {
  if (s.size() > 2 && s[s.size() - 2] == '_' && (s.back() == 'l' || s.back() == 'r'))
    s = s.substr(0, s.size() - 2) + (s.back() == 'l' ? "left" : "right");
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ') out += c;
  return out;
}

struct Preset {
  std::string_view name;  // squashed: lower case, no '_', '-' or ' '
  std::string_view a, b;  // ARKit names; b may be empty
};

constexpr Preset kPresets[] = {
    {"blink", "eyeBlinkLeft", "eyeBlinkRight"},
    {"blinkleft", "eyeBlinkLeft", ""},
    {"blinkright", "eyeBlinkRight", ""},
    {"aa", "jawOpen", ""},
    {"a", "jawOpen", ""},
    {"ah", "jawOpen", ""},
    {"oh", "mouthFunnel", ""},
    {"o", "mouthFunnel", ""},
    {"ou", "mouthPucker", ""},
    {"u", "mouthPucker", ""},
    {"uu", "mouthPucker", ""},
    {"ee", "mouthStretchLeft", "mouthStretchRight"},
    {"e", "mouthStretchLeft", "mouthStretchRight"},
    {"happy", "mouthSmileLeft", "mouthSmileRight"},
    {"joy", "mouthSmileLeft", "mouthSmileRight"},
    {"sad", "mouthFrownLeft", "mouthFrownRight"},
    {"sorrow", "mouthFrownLeft", "mouthFrownRight"},
    {"angry", "browDownLeft", "browDownRight"},
    {"surprised", "eyeWideLeft", "eyeWideRight"},
    {"lookup", "eyeLookUpLeft", "eyeLookUpRight"},
    {"lookdown", "eyeLookDownLeft", "eyeLookDownRight"},
    {"lookleft", "eyeLookOutLeft", "eyeLookInRight"},
    {"lookright", "eyeLookInLeft", "eyeLookOutRight"},
};

}  // namespace

std::span<const ArkitShapeInfo> arkit_blendshapes() { return kShapes; }

int arkit_index(std::string_view name) {
  for (size_t i = 0; i < kShapes.size(); ++i)
    if (kShapes[i].name == name) return static_cast<int>(i);
  return -1;
}

int match_arkit_name(std::string_view morph_name) {
  const std::string key = squash(strip_prefixes(morph_name));
  if (key.empty()) return -1;
  for (size_t i = 0; i < kShapes.size(); ++i)
    if (squash(lower(kShapes[i].name)) == key) return static_cast<int>(i);
  return -1;
}

size_t ArkitMapping::mapped_count() const {
  size_t n = 0;
  for (const ArkitBinding& b : targets) n += b.count > 0 ? 1 : 0;
  return n;
}

int ArkitMapping::target_of(int arkit) const {
  for (size_t t = 0; t < targets.size(); ++t)
    for (int k = 0; k < targets[t].count; ++k)
      if (targets[t].arkit[static_cast<size_t>(k)] == arkit) return static_cast<int>(t);
  return -1;
}

ArkitMapping map_morphs_to_arkit(std::span<const std::string> morph_names) {
  ArkitMapping mapping;
  mapping.targets.resize(morph_names.size());
  for (size_t t = 0; t < morph_names.size(); ++t) {
    ArkitBinding& b = mapping.targets[t];
    if (const int i = match_arkit_name(morph_names[t]); i >= 0) {
      b.arkit[0] = i;
      b.count = 1;
      continue;
    }
    const std::string key = squash(strip_prefixes(morph_names[t]));
    for (const Preset& p : kPresets)
      if (key == p.name) {
        b.arkit[0] = arkit_index(p.a);
        b.count = 1;
        if (!p.b.empty()) {
          b.arkit[1] = arkit_index(p.b);
          b.count = 2;
        }
        b.from_vrm_preset = true;
        break;
      }
  }
  return mapping;
}

bool arkit_to_morph_weights(const ArkitMapping& mapping, std::span<const float> arkit,
                            std::span<float> out) {
  if (arkit.size() != static_cast<size_t>(kArkitShapeCount) || out.size() != mapping.targets.size())
    return false;
  for (size_t t = 0; t < out.size(); ++t) {
    const ArkitBinding& b = mapping.targets[t];
    float sum = 0.0f;
    int n = 0;
    for (int k = 0; k < b.count; ++k) {
      const int i = b.arkit[static_cast<size_t>(k)];
      if (i < 0 || i >= kArkitShapeCount) continue;
      sum += arkit[static_cast<size_t>(i)];
      ++n;
    }
    out[t] = n > 0 ? sum / static_cast<float>(n) : 0.0f;
  }
  return true;
}

}  // namespace kinema
