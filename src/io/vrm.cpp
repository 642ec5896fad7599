// VRM 0.x / 1.0 humanoid read and VRM 1.0 write (see kinema/io/gltf.h); the humanoid of a VRM
// Animation (.vrma, kinema/io/vrma.h) is read here too.
//
// VRM 0.x (`extensions.VRM.humanoid.humanBones`: [{bone, node}]) and VRM 1.0
// (`extensions.VRMC_vrm.humanoid.humanBones`: {bone: {node}}) both become Asset::humanoid with
// VRM 1.0 bone names. VRM 0.x thumbs are renamed: Proximal → Metacarpal, Intermediate →
// Proximal, Distal → Distal (as three-vrm and UniVRM migrate them).
//
// Facing: VRM 0.x models face −Z. kinema does not rotate the data on read (so a VRM 0.x file
// written back as glTF is unchanged); it records forward_axis "-Z". When a VRM 0.x source is
// written as VRM 1.0, every scene root node (and its animation keys) is turned 180° about +Y so
// the avatar faces +Z as VRM 1.0 requires, and its spring bones, blend-shape groups, first-person
// and look-at settings are migrated to their VRM 1.0 form (vrm_migrate.cpp).
#include <algorithm>
#include <array>

#include "gltf_internal.h"
#include "kinema/core/error.h"

