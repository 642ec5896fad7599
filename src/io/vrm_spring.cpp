// Spring bones of a VRM file → Asset::spring_bones (kinema/character/spring_bones.h).
//
// VRMC_springBone 1.0: each pair of consecutive joints of a spring is one simulated bone, with
// the first joint's settings; the last joint is only a tail. Extended colliders
// (VRMC_springBone_extended_collider 1.0: inside spheres and capsules, planes) replace the shape
// they extend. Defaults are the specification's (drag 0.5).
//
// VRM 0.x `secondaryAnimation`: every node under each root of a bone group is a simulated bone
// whose tail is its first child (or a virtual 7 cm tail at a leaf), as UniVRM and three-vrm
// read it. Collider offsets are stored in Unity's axes (z flipped); gravityDir is used as
// written. Defaults are three-vrm's (drag 0.4, hit radius 0).
//
// Malformed data (wrong types, indices that do not exist, negative radii or stiffness, drag
// outside 0–1, a spring joint that is not its predecessor's child, a joint in two springs) is an
// Error naming the JSON pointer; an unknown specVersion is skipped with a warning, as the
// reference implementation does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gltf_internal.h"
#include "kinema/core/error.h"

namespace kinema::gltf_detail {
namespace {

using Value = tinygltf::Value;

class SpringReader {
 public:
  SpringReader(const tinygltf::Model& m, const std::vector<int>& node_to_joint, Asset& asset,
               const std::string& file)
      : m_(m), node_to_joint_(node_to_joint), asset_(asset), file_(file) {}

  void read_vrm1(const Value& ext);
  void read_vrm0(const Value& secondary);

 private:
  [[noreturn]] void fail(const std::string& place, const std::string& reason) const {
    throw Error(file_, place, reason);
  }
  const Value& array_at(const Value& parent, const char* key, const std::string& place,
                        bool required) const;
  int node_at(const Value& v, const std::string& place) const;
  /// The array `parent[key]` (optional) of indices below `count`, each checked.
  std::vector<int> indices(const Value& parent, const char* key, const std::string& place,
                           size_t count, const char* what) const;
  double number(const Value& obj, const char* key, double fallback, const std::string& place,
                double lo, double hi) const;
  Vec3 vec3_array(const Value& obj, const char* key, Vec3 fallback, const std::string& place) const;
  Vec3 vec3_object(const Value& obj, const char* key, Vec3 fallback,
                   const std::string& place) const;
  void read_vrm1_collider(const Value& c, const std::string& place);
  void claim(int joint, const std::string& place);

