// VRM 0.x → 1.0 migration of spring bones, expressions, firstPerson and lookAt (vrm_migrate.cpp),
// and VRM 1.0 → 1.0 round trips keeping those extensions unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "kinema/io/gltf.h"
// The private document type and migrate_vrm0, to look at extensions kinema does not model.
#include "../../src/io/gltf_internal.h"
#include "test_paths.h"

namespace kinema {
namespace {

using Value = tinygltf::Value;
using nlohmann::json;

const std::string kVrm = test_paths::data_dir() + "/vrm/";

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_vrm_migrate_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// The JSON chunk of a GLB/VRM file, parsed.
json glb_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 20u) << path;
  uint32_t length = 0;
  std::memcpy(&length, bytes.data() + 12, 4);
  return json::parse(bytes.substr(20, length));
}

Value json_to_value(const json& j) {
  if (j.is_object()) {
    Value::Object o;
    for (const auto& [k, v] : j.items()) o[k] = json_to_value(v);
    return Value(std::move(o));
  }
  if (j.is_array()) {
    Value::Array a;
    for (const auto& v : j) a.push_back(json_to_value(v));
    return Value(std::move(a));
  }
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<int>());
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  return Value();
}

Value json_to_value(const char* text) { return json_to_value(json::parse(text)); }

/// `j` without empty objects, empty arrays and nulls (recursively): tinygltf's JSON → Value
/// parse drops those, so `"custom": {}` or `"firstPerson": {}` (all optional in VRM 1.0, so
/// meaning the same as absent) do not survive a round trip.
json pruned(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items())
      if (json p = pruned(v); !p.is_null()) out[k] = std::move(p);
    return out.empty() ? json() : out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j)
      if (json p = pruned(v); !p.is_null()) out.push_back(std::move(p));
    return out.empty() ? json() : out;
  }
  return j;
}

double number(const Value& v, const char* key) { return v.Get(key).GetNumberAsDouble(); }
int integer(const Value& v, const char* key) { return v.Get(key).GetNumberAsInt(); }

/// Reads Godette (VRM 0.x) and writes it as VRM 1.0; returns {source, output}.
std::pair<Asset, Asset> godette_as_vrm1(const std::string& dir) {
  Asset a = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  write_gltf(a, dir + "/godette1.vrm", {});
  Asset b = read_gltf(dir + "/godette1.vrm");
  return {std::move(a), std::move(b)};
}

