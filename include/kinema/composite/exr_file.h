// kinema/composite/exr_file.h — OpenEXR files: compositing's float images and a renderer's
// passes (AOVs), through the OpenEXR library.
//
// EXR is the film industry's interchange for linear light: half (16-bit) or 32-bit float
// channels, alpha premultiplied by convention — exactly compositing's own pixels, so nothing is
// converted on the way in or out. kinema writes the colour space as the file's `chromaticities`
// attribute (Rec. 709 / sRGB primaries, D65 white: linear sRGB) and reads it back; a file without
// the attribute is linear Rec. 709 by the format's own default.
//
// Files are read from memory after OpenEXR's own checker has passed them (a hostile file is
// refused before any buffer is sized from its header), and written through a temporary file
// that is renamed into place: never a half-written file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kinema/composite/image.h"

namespace kinema::composite {

enum class ExrPixelType { half, float32 };
enum class ExrCompression { none, zip, piz };

struct ExrWriteOptions {
  /// half keeps 11 significant bits (3 decimal digits) up to 65,504: enough for beauty passes;
  /// depth and positions want float32.
  ExrPixelType pixel_type = ExrPixelType::half;
  /// zip: lossless, good on CG; piz: lossless, better on grainy plates; none: fastest.
  ExrCompression compression = ExrCompression::zip;
};

/// One named channel of a multi-channel EXR: width × height values, row by row from the top.
/// Names follow EXR's layer convention "layer.C" ("depth.Z", "N.X", "motion.U"); "R", "G",
/// "B", "A" at the top level are the beauty image that other programs show first.
struct ExrChannel {
  std::string name;
  std::vector<float> values;
  ExrPixelType pixel_type = ExrPixelType::half;
};

/// What an EXR file holds, from its header alone.
struct ExrInfo {
  int width = 0, height = 0;          ///< the display window, px
  std::vector<std::string> channels;  ///< channel names, sorted as the file stores them
  bool any_float32 = false;           ///< some channel is 32-bit float (else half or uint)
  std::string color_space;            ///< "linear Rec.709" or "linear, primaries (…)"
};

/// The file's header. Throws kinema::Error naming `name` for anything that is not a sound EXR.
ExrInfo decode_exr_info(std::string_view bytes, const std::string& name);

/// Decodes R, G, B, A (premultiplied, as stored) into an image of the display window's size;
/// pixels outside the data window are transparent. A file without A is opaque; a file with only
/// Y (luminance) is grey; a file with neither R nor Y is refused. Throws kinema::Error naming
/// `name`, the place and the reason: empty, not an EXR, truncated, a header or data the checker
/// rejects, more than 16,384 pixels a side or 2²⁸ in all.
Image decode_exr(std::string_view bytes, const std::string& name);
Image read_exr(const std::string& path);

/// One channel as a matte: `channel` if named, else A, else Y, else R.
Matte decode_exr_matte(std::string_view bytes, const std::string& name,
                       const std::string& channel = {});
Matte read_exr_matte(const std::string& path, const std::string& channel = {});

/// Every channel of the file by name, values as stored (for passes). Throws as decode_exr.
std::vector<ExrChannel> decode_exr_channels(std::string_view bytes, const std::string& name,
                                            int* width, int* height);

/// EXR bytes of an image (R, G, B, A premultiplied) or of named channels, all width × height.
/// Throws kinema::Error for an empty image, a channel of the wrong size, an empty or repeated
/// name.
std::string encode_exr(const Image& image, const ExrWriteOptions& options = {});
std::string encode_exr_channels(int width, int height, const std::vector<ExrChannel>& channels,
                                ExrCompression compression = ExrCompression::zip);

/// encode_exr() / encode_exr_channels() written atomically to `path`.
void write_exr(const std::string& path, const Image& image, const ExrWriteOptions& options = {});
void write_exr_channels(const std::string& path, int width, int height,
                        const std::vector<ExrChannel>& channels,
                        ExrCompression compression = ExrCompression::zip);

}  // namespace kinema::composite