  const tinygltf::Model& m_;
  const std::vector<int>& node_to_joint_;
  Asset& asset_;
  const std::string& file_;
  std::vector<int> claimed_;  // joints already simulated
  static inline const Value kEmptyArray{Value::Array{}};
};

const Value& SpringReader::array_at(const Value& parent, const char* key, const std::string& place,
                                    bool required) const {
  const Value* v = member(parent, key);
  if (!v) {
    if (required) fail(place + "/" + key, "missing");
    return kEmptyArray;
  }
  if (!v->IsArray()) fail(place + "/" + key, "is not an array");
  return *v;
}

int SpringReader::node_at(const Value& v, const std::string& place) const {
  if (!v.IsNumber()) fail(place, "node index is not a number");
  const int node = v.GetNumberAsInt();
  if (node < 0 || node >= static_cast<int>(node_to_joint_.size()))
    fail(place, "node " + std::to_string(node) + " does not exist");
  return node;
}

std::vector<int> SpringReader::indices(const Value& parent, const char* key,
                                       const std::string& place, size_t count,
                                       const char* what) const {
  const Value& list = array_at(parent, key, place, false);
  std::vector<int> out;
  for (size_t k = 0; k < list.ArrayLen(); ++k) {
    const Value& id = list.Get(static_cast<int>(k));
    const int i = id.IsNumber() ? id.GetNumberAsInt() : -1;
    if (i < 0 || i >= static_cast<int>(count))
      fail(place + "/" + key + "/" + std::to_string(k), std::string(what) + " does not exist");
    out.push_back(i);
  }
  return out;
}

double SpringReader::number(const Value& obj, const char* key, double fallback,
                            const std::string& place, double lo, double hi) const {
  const Value* v = member(obj, key);
  if (!v) return fallback;
  if (!v->IsNumber()) fail(place + "/" + key, "is not a number");
  const double x = v->GetNumberAsDouble();
  if (!std::isfinite(x) || x < lo || x > hi)
    fail(place + "/" + key, std::to_string(x) + " is outside " + std::to_string(lo) + " … " +
                                (std::isinf(hi) ? std::string("∞") : std::to_string(hi)));
  return x;
}

Vec3 SpringReader::vec3_array(const Value& obj, const char* key, Vec3 fallback,
                              const std::string& place) const {
  const Value* v = member(obj, key);
  if (!v) return fallback;
  if (!v->IsArray() || v->ArrayLen() != 3) fail(place + "/" + key, "is not an array of 3 numbers");
  double x[3];
  for (int i = 0; i < 3; ++i) {
    const Value& e = v->Get(i);
    if (!e.IsNumber() || !std::isfinite(e.GetNumberAsDouble()))
      fail(place + "/" + key + "/" + std::to_string(i), "is not a finite number");
    x[i] = e.GetNumberAsDouble();
  }
  return {x[0], x[1], x[2]};
}

Vec3 SpringReader::vec3_object(const Value& obj, const char* key, Vec3 fallback,
                               const std::string& place) const {
  const Value* v = member(obj, key);
  if (!v) return fallback;
  if (!v->IsObject()) fail(place + "/" + key, "is not an object {x, y, z}");
  Vec3 out = fallback;
  double* dst[3] = {&out.x, &out.y, &out.z};
  const char* names[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    const Value* e = member(*v, names[i]);
    if (!e) continue;
    if (!e->IsNumber() || !std::isfinite(e->GetNumberAsDouble()))
      fail(place + "/" + key + "/" + names[i], "is not a finite number");
    *dst[i] = e->GetNumberAsDouble();
  }
  return out;
}

void SpringReader::claim(int joint, const std::string& place) {
  for (int j : claimed_)
    if (j == joint)
      fail(place, "joint '" + asset_.skeleton.joint(joint).name +
                      "' is already simulated by an earlier spring");
  claimed_.push_back(joint);
}

void SpringReader::read_vrm1_collider(const Value& c, const std::string& place) {
  if (!c.IsObject()) fail(place, "is not an object");
  const Value* node = member(c, "node");
  if (!node) fail(place + "/node", "missing");
  SpringCollider out;
  out.joint = node_to_joint_[static_cast<size_t>(node_at(*node, place + "/node"))];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto read_shape = [&](const Value& shape, const std::string& at, bool extended) {
    if (!shape.IsObject()) fail(at, "is not an object");
    if (const Value* s = member(shape, "sphere")) {
      out.shape = SpringColliderShape::Sphere;
      out.offset = vec3_array(*s, "offset", {0, 0, 0}, at + "/sphere");
      out.radius = number(*s, "radius", 0, at + "/sphere", 0, kInf);
    } else if (const Value* cap = member(shape, "capsule")) {
      out.shape = SpringColliderShape::Capsule;
      out.offset = vec3_array(*cap, "offset", {0, 0, 0}, at + "/capsule");
      out.tail = vec3_array(*cap, "tail", {0, 0, 0}, at + "/capsule");
      out.radius = number(*cap, "radius", 0, at + "/capsule", 0, kInf);
    } else if (const Value* p = extended ? member(shape, "plane") : nullptr) {
      out.shape = SpringColliderShape::Plane;
      out.offset = vec3_array(*p, "offset", {0, 0, 0}, at + "/plane");
      out.normal = vec3_array(*p, "normal", {0, 0, 1}, at + "/plane");
      if (length(out.normal) < 1e-12) fail(at + "/plane/normal", "is zero");
      out.normal = normalize(out.normal);
    } else {
      fail(at, extended ? "has no sphere, capsule or plane" : "has no sphere or capsule");
    }
    if (extended)
      for (const char* kind : {"sphere", "capsule"})
        if (const Value* s = member(shape, kind))
          if (const Value* in = member(*s, "inside")) {
            if (!in->IsBool()) fail(at + "/" + kind + "/inside", "is not a boolean");
            out.inside = in->Get<bool>();
          }
  };
  const Value* ext = member(c, "extensions");
  const Value* ex = ext ? member(*ext, "VRMC_springBone_extended_collider") : nullptr;
  const std::string ex_place = place + "/extensions/VRMC_springBone_extended_collider";
  if (ex && str(member(*ex, "specVersion")) == "1.0") {
    const Value* shape = member(*ex, "shape");
    if (!shape) fail(ex_place + "/shape", "missing");
    read_shape(*shape, ex_place + "/shape", true);
  } else {
    if (ex)
      asset_.source.warnings.push_back(ex_place +
                                       ": not VRMC_springBone_extended_collider 1.0; its base "
                                       "shape is used");
    const Value* shape = member(c, "shape");
    if (!shape) fail(place + "/shape", "missing");
    read_shape(*shape, place + "/shape", false);
  }
  asset_.spring_bones.colliders.push_back(out);
}

void SpringReader::read_vrm1(const Value& ext) {
  const std::string root = "/extensions/VRMC_springBone";
  const std::string v = str(member(ext, "specVersion"));
  if (v != "1.0" && v != "1.0-beta") {
    asset_.source.warnings.push_back(root + "/specVersion: '" + v +
                                     "' is not 1.0; spring bones skipped");
    return;
  }
  SpringBones& sb = asset_.spring_bones;
  const Value& colliders = array_at(ext, "colliders", root, false);
  for (size_t i = 0; i < colliders.ArrayLen(); ++i)
    read_vrm1_collider(colliders.Get(static_cast<int>(i)),
                       root + "/colliders/" + std::to_string(i));
  const Value& groups = array_at(ext, "colliderGroups", root, false);
  for (size_t g = 0; g < groups.ArrayLen(); ++g) {
    const std::string place = root + "/colliderGroups/" + std::to_string(g);
    const Value& group = groups.Get(static_cast<int>(g));
    array_at(group, "colliders", place, true);  // required
    sb.collider_groups.push_back(
        indices(group, "colliders", place, sb.colliders.size(), "collider"));
  }
  const Value& springs = array_at(ext, "springs", root, false);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (size_t s = 0; s < springs.ArrayLen(); ++s) {
    const std::string place = root + "/springs/" + std::to_string(s);
    const Value& spring = springs.Get(static_cast<int>(s));
    if (!spring.IsObject()) fail(place, "is not an object");
    Spring out;
    out.name = str(member(spring, "name"));
    if (const Value* center = member(spring, "center"))
      out.center = node_to_joint_[static_cast<size_t>(node_at(*center, place + "/center"))];
    out.collider_groups =
        indices(spring, "colliderGroups", place, sb.collider_groups.size(), "collider group");
    const Value& joints = array_at(spring, "joints", place, true);
    std::vector<int> nodes;
    for (size_t k = 0; k < joints.ArrayLen(); ++k) {
      const std::string at = place + "/joints/" + std::to_string(k);
      const Value& j = joints.Get(static_cast<int>(k));
      if (!j.IsObject() || !member(j, "node")) fail(at + "/node", "missing");
      nodes.push_back(node_at(*member(j, "node"), at + "/node"));
      if (k == 0) continue;
      const Value& prev = joints.Get(static_cast<int>(k - 1));
      const std::string prev_at = place + "/joints/" + std::to_string(k - 1);
      const auto& siblings = m_.nodes[static_cast<size_t>(nodes[k - 1])].children;
      if (std::find(siblings.begin(), siblings.end(), nodes[k]) == siblings.end())
        fail(at + "/node", "node " + std::to_string(nodes[k]) + " is not a child of node " +
                               std::to_string(nodes[k - 1]) + ", the joint before it");
      SpringJoint sj;
      sj.joint = node_to_joint_[static_cast<size_t>(nodes[k - 1])];
      sj.child = node_to_joint_[static_cast<size_t>(nodes[k])];
      sj.hit_radius = number(prev, "hitRadius", 0.0, prev_at, 0, kInf);
      sj.stiffness = number(prev, "stiffness", 1.0, prev_at, 0, kInf);
      sj.gravity_power = number(prev, "gravityPower", 0.0, prev_at, 0, kInf);
      sj.gravity_dir = vec3_array(prev, "gravityDir", {0, -1, 0}, prev_at);
      sj.drag_force = number(prev, "dragForce", 0.5, prev_at, 0, 1);
      claim(sj.joint, prev_at + "/node");
      out.joints.push_back(sj);
    }
    if (out.joints.empty()) {
      asset_.source.warnings.push_back(place + ": fewer than 2 joints; nothing to simulate");
      continue;
    }
    sb.springs.push_back(std::move(out));
  }
}

void SpringReader::read_vrm0(const Value& secondary) {
  const std::string root = "/extensions/VRM/secondaryAnimation";
  SpringBones& sb = asset_.spring_bones;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // 0.x collider groups hold their spheres; they become 1.0-style colliders and groups.
  const Value& groups = array_at(secondary, "colliderGroups", root, false);
  for (size_t g = 0; g < groups.ArrayLen(); ++g) {
    const std::string place = root + "/colliderGroups/" + std::to_string(g);
    const Value& group = groups.Get(static_cast<int>(g));
    if (!group.IsObject() || !member(group, "node")) fail(place + "/node", "missing");
    const int joint =
        node_to_joint_[static_cast<size_t>(node_at(*member(group, "node"), place + "/node"))];
    const Value& spheres = array_at(group, "colliders", place, false);
    std::vector<int> ids;
    for (size_t k = 0; k < spheres.ArrayLen(); ++k) {
      const std::string at = place + "/colliders/" + std::to_string(k);
      const Value& c = spheres.Get(static_cast<int>(k));
      if (!c.IsObject()) fail(at, "is not an object");
      SpringCollider out;
      out.joint = joint;
      const Vec3 o = vec3_object(c, "offset", {0, 0, 0}, at);
      out.offset = {o.x, o.y, 0.0 - o.z};  // UniVRM 0.x wrote Unity's z
      out.radius = number(c, "radius", 0, at, 0, kInf);
      ids.push_back(static_cast<int>(sb.colliders.size()));
      sb.colliders.push_back(out);
    }
    sb.collider_groups.push_back(std::move(ids));
  }
  const Value& bone_groups = array_at(secondary, "boneGroups", root, false);
  for (size_t g = 0; g < bone_groups.ArrayLen(); ++g) {
    const std::string place = root + "/boneGroups/" + std::to_string(g);
    const Value& bg = bone_groups.Get(static_cast<int>(g));
    if (!bg.IsObject()) fail(place, "is not an object");
    SpringJoint settings;
    settings.hit_radius = number(bg, "hitRadius", 0.0, place, 0, kInf);
    settings.stiffness = number(bg, "stiffiness", 1.0, place, 0, kInf);  // sic, 0.x spelling
    settings.gravity_power = number(bg, "gravityPower", 0.0, place, 0, kInf);
    settings.gravity_dir = vec3_object(bg, "gravityDir", {0, -1, 0}, place);
    settings.drag_force = number(bg, "dragForce", 0.4, place, 0, 1);
    int center = -1;
    if (const Value* c = member(bg, "center"); c && !(c->IsNumber() && c->GetNumberAsInt() < 0))
      center = node_to_joint_[static_cast<size_t>(node_at(*c, place + "/center"))];
    const std::vector<int> spring_groups =
        indices(bg, "colliderGroups", place, sb.collider_groups.size(), "collider group");
    const std::string name = str(member(bg, "comment"));
    const Value& bones = array_at(bg, "bones", place, false);
    for (size_t r = 0; r < bones.ArrayLen(); ++r) {
      const std::string at = place + "/bones/" + std::to_string(r);
      Spring spring;
      spring.name = name;
      spring.center = center;
      spring.collider_groups = spring_groups;
      // Every node of the subtree, depth first (parents before children), as three.js's
      // Object3D.traverse visits them.
      std::vector<int> stack{node_at(bones.Get(static_cast<int>(r)), at)};
      while (!stack.empty()) {
        const int node = stack.back();
        stack.pop_back();
        const auto& children = m_.nodes[static_cast<size_t>(node)].children;
        const int joint = node_to_joint_[static_cast<size_t>(node)];
        if (std::find(claimed_.begin(), claimed_.end(), joint) != claimed_.end()) {
          asset_.source.warnings.push_back(at + ": node " + std::to_string(node) +
                                           " is already in a bone group; kept in the first");
        } else {
          claimed_.push_back(joint);
          SpringJoint sj = settings;
          sj.joint = joint;
          sj.child = children.empty() ? -1 : node_to_joint_[static_cast<size_t>(children[0])];
          spring.joints.push_back(sj);
        }
        for (size_t c = children.size(); c-- > 0;) stack.push_back(children[c]);
      }
      if (!spring.joints.empty()) sb.springs.push_back(std::move(spring));
    }
  }
}

}  // namespace

void read_spring_bones(const tinygltf::Model& m, const std::vector<int>& node_to_joint,
                       Asset& asset, const std::string& file) {
  SpringReader reader(m, node_to_joint, asset, file);
  if (auto it = m.extensions.find("VRMC_springBone"); it != m.extensions.end()) {
    if (!it->second.IsObject()) throw Error(file, "/extensions/VRMC_springBone", "not an object");
    reader.read_vrm1(it->second);
    return;
  }
  if (auto it = m.extensions.find("VRM"); it != m.extensions.end())
    if (const Value* sa = member(it->second, "secondaryAnimation")) {
      if (!sa->IsObject()) throw Error(file, "/extensions/VRM/secondaryAnimation", "not an object");
      reader.read_vrm0(*sa);
    }
}

}  // namespace kinema::gltf_detail
