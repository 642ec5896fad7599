// The body surface an arm must stay out of, and the thickness of the arms, from a character's
// skinned meshes (kinema/retarget/body_surface.h).
#include "kinema/retarget/body_surface.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skin_mesh.h"
#include "kinema/skin/skinning.h"

namespace kinema {

double RadiusProfile::at(double t) const {
  if (radius_m.empty()) return 0;
  if (radius_m.size() == 1 || !(t > 0)) return radius_m.front();
  if (t >= 1) return radius_m.back();
  const double x = t * double(radius_m.size() - 1);
  const size_t k = std::min(size_t(x), radius_m.size() - 2);
  return radius_m[k] + (radius_m[k + 1] - radius_m[k]) * (x - double(k));
}

namespace {

// The bones whose vertices are body, in this order (index = body bone). The torso chain comes
// first; a torso bone's axis runs to the next mapped bone of the chain.
constexpr std::array<std::string_view, 8> kBodyBones = {
    "hips", "spine", "chest", "upperChest", "neck", "head", "leftUpperLeg", "rightUpperLeg"};
constexpr int kTorsoChain = 6;       // hips … head
constexpr int kTorsoBones = 4;       // hips … upperChest: "torso" for the no-torso error
constexpr float kInwardCos = -0.1f;  // a normal this far against "away from the axis" is inward
static_assert(kInwardCos < 0, "outward() assumes a negative threshold");
constexpr int kRadiusSamples = 8;
constexpr double kRadiusQuantile = 0.9;
constexpr double kDefaultRadiusFraction = 0.04;  // of the bone length, for a bone without vertices
constexpr double kHandLengthOfForearm = 0.4;     // wrist → knuckles when nothing marks the tip

constexpr std::array<std::string_view, 2> kSides = {"left", "right"};
constexpr std::array<std::string_view, 5> kFingers = {"Thumb", "Index", "Middle", "Ring", "Little"};

std::string side_bone(int side, std::string_view bone) {
  return std::string(kSides[size_t(side)]) + std::string(bone);
}

/// What each skeleton joint is, from the nearest mapped joint at or above it.
struct JointRoles {
  std::vector<int> body;     ///< body bone index (kBodyBones), or -1
  std::vector<bool> arm;     ///< follows a shoulder, arm, hand or finger bone
  std::vector<int> segment;  ///< side·3 + {0 upper arm, 1 forearm, 2 hand}, or -1
};

JointRoles classify_joints(const Skeleton& skeleton, const Humanoid& map) {
  const size_t n = size_t(skeleton.joint_count());
  std::vector<std::string_view> owner(n);  // the mapped bone at or above each joint
  std::vector<bool> mapped(n, false);
  for (const auto& [bone, joint] : map.bones)
    if (joint >= 0 && size_t(joint) < n) owner[size_t(joint)] = bone, mapped[size_t(joint)] = true;
  for (size_t j = 0; j < n; ++j) {  // parents first: unmapped joints take their parent's
    const int parent = skeleton.parent(int(j));
    if (!mapped[j] && parent >= 0) owner[j] = owner[size_t(parent)];
  }
  JointRoles roles{std::vector<int>(n, -1), std::vector<bool>(n, false), std::vector<int>(n, -1)};
  for (size_t j = 0; j < n; ++j) {
    const std::string_view name = owner[j];
    for (size_t b = 0; b < kBodyBones.size(); ++b)
      if (name == kBodyBones[b]) roles.body[j] = int(b);
    for (int side = 0; side < 2; ++side) {
      if (!name.starts_with(kSides[size_t(side)])) continue;
      const std::string_view rest = name.substr(kSides[size_t(side)].size());
      if (rest == "UpperArm") roles.segment[j] = side * 3;
      if (rest == "LowerArm") roles.segment[j] = side * 3 + 1;
      if (rest == "Hand") roles.segment[j] = side * 3 + 2;
      bool finger = false;
      for (const std::string_view f : kFingers) finger = finger || rest.starts_with(f);
      roles.arm[j] = roles.segment[j] >= 0 || finger || rest == "Shoulder";
    }
  }
  return roles;
}

/// One vertex's influences merged per skeleton joint (a joint listed twice adds up).
struct Influences {
  std::array<int, 8> joint{};
  std::array<float, 8> weight{};
  int count = 0;

