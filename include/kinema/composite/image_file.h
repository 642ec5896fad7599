// kinema/composite/image_file.h — PNG files in and out of compositing's premultiplied linear
// images.
//
// PNGs hold sRGB-encoded colour with straight alpha (the PNG default); reading decodes the sRGB
// curve to linear light and premultiplies, writing unpremultiplies and encodes. Grey, grey +
// alpha, RGB and RGBA; 8 or 16 bits a channel in, 8 bits out (dithering left out: the rounding
// is to the nearest code). EXR (float passes) is still to come.
#pragma once

#include <string>
#include <string_view>

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

/// 8-bit RGBA PNG bytes of an image (sRGB-encoded, straight alpha).
std::string encode_png(const Image& image);
/// encode_png() written through a temporary file and renamed: never a half-written file.
/// Throws kinema::Error for an empty image or a failed write.
void write_png(const std::string& path, const Image& image);

/// 8-bit grey PNG bytes of a matte, values as they are (clamped to [0, 1], no sRGB curve): what
/// read_matte_png() reads back.
std::string encode_matte_png(const Matte& matte);

}  // namespace kinema::composite
