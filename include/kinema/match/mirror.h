// kinema/match/mirror.h — left ↔ right mirroring of skeletons and poses (for doubling a motion
// motion-matching database).
//
// The mirror is the reflection x → −x (kinema's +X is the character's left). A pose is mirrored
// in model space: joint j takes its counterpart m's model transform, reflected, and corrected by
// the rest pose so that the rest pose mirrors to itself on a symmetric rig:
//   p′_j = S·p_m,   R′_j = (S·R_m·S) · (S·Rrest_m·S)⁻¹ · Rrest_j,   S = diag(−1, 1, 1),
// then converted back to local transforms. S·R·S of a quaternion (x, y, z, w) is (x, −y, −z, w).
// This does not assume that a rig's local axes are mirror-symmetric (CMU, Daz and Character
// Creator rigs are not all).
#pragma once

#include <span>
#include <vector>

#include "kinema/skeleton/skeleton.h"

namespace kinema::match {

/// Each joint's counterpart by name (itself for centre joints): Left/Right, left/right, LEFT/RIGHT
/// anywhere; _L_/_R_, L_/R_ at the start; _L/_R, .L/.R, _l/_r, .l/.r at the end; l/r or L/R
/// before an upper-case letter at the start (Daz's lThigh, rThigh). The map is symmetric.
std::vector<int> mirror_joints(const Skeleton& skeleton);

/// Mirrors a local pose (one transform per joint) through x → −x. `mirror` from mirror_joints.
/// Returns false (writing nothing) on a size mismatch. Local scales are the counterpart's.
bool mirror_pose(const Skeleton& skeleton, std::span<const int> mirror,
                 std::span<const Transform> local, std::span<Transform> out);

}  // namespace kinema::match
