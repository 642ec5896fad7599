// kinema/io/assimp_import.h — FBX and Collada import through assimp.
//
// Skeleton (the node hierarchy), skinned meshes (bones → Skin with offset matrices as inverse
// binds), and animations (one Clip per take). Units and axes are converted to metres and +Y up;
// the source's are recorded in SourceInfo.
#pragma once

#include <string>

#include "kinema/character/asset.h"

namespace kinema {

/// Reads an .fbx or .dae (or anything else assimp reads). Throws kinema::Error.
///
/// - Skeleton: every node below assimp's scene root (the root too when it transforms something
///   or a bone/channel names it); FBX pivot helpers are folded (PRESERVE_PIVOTS off). Empty or
///   duplicate names are made unique (with a warning).
/// - Units/axes: FBX UnitScaleFactor (cm) and Up/Front/CoordAxis, Collada <unit meter> and
///   <up_axis> give a change of basis C = s·R applied to every local transform (C·L·C⁻¹), key,
///   vertex and inverse bind, so locals are in metres with +Y up; the source's are recorded.
/// - Skinned meshes: vertices in skeleton model space (as glTF), Skin::inverse_bind = the bone's
///   offset matrix · the mesh node's model matrix⁻¹ (also stored in Joint::inverse_bind), up to
///   8 influences per vertex, normalized; vertices no bone moves follow the mesh's node. UVs
///   have a top-left origin (as glTF). Rigid meshes stay in their node's frame (Mesh::node).
///   Collada skins with a non-identity <bind_shape_matrix>: assimp folds it into the offsets,
///   so vertices stay in pre-bind-shape space (skinning is still right; W·B⁻¹ is not I).
/// - Clips: one per aiAnimation, LINEAR keys in seconds (ticks/s default 25), duration =
///   max(mDuration/ticks, last key), sample_rate the rate of the frame grid the keys lie on
///   (infer_frame_rate: key-reduced takes skip frames), 0 when they lie on none. Channels for
///   unknown nodes and morph animations are skipped with a warning.
Asset read_with_assimp(const std::string& path);

}  // namespace kinema