  int dominant() const {
    int best = 0;
    for (int k = 1; k < count; ++k)
      if (weight[size_t(k)] > weight[size_t(best)]) best = k;
    return count > 0 ? joint[size_t(best)] : -1;
  }
};

Influences influences_of(const Mesh& mesh, const Skin& skin, size_t v) {
  Influences in;
  for (int k = 0; k < mesh.influences; ++k) {
    const size_t pair = v * size_t(mesh.influences) + size_t(k);
    const float w = mesh.weights[pair];
    if (!(w > 0)) continue;
    const int joint = skin.joints[mesh.joints[pair]];
    int slot = 0;
    while (slot < in.count && in.joint[size_t(slot)] != joint) ++slot;
    if (slot == in.count) in.joint[size_t(in.count++)] = joint;
    in.weight[size_t(slot)] += w;
  }
  return in;
}

/// Area-weighted vertex normals of a mesh at its bind pose (for meshes without normals).
std::vector<Vec3f> face_normals(const Mesh& mesh) {
  std::vector<Vec3f> normals(mesh.vertex_count(), Vec3f{0, 0, 0});
  for (size_t i = 0; i + 2 < mesh.indices.size(); i += 3) {
    const uint32_t a = mesh.indices[i], b = mesh.indices[i + 1], c = mesh.indices[i + 2];
    if (std::max({a, b, c}) >= normals.size()) continue;
    const Vec3f n =
        cross(mesh.positions[b] - mesh.positions[a], mesh.positions[c] - mesh.positions[a]);
    normals[a] += n, normals[b] += n, normals[c] += n;
  }
  for (Vec3f& n : normals) n = normalize(n, Vec3f{0, 1, 0});
  return normals;
}

/// An axis a body vertex is tested against: from joint `from` to the point `to_offset` in joint
/// `to`'s frame (a joint's position when the offset is zero; a thigh without a mapped lower leg
/// has a point for an axis).
struct Axis {
  int from = -1, to = -1;
  Vec3 to_offset{0, 0, 0};

