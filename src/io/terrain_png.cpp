// kinema/io/terrain_png.cpp — height maps from 8/16-bit PNG images (stb_image), and
// load_ground() choosing the reader by extension.
//
// stb_image is compiled here with internal linkage (STB_IMAGE_STATIC) and PNG only, so it cannot
// clash with the stb symbols that tinygltf's library brings in.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 65536
#include <stb/stb_image.h>

namespace kinema {

namespace {

constexpr long long kMaxPixels = 4096LL * 4096LL;

bool finite(double v) { return std::isfinite(v); }

void check_options(const HeightMapOptions& o, const std::string& name) {
  if (!finite(o.cell_size) || !(o.cell_size > 0))
    throw Error(name, "", "the cell size must be finite and > 0 metres");
  if (!finite(o.height_range)) throw Error(name, "", "the height range must be finite");
  if (!finite(o.base_height)) throw Error(name, "", "the base height must be finite");
  if (o.origin && (!finite((*o.origin)[0]) || !finite((*o.origin)[1])))
    throw Error(name, "", "the origin must be finite");
}

struct StbFree {
  void operator()(void* p) const { stbi_image_free(p); }
};

std::string pixel_name(long long index, int width) {
  return "pixel (" + std::to_string(index % width) + ", " + std::to_string(index / width) + ")";
}

// The decoder; `offset` moves the field (origin and heights).
HeightField decode(std::string_view bytes, const std::string& name, const HeightMapOptions& options,
                   HeightMapInfo* info, const Vec3& offset) {
  check_options(options, name);
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.empty()) throw Error(name, "", "is empty, not a PNG image");
  if (bytes.size() < 8 ||
      !std::equal(kSignature, kSignature + 8, bytes.begin(),
                  [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); }))
    throw Error(name, "byte 0", "not a PNG image (no PNG signature)");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw Error(name, "", "file too large for a height map");
  // The size, from the IHDR chunk that must come first, is checked before stb_image sees the
  // file (which would say no more than "unknown image type" for a huge one).
  if (bytes.size() < 8 + 8 + 13 || bytes.substr(12, 4) != "IHDR")
    throw Error(name, "byte 8", "truncated PNG: no IHDR header chunk");
  const auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  const uint32_t header_w = be32(16), header_h = be32(20);
  const auto size_text = [](uint64_t a, uint64_t b) {
    return std::to_string(a) + "×" + std::to_string(b);
  };
  if (header_w < 2 || header_h < 2)
    throw Error(
        name, "PNG header",
        "image is " + size_text(header_w, header_h) + " pixels; a height map needs at least 2×2");
  if (static_cast<uint64_t>(header_w) * header_h > static_cast<uint64_t>(kMaxPixels))
    throw Error(name, "PNG header",
                "image is " + size_text(header_w, header_h) +
                    " pixels; at most 16,777,216 (4096×4096) are accepted");
  // Every chunk up to IEND must fit in the bytes: stb_image grows its buffer to the length a
  // chunk states before reading it, so a lying length would ask for up to 4 GiB.
  std::vector<size_t> empty_idat;  // offsets of IDAT chunks with no data (dropped below)
  for (size_t at = 8; at < bytes.size();) {
    const size_t left = bytes.size() - at;
    if (left < 12)
      throw Error(name, "byte " + std::to_string(at),
                  "cannot decode the image: " + std::to_string(left) +
                      " bytes are left, too few for a chunk (a truncated PNG)");
    const uint32_t length = be32(at);
    if (length > left - 12)
      throw Error(name, "byte " + std::to_string(at),
                  "cannot decode the image: the chunk here states " + std::to_string(length) +
                      " bytes of data, but " + std::to_string(left - 12) +
                      " are left (a truncated or corrupt PNG)");
    if (bytes.substr(at + 4, 4) == "IEND") break;
    if (length == 0 && bytes.substr(at + 4, 4) == "IDAT") empty_idat.push_back(at);
    at += 12 + size_t{length};
  }
  // An IDAT chunk may be empty, but stb_image copies its nothing into a buffer it has not yet
  // allocated when it comes before any data (memcpy from a null pointer: undefined behaviour,
  // found by fuzz_png). Such chunks carry nothing, so stb_image gets the file without them.
  std::string without_empty_idat;
  if (!empty_idat.empty()) {
    size_t from = 0;
    for (const size_t at : empty_idat) {
      without_empty_idat.append(bytes.substr(from, at - from));
      from = at + 12;
    }
    without_empty_idat.append(bytes.substr(from));
    bytes = without_empty_idat;
  }
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int size = static_cast<int>(bytes.size());

  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, size, &w, &h, &channels))
    throw Error(name, "PNG header",
                std::string("cannot read the image header: ") + stbi_failure_reason());
  if (w < 2 || h < 2)
    throw Error(name, "PNG header",
                "image is " + std::to_string(w) + "×" + std::to_string(h) +
                    " pixels; a height map needs at least 2×2");
  if (static_cast<long long>(w) * h > kMaxPixels)
    throw Error(name, "PNG header",
                "image is " + std::to_string(w) + "×" + std::to_string(h) +
                    " pixels; at most 16,777,216 (4096×4096) are accepted");
  const bool sixteen = stbi_is_16_bit_from_memory(data, size) != 0;
  const bool colour = channels >= 3;
  const int want = colour ? 3 : 1;  // gray (+alpha, dropped) as gray; colour checked for gray

  const long long pixels = static_cast<long long>(w) * h;
  std::vector<double> heights(static_cast<size_t>(pixels));
  const double full = sixteen ? 65535.0 : 255.0;
  int dw = 0, dh = 0, dc = 0;
  auto store = [&](auto* px) {
    if (!px)
      throw Error(name, "image data",
                  std::string("cannot decode the image: ") + stbi_failure_reason());
    if (dw != w || dh != h) throw Error(name, "image data", "decoded size differs from the header");
    for (long long i = 0; i < pixels; ++i) {
      const auto* p = px + i * want;
      if (colour && (p[0] != p[1] || p[1] != p[2]))
        throw Error(name, pixel_name(i, w),
                    "colour image: the pixel is not gray (R, G, B = " + std::to_string(p[0]) +
                        ", " + std::to_string(p[1]) + ", " + std::to_string(p[2]) +
                        "); save the height map as a grayscale PNG");
      heights[static_cast<size_t>(i)] = offset.y + options.base_height +
                                        options.height_range * (static_cast<double>(p[0]) / full);
    }
  };
  if (sixteen) {
    std::unique_ptr<stbi_us, StbFree> px(stbi_load_16_from_memory(data, size, &dw, &dh, &dc, want));
    store(px.get());
  } else {
    std::unique_ptr<stbi_uc, StbFree> px(stbi_load_from_memory(data, size, &dw, &dh, &dc, want));
    store(px.get());
  }
  if (info) *info = HeightMapInfo{w, h, sixteen ? 16 : 8, channels};

  const double ox = options.origin ? (*options.origin)[0] : -0.5 * (w - 1) * options.cell_size;
  const double oz = options.origin ? (*options.origin)[1] : -0.5 * (h - 1) * options.cell_size;
  try {
    return HeightField(ox + offset.x, oz + offset.z, options.cell_size, w, h, std::move(heights));
  } catch (const Error& e) {
    throw Error(name, e.place(), e.reason());
  }
}

}  // namespace

