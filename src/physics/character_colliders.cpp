// Colliders built from a character (kinema/physics/character_colliders.h).
#include "kinema/physics/character_colliders.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "character colliders";

/// Distance from p to the segment a–b.
double distance_to_segment(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double t = std::clamp(dot(p - a, ab) / dot(ab, ab), 0.0, 1.0);
  return length(p - (a + ab * t));
}

double percentile_of(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const size_t i = size_t(std::floor(q * double(values.size() - 1)));
  return values[std::min(i, values.size() - 1)];
}

}  // namespace

std::vector<CharacterCollider> character_colliders(const Asset& character,
                                                   const CharacterColliderOptions& options) {
  if (!(options.min_weight > 0 && options.min_weight <= 1))
    throw Error({}, kPlace, "min_weight must be in (0, 1]");
  if (!(options.percentile >= 0 && options.percentile <= 1))
    throw Error({}, kPlace, "percentile must be in [0, 1]");
  if (options.min_vertices < 1) throw Error({}, kPlace, "min_vertices must be ≥ 1");
  const Skeleton& skeleton = character.skeleton;
  const int joints = skeleton.joint_count();
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  // Each skinned vertex at the rest pose, given to the joint carrying its largest weight.
  std::vector<std::vector<Vec3>> own(static_cast<size_t>(joints));
  bool skinned = false;
  for (const Mesh& mesh : character.meshes) {
    if (mesh.skin < 0 || mesh.influences == 0) continue;
    const Skin& skin = character.skins[size_t(mesh.skin)];
    skinned = true;
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
      Vec3 p{0, 0, 0};
      int best = -1;
      double best_weight = 0;
      for (int k = 0; k < mesh.influences; ++k) {
        const size_t at = v * size_t(mesh.influences) + size_t(k);
        const double w = mesh.weights[at];
        if (w == 0) continue;
        const int joint = skin.joints[mesh.joints[at]];
        p += (rest[size_t(joint)] * skin.inverse_bind[mesh.joints[at]])
                 .transform_point(Vec3(mesh.positions[v])) *
             w;
        if (w > best_weight) best = joint, best_weight = w;
      }
      if (best >= 0 && best_weight >= options.min_weight) own[size_t(best)].push_back(p);
    }
  }
  if (!skinned) throw Error({}, kPlace, "the character has no skinned mesh");
  // Descendant counts, to follow the main child (the spine, not a shoulder).
  std::vector<int> descendants(static_cast<size_t>(joints), 0);
  for (int j = joints - 1; j >= 0; --j)
    if (skeleton.joint(j).parent != kNoParent)
      descendants[size_t(skeleton.joint(j).parent)] += descendants[size_t(j)] + 1;
  std::vector<CharacterCollider> out;
  for (int j = 0; j < joints; ++j) {
    const std::vector<Vec3>& points = own[size_t(j)];
    if (int(points.size()) < options.min_vertices) continue;
    const Vec3 a = rest[size_t(j)].translation_part();
    int child = -1;
    for (int c : skeleton.children(j))
      if (length(rest[size_t(c)].translation_part() - a) > 1e-6 &&
          (child < 0 || descendants[size_t(c)] > descendants[size_t(child)]))
        child = c;
    CharacterCollider collider;
    collider.joint = j;
    collider.shape.friction = options.friction;
    std::vector<double> distances;
    if (child >= 0) {
      const Vec3 b = rest[size_t(child)].translation_part();
      for (const Vec3& p : points) distances.push_back(distance_to_segment(p, a, b));
      collider.shape.shape = ColliderShape::Capsule;
      collider.shape.a = a;
      collider.shape.b = b;
    } else {
      Vec3 centre{0, 0, 0};
      for (const Vec3& p : points) centre += p;
      centre = centre / double(points.size());
      for (const Vec3& p : points) distances.push_back(length(p - centre));
      collider.shape.shape = ColliderShape::Sphere;
      collider.shape.a = centre;
      collider.shape.b = centre;
    }
    collider.shape.radius = percentile_of(distances, options.percentile);
    if (!(collider.shape.radius > 0)) continue;
    const Mat4 to_joint = rigid_inverse(rest[size_t(j)]);
    collider.local_a = to_joint.transform_point(collider.shape.a);
    collider.local_b = to_joint.transform_point(collider.shape.b);
    out.push_back(collider);
  }
  return out;
}

void pose_character_colliders(std::span<const CharacterCollider> colliders,
                              std::span<const Mat4> model_pose, std::vector<Collider>& out) {
  out.clear();
  for (const CharacterCollider& c : colliders) {
    if (c.joint < 0 || size_t(c.joint) >= model_pose.size())
      throw Error({}, kPlace, "the pose has no joint " + std::to_string(c.joint));
    Collider placed = c.shape;
    placed.a = model_pose[size_t(c.joint)].transform_point(c.local_a);
    placed.b = model_pose[size_t(c.joint)].transform_point(c.local_b);
    out.push_back(placed);
  }
}

}  // namespace kinema
