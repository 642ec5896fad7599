// kinema/physics/character_colliders.h — colliders for cloth, hair and particles built from a
// character: a capsule along each skinned bone (joint → its main child) and a sphere on each
// skinned leaf joint, their radii measured from the skin, moving with the joints.
#pragma once

#include <span>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/mat4.h"
#include "kinema/physics/collider.h"

namespace kinema {

struct CharacterColliderOptions {
  /// A vertex belongs to the joint that carries its largest weight, when that weight is at least
  /// this; others are ignored (blended vertices at joints would fatten both bones).
  double min_weight = 0.5;
  /// The radius is this percentile of the joint's vertices' distances to the bone (a few
  /// vertices of a thumb or a strap do not set it).
  double percentile = 0.9;
  int min_vertices = 8;  ///< joints with fewer own vertices get no collider
  double friction = 0.3;
};

/// One collider and the joint it moves with; `local_a`/`local_b` are its ends in that joint's
/// model frame at rest (a sphere: a only).
struct CharacterCollider {
  int joint = -1;
  Collider shape;  ///< at the rest pose (model space, metres)
  Vec3 local_a{0, 0, 0}, local_b{0, 0, 0};
};

/// Measures the colliders of every skinned mesh of `character` at its rest pose: for each joint
/// with enough own vertices, a capsule from the joint to its child with the most descendants (or
/// a sphere around its vertices' centroid for a joint without children), radius the chosen
/// percentile of the vertices' distances to that segment (or centre). Throws kinema::Error when
/// the character has no skinned mesh or the options are out of range.
std::vector<CharacterCollider> character_colliders(const Asset& character,
                                                   const CharacterColliderOptions& options = {});

/// The colliders placed at a pose given as model-space joint matrices (one per skeleton joint,
/// rigid): each end moved by its joint's matrix. `out` is overwritten.
void pose_character_colliders(std::span<const CharacterCollider> colliders,
                              std::span<const Mat4> model_pose, std::vector<Collider>& out);

}  // namespace kinema
