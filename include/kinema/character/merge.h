// kinema/character/merge.h — two assets as one, so that they play and draw together (a character
// and the cloth simulated around it, a prop in a hand).
#pragma once

#include "kinema/character/asset.h"

namespace kinema {

/// `a` with `b` added beside it: b's joints after a's (b's roots stay roots, names kept; a name
/// that a already uses gets b's index appended), b's meshes, skins and morph tracks re-indexed
/// onto them, and one clip that plays a's clip `clip_a` and b's clip `clip_b` together (-1: that
/// asset's rest pose), as long as the longer of the two; b's materials and textures follow a's
/// (b's meshes and materials re-indexed onto them); a's humanoid, spring bones and source are
/// kept, its other clips and glTF document are not (the result is written fresh).
Asset merge_assets(const Asset& a, int clip_a, const Asset& b, int clip_b);

}  // namespace kinema