TEST(VrmMigrate, Vrm0SpringBonesBecomeVrmcSpringBone) {
  const std::string dir = temp_dir();
  const auto [a, b] = godette_as_vrm1(dir);
  const tinygltf::Model& ma = a.gltf->model;
  const tinygltf::Model& mb = b.gltf->model;
  const Value& sa = ma.extensions.at("VRM").Get("secondaryAnimation");
  ASSERT_TRUE(mb.extensions.count("VRMC_springBone"));
  EXPECT_TRUE(std::count(mb.extensionsUsed.begin(), mb.extensionsUsed.end(), "VRMC_springBone"));
  const Value& sb = mb.extensions.at("VRMC_springBone");
  EXPECT_EQ(sb.Get("specVersion").Get<std::string>(), "1.0");

  // Colliders: one sphere per 0.x collider, on its group's node, offset z flipped (0.x stored
  // Unity coordinates; the local frames are unchanged by the writer's root turn).
  const Value& groups0 = sa.Get("colliderGroups");
  size_t expected_colliders = 0;
  for (size_t g = 0; g < groups0.ArrayLen(); ++g)
    expected_colliders += groups0.Get(static_cast<int>(g)).Get("colliders").ArrayLen();
  ASSERT_GT(expected_colliders, 0u);
  const Value& colliders = sb.Get("colliders");
  ASSERT_EQ(colliders.ArrayLen(), expected_colliders);
  ASSERT_EQ(sb.Get("colliderGroups").ArrayLen(), groups0.ArrayLen());
  int next = 0;
  for (size_t g = 0; g < groups0.ArrayLen(); ++g) {
    const Value& g0 = groups0.Get(static_cast<int>(g));
    const Value& ids = sb.Get("colliderGroups").Get(static_cast<int>(g)).Get("colliders");
    ASSERT_EQ(ids.ArrayLen(), g0.Get("colliders").ArrayLen());
    for (size_t c = 0; c < ids.ArrayLen(); ++c, ++next) {
      ASSERT_EQ(ids.Get(static_cast<int>(c)).GetNumberAsInt(), next);
      const Value& c0 = g0.Get("colliders").Get(static_cast<int>(c));
      const Value& c1 = colliders.Get(next);
      EXPECT_EQ(integer(c1, "node"), integer(g0, "node"));
      const Value& sphere = c1.Get("shape").Get("sphere");
      EXPECT_DOUBLE_EQ(number(sphere, "radius"), number(c0, "radius"));
      const Value& o = sphere.Get("offset");
      EXPECT_DOUBLE_EQ(o.Get(0).GetNumberAsDouble(), number(c0.Get("offset"), "x"));
      EXPECT_DOUBLE_EQ(o.Get(1).GetNumberAsDouble(), number(c0.Get("offset"), "y"));
      EXPECT_DOUBLE_EQ(o.Get(2).GetNumberAsDouble(), -number(c0.Get("offset"), "z"));
    }
  }

  // Springs: every 0.x root whose subtree is a first-child chain (no branches in Godette) gives
  // one spring from the root to its leaf, with the group's parameters.
  std::map<int, int> parent;
  for (size_t n = 0; n < mb.nodes.size(); ++n)
    for (int c : mb.nodes[n].children) parent[c] = static_cast<int>(n);
  const Value& groups = sa.Get("boneGroups");
  const Value& springs = sb.Get("springs");
  int s = 0;
  for (size_t g = 0; g < groups.ArrayLen(); ++g) {
    const Value& bg = groups.Get(static_cast<int>(g));
    for (size_t r = 0; r < bg.Get("bones").ArrayLen(); ++r, ++s) {
      ASSERT_LT(s, static_cast<int>(springs.ArrayLen()));
      std::vector<int> chain{bg.Get("bones").Get(static_cast<int>(r)).GetNumberAsInt()};
      for (;;) {
        const auto& children = ma.nodes[static_cast<size_t>(chain.back())].children;
        ASSERT_LE(children.size(), 1u) << "Godette's spring chains do not branch";
        if (children.empty()) break;
        chain.push_back(children[0]);
      }
      const Value& joints = springs.Get(s).Get("joints");
      ASSERT_EQ(joints.ArrayLen(), chain.size());
      for (size_t k = 0; k < chain.size(); ++k) {
        const Value& j = joints.Get(static_cast<int>(k));
        EXPECT_EQ(integer(j, "node"), chain[k]);
        if (k > 0) {
          EXPECT_EQ(parent[chain[k]], chain[k - 1]);
        }
        EXPECT_DOUBLE_EQ(number(j, "stiffness"), number(bg, "stiffiness"));
        EXPECT_DOUBLE_EQ(number(j, "dragForce"), number(bg, "dragForce"));
        EXPECT_DOUBLE_EQ(number(j, "hitRadius"), number(bg, "hitRadius"));
        EXPECT_DOUBLE_EQ(number(j, "gravityPower"), number(bg, "gravityPower"));
        const Value& dir0 = bg.Get("gravityDir");
        const Value& dir1 = j.Get("gravityDir");  // world space: turned with the model
        EXPECT_DOUBLE_EQ(dir1.Get(0).GetNumberAsDouble(), -number(dir0, "x"));
        EXPECT_DOUBLE_EQ(dir1.Get(1).GetNumberAsDouble(), number(dir0, "y"));
        EXPECT_DOUBLE_EQ(dir1.Get(2).GetNumberAsDouble(), number(dir0, "z"));
      }
      const Value& cg0 = bg.Get("colliderGroups");
      const Value& spring = springs.Get(s);
      if (cg0.ArrayLen() == 0) {
        EXPECT_FALSE(spring.Has("colliderGroups"));  // 1.0 requires ≥ 1 item when present
      } else {
        ASSERT_EQ(spring.Get("colliderGroups").ArrayLen(), cg0.ArrayLen());
        for (size_t k = 0; k < cg0.ArrayLen(); ++k)
          EXPECT_EQ(spring.Get("colliderGroups").Get(static_cast<int>(k)).GetNumberAsInt(),
                    cg0.Get(static_cast<int>(k)).GetNumberAsInt());
      }
      EXPECT_FALSE(spring.Has("center"));  // 0.x center -1: none
    }
  }
  EXPECT_EQ(s, static_cast<int>(springs.ArrayLen()));
  EXPECT_GT(s, 0);
}

