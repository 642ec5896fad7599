// VRM 0.x → VRM 1.0 migration of what kinema does not model (see gltf_internal.h):
//
//  * VRM.secondaryAnimation → VRMC_springBone 1.0. Each 0.x collider becomes a sphere collider on
//    its group's node; groups without a usable collider are dropped (1.0 requires ≥ 1). Each root
//    bone of a 0.x bone group becomes one spring: the joints run from the root down the first-child
//    chain. Where the 0.x subtree branches, each further child starts its own spring (0.x moved
//    every node of the subtree towards its first child, so this keeps the branches swinging and
//    no joint is in two springs, which 1.0 prohibits). Chains of one node are skipped: 1.0 uses the
//    last joint only as a tail, and 0.x's virtual 7 cm tail has no 1.0 equivalent.
//  * VRM.blendShapeMaster → VRMC_vrm.expressions: 0.x presets are renamed (a → aa, joy → happy,
//    …), others become custom expressions by name. Morph binds (0.x: mesh + weight 0–100) become
//    one bind per node using the mesh, weight / 100. Material values become materialColorBinds
//    (_Color, _EmissionColor, _ShadeColor, _RimColor, _OutlineColor) or textureTransformBinds
//    (_MainTex_ST, V flipped as three-vrm does); other properties are skipped.
//  * VRM.firstPerson → VRMC_vrm.firstPerson.meshAnnotations (one per node using the mesh) and
//    VRMC_vrm.lookAt (type, offsetFromHeadBone, range maps from xRange/yRange; 0.x curves have no
//    1.0 equivalent and are dropped).
//
// Axes. UniVRM 0.x stored collider offsets, gravityDir and firstPersonBoneOffset in Unity
// coordinates, without the z flip it applied to the glTF data (three-vrm: "z is opposite in
// VRM0.0"). The writer turns only the scene roots 180° about +Y and keeps every other node's
// local transform, so node-local vectors (collider offsets, the look-at offset from the head)
// become (x, y, −z), while world-space gravityDir is turned with the model: (−x, y, z).
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "gltf_internal.h"

