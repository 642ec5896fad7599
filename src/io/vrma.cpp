// VRM Animation (.vrma) writing and reading (see kinema/io/vrma.h).
//
// A player (three-vrm, UniVRM) turns each bone's track into a rotation relative to the bone's
// rest placement in model space, composed down VRM's humanoid tree, and applies that to the
// avatar's own bones. So the writer puts every bone node under its VRM parent bone with the rest
// offset taken from the skeleton's model-space rest pose, and keys the rotation relative to the
// VRM parent bone from the sampled model-space pose: composing the nodes then gives the
// skeleton's model-space rotations exactly, whatever unmapped joints lie between the bones.
#include "kinema/io/vrma.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <sstream>

#include "gltf_buffer.h"
#include "gltf_internal.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/gltf.h"

namespace kinema {
namespace {

using Value = tinygltf::Value;

/// VRM 1.0 humanoid bones and their parents in VRM's humanoid tree (nullptr: the root).
struct BoneDef {
  const char* name;
  const char* parent;
};
constexpr std::array<BoneDef, 55> kBones = {{
    {"hips", nullptr},
    {"spine", "hips"},
    {"chest", "spine"},
    {"upperChest", "chest"},
    {"neck", "upperChest"},
    {"head", "neck"},
    {"leftEye", "head"},
    {"rightEye", "head"},
    {"jaw", "head"},
    {"leftUpperLeg", "hips"},
    {"leftLowerLeg", "leftUpperLeg"},
    {"leftFoot", "leftLowerLeg"},
    {"leftToes", "leftFoot"},
    {"rightUpperLeg", "hips"},
    {"rightLowerLeg", "rightUpperLeg"},
    {"rightFoot", "rightLowerLeg"},
    {"rightToes", "rightFoot"},
    {"leftShoulder", "upperChest"},
    {"leftUpperArm", "leftShoulder"},
    {"leftLowerArm", "leftUpperArm"},
    {"leftHand", "leftLowerArm"},
    {"rightShoulder", "upperChest"},
    {"rightUpperArm", "rightShoulder"},
    {"rightLowerArm", "rightUpperArm"},
    {"rightHand", "rightLowerArm"},
    {"leftThumbMetacarpal", "leftHand"},
    {"leftThumbProximal", "leftThumbMetacarpal"},
    {"leftThumbDistal", "leftThumbProximal"},
    {"leftIndexProximal", "leftHand"},
    {"leftIndexIntermediate", "leftIndexProximal"},
    {"leftIndexDistal", "leftIndexIntermediate"},
    {"leftMiddleProximal", "leftHand"},
    {"leftMiddleIntermediate", "leftMiddleProximal"},
    {"leftMiddleDistal", "leftMiddleIntermediate"},
    {"leftRingProximal", "leftHand"},
    {"leftRingIntermediate", "leftRingProximal"},
    {"leftRingDistal", "leftRingIntermediate"},
    {"leftLittleProximal", "leftHand"},
    {"leftLittleIntermediate", "leftLittleProximal"},
    {"leftLittleDistal", "leftLittleIntermediate"},
    {"rightThumbMetacarpal", "rightHand"},
    {"rightThumbProximal", "rightThumbMetacarpal"},
    {"rightThumbDistal", "rightThumbProximal"},
    {"rightIndexProximal", "rightHand"},
    {"rightIndexIntermediate", "rightIndexProximal"},
    {"rightIndexDistal", "rightIndexIntermediate"},
    {"rightMiddleProximal", "rightHand"},
    {"rightMiddleIntermediate", "rightMiddleProximal"},
    {"rightMiddleDistal", "rightMiddleIntermediate"},
    {"rightRingProximal", "rightHand"},
    {"rightRingIntermediate", "rightRingProximal"},
    {"rightRingDistal", "rightRingIntermediate"},
    {"rightLittleProximal", "rightHand"},
    {"rightLittleIntermediate", "rightLittleProximal"},
    {"rightLittleDistal", "rightLittleIntermediate"},
}};

constexpr std::array<const char*, 14> kPresetExpressions = {
    "happy", "angry", "sad", "relaxed", "surprised", "aa",         "ih",
    "ou",    "ee",    "oh",  "blink",   "blinkLeft", "blinkRight", "neutral"};
constexpr std::array<const char*, 4> kLookExpressions = {"lookUp", "lookDown", "lookLeft",
                                                         "lookRight"};

int bone_index(std::string_view name) {
  for (size_t i = 0; i < kBones.size(); ++i)
    if (name == kBones[i].name) return static_cast<int>(i);
  return -1;
}

bool is_eye(std::string_view bone) { return bone == "leftEye" || bone == "rightEye"; }

/// A written bone: its VRM definition, skeleton joint, and the bone (index into the written list)
/// it hangs from, -1 for the hips.
struct WrittenBone {
  int def = -1;
  int joint = -1;
  int parent = -1;
};

/// The humanoid's bones in VRM tree order (parents first), each with its nearest mapped VRM
/// ancestor; the eyes are left out. Throws for a missing hips, unknown or repeated bones and
/// joints outside the skeleton or used twice.
std::vector<WrittenBone> written_bones(const Skeleton& skeleton, const Humanoid& humanoid,
                                       const std::string& path) {
  std::array<int, kBones.size()> joint_of{};
  joint_of.fill(-1);
  std::set<int> used_joints;
  for (const auto& [name, joint] : humanoid.bones) {
    const std::string place = "humanoid bone '" + name + "'";
    const int def = bone_index(name);
    if (def < 0) throw Error(path, place, "is not a VRM 1.0 humanoid bone name");
    if (joint_of[static_cast<size_t>(def)] >= 0) throw Error(path, place, "is mapped twice");
    if (joint < 0 || joint >= skeleton.joint_count())
      throw Error(path, place, "joint " + std::to_string(joint) + " does not exist");
    if (!used_joints.insert(joint).second)
      throw Error(path, place,
                  "joint '" + skeleton.joint(joint).name + "' is already another bone's");
    joint_of[static_cast<size_t>(def)] = joint;
  }
  if (joint_of[0] < 0) throw Error(path, "humanoid", "has no hips bone");
  std::vector<WrittenBone> bones;
  std::array<int, kBones.size()> written_index{};
  written_index.fill(-1);
  for (size_t def = 0; def < kBones.size(); ++def) {
    if (joint_of[def] < 0 || is_eye(kBones[def].name)) continue;
    WrittenBone b{static_cast<int>(def), joint_of[def], -1};
    for (const char* p = kBones[def].parent; p && b.parent < 0;) {
      const int pd = bone_index(p);
      b.parent = written_index[static_cast<size_t>(pd)];
      p = kBones[static_cast<size_t>(pd)].parent;
    }
    written_index[def] = static_cast<int>(bones.size());
    bones.push_back(b);
  }
  return bones;
}

bool is_preset(std::string_view name) {
  return std::find(kPresetExpressions.begin(), kPresetExpressions.end(), name) !=
         kPresetExpressions.end();
}

void check_expressions(const std::vector<VrmaExpressionTrack>& expressions,
                       const std::string& path) {
  std::set<std::string> seen;
  for (const auto& e : expressions) {
    const std::string place = "expression '" + e.name + "'";
    if (e.name.empty()) throw Error(path, "expression", "has no name");
    if (std::find(kLookExpressions.begin(), kLookExpressions.end(), e.name) !=
        kLookExpressions.end())
      throw Error(path, place, "belongs to look-at and cannot be animated in a .vrma");
    if (!seen.insert(e.name).second) throw Error(path, place, "appears twice");
    const size_t per_key = e.interpolation == Interpolation::CubicSpline ? 3 : 1;
    if (e.times.empty() || e.weights.size() != e.times.size() * per_key)
      throw Error(path, place, "needs keys, and one weight per key (three for CUBICSPLINE)");
    for (size_t i = 0; i < e.times.size(); ++i)
      if (!std::isfinite(e.times[i]) || (i > 0 && !(e.times[i] > e.times[i - 1])))
        throw Error(path, place, "key times are not finite and strictly increasing");
    for (double w : e.weights)
      if (!std::isfinite(w)) throw Error(path, place, "weight is not finite");
  }
}

/// Sample times: a grid at `rate` when > 0, else every key time of the clip's joint tracks
/// (with a grid at the clip's frame rate added when a track is CUBICSPLINE, whose curve keys
/// alone would not follow). Always holds 0 and the duration.
std::vector<double> sample_times(const Clip& clip, double rate, bool* all_step) {
  std::set<double> times{0.0, clip.duration};
  bool cubic = false;
  *all_step = true;
  auto add = [&](const auto& keys) {
    if (keys.empty()) return;
    times.insert(keys.times.begin(), keys.times.end());
    cubic = cubic || keys.interpolation == Interpolation::CubicSpline;
    *all_step = *all_step && keys.interpolation == Interpolation::Step;
  };
  for (const auto& t : clip.tracks) {
    add(t.translation);
    add(t.rotation);
    add(t.scale);
  }
  if (rate > 0) {
    times = {0.0, clip.duration};
    *all_step = false;
  } else if (cubic) {
    rate = sample_rate_or(clip);
  }
  if (rate > 0) {
    const long frames = std::lround(std::ceil(clip.duration * rate - 1e-9));
    for (long f = 0; f < frames; ++f) times.insert(static_cast<double>(f) / rate);
  }
  return {times.begin(), times.end()};
}

using gltf_detail::add_channel;
using gltf_detail::Builder;
using gltf_detail::quat_floats;
using gltf_detail::vec3_floats;

/// Rotation keys that take the shorter way between neighbours.
void make_continuous(std::vector<Quat>& qs) {
  for (size_t i = 1; i < qs.size(); ++i)
    if (dot(qs[i], qs[i - 1]) < 0) qs[i] = -qs[i];
}

/// Model-space rotation and position of every joint at one time.
struct ModelPose {
  std::vector<Quat> rotation;
  std::vector<Vec3> position;
};

ModelPose model_pose(const Skeleton& skeleton, std::span<const Transform> local) {
  std::vector<Mat4> model(local.size());
  local_to_model(skeleton.parents(), local, model);
  ModelPose p;
  for (const Mat4& m : model) {
    p.rotation.push_back(normalize(rotation_of(m)));
    p.position.push_back(m.translation_part());
  }
  return p;
}

/// The bone nodes (rest offsets relative to the VRM parent bone) and their rotation tracks,
/// plus the hips' translation track. Returns the hips node.
int add_bones(tinygltf::Model& m, Builder& buf, tinygltf::Animation& anim, const Skeleton& skeleton,
              const Clip& clip, const std::vector<WrittenBone>& bones, double sample_rate) {
  const ModelPose rest = model_pose(skeleton, skeleton.rest_pose());
  const int first = static_cast<int>(m.nodes.size());
  for (size_t i = 0; i < bones.size(); ++i) {
    const WrittenBone& b = bones[i];
    const auto j = static_cast<size_t>(b.joint);
    tinygltf::Node node;
    node.name = kBones[static_cast<size_t>(b.def)].name;
    Quat r = rest.rotation[j];
    Vec3 t = rest.position[j];
    if (b.parent >= 0) {
      const auto pj = static_cast<size_t>(bones[static_cast<size_t>(b.parent)].joint);
      const Quat inv = conjugate(rest.rotation[pj]);
      r = normalize(inv * r);
      t = rotate(inv, t - rest.position[pj]);
      m.nodes[static_cast<size_t>(first + b.parent)].children.push_back(first +
                                                                        static_cast<int>(i));
    }
    node.translation = {t.x, t.y, t.z};
    node.rotation = {r.x, r.y, r.z, r.w};
    m.nodes.push_back(node);
  }

  bool all_step = false;
  const std::vector<double> times = sample_times(clip, sample_rate, &all_step);
  std::vector<std::vector<Quat>> rotations(bones.size());
  std::vector<Vec3> hips_positions;
  std::vector<Transform> local(static_cast<size_t>(skeleton.joint_count()));
  for (double t : times) {
    sample_pose(clip, skeleton, t, WrapMode::Clamp, local);
    const ModelPose pose = model_pose(skeleton, local);
    for (size_t i = 0; i < bones.size(); ++i) {
      const WrittenBone& b = bones[i];
      Quat q = pose.rotation[static_cast<size_t>(b.joint)];
      if (b.parent >= 0)
        q = conjugate(
                pose.rotation[static_cast<size_t>(bones[static_cast<size_t>(b.parent)].joint)]) *
            q;
      rotations[i].push_back(normalize(q));
    }
    hips_positions.push_back(pose.position[static_cast<size_t>(bones[0].joint)]);
  }
  const Interpolation interp = all_step ? Interpolation::Step : Interpolation::Linear;
  const int input = buf.times(times);
  for (size_t i = 0; i < bones.size(); ++i) {
    make_continuous(rotations[i]);
    add_channel(anim, input, buf.floats(quat_floats(rotations[i]), TINYGLTF_TYPE_VEC4, 4, 0, false),
                interp, first + static_cast<int>(i), "rotation");
  }
  add_channel(anim, input, buf.floats(vec3_floats(hips_positions), TINYGLTF_TYPE_VEC3, 3, 0, false),
              interp, first, "translation");
  return first;
}

/// One root node per expression, its weight keyed as translation x. Returns the
/// VRMC_vrm_animation `expressions` object.
Value::Object add_expressions(tinygltf::Model& m, Builder& buf, tinygltf::Animation& anim,
                              const std::vector<VrmaExpressionTrack>& expressions,
                              std::vector<int>& roots) {
  Value::Object preset, custom;
  for (const auto& e : expressions) {
    tinygltf::Node node;
    node.name = "expression_" + e.name;
    const int index = static_cast<int>(m.nodes.size());
    m.nodes.push_back(node);
    roots.push_back(index);
    std::vector<float> f;
    const bool cubic = e.interpolation == Interpolation::CubicSpline;
    for (size_t k = 0; k < e.weights.size(); ++k) {
      const bool value = !cubic || k % 3 == 1;  // tangents are not clamped
      f.insert(f.end(),
               {float(value ? std::clamp(e.weights[k], 0.0, 1.0) : e.weights[k]), 0.f, 0.f});
    }
    add_channel(anim, buf.times(e.times), buf.floats(f, TINYGLTF_TYPE_VEC3, 3, 0, false),
                e.interpolation, index, "translation");
    (is_preset(e.name) ? preset : custom)[e.name] = Value(Value::Object{{"node", Value(index)}});
  }
  Value::Object out;
  if (!preset.empty()) out["preset"] = Value(std::move(preset));
  if (!custom.empty()) out["custom"] = Value(std::move(custom));
  return out;
}

/// The gaze node (a root, so its rotation is in model space) and its rotation track. Returns
/// the VRMC_vrm_animation `lookAt` object.
Value::Object add_look_at(tinygltf::Model& m, Builder& buf, tinygltf::Animation& anim,
                          const VrmaLookAt& look, std::vector<int>& roots,
                          const std::string& path) {
  const Vec3& o = look.offset_from_head;
  if (!std::isfinite(o.x) || !std::isfinite(o.y) || !std::isfinite(o.z))
    throw Error(path, "look-at", "offset from the head is not finite");
  Value::Object out{
      {"offsetFromHeadBone", Value(Value::Array{Value(o.x), Value(o.y), Value(o.z)})}};
  if (look.rotation.empty()) return out;
  Clip probe;  // validates the keys the way clip tracks are validated
  probe.tracks.resize(1);
  probe.tracks[0].rotation = look.rotation;
  try {
    probe.validate(1);
  } catch (const Error& e) {
    throw Error(path, "look-at", e.reason());
  }
  tinygltf::Node node;
  node.name = "lookAt";
  const int index = static_cast<int>(m.nodes.size());
  m.nodes.push_back(node);
  roots.push_back(index);
  std::vector<Quat> qs = look.rotation.values;
  if (look.rotation.interpolation != Interpolation::CubicSpline) make_continuous(qs);
  add_channel(anim, buf.times(look.rotation.times),
              buf.floats(quat_floats(qs), TINYGLTF_TYPE_VEC4, 4, 0, false),
              look.rotation.interpolation, index, "rotation");
  out["node"] = Value(index);
  return out;
}

Value::Object humanoid_json(const std::vector<WrittenBone>& bones, int first_node) {
  Value::Object human_bones;
  for (size_t i = 0; i < bones.size(); ++i)
    human_bones[kBones[static_cast<size_t>(bones[i].def)].name] =
        Value(Value::Object{{"node", Value(first_node + static_cast<int>(i))}});
  return Value::Object{{"humanBones", Value(std::move(human_bones))}};
}

}  // namespace

void write_vrma(const Skeleton& skeleton, const Humanoid& humanoid, const Clip& clip,
                const std::string& path, const VrmaWriteOptions& options) {
  skeleton.validate(false, path);
  clip.validate(skeleton.joint_count(), path);
  if (!std::isfinite(options.sample_rate) || options.sample_rate < 0)
    throw Error(path, "options", "sample rate is negative or not finite");
  const std::vector<WrittenBone> bones = written_bones(skeleton, humanoid, path);
  check_expressions(options.expressions, path);

  tinygltf::Model m;
  Builder buf(m);
  tinygltf::Animation anim;
  anim.name = clip.name;
  const int hips = add_bones(m, buf, anim, skeleton, clip, bones, options.sample_rate);
  std::vector<int> roots{hips};
  Value::Object ext{{"specVersion", Value(std::string("1.0"))},
                    {"humanoid", Value(humanoid_json(bones, hips))}};
  if (!options.expressions.empty())
    ext["expressions"] = Value(add_expressions(m, buf, anim, options.expressions, roots));
  if (options.look_at)
    ext["lookAt"] = Value(add_look_at(m, buf, anim, *options.look_at, roots, path));
  m.animations.push_back(std::move(anim));
  m.extensions["VRMC_vrm_animation"] = Value(std::move(ext));
  m.extensionsUsed.push_back("VRMC_vrm_animation");
  tinygltf::Scene scene;
  scene.nodes = roots;
  m.scenes.push_back(scene);
  m.defaultScene = 0;
  m.asset.version = "2.0";
  m.asset.generator = "kinema";
  while (buf.bin.size() % 4) buf.bin.push_back(0);
  tinygltf::Buffer b;
  b.data = std::move(buf.bin);
  m.buffers.push_back(std::move(b));

  tinygltf::TinyGLTF writer;
  writer.SetImageWriter(&gltf_detail::write_image_passthrough, nullptr);
  std::ostringstream out;
  if (!writer.WriteGltfSceneToStream(&m, out, false, true))
    throw Error(path, "", "tinygltf failed to serialize the animation");
  write_file_atomically(path, out.str());
}

}  // namespace kinema