  Vec3f start(std::span<const Mat4> model) const {
    return Vec3f(model[size_t(from)].translation_part());
  }
  Vec3f end(std::span<const Mat4> model) const {
    return Vec3f(model[size_t(to)].transform_point(to_offset));
  }
};

/// A bone's axis as a segment a → a + ab, with 1/|ab|² (0 for a point) for the projections.
struct Segment {
  Vec3f a{0, 0, 0}, ab{0, 0, 0};
  float inv_len2 = 0;
  Segment() = default;
  Segment(const Vec3f& from, const Vec3f& to) : a(from), ab(to - from) {
    const float len2 = dot(ab, ab);
    inv_len2 = len2 > 1e-12f ? 1 / len2 : 0.0f;
  }
};

/// Does normal n at p face away from the segment (not more than kInwardCos against the direction
/// from its closest point to p)?
bool outward(const Vec3f& p, const Vec3f& n, const Segment& axis) {
  const float t = std::clamp(dot(p - axis.a, axis.ab) * axis.inv_len2, 0.0f, 1.0f);
  const Vec3f away = p - (axis.a + axis.ab * t);
  // n·away ≥ kInwardCos·|away| with kInwardCos < 0, without the square root.
  const float along = dot(n, away);
  return along >= 0 || along * along <= kInwardCos * kInwardCos * dot(away, away);
}

std::array<Axis, kBodyBones.size()> body_axes(const Humanoid& map) {
  std::array<Axis, kBodyBones.size()> axes;
  for (int b = 0; b < int(kBodyBones.size()); ++b) {
    Axis& axis = axes[size_t(b)];
    axis.from = map.find(kBodyBones[size_t(b)]);
    axis.to = axis.from;
    if (b < kTorsoChain) {
      for (int next = b + 1; next < kTorsoChain && axis.to == axis.from; ++next)
        if (const int j = map.find(kBodyBones[size_t(next)]); j >= 0) axis.to = j;
    } else if (const int knee = map.find(side_bone(b - kTorsoChain, "LowerLeg")); knee >= 0) {
      axis.to = knee;
    }
  }
  return axes;
}

}  // namespace

// ---- arms -------------------------------------------------------------------------------------

namespace {

Vec3 rest_position(const std::vector<Mat4>& rest, int joint) {
  return rest[size_t(joint)].translation_part();
}

int mapped(const Humanoid& map, int side, std::string_view bone) {
  return map.find(side_bone(side, bone));
}

/// A fingertip's offset in its joint's frame: the first child's rest translation, else the last
/// phalanx again beyond the joint.
Vec3 fingertip_offset(const Skeleton& skeleton, const std::vector<Mat4>& rest, int joint) {
  const std::vector<int> children = skeleton.children(joint);
  if (!children.empty()) return skeleton.joint(children.front()).rest.translation;
  const int parent = skeleton.parent(joint);
  if (parent < 0) return Vec3{0, 0, 0};
  const Vec3 tip = rest_position(rest, joint) * 2.0 - rest_position(rest, parent);
  Mat4 inv;
  if (!inverse(rest[size_t(joint)], inv)) return Vec3{0, 0, 0};
  return inv.transform_point(tip);
}

}  // namespace

std::array<ArmJoints, 2> humanoid_arms(const Skeleton& skeleton, const Humanoid& map,
                                       const std::string& file) {
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  std::array<ArmJoints, 2> arms;
  for (int side = 0; side < 2; ++side) {
    ArmJoints& arm = arms[size_t(side)];
    for (const char* bone : {"UpperArm", "LowerArm", "Hand"})
      if (mapped(map, side, bone) < 0)
        throw Error(file, "humanoid map",
                    "no " + side_bone(side, bone) +
                        ": arm clearance needs both arms' upper arm, lower "
                        "arm and hand");
    arm.shoulder = mapped(map, side, "UpperArm");
    arm.elbow = mapped(map, side, "LowerArm");
    arm.wrist = mapped(map, side, "Hand");
    arm.hand_tip_joint = mapped(map, side, "MiddleProximal");
    if (arm.hand_tip_joint < 0) {
      const std::vector<int> children = skeleton.children(arm.wrist);
      if (!children.empty()) arm.hand_tip_joint = children.front();
    }
    const Vec3 wrist = rest_position(rest, arm.wrist);
    if (arm.hand_tip_joint >= 0)
      arm.hand_length_m = distance(wrist, rest_position(rest, arm.hand_tip_joint));
    if (!(arm.hand_length_m > 1e-3)) {  // no tip, or one sitting on the wrist
      arm.hand_tip_joint = -1;
      arm.hand_length_m = kHandLengthOfForearm * distance(rest_position(rest, arm.elbow), wrist);
    }
    for (const std::string_view finger : kFingers) {
      int last = -1;
      for (const char* part : {"Metacarpal", "Proximal", "Intermediate", "Distal"})
        if (const int j = mapped(map, side, std::string(finger) + part); j >= 0) last = j;
      if (last < 0) continue;
      arm.fingertip_joints.push_back(last);
      arm.fingertip_offsets.push_back(fingertip_offset(skeleton, rest, last));
    }
  }
  return arms;
}

namespace {

/// The (skeleton joint, inverse bind) pairs the body vertices use, whatever their mesh's skin.
struct CompactPalette {
  std::vector<int> joints;
  std::vector<Mat4> inverse_bind;