TEST(VrmMigrate, Vrm0BlendShapeGroupsBecomeExpressions) {
  const std::string dir = temp_dir();
  const auto [a, b] = godette_as_vrm1(dir);
  const tinygltf::Model& ma = a.gltf->model;
  const tinygltf::Model& mb = b.gltf->model;
  const std::map<std::string, std::string> presets = {{"a", "aa"},
                                                      {"i", "ih"},
                                                      {"u", "ou"},
                                                      {"e", "ee"},
                                                      {"o", "oh"},
                                                      {"joy", "happy"},
                                                      {"angry", "angry"},
                                                      {"sorrow", "sad"},
                                                      {"fun", "relaxed"},
                                                      {"blink", "blink"},
                                                      {"blink_l", "blinkLeft"},
                                                      {"blink_r", "blinkRight"},
                                                      {"lookup", "lookUp"},
                                                      {"lookdown", "lookDown"},
                                                      {"lookleft", "lookLeft"},
                                                      {"lookright", "lookRight"},
                                                      {"neutral", "neutral"},
                                                      {"surprised", "surprised"}};
  const Value& groups = ma.extensions.at("VRM").Get("blendShapeMaster").Get("blendShapeGroups");
  const Value& expressions = mb.extensions.at("VRMC_vrm").Get("expressions");
  ASSERT_TRUE(expressions.Has("preset"));
  const Value& preset = expressions.Get("preset");
  ASSERT_GT(groups.ArrayLen(), 0u);
  EXPECT_EQ(preset.Keys().size(), groups.ArrayLen());  // Godette: 17 distinct presets
  EXPECT_FALSE(expressions.Has("custom"));
  for (size_t g = 0; g < groups.ArrayLen(); ++g) {
    const Value& g0 = groups.Get(static_cast<int>(g));
    const std::string p0 = g0.Get("presetName").Get<std::string>();
    ASSERT_TRUE(presets.count(p0)) << p0;
    const std::string name = presets.at(p0);
    ASSERT_TRUE(preset.Has(name)) << name;
    const Value& e = preset.Get(name);
    EXPECT_EQ(e.Get("isBinary").Get<bool>(), g0.Get("isBinary").Get<bool>()) << name;
    const Value& binds0 = g0.Get("binds");
    if (binds0.ArrayLen() == 0) {
      EXPECT_FALSE(e.Has("morphTargetBinds")) << name;  // 1.0 requires ≥ 1 item when present
      continue;
    }
    // Each 0.x bind (mesh, index, weight 0–100) becomes one bind per node using the mesh.
    std::vector<std::tuple<int, int, double>> expected;
    for (size_t k = 0; k < binds0.ArrayLen(); ++k) {
      const Value& b0 = binds0.Get(static_cast<int>(k));
      for (size_t n = 0; n < ma.nodes.size(); ++n)
        if (ma.nodes[n].mesh == integer(b0, "mesh"))
          expected.emplace_back(static_cast<int>(n), integer(b0, "index"),
                                number(b0, "weight") / 100.0);
    }
    const Value& binds = e.Get("morphTargetBinds");
    ASSERT_EQ(binds.ArrayLen(), expected.size()) << name;
    for (size_t k = 0; k < binds.ArrayLen(); ++k) {
      const Value& b1 = binds.Get(static_cast<int>(k));
      const int node = integer(b1, "node"), index = integer(b1, "index");
      EXPECT_EQ(node, std::get<0>(expected[k])) << name;
      EXPECT_EQ(index, std::get<1>(expected[k])) << name;
      EXPECT_DOUBLE_EQ(number(b1, "weight"), std::get<2>(expected[k])) << name;
      // The bind points at a real morph target of the output.
      ASSERT_GE(node, 0);
      ASSERT_LT(node, static_cast<int>(mb.nodes.size()));
      const int mesh = mb.nodes[static_cast<size_t>(node)].mesh;
      ASSERT_GE(mesh, 0) << name;
      for (const auto& prim : mb.meshes[static_cast<size_t>(mesh)].primitives)
        EXPECT_LT(index, static_cast<int>(prim.targets.size())) << name;
    }
  }
}