namespace kinema {
namespace {

/// The VRMC_vrm `expressions` object of a VRM avatar (a VRM 0.x avatar's migrated), or null.
Value avatar_expressions(const GltfDocument& doc) {
  const auto& ext = doc.model.extensions;
  if (auto it = ext.find("VRMC_vrm"); it != ext.end()) {
    const Value* e = gltf_detail::member(it->second, "expressions");
    return e ? *e : Value();
  }
  if (auto it = ext.find("VRM"); it != ext.end()) {
    tinygltf::Model copy = doc.model;  // the migration adds spring bones to the model it is given
    Value::Object vrm1;
    gltf_detail::migrate_vrm0(it->second, copy, vrm1);
    if (vrm1.count("expressions")) return vrm1["expressions"];
  }
  return Value();
}

/// The clip's morph track that the first morph-target bind of `expression` names, with the
/// bound target and the bind's weight; nullptr when there is none.
const MorphTrack* bound_track(const Value& expression, const Asset& avatar, const Clip& clip,
                              int* target, double* bind_weight) {
  const Value* binds = gltf_detail::member(expression, "morphTargetBinds");
  if (!binds || !binds->IsArray() || binds->ArrayLen() == 0) return nullptr;
  const Value& bind = binds->Get(0);
  const Value* node = gltf_detail::member(bind, "node");
  const Value* index = gltf_detail::member(bind, "index");
  const Value* weight = gltf_detail::member(bind, "weight");
  if (!node || !index || !node->IsNumber() || !index->IsNumber()) return nullptr;
  const GltfDocument& doc = *avatar.gltf;
  const int n = node->GetNumberAsInt();
  if (n < 0 || n >= static_cast<int>(doc.model.nodes.size())) return nullptr;
  const int gltf_mesh = doc.model.nodes[static_cast<size_t>(n)].mesh;
  *target = index->GetNumberAsInt();
  *bind_weight = weight && weight->IsNumber() ? weight->GetNumberAsDouble() : 1.0;
  if (gltf_mesh < 0 || !(*bind_weight > 0)) return nullptr;
  for (const MorphTrack& track : clip.morph_tracks) {
    if (track.mesh < 0 || track.mesh >= static_cast<int>(doc.mesh_primitive.size())) continue;
    if (doc.mesh_primitive[static_cast<size_t>(track.mesh)].first == gltf_mesh && *target >= 0 &&
        *target < track.target_count && !track.times.empty())
      return &track;
  }
  return nullptr;
}

}  // namespace

std::vector<VrmaExpressionTrack> vrma_expressions(const Asset& avatar, const Clip& clip) {
  std::vector<VrmaExpressionTrack> out;
  if (!avatar.gltf) return out;
  const Value expressions = avatar_expressions(*avatar.gltf);
  for (const char* group : {"preset", "custom"}) {
    const Value* g = gltf_detail::member(expressions, group);
    if (!g || !g->IsObject()) continue;
    for (const auto& name : g->Keys()) {
      if (std::find(kLookExpressions.begin(), kLookExpressions.end(), name) !=
          kLookExpressions.end())
        continue;
      int target = -1;
      double bind_weight = 1;
      const MorphTrack* track = bound_track(g->Get(name), avatar, clip, &target, &bind_weight);
      if (!track) continue;
      VrmaExpressionTrack e{name, track->interpolation, track->times, {}};
      const size_t stride = static_cast<size_t>(track->target_count);
      for (size_t k = 0; k * stride < track->values.size(); ++k)
        e.weights.push_back(track->values[k * stride + static_cast<size_t>(target)] / bind_weight);
      out.push_back(std::move(e));
    }
  }
  return out;
}

VrmaAnimation read_vrma(const std::string& path) {
  VrmaAnimation out;
  out.asset = read_gltf(path);
  const GltfDocument* doc = out.asset.gltf.get();
  if (!doc || !doc->model.extensions.count("VRMC_vrm_animation"))
    throw Error(path, "/extensions", "has no VRMC_vrm_animation extension (not a VRM Animation)");
  const Value& ext = doc->model.extensions.at("VRMC_vrm_animation");
  const Clip* clip = out.asset.clips.empty() ? nullptr : &out.asset.clips.front();
  auto joint_of = [&](const Value* node, const std::string& place) {
    if (!node || !node->IsNumber()) throw Error(path, place, "has no node index");
    const int n = node->GetNumberAsInt();
    if (n < 0 || n >= static_cast<int>(doc->node_to_joint.size()))
      throw Error(path, place, "node " + std::to_string(n) + " does not exist");
    return doc->node_to_joint[static_cast<size_t>(n)];
  };
  const Value* expressions = gltf_detail::member(ext, "expressions");
  for (const char* group : {"preset", "custom"}) {
    const Value* g = expressions ? gltf_detail::member(*expressions, group) : nullptr;
    if (!g || !g->IsObject()) continue;
    for (const auto& name : g->Keys()) {
      const std::string place =
          "/extensions/VRMC_vrm_animation/expressions/" + std::string(group) + "/" + name + "/node";
      const int joint = joint_of(gltf_detail::member(g->Get(name), "node"), place);
      if (!clip || joint >= static_cast<int>(clip->tracks.size())) continue;
      const auto& keys = clip->tracks[static_cast<size_t>(joint)].translation;
      if (keys.empty()) continue;
      VrmaExpressionTrack e{name, keys.interpolation, keys.times, {}};
      for (const Vec3& v : keys.values) e.weights.push_back(v.x);
      out.expressions.push_back(std::move(e));
    }
  }
  if (const Value* look = gltf_detail::member(ext, "lookAt")) {
    VrmaLookAt l;
    if (const Value* o = gltf_detail::member(*look, "offsetFromHeadBone");
        o && o->IsArray() && o->ArrayLen() == 3)
      l.offset_from_head = {o->Get(0).GetNumberAsDouble(), o->Get(1).GetNumberAsDouble(),
                            o->Get(2).GetNumberAsDouble()};
    if (const Value* node = gltf_detail::member(*look, "node")) {
      const int joint = joint_of(node, "/extensions/VRMC_vrm_animation/lookAt/node");
      if (clip && joint < static_cast<int>(clip->tracks.size()))
        l.rotation = clip->tracks[static_cast<size_t>(joint)].rotation;
    }
    out.look_at = std::move(l);
  }
  return out;
}

}  // namespace kinema