namespace kinema::gltf_detail {
namespace {

using Value = tinygltf::Value;

constexpr std::array<const char*, 15> kRequiredBones = {
    "hips",         "spine",         "head",          "leftUpperLeg",  "leftLowerLeg",
    "leftFoot",     "rightUpperLeg", "rightLowerLeg", "rightFoot",     "leftUpperArm",
    "leftLowerArm", "leftHand",      "rightUpperArm", "rightLowerArm", "rightHand"};

}  // namespace

std::string vrm0_to_vrm1_bone(std::string_view name) {
  for (const char* side : {"left", "right"}) {
    const std::string s = side;
    if (name == s + "ThumbProximal") return s + "ThumbMetacarpal";
    if (name == s + "ThumbIntermediate") return s + "ThumbProximal";
  }
  return std::string(name);
}

void read_vrm(const tinygltf::Model& m, const std::vector<int>& node_to_joint, Asset& asset,
              const std::string& file) {
  const int nodes = static_cast<int>(node_to_joint.size());
  auto joint_of = [&](const Value& v, const std::string& place) {
    if (!v.IsNumber()) throw Error(file, place, "node index is not a number");
    const int node = v.GetNumberAsInt();
    if (node < 0 || node >= nodes)
      throw Error(file, place, "node " + std::to_string(node) + " does not exist");
    return node_to_joint[static_cast<size_t>(node)];
  };
  // VRM 1.0 and VRM Animation share the humanBones form {bone: {node}}; a .vrma may omit it.
  auto read_bones = [&](const Value& ext, const std::string& name, bool required) {
    const Value* bones = member(ext, "humanoid");
    bones = bones ? member(*bones, "humanBones") : nullptr;
    if (!bones || !bones->IsObject()) {
      if (required)
        throw Error(file, "/extensions/" + name + "/humanoid",
                    name + " has no humanoid.humanBones");
      return;
    }
    Humanoid h;
    for (const auto& key : bones->Keys()) {
      const std::string place = "/extensions/" + name + "/humanoid/humanBones/" + key;
      const Value* node = member(bones->Get(key), "node");
      if (!node) throw Error(file, place, "human bone has no node");
      h.bones.emplace_back(key, joint_of(*node, place + "/node"));
    }
    asset.humanoid = std::move(h);
  };
  if (auto it = m.extensions.find("VRMC_vrm"); it != m.extensions.end()) {
    asset.source.format = "vrm1";
    read_bones(it->second, "VRMC_vrm", true);
    return;
  }
  if (auto it = m.extensions.find("VRMC_vrm_animation"); it != m.extensions.end()) {
    asset.source.format = "vrma";
    read_bones(it->second, "VRMC_vrm_animation", false);
    return;
  }
  if (auto it = m.extensions.find("VRM"); it != m.extensions.end()) {
    asset.source.format = "vrm0";
    asset.source.forward_axis = "-Z";
    Humanoid h;
    const Value* bones = member(it->second, "humanoid");
    bones = bones ? member(*bones, "humanBones") : nullptr;
    if (!bones || !bones->IsArray())
      throw Error(file, "/extensions/VRM/humanoid", "VRM has no humanoid.humanBones array");
    for (size_t k = 0; k < bones->ArrayLen(); ++k) {
      const std::string place = "/extensions/VRM/humanoid/humanBones/" + std::to_string(k);
      const Value& b = bones->Get(static_cast<int>(k));
      const std::string name = str(member(b, "bone"));
      const Value* node = member(b, "node");
      if (name.empty() || !node) throw Error(file, place, "human bone needs `bone` and `node`");
      if (node->IsNumber() && node->GetNumberAsInt() < 0)
        continue;  // unassigned (UniVRM writes -1)
      h.bones.emplace_back(vrm0_to_vrm1_bone(name), joint_of(*node, place + "/node"));
    }
    asset.humanoid = std::move(h);
  }
}

namespace {

Value::Object vrm1_meta_from_vrm0(const Value* meta0, const tinygltf::Model& m) {
  Value::Object meta;
  const std::string title = str(meta0 ? member(*meta0, "title") : nullptr);
  meta["name"] = Value(title.empty() ? std::string("kinema avatar") : title);
  if (auto v = str(meta0 ? member(*meta0, "version") : nullptr); !v.empty())
    meta["version"] = Value(v);
  const std::string author = str(meta0 ? member(*meta0, "author") : nullptr);
  meta["authors"] = Value(Value::Array{Value(author.empty() ? std::string("unknown") : author)});
  if (auto v = str(meta0 ? member(*meta0, "contactInformation") : nullptr); !v.empty())
    meta["contactInformation"] = Value(v);
  if (auto v = str(meta0 ? member(*meta0, "reference") : nullptr); !v.empty())
    meta["references"] = Value(Value::Array{Value(v)});
  if (const Value* tex = meta0 ? member(*meta0, "texture") : nullptr; tex && tex->IsNumber()) {
    const int t = tex->GetNumberAsInt();
    if (t >= 0 && t < static_cast<int>(m.textures.size()) &&
        m.textures[static_cast<size_t>(t)].source >= 0)
      meta["thumbnailImage"] = Value(m.textures[static_cast<size_t>(t)].source);
  }
  meta["licenseUrl"] = Value(std::string("https://vrm.dev/licenses/1.0/"));
  // Conservative permission mapping from the 0.x fields.
  const std::string who = str(meta0 ? member(*meta0, "allowedUserName") : nullptr);
  meta["avatarPermission"] =
      Value(std::string(who == "Everyone"                   ? "everyone"
                        : who == "ExplicitlyLicensedPerson" ? "onlySeparatelyLicensedPerson"
                                                            : "onlyAuthor"));
  meta["allowExcessivelyViolentUsage"] =
      Value(str(meta0 ? member(*meta0, "violentUssageName") : nullptr) == "Allow");
  meta["allowExcessivelySexualUsage"] =
      Value(str(meta0 ? member(*meta0, "sexualUssageName") : nullptr) == "Allow");
  meta["commercialUsage"] =
      Value(std::string(str(meta0 ? member(*meta0, "commercialUssageName") : nullptr) == "Allow"
                            ? "personalProfit"
                            : "personalNonProfit"));
  meta["creditNotation"] = Value(std::string("required"));
  meta["allowRedistribution"] = Value(false);
  meta["modification"] = Value(std::string("prohibited"));
  if (auto v = str(meta0 ? member(*meta0, "otherLicenseUrl") : nullptr); !v.empty())
    meta["otherLicenseUrl"] = Value(v);
  return meta;
}

}  // namespace

void write_vrm1(tinygltf::Model& m, const Asset& asset, const std::vector<int>& joint_to_node,
                const std::string& file) {
  if (!asset.humanoid) throw Error(file, "humanoid", "VRM output needs a humanoid bone map");
  for (const char* bone : kRequiredBones)
    if (asset.humanoid->find(bone) < 0)
      throw Error(file, "humanoid", std::string("VRM 1.0 requires the human bone '") + bone + "'");
  Value::Object human_bones;
  for (const auto& [name, joint] : asset.humanoid->bones) {
    if (joint < 0 || joint >= static_cast<int>(joint_to_node.size()))
      throw Error(file, "humanoid/" + name, "joint " + std::to_string(joint) + " does not exist");
    human_bones[name] =
        Value(Value::Object{{"node", Value(joint_to_node[static_cast<size_t>(joint)])}});
  }
  Value::Object vrm;
  const bool has_vrm1 = m.extensions.count("VRMC_vrm") > 0;
  if (auto it = m.extensions.find("VRMC_vrm"); it != m.extensions.end() && it->second.IsObject())
    vrm = it->second.Get<Value::Object>();  // keep expressions, lookAt, firstPerson, meta
  const Value* meta0 = nullptr;
  if (auto it = m.extensions.find("VRM"); it != m.extensions.end()) {
    meta0 = member(it->second, "meta");
    // Only a pure 0.x source (whose roots the writer turned to face +Z) is migrated.
    if (!has_vrm1) migrate_vrm0(it->second, m, vrm);
  }
  if (!vrm.count("meta") || !vrm["meta"].IsObject())
    vrm["meta"] = Value(vrm1_meta_from_vrm0(meta0, m));
  {  // required meta fields must be present even in a kept meta
    auto meta = vrm["meta"].Get<Value::Object>();
    if (!meta.count("name")) meta["name"] = Value(std::string("kinema avatar"));
    if (!meta.count("authors"))
      meta["authors"] = Value(Value::Array{Value(std::string("unknown"))});
    if (!meta.count("licenseUrl"))
      meta["licenseUrl"] = Value(std::string("https://vrm.dev/licenses/1.0/"));
    vrm["meta"] = Value(std::move(meta));
  }
  vrm["specVersion"] = Value(std::string("1.0"));
  vrm["humanoid"] = Value(Value::Object{{"humanBones", Value(std::move(human_bones))}});
  m.extensions.erase("VRM");
  m.extensions["VRMC_vrm"] = Value(std::move(vrm));
  auto& used = m.extensionsUsed;
  used.erase(std::remove(used.begin(), used.end(), std::string("VRM")), used.end());
  if (std::find(used.begin(), used.end(), "VRMC_vrm") == used.end()) used.push_back("VRMC_vrm");
}

}  // namespace kinema::gltf_detail
