// kinema/skin/arkit.h — Apple ARKit's 52 face blendshape coefficients, their nearest FACS action
// units, and a mapper from a mesh's morph-target names to them.
//
// ARKit face tracking outputs 52 named coefficients from 0 (neutral) to 1 (maximum), e.g. jawOpen
// or eyeBlinkLeft ("Left" is the subject's left). arkit_blendshapes() lists them in Apple's order
// (ARFaceAnchor.BlendShapeLocation, grouped eyes, jaw, mouth, brows, cheeks, nose, tongue) with
// the FACS action unit(s) each is closest to; docs/faces.md has the table. Several have no single
// AU (mouthClose, mouthLeft/Right, mouthShrugUpper): their `facs` is empty.
//
// Name matching (map_morphs_to_arkit): a morph target name matches an ARKit name when, after
//  1. dropping everything up to the last '.', '|' or ':' ("blendShape1.eyeBlinkLeft",
//     "Face.jawOpen", "Body|mouthSmileLeft"),
//  2. dropping one known prefix: "a_", "arkit_", "arkit-", "bs_", "blendshape_" (any case),
//  3. turning a "_l"/"_r" suffix into "left"/"right" (ARKit's raw strings such as "eyeBlink_L"),
//  4. removing '_', '-' and ' ' and ignoring case,
// the two spellings are equal. A name that matches no ARKit name may be a VRM expression preset
// (VRM 1.0 or 0.x spelling, compared after the same steps 1–4, so "blink_l", "Blink_L",
// "blinkLeft" and "blink_left" are one name); those that have an ARKit counterpart map to one or
// two shapes:
//   blink → eyeBlinkLeft + eyeBlinkRight; blinkLeft / blink_l → eyeBlinkLeft;
//   blinkRight / blink_r → eyeBlinkRight; aa / a / ah → jawOpen; oh / o → mouthFunnel;
//   ou / u / uu → mouthPucker; ee / e → mouthStretchLeft + mouthStretchRight;
//   happy / joy → mouthSmileLeft + mouthSmileRight; sad / sorrow → mouthFrownLeft +
//   mouthFrownRight; angry → browDownLeft + browDownRight; surprised → eyeWideLeft + eyeWideRight;
//   lookUp → eyeLookUpLeft + eyeLookUpRight; lookDown → eyeLookDownLeft + eyeLookDownRight;
//   lookLeft → eyeLookOutLeft + eyeLookInRight; lookRight → eyeLookInLeft + eyeLookOutRight.
// ih / i, relaxed, fun, neutral have no ARKit counterpart and stay unmapped. Driving such a
// target from ARKit coefficients uses the mean of its shapes (blink = (blinkL + blinkR) / 2).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kinema {

inline constexpr int kArkitShapeCount = 52;

/// One ARKit blendshape coefficient.
struct ArkitShapeInfo {
  std::string_view name;  ///< Apple's spelling, e.g. "eyeBlinkLeft"
  std::string_view facs;  ///< nearest FACS action unit(s), e.g. "AU45"; empty when none
  std::string_view what;  ///< a few words on the motion
};

/// The 52 coefficients in Apple's order (index = ARKit index used below).
std::span<const ArkitShapeInfo> arkit_blendshapes();

/// Index of an exact ARKit name (case-sensitive, Apple's spelling), or -1.
int arkit_index(std::string_view name);

/// Index of the ARKit shape a morph-target name matches with the rules above (not VRM presets),
/// or -1.
int match_arkit_name(std::string_view morph_name);

/// The ARKit shapes of one morph target: none, one (a direct match) or two (a VRM preset such as
/// blink).
struct ArkitBinding {
  std::array<int, 2> arkit{-1, -1};
  int count = 0;
  bool from_vrm_preset = false;  ///< matched a VRM expression preset rather than an ARKit name
};

/// Per morph target (same order as `morph_names`), its ARKit shapes.
struct ArkitMapping {
  std::vector<ArkitBinding> targets;
  /// Number of morph targets with at least one ARKit shape.
  size_t mapped_count() const;
  /// The first morph target bound to ARKit shape `arkit` (directly or through a preset), or -1.
  int target_of(int arkit) const;
};

ArkitMapping map_morphs_to_arkit(std::span<const std::string> morph_names);

/// Runtime: morph-target weights from 52 ARKit coefficients: each mapped target gets the mean of
/// its shapes' coefficients, unmapped targets get 0. Returns false (writing nothing) when
/// arkit.size() != 52 or out.size() != mapping.targets.size(). Never allocates.
bool arkit_to_morph_weights(const ArkitMapping& mapping, std::span<const float> arkit,
                            std::span<float> out);

}  // namespace kinema