TEST(VrmMigrate, Vrm0FirstPersonBecomesFirstPersonAndLookAt) {
  const std::string dir = temp_dir();
  const auto [a, b] = godette_as_vrm1(dir);
  const tinygltf::Model& ma = a.gltf->model;
  const tinygltf::Model& mb = b.gltf->model;
  const Value& fp0 = ma.extensions.at("VRM").Get("firstPerson");
  const Value& vrm = mb.extensions.at("VRMC_vrm");
  const Value& annotations = vrm.Get("firstPerson").Get("meshAnnotations");
  size_t expected = 0;
  for (size_t k = 0; k < fp0.Get("meshAnnotations").ArrayLen(); ++k)
    for (const auto& n : ma.nodes)
      expected += n.mesh == integer(fp0.Get("meshAnnotations").Get(static_cast<int>(k)), "mesh");
  ASSERT_EQ(annotations.ArrayLen(), expected);
  for (size_t k = 0; k < annotations.ArrayLen(); ++k) {
    const Value& an = annotations.Get(static_cast<int>(k));
    EXPECT_GE(mb.nodes[static_cast<size_t>(integer(an, "node"))].mesh, 0);
    EXPECT_EQ(an.Get("type").Get<std::string>(), "auto");  // Godette: "Auto"
  }
  const Value& look = vrm.Get("lookAt");
  EXPECT_EQ(look.Get("type").Get<std::string>(), "expression");  // 0.x "BlendShape"
  const Value& off0 = fp0.Get("firstPersonBoneOffset");
  const Value& off = look.Get("offsetFromHeadBone");  // head-local: (x, y, −z)
  EXPECT_DOUBLE_EQ(off.Get(0).GetNumberAsDouble(), number(off0, "x"));
  EXPECT_DOUBLE_EQ(off.Get(1).GetNumberAsDouble(), number(off0, "y"));
  EXPECT_DOUBLE_EQ(off.Get(2).GetNumberAsDouble(), -number(off0, "z"));
  // The eyes end up in front of the head, at +Z in the VRM 1.0 output.
  const auto rest = rest_model_matrices(b.skeleton);
  const Mat4& head = rest[static_cast<size_t>(b.humanoid->find("head"))];
  const Vec3 eyes =
      head.transform_point({off.Get(0).GetNumberAsDouble(), off.Get(1).GetNumberAsDouble(),
                            off.Get(2).GetNumberAsDouble()});
  EXPECT_GT(eyes.z - head.translation_part().z, 0.1);
  for (const auto& [from, to] : {std::pair{"lookAtHorizontalInner", "rangeMapHorizontalInner"},
                                 std::pair{"lookAtHorizontalOuter", "rangeMapHorizontalOuter"},
                                 std::pair{"lookAtVerticalDown", "rangeMapVerticalDown"},
                                 std::pair{"lookAtVerticalUp", "rangeMapVerticalUp"}}) {
    EXPECT_DOUBLE_EQ(number(look.Get(to), "inputMaxValue"), number(fp0.Get(from), "xRange"));
    EXPECT_DOUBLE_EQ(number(look.Get(to), "outputScale"), number(fp0.Get(from), "yRange"));
  }
}

