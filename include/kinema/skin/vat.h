// kinema/skin/vat.h — vertex animation textures (VAT): skinned vertex positions baked per frame
// into an RGBA16F texture that a vertex shader reads by vertex index and time (the far crowd
// LOD).
//
// Layout. One row per frame (row 0 = time 0, top row of the image), one texel per vertex (texel x
// = vertex index, the skinned meshes of the asset one after another in asset order; the JSON
// lists each mesh's first vertex). A texel is 4 half floats (8 bytes, little-endian): R, G, B =
// the vertex position in model space (metres, kinema's +Y up) minus `origin`, A = 1. With the
// default "center_offset" encoding `origin` is the centre of the bounding box of all baked
// positions, which halves the largest magnitude stored and so the half-float rounding error;
// with "absolute" it is (0, 0, 0). Frames are sampled at t = i / fps for i = 0 … N − 1,
// N = round(duration · fps) + 1 (the last frame lands on the clip's end). Texel data bytes =
// vertices × frames × 8 (2,000 vertices × 60 frames = 960,000 bytes).
//
// Files. The texture is a DDS file (legacy 128-byte header, FourCC 113 =
// D3DFMT_A16B16G16R16F, no mipmaps) followed by the texel rows: DDS is the simplest standard
// container that holds RGBA16F without a data format descriptor (KTX2 needs one) and that
// DirectXTex/texconv, Unity, Unreal, Godot and GIMP load directly; a raw reader can skip the
// 128 bytes. The metadata is a JSON file next to it (format "kinema-vat", version 1): vertex and
// frame counts, fps, duration, clip, skinning method, encoding, origin, bounds, layout, mesh
// ranges, the texture's file name and byte sizes, and the measured quantization error. Both are
// written atomically (temporary file + rename; the texture first, then the JSON).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// IEEE 754 binary16 from binary32 with round-to-nearest-even: values beyond the largest half
/// (65504, after rounding) become ±infinity, values below the smallest normal (2⁻¹⁴) become
/// subnormals or ±0, NaN stays a (quiet) NaN with its sign.
uint16_t float_to_half(float value);
/// Exact binary16 → binary32 (every half is a float).
float half_to_float(uint16_t half);

enum class VatSkinning { Lbs, Dqs };
enum class VatEncoding { CenterOffset, Absolute };

struct VatBakeOptions {
  int clip = 0;    ///< index into Asset::clips
  double fps = 0;  ///< frames per second; 0: the clip's sample_rate, else 30
  VatSkinning skinning = VatSkinning::Lbs;
  VatEncoding encoding = VatEncoding::CenterOffset;
  /// Apply the clip's morph-weight tracks (else the meshes' default weights) as blend shapes
  /// before skinning.
  bool morphs = true;
};

/// A skinned mesh's vertices within a texture row.
struct VatMeshRange {
  std::string name;
  uint32_t first_vertex = 0;
  uint32_t vertex_count = 0;
};

/// A baked (or loaded) VAT: the metadata and the texels.
struct VatBake {
  std::string clip;  ///< clip name
  double fps = 0, duration = 0;
  uint32_t vertex_count = 0, frame_count = 0;
  VatSkinning skinning = VatSkinning::Lbs;
  VatEncoding encoding = VatEncoding::CenterOffset;
  Vec3f origin{0, 0, 0};                           ///< added back when decoding, metres
  Vec3f bounds_min{0, 0, 0}, bounds_max{0, 0, 0};  ///< of the exact positions, model space
  std::vector<VatMeshRange> meshes;
  /// frame_count × vertex_count texels × 4 halves (R, G, B, A), row by row.
  std::vector<uint16_t> texels;
  /// Largest and RMS distance between a decoded texel and the exact skinned position (metres).
  double max_error_m = 0, rms_error_m = 0;

  /// vertex_count × frame_count × 8.
  size_t data_bytes() const { return size_t(vertex_count) * frame_count * 8; }
  /// The decoded position of `vertex` at `frame` (origin added back); both must be in range.
  Vec3f position(uint32_t frame, uint32_t vertex) const;
};

/// Texel data size of a VAT: vertices × frames × 8 bytes (4 half floats).
constexpr size_t vat_data_bytes(size_t vertices, size_t frames) { return vertices * frames * 8; }
/// Size of the DDS header that precedes the texels in the texture file.
inline constexpr size_t kVatDdsHeaderBytes = 128;

/// Bakes every skinned mesh of `asset` over a clip: per frame, sample the clip, FK, skinning
/// palette, blend shapes (options.morphs), skin_lbs or skin_dqs; then encodes to half floats and
/// measures the error. Throws kinema::Error (naming `file`) when the asset has no skinned mesh,
/// no clip / the clip index is out of range, fps is negative, NaN or infinite, a mesh fails
/// validate_skin_mesh, a skinned position is not finite, or the texture would exceed 1 GiB.
VatBake bake_vat(const Asset& asset, const VatBakeOptions& options = {},
                 const std::string& file = {});

/// Where write_vat put things.
struct VatFiles {
  std::string json_path, texture_path;
  size_t texture_bytes = 0;  ///< header + data
};

/// The texture path used for `json_path`: the same folder and stem with ".dds"
/// ("out/walk.json" → "out/walk.dds"; "walk.vat.json" → "walk.vat.dds").
std::string vat_texture_path(const std::string& json_path);

/// Writes the texture (DDS) and then the JSON metadata, each atomically. Throws kinema::Error.
VatFiles write_vat(const VatBake& bake, const std::string& json_path);

/// Reads a VAT back from its JSON metadata and the texture it names (relative to the JSON's
/// folder), checking the JSON fields (format, version, counts, sizes), the DDS header (magic,
/// sizes, FourCC, width = vertices, height = frames), the exact file size and that every texel is
/// finite with A = 1. Throws kinema::Error naming the file and the place on any mismatch, a
/// truncated or corrupted file.
VatBake read_vat(const std::string& json_path);

const char* to_string(VatSkinning skinning);
const char* to_string(VatEncoding encoding);

}  // namespace kinema
