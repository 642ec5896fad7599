// FACS combination shapes (docs/worked_examples.md, "Faces"), ARKit's 52 coefficients and the
// morph-name mapper, on synthetic names and on Godette's real face targets.
#include "kinema/skin/facs.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skin/arkit.h"
#include "kinema/skin/blend_shapes.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

TEST(Facs, CombinationWeightIsTheProductOfItsDrivers) {
  FacsRig rig({"AU12", "AU26", "AU6"});
  EXPECT_EQ(rig.add_combination("AU12_AU26", {"AU12", "AU26"}), 0);
  const std::vector<std::pair<std::string, float>> smile_jaw{{"AU12", 0.8f}, {"AU26", 0.5f}};
  const std::vector<float> w = rig.evaluate(smile_jaw);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_FLOAT_EQ(w[0], 0.8f);
  EXPECT_FLOAT_EQ(w[1], 0.5f);
  EXPECT_FLOAT_EQ(w[2], 0.0f);
  EXPECT_NEAR(w[3], 0.4f, 1e-7f);  // 0.8 · 0.5
  // Either off → 0; both full → 1.
  const std::vector<std::pair<std::string, float>> one_off{{"AU12", 0.8f}};
  EXPECT_EQ(rig.evaluate(one_off)[3], 0.0f);
  const std::vector<std::pair<std::string, float>> full{{"AU12", 1.0f}, {"AU26", 1.0f}};
  EXPECT_EQ(rig.evaluate(full)[3], 1.0f);
}

TEST(Facs, TripletsAndClampedDrivers) {
  FacsRig rig({"AU1", "AU2", "AU4", "AU12", "AU26"});
  rig.add_combination("AU12_AU26", {"AU12", "AU26"});
  rig.add_combination("AU1_AU2_AU4", {"AU1", "AU2", "AU4"});
  EXPECT_EQ(rig.shape_count(), 7u);
  EXPECT_EQ(rig.find("AU1_AU2_AU4"), 6);
  EXPECT_EQ(rig.find("AU26"), 4);
  EXPECT_EQ(rig.find("nope"), -1);
  std::vector<float> out(7);
  const std::vector<float> base{0.5f, 0.4f, 0.25f, 1.7f, -0.3f};
  ASSERT_TRUE(rig.evaluate(base, out));
  EXPECT_FLOAT_EQ(out[3], 1.7f);  // bases pass through unclamped
  EXPECT_EQ(out[5], 0.0f);        // negative driver clamps to 0
  EXPECT_NEAR(out[6], 0.5f * 0.4f * 0.25f, 1e-7f);
  const std::vector<float> base2{1, 1, 1, 1.7f, 0.6f};
  ASSERT_TRUE(rig.evaluate(base2, out));
  EXPECT_NEAR(out[5], 0.6f, 1e-7f);  // 1.7 clamps to 1
  EXPECT_EQ(out[6], 1.0f);
}

TEST(Facs, CombinationWeightPropertiesOnRandomWeights) {
  FacsRig rig({"a", "b", "c"});
  rig.add_combination("ab", {"a", "b"});
  rig.add_combination("abc", {"a", "b", "c"});
  std::vector<float> out(5);
  for (int i = 0; i <= 10; ++i)
    for (int j = 0; j <= 10; ++j) {
      const std::vector<float> base{i / 10.0f, j / 10.0f, 0.5f};
      ASSERT_TRUE(rig.evaluate(base, out));
      EXPECT_GE(out[3], 0.0f);
      EXPECT_LE(out[3], std::min(base[0], base[1]) + 1e-7f);  // never above its weakest driver
      EXPECT_NEAR(out[4], out[3] * 0.5f, 1e-7f);
    }
}