  size_t size() const { return joints.size(); }
  void fill(std::span<const Mat4> model, std::span<Affine3x4f> out) const {
    for (size_t e = 0; e < joints.size(); ++e)
      out[e] = to_affine3x4(model[size_t(joints[e])] * inverse_bind[e]);
  }
};

using Axes = std::array<Axis, kBodyBones.size()>;

}  // namespace

// ---- the model --------------------------------------------------------------------------------

struct BodySurfaceModel::Impl {
  BodySurfaceOptions options;
  std::array<ArmJoints, 2> arms;
  std::array<ArmRadii, 2> radii;
  Axes axes;
  size_t joint_count = 0;
  CompactPalette palette;
  SkinMesh mesh;                     ///< the kept vertices, skinned with the compact palette
  std::vector<uint8_t> vertex_axis;  ///< per kept vertex: its body bone (axis)
  std::vector<VertexRef> refs;
};

namespace {

/// Body vertices after steps 1–2, in the compact palette's terms (a SkinMeshView's arrays).
struct Candidates {
  std::vector<Vec3f> positions, normals;
  std::vector<uint16_t> joints;
  std::vector<float> weights;
  std::vector<uint8_t> axis;
  std::vector<BodySurfaceModel::VertexRef> refs;
  bool any_torso = false;