// A hand-made 0.x extension: a branching spring subtree, a root listed twice, a leaf root,
// material values of each kind, a custom expression, a bind to a missing morph target.
TEST(VrmMigrate, MigrateVrm0BranchesMaterialValuesAndBadIndices) {
  tinygltf::Model m;
  m.nodes.resize(8);
  // 0 → 1 → {2 → 3, 4 → 5}; 6 leaf; 7 carries mesh 0 (2 morph targets).
  m.nodes[0].children = {1};
  m.nodes[1].children = {2, 4};
  m.nodes[2].children = {3};
  m.nodes[4].children = {5};
  m.nodes[7].mesh = 0;
  m.meshes.resize(1);
  m.meshes[0].primitives.resize(1);
  m.meshes[0].primitives[0].targets.resize(2);
  m.materials.resize(2);
  m.materials[0].name = "Skin";
  m.materials[1].name = "Eye";
  const auto vrm0 = Value(Value::Object{{"secondaryAnimation", json_to_value(R"({
        "colliderGroups": [{"node": 0, "colliders": [{"offset": {"x": 1, "y": 2, "z": 3},
                                                      "radius": 0.5}]},
                           {"node": 99, "colliders": [{"radius": 1}]}],
        "boneGroups": [{"bones": [0, 0, 6], "stiffiness": 3, "dragForce": 2, "center": 0,
                        "gravityDir": {"x": 1, "y": 0, "z": 0}, "colliderGroups": [1, 0],
                        "comment": "hair"}]})")},
                                        {"blendShapeMaster", json_to_value(R"({"blendShapeGroups": [
        {"name": "Smile", "presetName": "unknown", "binds": [{"mesh": 0, "index": 1,
         "weight": 40}, {"mesh": 0, "index": 2, "weight": 100}],
         "materialValues": [
           {"materialName": "Eye", "propertyName": "_Color", "targetValue": [1, 0, 0, 1]},
           {"materialName": "Eye", "propertyName": "_MainTex_ST", "targetValue": [1, 0.5, 0, 0.25]},
           {"materialName": "Eye", "propertyName": "_Glossiness", "targetValue": [1, 1, 1, 1]}]},
        {"name": "happy", "presetName": "unknown"},
        {"name": "Joy", "presetName": "joy", "isBinary": true}]})")}});
  Value::Object vrm1;
  const auto notes = gltf_detail::migrate_vrm0(vrm0, m, vrm1);

  const Value& sb = m.extensions.at("VRMC_springBone");
  EXPECT_EQ(sb.Get("colliders").ArrayLen(), 1u);       // the group on node 99 is dropped
  EXPECT_EQ(sb.Get("colliderGroups").ArrayLen(), 1u);  // … and the spring's reference with it
  const Value& off = sb.Get("colliders").Get(0).Get("shape").Get("sphere").Get("offset");
  EXPECT_EQ(off.Get(2).GetNumberAsDouble(), -3.0);
  const Value& springs = sb.Get("springs");
  ASSERT_EQ(springs.ArrayLen(), 2u);  // 0-1-2-3 and the branch 4-5; root 0 again and leaf 6: none
  auto nodes_of = [](const Value& spring) {
    std::vector<int> out;
    for (size_t k = 0; k < spring.Get("joints").ArrayLen(); ++k)
      out.push_back(spring.Get("joints").Get(static_cast<int>(k)).Get("node").GetNumberAsInt());
    return out;
  };
  EXPECT_EQ(nodes_of(springs.Get(0)), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(nodes_of(springs.Get(1)), (std::vector<int>{4, 5}));
  const Value& j = springs.Get(0).Get("joints").Get(0);
  EXPECT_EQ(j.Get("stiffness").GetNumberAsDouble(), 3.0);
  EXPECT_EQ(j.Get("dragForce").GetNumberAsDouble(), 1.0);  // clamped to the 1.0 maximum
  EXPECT_EQ(j.Get("gravityDir").Get(0).GetNumberAsDouble(), -1.0);
  EXPECT_EQ(springs.Get(0).Get("name").Get<std::string>(), "hair");
  EXPECT_EQ(springs.Get(0).Get("center").GetNumberAsInt(), 0);
  EXPECT_EQ(springs.Get(0).Get("colliderGroups").ArrayLen(), 1u);

  const Value& custom = vrm1.at("expressions").Get("custom");
  ASSERT_TRUE(custom.Has("Smile"));
  EXPECT_FALSE(custom.Has("happy"));  // a custom expression may not take a preset name
  const Value& smile = custom.Get("Smile");
  ASSERT_EQ(smile.Get("morphTargetBinds").ArrayLen(), 1u);  // index 2 does not exist
  EXPECT_EQ(smile.Get("morphTargetBinds").Get(0).Get("node").GetNumberAsInt(), 7);
  EXPECT_DOUBLE_EQ(smile.Get("morphTargetBinds").Get(0).Get("weight").GetNumberAsDouble(), 0.4);
  const Value& color = smile.Get("materialColorBinds").Get(0);
  EXPECT_EQ(color.Get("material").GetNumberAsInt(), 1);
  EXPECT_EQ(color.Get("type").Get<std::string>(), "color");
  const Value& tt = smile.Get("textureTransformBinds").Get(0);
  EXPECT_EQ(tt.Get("scale").Get(1).GetNumberAsDouble(), 0.5);
  EXPECT_EQ(tt.Get("offset").Get(1).GetNumberAsDouble(), 0.25);  // 1 − 0.25 − 0.5
  EXPECT_FALSE(smile.Has("isBinary"));
  EXPECT_TRUE(vrm1.at("expressions").Get("preset").Get("happy").Get("isBinary").Get<bool>());
  // Skipped: collider group on node 99, leaf root 6, morph index 2, _Glossiness, "happy".
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_EQ(notes.size(), 5u) << all;
}

TEST(VrmMigrate, Vrm1RoundTripKeepsSpringBoneAndExpressionsJson) {
  const std::string dir = temp_dir();
  // Godette migrated to 1.0 (has VRMC_springBone), then written again as VRM 1.0; and the
  // VRM 1.0 debug robot (expressions, lookAt, firstPerson).
  const auto [a, b] = godette_as_vrm1(dir);
  write_gltf(b, dir + "/godette2.vrm", {});
  write_gltf(read_gltf(kVrm + "debug_robot.vrm"), dir + "/robot.vrm", {});
  for (const auto& [from, to] : {std::pair{dir + "/godette1.vrm", dir + "/godette2.vrm"},
                                 std::pair{kVrm + "debug_robot.vrm", dir + "/robot.vrm"}}) {
    SCOPED_TRACE(to);
    const json ja = glb_json(from), jb = glb_json(to);
    for (const char* ptr : {"/extensions/VRMC_springBone", "/extensions/VRMC_vrm/expressions",
                            "/extensions/VRMC_vrm/lookAt", "/extensions/VRMC_vrm/firstPerson",
                            "/extensions/VRMC_vrm/meta", "/extensions/VRMC_vrm/humanoid"}) {
      const json::json_pointer p(ptr);
      const json va = ja.contains(p) ? pruned(ja.at(p)) : json();
      const json vb = jb.contains(p) ? jb.at(p) : json();
      EXPECT_EQ(va, vb) << ptr;
      EXPECT_EQ(va.dump(), vb.dump()) << ptr;  // same keys, numbers and spelling
    }
    EXPECT_EQ(ja.at("extensionsUsed"), jb.at("extensionsUsed"));
  }
  EXPECT_TRUE(
      glb_json(dir + "/godette2.vrm").contains(json::json_pointer("/extensions/VRMC_springBone")));
}

}  // namespace
}  // namespace kinema
