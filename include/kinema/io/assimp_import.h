// kinema/io/assimp_import.h — FBX and Collada import through assimp.
//
// Skeleton (the node hierarchy), skinned meshes (bones → Skin with offset matrices as inverse
// binds), and animations (one Clip per take). Units and axes are converted to metres and +Y up;
// the source's are recorded in SourceInfo.
#pragma once

#include <string>

#include "kinema/io/asset.h"

namespace kinema {

/// Reads an .fbx or .dae (or anything else assimp reads). Throws kinema::Error.
Asset read_with_assimp(const std::string& path);

}  // namespace kinema