TEST(Facs, BadRigsAndWeights) {
  EXPECT_THROW(FacsRig({"a", "a"}), Error);
  EXPECT_THROW(FacsRig({"a", ""}), Error);
  FacsRig rig({"a", "b", "c", "d"});
  EXPECT_THROW(rig.add_combination("x", {"a"}), Error);
  EXPECT_THROW(rig.add_combination("x", {"a", "b", "c", "d"}), Error);
  EXPECT_THROW(rig.add_combination("x", {"a", "zz"}), Error);
  EXPECT_THROW(rig.add_combination("x", {"a", "a"}), Error);
  EXPECT_THROW(rig.add_combination("a", {"b", "c"}), Error);
  rig.add_combination("bc", {"b", "c"});
  EXPECT_THROW(rig.add_combination("bc", {"a", "c"}), Error);
  EXPECT_THROW(rig.add_combination("x", {"a", "bc"}), Error);  // drivers are base shapes only
  const std::vector<std::pair<std::string, float>> unknown{{"q", 1.0f}};
  EXPECT_THROW(rig.evaluate(unknown), Error);
  const std::vector<std::pair<std::string, float>> nan{{"a", std::nanf("")}};
  EXPECT_THROW(rig.evaluate(nan), Error);
  std::vector<float> out(5, 9.0f);
  const std::vector<float> three{1, 1, 1};
  EXPECT_FALSE(rig.evaluate(three, out));
  for (float v : out) EXPECT_EQ(v, 9.0f);
  const std::vector<float> four{1, 1, 1, 1};
  std::vector<float> short_out(4);
  EXPECT_FALSE(rig.evaluate(four, short_out));
  CombinationShape broken;
  broken.driver_count = 2;
  broken.drivers = {0, 7, -1};
  EXPECT_EQ(combination_weight(four, broken), 0.0f);
}

// ---- ARKit ------------------------------------------------------------------------------------

TEST(Arkit, TheOfficial52NamesInAppleOrder) {
  const std::vector<std::string> apple{
      "eyeBlinkLeft",      "eyeLookDownLeft",    "eyeLookInLeft",
      "eyeLookOutLeft",    "eyeLookUpLeft",      "eyeSquintLeft",
      "eyeWideLeft",       "eyeBlinkRight",      "eyeLookDownRight",
      "eyeLookInRight",    "eyeLookOutRight",    "eyeLookUpRight",
      "eyeSquintRight",    "eyeWideRight",       "jawForward",
      "jawLeft",           "jawRight",           "jawOpen",
      "mouthClose",        "mouthFunnel",        "mouthPucker",
      "mouthLeft",         "mouthRight",         "mouthSmileLeft",
      "mouthSmileRight",   "mouthFrownLeft",     "mouthFrownRight",
      "mouthDimpleLeft",   "mouthDimpleRight",   "mouthStretchLeft",
      "mouthStretchRight", "mouthRollLower",     "mouthRollUpper",
      "mouthShrugLower",   "mouthShrugUpper",    "mouthPressLeft",
      "mouthPressRight",   "mouthLowerDownLeft", "mouthLowerDownRight",
      "mouthUpperUpLeft",  "mouthUpperUpRight",  "browDownLeft",
      "browDownRight",     "browInnerUp",        "browOuterUpLeft",
      "browOuterUpRight",  "cheekPuff",          "cheekSquintLeft",
      "cheekSquintRight",  "noseSneerLeft",      "noseSneerRight",
      "tongueOut"};
  const auto shapes = arkit_blendshapes();
  ASSERT_EQ(shapes.size(), 52u);
  ASSERT_EQ(apple.size(), 52u);
  std::set<std::string> unique;
  for (size_t i = 0; i < 52; ++i) {
    EXPECT_EQ(shapes[i].name, apple[i]);
    unique.insert(std::string(shapes[i].name));
    EXPECT_EQ(arkit_index(apple[i]), int(i));
    EXPECT_EQ(match_arkit_name(apple[i]), int(i));
    EXPECT_FALSE(shapes[i].what.empty());
    if (!shapes[i].facs.empty()) {
      EXPECT_EQ(shapes[i].facs.substr(0, 2), "AU") << apple[i];
    }
  }
  EXPECT_EQ(unique.size(), 52u);
  EXPECT_EQ(arkit_index("eyeblinkleft"), -1);  // arkit_index is exact
}