HeightField decode_height_map_png(std::string_view bytes, const std::string& name,
                                  const HeightMapOptions& options, HeightMapInfo* info) {
  return decode(bytes, name, options, info, Vec3{0, 0, 0});
}

HeightField load_height_map_png(const std::string& path, const HeightMapOptions& options,
                                HeightMapInfo* info) {
  return decode_height_map_png(read_file(path), path, options, info);
}

GroundFile load_ground(const std::string& path, const GroundFileOptions& options) {
  const std::string ext = extension_of(path);
  if (!is_finite(options.offset)) throw Error(path, "", "the ground offset must be finite");
  GroundFile out;
  if (ext == "png") {
    check_options(options.height_map, path);
    HeightMapInfo info;
    HeightField field = decode(read_file(path), path, options.height_map, &info, options.offset);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int iz = 0; iz < field.depth(); ++iz)
      for (int ix = 0; ix < field.width(); ++ix) {
        double y = 0;
        field.height(field.origin_x() + ix * field.cell_size(),
                     field.origin_z() + iz * field.cell_size(), y);
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
    out.lo = {field.origin_x(), lo, field.origin_z()};
    out.hi = {field.origin_x() + (field.width() - 1) * field.cell_size(), hi,
              field.origin_z() + (field.depth() - 1) * field.cell_size()};
    out.description = "height map " + std::to_string(info.width) + "×" +
                      std::to_string(info.height) + " " + std::to_string(info.bits) + "-bit";
    out.ground = std::make_unique<HeightField>(std::move(field));
  } else if (ext == "obj") {
    ObjGroundOptions mo;
    mo.scale = options.obj_scale;
    mo.offset = options.offset;
    ObjTriangles tris;
    TriangleMeshGround mesh = load_obj_ground(path, mo, &tris);
    const double inf = std::numeric_limits<double>::infinity();
    out.lo = {inf, inf, inf};
    out.hi = {-inf, -inf, -inf};
    for (int i : tris.indices) {
      const Vec3& v = tris.vertices[static_cast<size_t>(i)];
      for (int a = 0; a < 3; ++a) {
        out.lo[a] = std::min(out.lo[a], v[a]);
        out.hi[a] = std::max(out.hi[a], v[a]);
      }
    }
    out.description = "mesh, " + std::to_string(tris.indices.size() / 3) + " triangles";
    if (tris.dropped_degenerate > 0)
      out.description += " (" + std::to_string(tris.dropped_degenerate) + " zero-area dropped)";
    out.ground = std::make_unique<TriangleMeshGround>(std::move(mesh));
  } else {
    throw Error(path, "",
                "cannot read '." + ext +
                    "' as ground (kinema reads .png height maps and .obj "
                    "meshes)");
  }
  return out;
}

}  // namespace kinema
