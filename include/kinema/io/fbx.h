// kinema/io/fbx.h — FBX writing through assimp's exporter (reading: kinema/io/assimp_import.h).
//
// What goes into the file:
//  * Skeleton: one FBX model per joint, in a hierarchy under the scene root, with its rest
//    transform; joints that a skin uses become bones (LimbNode) there, others nulls.
//  * Meshes: positions, normals, the first UV set (flipped to FBX's bottom-left origin), triangles,
//    skin weights as FBX clusters (each skin joint's inverse bind as its link matrix); a single
//    grey material. Morph targets are not written.
//  * Clips: one take per clip, resampled to the clip's frame rate (30 fps when it has none) with a
//    key per frame on every animated channel. FBX stores rotations as Euler angles: values at the
//    keys are exact (to float precision), between keys a reader interpolates the angles, not
//    the quaternions.
//  * Binary FBX 7.5 only. assimp 5.2's binary writer leaves out the NULL records that end nested
//    node lists (assimp issue #4686), so neither assimp nor Blender could read its files; kinema
//    puts them back. Its ASCII writer is not offered: assimp reads its output back metres off.
//  * Units and axes: centimetres (UnitScaleFactor 1, what Unity, Maya and Blender expect), +Y up,
//    +Z front: kinema's metres are multiplied by 100 on the way out, and assimp-based readers
//    (kinema's own) and Blender scale them back.
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema {

struct FbxWriteOptions {
  std::vector<int> clips;  ///< which clips to write (empty: all)
};

/// Writes `asset` as FBX atomically (a temporary file beside `path`, then renamed). Throws
/// kinema::Error naming `path` and the place for an invalid skeleton or clip, a mesh whose skin
/// or joints do not exist, a clip index out of range, or when assimp fails to export.
void write_fbx(const Asset& asset, const std::string& path, const FbxWriteOptions& options = {});

}  // namespace kinema