TEST(Arkit, ShapesMapToTheirNearestFacsActionUnits) {
  EXPECT_EQ(arkit_blendshapes()[size_t(arkit_index("mouthSmileLeft"))].facs, "AU12");
  EXPECT_EQ(arkit_blendshapes()[size_t(arkit_index("jawOpen"))].facs, "AU26");
  EXPECT_EQ(arkit_blendshapes()[size_t(arkit_index("eyeBlinkRight"))].facs, "AU45");
  EXPECT_EQ(arkit_blendshapes()[size_t(arkit_index("browInnerUp"))].facs, "AU1");
  EXPECT_EQ(arkit_blendshapes()[size_t(arkit_index("mouthClose"))].facs, "");
  // Left/right pairs share their AU.
  for (const ArkitShapeInfo& s : arkit_blendshapes()) {
    std::string name(s.name);
    if (name.size() > 4 && name.ends_with("Left")) {
      const int r = arkit_index(name.substr(0, name.size() - 4) + "Right");
      ASSERT_GE(r, 0) << name;
      if (name.rfind("eyeLook", 0) != 0) {
        EXPECT_EQ(arkit_blendshapes()[size_t(r)].facs, s.facs) << name;
      }
    }
  }
}

TEST(Arkit, NameMatchingIgnoresCasePrefixesAndSideSuffixes) {
  EXPECT_EQ(match_arkit_name("blendShape1.eyeBlinkLeft"), arkit_index("eyeBlinkLeft"));
  EXPECT_EQ(match_arkit_name("Face.JAWOPEN"), arkit_index("jawOpen"));
  EXPECT_EQ(match_arkit_name("A_mouthSmileLeft"), arkit_index("mouthSmileLeft"));
  EXPECT_EQ(match_arkit_name("eyeBlink_L"), arkit_index("eyeBlinkLeft"));
  EXPECT_EQ(match_arkit_name("Body|mouthSmile_R"), arkit_index("mouthSmileRight"));
  EXPECT_EQ(match_arkit_name("ARKit_tongueOut"), arkit_index("tongueOut"));
  EXPECT_EQ(match_arkit_name("head:cheek_puff"), arkit_index("cheekPuff"));
  EXPECT_EQ(match_arkit_name("eyeBlink"), -1);
  EXPECT_EQ(match_arkit_name("blink"), -1);  // a VRM preset, not an ARKit name
  EXPECT_EQ(match_arkit_name(""), -1);
  EXPECT_EQ(match_arkit_name("Face."), -1);
}

TEST(Arkit, VrmPresetsMapToOneOrTwoShapes) {
  const std::vector<std::string> names{"blink",    "Blink_L", "blinkRight", "aa",      "happy",
                                       "lookLeft", "ih",      "neutral",    "jawOpen", "Fcl.oh"};
  const ArkitMapping map = map_morphs_to_arkit(names);
  ASSERT_EQ(map.targets.size(), names.size());
  auto shapes = [&](size_t t) {
    std::vector<std::string> out;
    for (int k = 0; k < map.targets[t].count; ++k)
      out.emplace_back(arkit_blendshapes()[size_t(map.targets[t].arkit[size_t(k)])].name);
    return out;
  };
  EXPECT_EQ(shapes(0), (std::vector<std::string>{"eyeBlinkLeft", "eyeBlinkRight"}));
  EXPECT_EQ(shapes(1), (std::vector<std::string>{"eyeBlinkLeft"}));
  EXPECT_EQ(shapes(2), (std::vector<std::string>{"eyeBlinkRight"}));
  EXPECT_EQ(shapes(3), (std::vector<std::string>{"jawOpen"}));
  EXPECT_EQ(shapes(4), (std::vector<std::string>{"mouthSmileLeft", "mouthSmileRight"}));
  EXPECT_EQ(shapes(5), (std::vector<std::string>{"eyeLookOutLeft", "eyeLookInRight"}));
  EXPECT_TRUE(shapes(6).empty());
  EXPECT_TRUE(shapes(7).empty());
  EXPECT_EQ(shapes(8), (std::vector<std::string>{"jawOpen"}));
  EXPECT_FALSE(map.targets[8].from_vrm_preset);
  EXPECT_TRUE(map.targets[3].from_vrm_preset);
  EXPECT_EQ(shapes(9), (std::vector<std::string>{"mouthFunnel"}));
  EXPECT_EQ(map.mapped_count(), 8u);
  EXPECT_EQ(map.target_of(arkit_index("jawOpen")), 3);  // the first one bound
  EXPECT_EQ(map.target_of(arkit_index("tongueOut")), -1);
}

