// kinema/retarget/body_surface.h — the body an arm must stay out of, taken from a character's
// skinned meshes, and the thickness of its arms. Used by arm clearance
// (kinema/retarget/arm_clearance.h). Metres, model space, +Y up.
//
// The body surface is a cloud of skinned vertices with outward normals, chosen so that pushing an
// arm out of it is meaningful:
//  1. a vertex belongs to the body when its dominant skin weight is on a torso, thigh or head
//     bone (hips, spine, chest, upper chest, neck, head, upper legs, by the humanoid map; joints
//     between them that the map does not name count with the mapped bone they hang from). A skirt
//     brushing the floor is still not a foot, and a sleeve is never body;
//  2. a vertex that follows an arm or shoulder bone by ≥ arm_follow_max of its weight is dropped:
//     the skin over the deltoid moves half with the arm, so it is neither body nor arm;
//  3. the kept vertices are thinned on a grid of cell size grid_m at the rest pose (one per cell:
//     cells are [k·grid_m, (k+1)·grid_m) per axis; the vertex nearest the cell's centre among
//     those whose rest normal passes step 4's test, else among all), so density does not depend
//     on the mesh's resolution and an inner face does not shadow the outer face in its cell;
//  4. per frame, a vertex whose skinned normal points inward is dropped (clothing's inner faces:
//     an inward normal would push the arm the wrong way). Inward means the normal points towards
//     the axis of the bone the vertex follows most (the segment from that joint to its mapped
//     child: the next mapped bone up the spine for the torso, the lower leg for a thigh; for the
//     head, from the head joint up the direction from the mapped bone below it, at rest, to the
//     height of the head's highest body vertex, so a chin or a hair bun's underside stays), by
//     more than a small tolerance: cos(normal, away from the axis) < -0.1. A mesh without
//     normals gets area-weighted face normals at the bind pose.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"

namespace kinema {

struct BodySurfaceOptions {
  double grid_m = 0.025;         ///< thinning cell size, metres
  double arm_follow_max = 0.15;  ///< drop vertices following arm/shoulder bones by ≥ this weight
};

/// The body surface of one frame: points (metres, model space) and unit outward normals.
struct BodySurface {
  std::vector<Vec3f> points;
  std::vector<Vec3f> normals;
};

/// The radius of one bone's flesh as a function of the position along the bone, t ∈ [0, 1]
/// (0 at the joint, 1 at its child). Samples are evenly spaced in t (at least one); at() is linear
/// between them and clamps outside [0, 1].
struct RadiusProfile {
  std::vector<double> radius_m;
  double at(double t) const;
};

/// Upper arm (shoulder joint → elbow), forearm (elbow → wrist) and hand (wrist → hand tip, the
/// tip as in ArmJoints) of one arm.
struct ArmRadii {
  RadiusProfile upper, fore, hand;
};

/// The joints of one arm in the skeleton, from the humanoid map. hand_tip_joint is the joint
/// whose position is the end of the hand segment: the middle finger's proximal joint when
/// mapped, else the hand's first child, else -1 (then the hand segment extends the forearm by
/// hand_length_m, taken as 0.4 × the forearm's rest length: a hand from wrist to knuckles).
/// Fingers are thumb, index, middle, ring, little, in that order, each listed only when one of
/// its joints is mapped; a fingertip's offset is its joint's first child's rest translation when
/// it has a child, else the phalanx before it (joint − parent at rest) again, beyond the joint.
struct ArmJoints {
  int shoulder = -1;  ///< the upper arm joint (leftUpperArm / rightUpperArm)
  int elbow = -1;     ///< lower arm
  int wrist = -1;     ///< hand
  int hand_tip_joint = -1;
  double hand_length_m = 0;             ///< rest distance wrist → hand tip, metres
  std::vector<int> fingertip_joints;    ///< the last mapped joint of each finger
  std::vector<Vec3> fingertip_offsets;  ///< per fingertip joint: its tip in the joint's frame, m
};

/// Both arms' joints (left, then right). Throws kinema::Error naming `file` when an arm's upper
/// arm, lower arm or hand is not mapped.
std::array<ArmJoints, 2> humanoid_arms(const Skeleton& skeleton, const Humanoid& map,
                                       const std::string& file);

/// The body-surface builder of one character: which vertices are body (steps 1–3 above, done once
/// at the rest pose) and how to skin them. Immutable after construction; surface() is safe to
/// call from several threads at once.
class BodySurfaceModel {
 public:
  /// Throws kinema::Error naming `file` when the character has no skinned mesh, when no vertex's
  /// dominant weight is on a torso bone (a character without skin weights on the torso), or when
  /// the map lacks the hips, spine or an arm.
  BodySurfaceModel(const Asset& character, const Humanoid& map, const BodySurfaceOptions& options,
                   const std::string& file);

  /// The surface at a pose given as model-space joint matrices (one per skeleton joint);
  /// step 4 above is applied here. `out` is overwritten (its capacity reused); a `model` of
  /// another size than the skeleton's joint count gives an empty surface. Points come in the
  /// order of kept_vertices() (those that fail step 4 left out).
  void surface(std::span<const Mat4> model, BodySurface& out) const;

  /// Body vertices kept after thinning (before the per-frame inward-normal test).
  size_t vertex_count() const;

  /// Which mesh vertex each kept vertex is (vertex_count() entries): for tests and tools.
  struct VertexRef {
    int mesh = -1;    ///< index into Asset::meshes
    int vertex = -1;  ///< vertex of that mesh
  };
  std::span<const VertexRef> kept_vertices() const;

  /// The radii of the arms (left, then right), measured at the rest pose from each bone's own
  /// vertices (dominant weight on that bone, or on an unmapped joint hanging from it, such as a
  /// twist bone): per slice of the bone along t, a high percentile of the vertices' distances to
  /// the bone axis, so a forearm is thinner at the wrist than at the elbow. Precisely: 8 samples at
  /// t = k/7, each the 90th percentile of the distances of the vertices whose t is within 1/14 of
  /// it (vertices up to 1/14 of the bone beyond either end count for the end sample). Slices
  /// without vertices interpolate their neighbours (or copy the nearest); a bone without vertices
  /// takes one sample, 4 % of the bone's length (hand: of the forearm's).
  const std::array<ArmRadii, 2>& arm_radii() const;

  const std::array<ArmJoints, 2>& arms() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kinema
