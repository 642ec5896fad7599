// kinema/ik/two_bone.h — analytic two-bone IK in a solve plane with an up vector.
//
// A chain root R → mid M → end E (hip-knee-ankle, shoulder-elbow-wrist) is bent so that E goes
// to a target T, keeping both bone lengths. The solve plane: X along T − R,
// Z = X × (U − R) with U the up vector (pole) position, Y = Z × X; the mid joint lies in that
// plane at angle α from X with cos α = (l1² + d² − l2²) / (2·l1·d) (law of cosines), on the +Y
// (pole) side for elbow_side = +1 and on the −Y side for −1. Targets farther than l1 + l2 (or
// nearer than |l1 − l2|) give the straight (folded) chain pointing at the target.
//
// Everything is in model space, metres, radians, right-handed, +Y up. Per-frame: never throws,
// never allocates, never returns NaN; bad input is reported through TwoBoneStatus.
#pragma once

#include <span>

#include "kinema/math/quat.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// Inputs of solve_two_bone. Positions are model-space joint positions from FK.
struct TwoBoneInput {
  Vec3 root;    ///< R: root joint position (hip, shoulder), metres
  Vec3 mid;     ///< M: mid joint position (knee, elbow)
  Vec3 end;     ///< E: end joint position (ankle, wrist)
  Vec3 target;  ///< T: where E should go
  Vec3 pole;    ///< U: up vector / pole position; the solve plane contains R, T and U
  /// +1: the mid joint bends towards the pole's side of the line R–T (+Y in the solve plane);
  /// −1: the opposite side. Any value ≥ 0 counts as +1, < 0 as −1.
  int elbow_side = 1;
  /// Blend with FK in [0, 1] (clamped): 0 leaves the chain as it is, 1 is the full solution.
  /// Each delta rotation is slerped from identity by this weight.
  double weight = 1;
  /// Soft-IK distance s (metres, ≥ 0; 0 = off), against the snap near full extension. With
  /// L = l1 + l2 and d the root–target distance, targets beyond L − s are pulled in to
  /// d' = (L − s) + s·(1 − exp(−(d − (L − s)) / s)), so the chain approaches straight smoothly and
  /// never quite snaps straight (the common exponential soft-IK; d' < L always).
  double soft_distance = 0;
  /// When true, the end joint's model rotation is turned to target_rotation (blended by weight);
  /// otherwise the end joint rides along with the mid bone.
  bool match_end_rotation = false;
  Quat end_rotation;     ///< the end joint's current model-space rotation (used when matching)
  Quat target_rotation;  ///< the wanted model-space rotation of the end joint
};

/// What happened. Every status but kInvalidInput still returns a usable (finite) result.
enum class TwoBoneStatus {
  kReached,       ///< the full-weight solution puts the end on the target
  kUnreachable,   ///< target beyond l1 + l2 or inside |l1 − l2|: straight/folded chain towards it
  kSoftened,      ///< soft IK pulled the end short of a reachable target
  kDegenerate,    ///< a bone has zero length: identity deltas, chain unchanged
  kInvalidInput,  ///< a non-finite input: identity deltas, chain unchanged
};

/// Result of solve_two_bone. The deltas are model-space rotations: a joint's new model rotation
/// is `delta * old model rotation`, and its new position follows from its parent's delta.
/// root_delta turns the root about R; mid_delta is the mid joint's *total* model delta (it
/// includes root_delta: the new mid-to-end bone is mid_delta · (E − M)); end_delta the end
/// joint's total model delta (equal to mid_delta unless the end rotation is matched).
struct TwoBoneResult {
  TwoBoneStatus status = TwoBoneStatus::kInvalidInput;
  bool reached = false;        ///< status == kReached
  bool pole_fallback = false;  ///< the pole was on the line R–T (or not given): see solve_two_bone
  Quat root_delta;             ///< model-space delta of the root joint
  Quat mid_delta;              ///< model-space total delta of the mid joint
  Quat end_delta;              ///< model-space total delta of the end joint
  Vec3 mid_position;           ///< new M (after blending by weight)
  Vec3 end_position;           ///< new E (after blending by weight)
  double mid_bend = 0;  ///< full-weight bend at the mid joint, radians: 0 straight, π folded
};

