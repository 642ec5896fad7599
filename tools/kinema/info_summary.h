// tools/kinema/info_summary.h — what `kinema info` shows about an asset and a .kmc's compression
// (the text form of an asset is print_info, declared in cli.h).
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "kinema/character/asset.h"
#include "kinema/compress/compressed_animation.h"

namespace kinema::cli {

/// `kinema info --json` for an asset: file, format, joint_count, joints, clips, meshes, skins,
/// source, humanoid (with its source and scheme, or the first bone missing), bvh_translation.
nlohmann::ordered_json asset_json(const Asset& asset, const std::string& file);

/// What a .kmc adds: the bound, and per clip its size, ratio and bit rates.
nlohmann::ordered_json compressed_json(const CompressedAnimation& animation);

/// The same as indented text lines.
void print_compressed(const CompressedAnimation& animation, std::ostream& out);

}  // namespace kinema::cli