namespace kinema::gltf_detail {
namespace {

using Value = tinygltf::Value;

double num(const Value* v, double fallback) {
  return v && v->IsNumber() ? v->GetNumberAsDouble() : fallback;
}

int index_of(const Value* v) { return v && v->IsNumber() ? v->GetNumberAsInt() : -1; }

/// Elements of a JSON array (empty when `v` is missing or not an array).
std::vector<const Value*> items(const Value* v) {
  std::vector<const Value*> out;
  if (v && v->IsArray())
    for (size_t i = 0; i < v->ArrayLen(); ++i) out.push_back(&v->Get(static_cast<int>(i)));
  return out;
}

std::array<double, 3> vec3(const Value* v, std::array<double, 3> fallback) {
  if (!v || !v->IsObject()) return fallback;
  return {num(member(*v, "x"), fallback[0]), num(member(*v, "y"), fallback[1]),
          num(member(*v, "z"), fallback[2])};
}

double neg(double x) { return 0.0 - x; }  // no "-0.0" in the output

Value array(std::initializer_list<double> v) {
  Value::Array a;
  for (double x : v) a.emplace_back(x);
  return Value(std::move(a));
}

Value text(const char* s) { return Value(std::string(s)); }

/// Nodes that instance glTF mesh `mesh`.
std::vector<int> nodes_using(const tinygltf::Model& m, int mesh) {
  std::vector<int> out;
  for (size_t n = 0; n < m.nodes.size(); ++n)
    if (m.nodes[n].mesh == mesh && mesh >= 0) out.push_back(static_cast<int>(n));
  return out;
}

Value migrate_spring_bone(const Value& sa, const tinygltf::Model& m,
                          std::vector<std::string>& notes) {
  const int nodes = static_cast<int>(m.nodes.size());
  Value::Array colliders, groups;
  std::vector<int> group_map;  // 0.x collider group → 1.0 collider group, or -1
  for (const Value* cg : items(member(sa, "colliderGroups"))) {
    const int node = index_of(member(*cg, "node"));
    Value::Array ids;
    if (node >= 0 && node < nodes) {
      for (const Value* c : items(member(*cg, "colliders"))) {
        const auto o = vec3(member(*c, "offset"), {0, 0, 0});
        Value::Object sphere{{"offset", array({o[0], o[1], neg(o[2])})},
                             {"radius", Value(std::max(0.0, num(member(*c, "radius"), 0.0)))}};
        ids.emplace_back(static_cast<int>(colliders.size()));
        colliders.emplace_back(Value::Object{
            {"node", Value(node)}, {"shape", Value(Value::Object{{"sphere", Value(sphere)}})}});
      }
    }
    if (ids.empty()) {
      notes.push_back("secondaryAnimation/colliderGroups/" + std::to_string(group_map.size()) +
                      ": no collider on a valid node; dropped");
      group_map.push_back(-1);
      continue;
    }
    group_map.push_back(static_cast<int>(groups.size()));
    groups.emplace_back(Value::Object{{"colliders", Value(std::move(ids))}});
  }

  Value::Array springs;
  std::vector<char> taken(static_cast<size_t>(std::max(nodes, 0)), 0);
  size_t group_index = 0;
  for (const Value* bg : items(member(sa, "boneGroups"))) {
    const std::string place = "secondaryAnimation/boneGroups/" + std::to_string(group_index++);
    const auto g = vec3(member(*bg, "gravityDir"), {0, -1, 0});
    Value::Object params{
        {"hitRadius", Value(std::max(0.0, num(member(*bg, "hitRadius"), 0.02)))},
        {"stiffness", Value(std::max(0.0, num(member(*bg, "stiffiness"), 1.0)))},
        {"gravityPower", Value(std::max(0.0, num(member(*bg, "gravityPower"), 0.0)))},
        {"gravityDir", array({neg(g[0]), g[1], g[2]})},
        {"dragForce", Value(std::clamp(num(member(*bg, "dragForce"), 0.4), 0.0, 1.0))}};
    Value::Array spring_groups;
    for (const Value* cg : items(member(*bg, "colliderGroups"))) {
      const int k = index_of(cg);
      if (k >= 0 && k < static_cast<int>(group_map.size()) &&
          group_map[static_cast<size_t>(k)] >= 0)
        spring_groups.emplace_back(group_map[static_cast<size_t>(k)]);
    }
    const int center = index_of(member(*bg, "center"));
    const std::string name = str(member(*bg, "comment"));
    for (const Value* root : items(member(*bg, "bones"))) {
      std::vector<int> starts{index_of(root)};
      while (!starts.empty()) {
        int n = starts.back();
        starts.pop_back();
        Value::Array joints;
        while (n >= 0 && n < nodes && !taken[static_cast<size_t>(n)]) {
          taken[static_cast<size_t>(n)] = 1;
          Value::Object joint = params;
          joint["node"] = Value(n);
          joints.emplace_back(std::move(joint));
          const auto& children = m.nodes[static_cast<size_t>(n)].children;
          for (size_t c = children.size(); c-- > 1;) starts.push_back(children[c]);
          n = children.empty() ? -1 : children.front();
        }
        if (joints.size() < 2) {
          if (!joints.empty())
            notes.push_back(place + ": node " +
                            std::to_string(joints.front().Get("node").GetNumberAsInt()) +
                            " has no child to swing towards; skipped");
          continue;
        }
        Value::Object spring{{"joints", Value(std::move(joints))}};
        if (!name.empty()) spring["name"] = Value(name);
        if (!spring_groups.empty()) spring["colliderGroups"] = Value(spring_groups);
        if (center >= 0 && center < nodes) spring["center"] = Value(center);
        springs.emplace_back(std::move(spring));
      }
    }
  }
  if (springs.empty()) return Value();
  Value::Object out{{"specVersion", text("1.0")}, {"springs", Value(std::move(springs))}};
  if (!colliders.empty()) {
    out["colliders"] = Value(std::move(colliders));
    out["colliderGroups"] = Value(std::move(groups));
  }
  return Value(std::move(out));
}

constexpr std::array<std::pair<const char*, const char*>, 19> kPresets = {{
    {"neutral", "neutral"},
    {"a", "aa"},
    {"i", "ih"},
    {"u", "ou"},
    {"e", "ee"},
    {"o", "oh"},
    {"blink", "blink"},
    {"blink_l", "blinkLeft"},
    {"blink_r", "blinkRight"},
    {"joy", "happy"},
    {"angry", "angry"},
    {"sorrow", "sad"},
    {"fun", "relaxed"},
    {"surprised", "surprised"},
    {"lookup", "lookUp"},
    {"lookdown", "lookDown"},
    {"lookleft", "lookLeft"},
    {"lookright", "lookRight"},
    {"unknown", ""},
}};

constexpr std::array<std::pair<const char*, const char*>, 5> kColorTypes = {{
    {"_Color", "color"},
    {"_EmissionColor", "emissionColor"},
    {"_ShadeColor", "shadeColor"},
    {"_RimColor", "rimColor"},
    {"_OutlineColor", "outlineColor"},
}};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_vrm1_preset(const std::string& name) {
  return std::any_of(kPresets.begin(), kPresets.end(),
                     [&](const auto& p) { return *p.second && name == p.second; });
}

/// Morph target count shared by every primitive of glTF mesh `mesh` (-1: none or no mesh).
int morph_targets(const tinygltf::Model& m, int mesh) {
  if (mesh < 0 || mesh >= static_cast<int>(m.meshes.size())) return -1;
  int n = -1;
  for (const auto& p : m.meshes[static_cast<size_t>(mesh)].primitives)
    n = n < 0 ? static_cast<int>(p.targets.size())
              : std::min(n, static_cast<int>(p.targets.size()));
  return n;
}

Value migrate_expression(const Value& group, const tinygltf::Model& m, const std::string& place,
                         std::vector<std::string>& notes) {
  Value::Object e;
  Value::Array morphs, colors, transforms;
  size_t k = 0;
  for (const Value* b : items(member(group, "binds"))) {
    const std::string where = place + "/binds/" + std::to_string(k++);
    const int mesh = index_of(member(*b, "mesh"));
    const int target = index_of(member(*b, "index"));
    const auto nodes = nodes_using(m, mesh);
    if (target < 0 || target >= morph_targets(m, mesh) || nodes.empty()) {
      notes.push_back(where + ": mesh " + std::to_string(mesh) + " morph target " +
                      std::to_string(target) + " does not exist or no node uses the mesh; skipped");
      continue;
    }
    const double weight = std::clamp(num(member(*b, "weight"), 100.0) / 100.0, 0.0, 1.0);
    for (int node : nodes)
      morphs.emplace_back(Value::Object{
          {"node", Value(node)}, {"index", Value(target)}, {"weight", Value(weight)}});
  }
  k = 0;
  for (const Value* mv : items(member(group, "materialValues"))) {
    const std::string where = place + "/materialValues/" + std::to_string(k++);
    const std::string material = str(member(*mv, "materialName"));
    const std::string property = str(member(*mv, "propertyName"));
    std::vector<double> v;
    for (const Value* x : items(member(*mv, "targetValue")))
      if (x->IsNumber()) v.push_back(x->GetNumberAsDouble());
    std::vector<int> targets;
    for (size_t i = 0; i < m.materials.size(); ++i)
      if (m.materials[i].name == material) targets.push_back(static_cast<int>(i));
    const auto color = std::find_if(kColorTypes.begin(), kColorTypes.end(),
                                    [&](const auto& c) { return property == c.first; });
    if (targets.empty() || v.size() < 4 ||
        (property != "_MainTex_ST" && color == kColorTypes.end())) {
      notes.push_back(where + ": material '" + material + "' property '" + property +
                      "' has no VRM 1.0 equivalent here; skipped");
      continue;
    }
    for (int t : targets) {
      if (property == "_MainTex_ST")  // Unity (scale, offset), V up → glTF V down
        transforms.emplace_back(Value::Object{{"material", Value(t)},
                                              {"scale", array({v[0], v[1]})},
                                              {"offset", array({v[2], 1.0 - v[3] - v[1]})}});
      else
        colors.emplace_back(Value::Object{{"material", Value(t)},
                                          {"type", text(color->second)},
                                          {"targetValue", array({v[0], v[1], v[2], v[3]})}});
    }
  }
  if (!morphs.empty()) e["morphTargetBinds"] = Value(std::move(morphs));
  if (!colors.empty()) e["materialColorBinds"] = Value(std::move(colors));
  if (!transforms.empty()) e["textureTransformBinds"] = Value(std::move(transforms));
  if (const Value* b = member(group, "isBinary"); b && b->IsBool())
    e["isBinary"] = Value(b->Get<bool>());
  return Value(std::move(e));
}

Value migrate_expressions(const Value& master, const tinygltf::Model& m,
                          std::vector<std::string>& notes) {
  Value::Object preset, custom;
  size_t k = 0;
  for (const Value* g : items(member(master, "blendShapeGroups"))) {
    const std::string place = "blendShapeMaster/blendShapeGroups/" + std::to_string(k++);
    const std::string p = lower(str(member(*g, "presetName")));
    const auto it =
        std::find_if(kPresets.begin(), kPresets.end(), [&](const auto& x) { return p == x.first; });
    const bool is_preset = it != kPresets.end() && *it->second;
    const std::string name = is_preset ? it->second : str(member(*g, "name"));
    Value::Object& dest = is_preset ? preset : custom;
    if (name.empty() || dest.count(name) || (!is_preset && is_vrm1_preset(name))) {
      notes.push_back(place + ": expression name '" + name +
                      "' is empty, repeated or a preset name; skipped");
      continue;
    }
    dest[name] = migrate_expression(*g, m, place, notes);
  }
  Value::Object out;
  if (!preset.empty()) out["preset"] = Value(std::move(preset));
  if (!custom.empty()) out["custom"] = Value(std::move(custom));
  return out.empty() ? Value() : Value(std::move(out));
}

Value migrate_first_person(const Value& fp, const tinygltf::Model& m) {
  Value::Array annotations;
  for (const Value* a : items(member(fp, "meshAnnotations"))) {
    const std::string flag = str(member(*a, "firstPersonFlag"));
    const char* type = flag == "Both"              ? "both"
                       : flag == "ThirdPersonOnly" ? "thirdPersonOnly"
                       : flag == "FirstPersonOnly" ? "firstPersonOnly"
                                                   : "auto";
    for (int node : nodes_using(m, index_of(member(*a, "mesh"))))
      annotations.emplace_back(Value::Object{{"node", Value(node)}, {"type", text(type)}});
  }
  if (annotations.empty()) return Value();
  return Value(Value::Object{{"meshAnnotations", Value(std::move(annotations))}});
}

Value migrate_look_at(const Value& fp) {
  const bool expression = str(member(fp, "lookAtTypeName")) == "BlendShape";
  Value::Object out{{"type", text(expression ? "expression" : "bone")}};
  if (const Value* o = member(fp, "firstPersonBoneOffset")) {
    const auto v = vec3(o, {0, 0.06, 0});
    out["offsetFromHeadBone"] = array({v[0], v[1], neg(v[2])});
  }
  for (const auto& [from, to] : {std::pair{"lookAtHorizontalInner", "rangeMapHorizontalInner"},
                                 std::pair{"lookAtHorizontalOuter", "rangeMapHorizontalOuter"},
                                 std::pair{"lookAtVerticalDown", "rangeMapVerticalDown"},
                                 std::pair{"lookAtVerticalUp", "rangeMapVerticalUp"}}) {
    const Value* map = member(fp, from);
    if (!map) continue;
    out[to] = Value(Value::Object{
        {"inputMaxValue", Value(std::clamp(num(member(*map, "xRange"), 90.0), 0.0, 180.0))},
        {"outputScale",
         Value(std::max(0.0, num(member(*map, "yRange"), expression ? 1.0 : 10.0)))}});
  }
  return Value(std::move(out));
}

}  // namespace

std::vector<std::string> migrate_vrm0(const tinygltf::Value& vrm0, tinygltf::Model& model,
                                      tinygltf::Value::Object& vrm1) {
  std::vector<std::string> notes;
  if (const Value* master = member(vrm0, "blendShapeMaster"); master && !vrm1.count("expressions"))
    if (Value e = migrate_expressions(*master, model, notes); e.IsObject())
      vrm1["expressions"] = std::move(e);
  if (const Value* fp = member(vrm0, "firstPerson")) {
    if (!vrm1.count("firstPerson"))
      if (Value f = migrate_first_person(*fp, model); f.IsObject()) vrm1["firstPerson"] = f;
    if (!vrm1.count("lookAt")) vrm1["lookAt"] = migrate_look_at(*fp);
    if (member(*fp, "firstPersonBone")) {
      // VRM 1.0 measures the look-at offset from the head bone; 0.x from firstPersonBone.
      int head = -1;
      if (const Value* h = member(vrm0, "humanoid"))
        for (const Value* b : items(member(*h, "humanBones")))
          if (str(member(*b, "bone")) == "head") head = index_of(member(*b, "node"));
      if (index_of(member(*fp, "firstPersonBone")) != head)
        notes.push_back("firstPerson/firstPersonBone is not the head; offset kept as is");
    }
  }
  if (const Value* sa = member(vrm0, "secondaryAnimation");
      sa && !model.extensions.count("VRMC_springBone"))
    if (Value s = migrate_spring_bone(*sa, model, notes); s.IsObject()) {
      model.extensions["VRMC_springBone"] = std::move(s);
      auto& used = model.extensionsUsed;
      if (std::find(used.begin(), used.end(), "VRMC_springBone") == used.end())
        used.push_back("VRMC_springBone");
    }
  return notes;
}

}  // namespace kinema::gltf_detail