/// Solves the two-bone chain. The root keeps its place; bone lengths l1 = |M − R| and
/// l2 = |E − M| are kept (to rounding). The root's delta is the rotation that takes the old
/// (bone, bend-plane normal) frame to the new one, so a chain that was bent in a plane stays a
/// hinge about the plane normal (when the old chain is straight, the shortest arc is used); the
/// mid delta then only bends about the new plane normal.
/// Degenerate cases: pole on the line R–T → the plane through R, T and the current mid joint,
/// and if that too is a line, any plane containing R–T (pole_fallback = true); target on the
/// root → the current direction R → E is used as X (folded chain; kUnreachable unless
/// l1 = l2); zero-length bone → kDegenerate; non-finite input → kInvalidInput. Never NaN.
TwoBoneResult solve_two_bone(const TwoBoneInput& in);

/// Applies a solved chain to local transforms: `parents` is parents-first (Skeleton::parents()),
/// root < mid < end are joint indices with mid below root and end below mid (other joints may
/// sit between them). Only the three joints' local rotations change: a joint j whose nearest
/// chain ancestor a has delta D_a gets local_j ← P_j⁻¹ · D_a⁻¹ · D_j · P_j · local_j, with P_j
/// its parent's old model rotation (computed from `local` rotations; ancestors' scales must be
/// uniform); the root's and mid's results are normalized. Without a matched end rotation
/// (end_delta == mid_delta) the end joint's correction is the identity and its local rotation is
/// left exactly as it is. Returns false and changes nothing when the indices or spans are
/// invalid or the result's status is kDegenerate or kInvalidInput.
bool apply_two_bone(const TwoBoneResult& result, std::span<const int> parents, int root, int mid,
                    int end, std::span<Transform> local);

/// Two-bone IK from local transforms alone: the chain's model positions (and, when matching,
/// the end joint's model rotation) come from FK over `local` along the three joints' ancestors,
/// then solve_two_bone and apply_two_bone. `in.root`, `in.mid`, `in.end` and `in.end_rotation`
/// are ignored (computed); `in.target`, `in.pole` and `in.target_rotation` are model space, i.e.
/// in the frame of the skeleton's roots (no root transform). Every joint on the way must have a
/// uniform scale (x = y = z; what apply_two_bone assumes too). Returns the solve's result; when
/// the indices or spans are invalid (as for apply_two_bone), the parents are not parents-first
/// on the way or a scale is not uniform, the status is kInvalidInput and `local` is unchanged.
/// For callers that have no model-space pose yet: it walks only the chain's ancestors, cheaper
/// than local_to_model over them (BENCHMARKS.md, two-bone IK). Never allocates.
TwoBoneResult solve_two_bone_local(const TwoBoneInput& in, std::span<const int> parents, int root,
                                   int mid, int end, std::span<Transform> local);

/// Allows (true, the default) or forbids the AVX2 copies of solve_two_bone and apply_two_bone —
/// for tests and side-by-side benchmarks. Both copies are the same code and give the same bits
/// (the AVX2 one only has the shorter VEX encoding; no FMA). Returns whether the AVX2 copies are
/// now in use (false on CPUs without AVX2 whatever is asked). Not to be called while another
/// thread solves.
bool set_two_bone_avx2(bool allowed);

/// Local-space corrections of a solved chain, for callers that already have the joints' model
/// rotations from FK (what ozz-animation's IKTwoBoneJob returns): `local_j ← local_j ·
/// correction_j` gives the same rotations as apply_two_bone, without walking the hierarchy.
struct TwoBoneCorrections {
  Quat root = Quat::identity();
  Quat mid = Quat::identity();
  Quat end = Quat::identity();  ///< identity unless the end rotation was matched
};

/// correction_j = M_j⁻¹ · D_a⁻¹ · D_j · M_j, with M_j joint j's old model rotation (unit) and D_a
/// the delta of its nearest chain ancestor (none for the root). Identity corrections when the
/// result's status is kDegenerate or kInvalidInput. Never allocates.
TwoBoneCorrections two_bone_local_corrections(const TwoBoneResult& result, const Quat& root_model,
                                              const Quat& mid_model, const Quat& end_model);

}  // namespace kinema
