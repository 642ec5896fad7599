// kinema/composite/image_file.h — image files in and out of compositing's premultiplied linear
// images: PNG here, EXR in exr_file.h, and read_image()/write_image() choosing between them.
//
// PNGs hold sRGB-encoded colour with straight alpha (the PNG default); reading decodes the sRGB
// curve to linear light and premultiplies, writing unpremultiplies and encodes. Grey, grey +
// alpha, RGB and RGBA; 8 or 16 bits a channel in and out (rounding to the nearest code, no
// dithering). `linear` reads or writes the values with no sRGB curve (data passes, mattes, plates
// already linearized).
#pragma once

#include <string>
#include <string_view>

#include "kinema/composite/exr_file.h"
#include "kinema/composite/image.h"

namespace kinema::composite {

/// sRGB's transfer curve: encoded [0, 1] → linear, and back (values outside [0, 1] clamp).
float srgb_to_linear(float encoded);
float linear_to_srgb(float linear);

/// Decodes a PNG held in memory; `name` is what errors call it. `linear` true reads the values as
/// already linear (data passes, mattes). Throws kinema::Error naming `name`, the place and the
/// reason: empty or not a PNG, a truncated header, more than 16,384 pixels a side or 2²⁸ in all,
/// data that does not decode.
Image decode_png(std::string_view bytes, const std::string& name, bool linear = false);
Image read_png(const std::string& path, bool linear = false);

/// A matte from a PNG: its alpha channel when it has one, else its first (grey) channel, values
/// as stored (no sRGB curve). Throws as decode_png.
Matte read_matte_png(const std::string& path);

struct PngWriteOptions {
  int bits = 8;         ///< 8 or 16 bits a channel
  bool linear = false;  ///< store linear values (no sRGB curve)
};

/// RGBA PNG bytes of an image (sRGB-encoded unless `linear`, straight alpha). Throws
/// kinema::Error for an empty image or bits other than 8 and 16.
std::string encode_png(const Image& image, const PngWriteOptions& options = {});
/// encode_png() written through a temporary file and renamed: never a half-written file.
/// Throws kinema::Error for an empty image or a failed write.
void write_png(const std::string& path, const Image& image, const PngWriteOptions& options = {});

/// 8-bit grey PNG bytes of a matte, values as they are (clamped to [0, 1], no sRGB curve): what
/// read_matte_png() reads back.
std::string encode_matte_png(const Matte& matte, int bits = 8);

// ---- either format -------------------------------------------------------------------------

enum class ImageFormat { png, exr };

/// The format a path's extension names (.png, .exr, any case). Throws kinema::UsageError for
/// any other: kinema writes only these two.
ImageFormat image_format_for_path(const std::string& path);

/// What an image file holds, from its header.
struct ImageInfo {
  ImageFormat format = ImageFormat::png;
  int width = 0, height = 0;
  int channels = 0;
  std::string sample_type;  ///< "8-bit", "16-bit", "half", "float"
  std::string color_space;  ///< "sRGB" (a PNG's default), "linear Rec.709", …
};
ImageInfo read_image_info(const std::string& path);

/// A PNG or EXR image, told apart by the file's first bytes (not its name). `linear_png` reads a
/// PNG's values as linear. Throws as decode_png() / decode_exr().
Image read_image(const std::string& path, bool linear_png = false);
/// A matte from either format (read_matte_png(), read_exr_matte()).
Matte read_matte(const std::string& path);

struct ImageWriteOptions {
  PngWriteOptions png;
  ExrWriteOptions exr;
};
/// The bytes write_image() / write_matte() would write, for callers that encode every output
/// before writing any.
std::string encode_image(ImageFormat format, const Image& image,
                         const ImageWriteOptions& options = {});
std::string encode_matte(ImageFormat format, const Matte& matte,
                         const ImageWriteOptions& options = {});

/// write_png() or write_exr(), chosen by the path's extension (image_format_for_path()).
void write_image(const std::string& path, const Image& image,
                 const ImageWriteOptions& options = {});
/// A matte as a grey PNG (8 or 16 bits as options.png.bits, values as they are) or a one-channel
/// EXR (channel Y).
void write_matte(const std::string& path, const Matte& matte,
                 const ImageWriteOptions& options = {});

}  // namespace kinema::composite
