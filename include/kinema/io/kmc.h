// kinema/io/kmc.h — .kmc files (compressed animations, kinema/compress/compressed_animation.h) on
// disk, and as assets: load_asset reads a .kmc file as its skeleton with every clip decompressed,
// and save_asset writes one by compressing every clip with the default bound.
#pragma once

#include <string>

#include "kinema/character/asset.h"
#include "kinema/compress/compress.h"
#include "kinema/compress/compressed_animation.h"

namespace kinema {

/// Reads a .kmc file; throws kinema::Error (file, byte offset, reason).
CompressedAnimation read_animation_file(const std::string& path);
/// Writes a .kmc file atomically (a failure leaves no half-written file). Throws kinema::Error.
void write_animation_file(const CompressedAnimation& animation, const std::string& path);

/// A .kmc file as an asset: its skeleton and every clip decompressed (decompress_clip); the
/// source info says "kmc" with the original source's unit.
Asset read_kmc(const std::string& path);

/// Compresses every clip of `asset` (compress() with `options`) into an animation whose source
/// is `source`. Throws kinema::Error when the asset has no clip or a clip cannot be compressed.
CompressedAnimation compress_asset(const Asset& asset, const std::string& source,
                                   const CompressOptions& options = {});

}  // namespace kinema