/// Godette's morph-target names, from the VRM's glTF JSON (primitive extras.targetNames).
std::vector<std::string> godette_target_names() {
  const std::string glb = read_file(kData + "/vrm/Godette_vrm_v4.vrm");
  const uint32_t len = uint32_t(uint8_t(glb[12])) | uint32_t(uint8_t(glb[13])) << 8 |
                       uint32_t(uint8_t(glb[14])) << 16 | uint32_t(uint8_t(glb[15])) << 24;
  const auto j = nlohmann::json::parse(glb.substr(20, len));
  for (const auto& mesh : j.at("meshes"))
    for (const auto& prim : mesh.at("primitives"))
      if (prim.contains("extras") && prim["extras"].contains("targetNames"))
        return prim["extras"]["targetNames"].get<std::vector<std::string>>();
  return {};
}

TEST(Arkit, GodetteFaceTargetsDrivenByArkitCoefficients) {
  const std::vector<std::string> names = godette_target_names();
  ASSERT_EQ(names.size(), 15u);
  const ArkitMapping map = map_morphs_to_arkit(names);
  // blink_left, blink_right, ah, uu, ee, oh, look_up/down/left/right; ih, the Hide* toggles and
  // angled_eyebrows have no ARKit counterpart.
  EXPECT_EQ(map.mapped_count(), 10u);
  const int blink_left = map.target_of(arkit_index("eyeBlinkLeft"));
  const int ah = map.target_of(arkit_index("jawOpen"));
  ASSERT_GE(blink_left, 0);
  ASSERT_GE(ah, 0);
  EXPECT_EQ(names[size_t(blink_left)], "blink_left");
  EXPECT_EQ(names[size_t(ah)], "ah");
  std::vector<float> arkit(52, 0.0f), weights(15, -1.0f);
  arkit[size_t(arkit_index("eyeBlinkLeft"))] = 1.0f;
  arkit[size_t(arkit_index("jawOpen"))] = 0.7f;
  arkit[size_t(arkit_index("eyeLookUpLeft"))] = 0.2f;
  arkit[size_t(arkit_index("eyeLookUpRight"))] = 0.4f;
  ASSERT_TRUE(arkit_to_morph_weights(map, arkit, weights));
  EXPECT_EQ(weights[size_t(blink_left)], 1.0f);
  EXPECT_FLOAT_EQ(weights[size_t(ah)], 0.7f);
  const int look_up = map.target_of(arkit_index("eyeLookUpLeft"));
  EXPECT_EQ(names[size_t(look_up)], "look_up");
  EXPECT_FLOAT_EQ(weights[size_t(look_up)], 0.3f);  // mean of the two eyes
  int nonzero = 0;
  for (float w : weights) nonzero += w != 0.0f ? 1 : 0;
  EXPECT_EQ(nonzero, 3);
  // Those weights drive the real mesh: the jaw target moves vertices.
  const Asset a = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  const Mesh* face = nullptr;
  for (const Mesh& m : a.meshes)
    if (m.morph_targets.size() == 15) face = &m;
  ASSERT_NE(face, nullptr);
  const BlendShapeSet set = make_blend_shape_set(*face);
  std::vector<Vec3f> p(face->vertex_count());
  ASSERT_TRUE(apply_blend_shapes(set, face->positions, {}, weights, p, {}));
  size_t moved = 0;
  for (size_t i = 0; i < p.size(); ++i) moved += distance(p[i], face->positions[i]) > 1e-5f;
  EXPECT_GE(moved, set.targets[size_t(ah)].vertices.size() / 2);
  // Bad sizes.
  std::vector<float> short_arkit(51);
  EXPECT_FALSE(arkit_to_morph_weights(map, short_arkit, weights));
  std::vector<float> short_out(14);
  EXPECT_FALSE(arkit_to_morph_weights(map, arkit, short_out));
}

TEST(Arkit, FacsRigOverArkitNames) {
  // The AU12 + AU26 combination on an ARKit-named rig: smile × jawOpen.
  std::vector<std::string> names;
  for (const ArkitShapeInfo& s : arkit_blendshapes()) names.emplace_back(s.name);
  FacsRig rig(names);
  rig.add_combination("mouthSmileLeft_jawOpen", {"mouthSmileLeft", "jawOpen"});
  std::vector<float> base(52, 0.0f), out(53);
  base[size_t(arkit_index("mouthSmileLeft"))] = 0.8f;
  base[size_t(arkit_index("jawOpen"))] = 0.5f;
  ASSERT_TRUE(rig.evaluate(base, out));
  EXPECT_NEAR(out[52], 0.4f, 1e-7f);
}

}  // namespace
}  // namespace kinema