  SkinMeshView view() const { return {positions, normals, {}, 8, joints, weights}; }
};

Candidates body_candidates(const Asset& asset, const JointRoles& roles,
                           const BodySurfaceOptions& options, const std::string& file,
                           CompactPalette& palette) {
  Candidates c;
  std::map<std::pair<int, int>, uint16_t> compact;  // (skin, skin joint) → palette entry
  for (size_t m = 0; m < asset.meshes.size(); ++m) {
    const Mesh& mesh = asset.meshes[m];
    if (mesh.skin < 0 || mesh.influences <= 0 || size_t(mesh.skin) >= asset.skins.size()) continue;
    const Skin& skin = asset.skins[size_t(mesh.skin)];
    validate_skin_mesh(skin_mesh_view(mesh, file), skin.joints.size(), file, mesh.name);
    const std::vector<Vec3f> computed =
        mesh.normals.empty() ? face_normals(mesh) : std::vector<Vec3f>{};
    const std::vector<Vec3f>& normals = mesh.normals.empty() ? computed : mesh.normals;
    for (size_t v = 0; v < mesh.vertex_count(); ++v) {
      const Influences in = influences_of(mesh, skin, v);
      const int dominant = in.dominant();
      if (dominant < 0 || roles.body[size_t(dominant)] < 0) continue;
      float arm_weight = 0;
      for (int k = 0; k < in.count; ++k)
        if (roles.arm[size_t(in.joint[size_t(k)])]) arm_weight += in.weight[size_t(k)];
      if (arm_weight >= float(options.arm_follow_max)) continue;
      const int body = roles.body[size_t(dominant)];
      c.any_torso = c.any_torso || body < kTorsoBones;
      c.positions.push_back(mesh.positions[v]);
      c.normals.push_back(normals[v]);
      c.axis.push_back(uint8_t(body));
      c.refs.push_back({int(m), int(v)});
      for (int k = 0; k < 8; ++k) {
        const size_t pair = v * size_t(mesh.influences) + size_t(k);
        const bool real = k < mesh.influences && mesh.weights[pair] > 0;
        uint16_t entry = 0;
        if (real) {
          const auto key = std::make_pair(mesh.skin, int(mesh.joints[pair]));
          auto [it, added] = compact.try_emplace(key, uint16_t(palette.size()));
          if (added) {
            palette.joints.push_back(skin.joints[size_t(key.second)]);
            palette.inverse_bind.push_back(skin.inverse_bind[size_t(key.second)]);
          }
          entry = it->second;
        }
        c.joints.push_back(entry);
        c.weights.push_back(real ? mesh.weights[pair] : 0.0f);
      }
    }
  }
  return c;
}

/// The head has no mapped bone above it: its axis runs from the head joint up the neck's
/// direction (the previous mapped torso bone → head, at rest) to the height of the head's highest
/// body vertex, so the underside of a chin or a hair bun is not taken for an inner face.
void extend_head_axis(Axes& axes, const Candidates& c, std::span<const Vec3f> rest_points,
                      std::span<const Mat4> rest_model) {
  constexpr size_t kHead = kTorsoChain - 1;
  Axis& head = axes[kHead];
  if (head.from < 0) return;
  int below = -1;
  for (size_t b = 0; b < kHead; ++b)
    if (axes[b].from >= 0) below = axes[b].from;
  if (below < 0) return;
  const Vec3 base = rest_model[size_t(head.from)].translation_part();
  const Vec3 up = normalize(base - rest_model[size_t(below)].translation_part(), Vec3{0, 1, 0});
  double top = 0;
  for (size_t i = 0; i < rest_points.size(); ++i)
    if (c.axis[i] == kHead) top = std::max(top, dot(Vec3(rest_points[i]) - base, up));
  Mat4 inv;
  if (top > 0 && inverse(rest_model[size_t(head.from)], inv))
    head.to_offset = inv.transform_point(base + up * top);
}

/// Step 3: one candidate per grid cell at the rest pose; returns the chosen candidates in order.
std::vector<size_t> thin_on_grid(double cell, const Axes& axes, const Candidates& c,
                                 std::span<const Vec3f> rest_points,
                                 std::span<const Vec3f> rest_normals,
                                 std::span<const Mat4> rest_model) {
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  std::map<Key, std::tuple<bool, double, size_t>> best;  // cell → (inward, distance², candidate)
  for (size_t i = 0; i < rest_points.size(); ++i) {
    const Vec3 p(rest_points[i]);
    const Vec3 k{std::floor(p.x / cell), std::floor(p.y / cell), std::floor(p.z / cell)};
    const Vec3 centre = (k + Vec3{0.5, 0.5, 0.5}) * cell;
    const Axis& axis = axes[c.axis[i]];
    const bool inward = !outward(rest_points[i], rest_normals[i],
                                 Segment(Vec3f(rest_model[size_t(axis.from)].translation_part()),
                                         Vec3f(rest_model[size_t(axis.to)].translation_part())));
    const auto candidate = std::make_tuple(inward, length_squared(p - centre), i);
    const Key key{int64_t(k.x), int64_t(k.y), int64_t(k.z)};
    auto [it, added] = best.try_emplace(key, candidate);
    if (!added && candidate < it->second) it->second = candidate;
  }
  std::vector<size_t> kept;
  kept.reserve(best.size());
  for (const auto& [key, choice] : best) kept.push_back(std::get<2>(choice));
  std::sort(kept.begin(), kept.end());
  return kept;
}

/// The rest positions (double precision) of every vertex whose dominant joint is on an arm
/// segment, grouped by segment (side·3 + 0/1/2).
std::array<std::vector<Vec3>, 6> arm_vertices(const Asset& asset, const JointRoles& roles,
                                              std::span<const Mat4> rest_model) {
  std::array<std::vector<Vec3>, 6> out;
  for (const Mesh& mesh : asset.meshes) {
    if (mesh.skin < 0 || mesh.influences <= 0 || size_t(mesh.skin) >= asset.skins.size()) continue;
    const Skin& skin = asset.skins[size_t(mesh.skin)];
    for (size_t v = 0; v < mesh.vertex_count(); ++v) {
      const Influences in = influences_of(mesh, skin, v);
      const int dominant = in.dominant();
      if (dominant < 0 || roles.segment[size_t(dominant)] < 0) continue;
      Vec3 p{0, 0, 0};
      for (int k = 0; k < mesh.influences; ++k) {
        const size_t pair = v * size_t(mesh.influences) + size_t(k);
        const size_t sj = mesh.joints[pair];
        const Mat4 s = rest_model[size_t(skin.joints[sj])] * skin.inverse_bind[sj];
        p += s.transform_point(Vec3(mesh.positions[v])) * double(mesh.weights[pair]);
      }
      out[size_t(roles.segment[size_t(dominant)])].push_back(p);
    }
  }
  return out;
}

/// A bone's radius profile from its vertices: per sample k (t = k / (n − 1)), the
/// kRadiusQuantile of the distances to the axis a–b of the vertices within half a sample
/// spacing of it in t; empty samples interpolate their neighbours.
RadiusProfile radius_profile(std::span<const Vec3> vertices, const Vec3& a, const Vec3& b,
                             double fallback_m) {
  const Vec3 ab = b - a;
  const double len2 = dot(ab, ab);
  std::array<std::vector<double>, kRadiusSamples> slices;
  const double spacing = 1.0 / (kRadiusSamples - 1);
  for (const Vec3& p : vertices) {
    if (!(len2 > 1e-12)) break;
    const double t = dot(p - a, ab) / len2;
    const double k = std::round(t / spacing);
    if (k < 0 || k >= kRadiusSamples) continue;
    slices[size_t(k)].push_back(distance(p, a + ab * t));
  }
  std::vector<double> radius(kRadiusSamples, -1.0);
  for (size_t k = 0; k < slices.size(); ++k) {
    std::vector<double>& d = slices[k];
    if (d.empty()) continue;
    const size_t q = std::min(d.size() - 1, size_t(kRadiusQuantile * double(d.size())));
    std::nth_element(d.begin(), d.begin() + std::ptrdiff_t(q), d.end());
    radius[k] = d[q];
  }
  if (std::all_of(radius.begin(), radius.end(), [](double r) { return r < 0; }))
    return RadiusProfile{{fallback_m}};
  for (int k = 0; k < kRadiusSamples; ++k) {
    if (radius[size_t(k)] >= 0) continue;
    int lo = k - 1, hi = k + 1;
    while (lo >= 0 && radius[size_t(lo)] < 0) --lo;
    while (hi < kRadiusSamples && radius[size_t(hi)] < 0) ++hi;
    if (lo < 0)
      radius[size_t(k)] = radius[size_t(hi)];
    else if (hi >= kRadiusSamples)
      radius[size_t(k)] = radius[size_t(lo)];
    else
      radius[size_t(k)] = radius[size_t(lo)] + (radius[size_t(hi)] - radius[size_t(lo)]) *
                                                   double(k - lo) / double(hi - lo);
  }
  return RadiusProfile{radius};
}

std::array<ArmRadii, 2> measure_radii(const Asset& asset, const JointRoles& roles,
                                      const std::array<ArmJoints, 2>& arms,
                                      std::span<const Mat4> rest_model) {
  const std::array<std::vector<Vec3>, 6> vertices = arm_vertices(asset, roles, rest_model);
  std::array<ArmRadii, 2> radii;
  for (size_t side = 0; side < 2; ++side) {
    const ArmJoints& arm = arms[side];
    const Vec3 shoulder = rest_model[size_t(arm.shoulder)].translation_part();
    const Vec3 elbow = rest_model[size_t(arm.elbow)].translation_part();
    const Vec3 wrist = rest_model[size_t(arm.wrist)].translation_part();
    const Vec3 tip = arm.hand_tip_joint >= 0
                         ? rest_model[size_t(arm.hand_tip_joint)].translation_part()
                         : wrist + normalize(wrist - elbow) * arm.hand_length_m;
    const double forearm = distance(elbow, wrist);
    radii[side].upper = radius_profile(vertices[side * 3], shoulder, elbow,
                                       kDefaultRadiusFraction * distance(shoulder, elbow));
    radii[side].fore =
        radius_profile(vertices[side * 3 + 1], elbow, wrist, kDefaultRadiusFraction * forearm);
    radii[side].hand =
        radius_profile(vertices[side * 3 + 2], wrist, tip, kDefaultRadiusFraction * forearm);
  }
  return radii;
}

}  // namespace

BodySurfaceModel::BodySurfaceModel(const Asset& character, const Humanoid& map,
                                   const BodySurfaceOptions& options, const std::string& file) {
  for (const char* bone : {"hips", "spine"})
    if (map.find(bone) < 0)
      throw Error(file, "humanoid map", std::string("no ") + bone + ": the body surface needs it");
  const bool skinned = std::any_of(character.meshes.begin(), character.meshes.end(),
                                   [](const Mesh& m) { return m.skin >= 0 && m.influences > 0; });
  if (!skinned)
    throw Error(file, "", "no skinned mesh: arm clearance measures the body from its skin weights");
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  impl->arms = humanoid_arms(character.skeleton, map, file);
  impl->axes = body_axes(map);
  impl->joint_count = size_t(character.skeleton.joint_count());
  const JointRoles roles = classify_joints(character.skeleton, map);
  const std::vector<Mat4> rest_model = rest_model_matrices(character.skeleton);
  impl->radii = measure_radii(character, roles, impl->arms, rest_model);

  const Candidates c = body_candidates(character, roles, options, file, impl->palette);
  if (!c.any_torso)
    throw Error(file, "skin weights",
                "no vertex has its largest skin weight on a torso bone (hips, spine, chest, upper "
                "chest): the body surface needs a skinned torso");
  // Skin the candidates at rest with the same kernel surface() uses, so the thinned points are
  // where surface() puts them at the rest pose, bit for bit.
  const SkinMesh all = make_skin_mesh(c.view(), impl->palette.size(), file, "body");
  std::vector<Affine3x4f> palette(impl->palette.size());
  impl->palette.fill(rest_model, palette);
  std::vector<Vec3f> rest_points(c.positions.size()), rest_normals(c.positions.size());
  skin_lbs(all, palette, {rest_points, rest_normals, {}});
  extend_head_axis(impl->axes, c, rest_points, rest_model);
  const std::vector<size_t> kept =
      thin_on_grid(options.grid_m, impl->axes, c, rest_points, rest_normals, rest_model);

  Candidates thinned;
  for (const size_t i : kept) {
    thinned.positions.push_back(c.positions[i]);
    thinned.normals.push_back(c.normals[i]);
    thinned.axis.push_back(c.axis[i]);
    thinned.refs.push_back(c.refs[i]);
    for (size_t k = 0; k < 8; ++k) {
      thinned.joints.push_back(c.joints[i * 8 + k]);
      thinned.weights.push_back(c.weights[i * 8 + k]);
    }
  }
  impl->mesh = make_skin_mesh(thinned.view(), impl->palette.size(), file, "body");
  impl->vertex_axis = std::move(thinned.axis);
  impl->refs = std::move(thinned.refs);
  impl_ = std::move(impl);
}

void BodySurfaceModel::surface(std::span<const Mat4> model, BodySurface& out) const {
  const Impl& m = *impl_;
  const size_t n = m.mesh.vertex_count();
  if (model.size() != m.joint_count) {
    out.points.clear();
    out.normals.clear();
    return;
  }
  // One palette buffer per thread, grown once: surface() runs for every frame of a clip.
  thread_local std::vector<Affine3x4f> palette;
  palette.resize(m.palette.size());
  m.palette.fill(model, palette);
  out.points.resize(n);
  out.normals.resize(n);
  skin_lbs(m.mesh, palette, {out.points, out.normals, {}});

  std::array<Segment, kBodyBones.size()> axes{};
  for (size_t b = 0; b < m.axes.size(); ++b)
    if (m.axes[b].from >= 0) axes[b] = Segment(m.axes[b].start(model), m.axes[b].end(model));
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!outward(out.points[i], out.normals[i], axes[m.vertex_axis[i]])) continue;
    out.points[kept] = out.points[i];
    out.normals[kept] = out.normals[i];
    ++kept;
  }
  out.points.resize(kept);
  out.normals.resize(kept);
}

size_t BodySurfaceModel::vertex_count() const { return impl_->mesh.vertex_count(); }

std::span<const BodySurfaceModel::VertexRef> BodySurfaceModel::kept_vertices() const {
  return impl_->refs;
}

const std::array<ArmRadii, 2>& BodySurfaceModel::arm_radii() const { return impl_->radii; }

const std::array<ArmJoints, 2>& BodySurfaceModel::arms() const { return impl_->arms; }

}  // namespace kinema
