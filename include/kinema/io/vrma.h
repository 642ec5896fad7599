// kinema/io/vrma.h — VRM Animation (.vrma, the glTF extension VRMC_vrm_animation 1.0): humanoid
// bone rotations, the hips translation, expression weights and the eye gaze of one clip, in a
// form any VRM 1.0 avatar can play (three-vrm's VRMAnimationLoaderPlugin, UniVRM, the Blender
// add-on).
//
// What a .vrma holds and how kinema writes it:
//  * One node per humanoid bone (the eyes excepted: the format gives them to look-at), linked as
//    VRM 1.0's humanoid tree links them (leftUpperArm under leftShoulder, or under upperChest when
//    there is no shoulder, …). Their rest pose is the skeleton's rest pose, taken in model space:
//    each node's rest is its bone's rest placement relative to its VRM parent bone, so joints
//    the humanoid does not map (twist helpers, an armature root) leave no node and need none.
//    The format asks for the VRM T-pose at rest; a VRM 1.0 avatar's skeleton is in it.
//  * Tracks: a rotation for every bone (relative to its VRM parent bone, so its world rotation is
//    the skeleton's), the hips' model-space position, and for each expression a node whose
//    translation x is the weight; look-at is a node whose rotation turns +Z to the gaze.
//  * Key times: the clip's key times (every joint track's, merged), or a grid at
//    VrmaWriteOptions::sample_rate. Keys are LINEAR (STEP when every track is STEP); CUBICSPLINE
//    tracks are sampled at the clip's frame rate (30 fps when it has none).
//  * Units and axes: metres, +Y up, the avatar facing +Z (VRM 1.0). Scale tracks and the
//    translations of joints other than the hips are not representable and not written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

/// Weights of one VRM expression over time.
struct VrmaExpressionTrack {
  /// VRM 1.0 expression name: a preset ("happy", "aa", "blink", …; lookUp/Down/Left/Right are
  /// look-at's and refused) or a custom name.
  std::string name;
  Interpolation interpolation = Interpolation::Linear;
  std::vector<double> times;    ///< seconds, strictly increasing
  std::vector<double> weights;  ///< one per time (three for CubicSpline), 0…1
};

/// The eye gaze over time.
struct VrmaLookAt {
  /// Rotation that turns the model's +Z into the gaze direction (model space; yaw about +Y,
  /// pitch about +X). Empty: no gaze track, only the offset is written.
  Keyframes<Quat> rotation;
  Vec3 offset_from_head{0, 0, 0};  ///< gaze origin relative to the head bone, metres
};

struct VrmaWriteOptions {
  std::vector<VrmaExpressionTrack> expressions;
  std::optional<VrmaLookAt> look_at;
  /// > 0: keys on a grid at this many frames per second (the last on the clip's end) instead of
  /// at the clip's own key times.
  double sample_rate = 0;
};

/// Writes `clip`, which animates `skeleton`, as a .vrma atomically. `humanoid` maps VRM 1.0
/// bone names to joints of `skeleton` and must have the hips. Throws kinema::Error naming `path`
/// and the place (the clip, a joint, a bone, an expression) for a clip with more tracks than the
/// skeleton has joints, non-finite keys or rest transforms, a humanoid without hips, an unknown
/// bone name, a bone on a joint that does not exist or on the joint of another bone, a refused
/// or repeated expression name, or an expression track whose keys do not fit; nothing is written
/// then.
void write_vrma(const Skeleton& skeleton, const Humanoid& humanoid, const Clip& clip,
                const std::string& path, const VrmaWriteOptions& options = {});

/// The expression tracks that play `clip`'s morph-weight tracks on the VRM `avatar` (read from
/// a .vrm): an expression whose morph-target binds all follow one animated morph target
/// (weight = morph weight ÷ bind weight, clamped to 0…1). VRM 0.x blend-shape groups are read
/// through their VRM 1.0 migration. Empty when the avatar is no VRM or nothing matches.
std::vector<VrmaExpressionTrack> vrma_expressions(const Asset& avatar, const Clip& clip);

/// A .vrma read back: `asset` as read_gltf gives it (a skeleton of the file's nodes, its
/// humanoid from VRMC_vrm_animation.humanoid, one clip per animation), plus the first
/// animation's expression weights and gaze.
struct VrmaAnimation {
  Asset asset;
  std::vector<VrmaExpressionTrack> expressions;
  std::optional<VrmaLookAt> look_at;
};

/// Reads a .vrma. Throws kinema::Error as read_gltf does, and for a file without the
/// VRMC_vrm_animation extension or with expression/look-at nodes that do not exist.
VrmaAnimation read_vrma(const std::string& path);

}  // namespace kinema
