// kinema/io/terrain.h — ground for foot placement from files: height maps (PNG) and meshes (OBJ).
//
// Height maps. An 8- or 16-bit PNG, read with stb_image, becomes a HeightField (kinema/ik/
// ground.h): pixel (column c, row r) is the sample at x = origin_x + c·cell_size,
// z = origin_z + r·cell_size — seen from above (+Y towards the viewer), +X points right and +Z
// down the image, so the picture is a top view. Its height is base_height + v·height_range, with v
// the pixel value scaled to [0, 1] (black 0, white 1; 255 or 65535 is white). Gray and
// gray+alpha images are read as they are (alpha ignored); an RGB(A) image is accepted only when
// every pixel is gray (R = G = B), so a colour picture is never silently turned into luminance.
// Images must be at least 2×2 and at most 16,777,216 pixels (4096²), checked from the header
// before anything is decoded.
//
// Meshes. A Wavefront OBJ becomes a TriangleMeshGround: `v x y z [w]` lines (extra values such
// as vertex colours ignored) and `f` lines of three or more vertices `i`, `i/t`, `i//n` or
// `i/t/n` (1-based, negative = relative to the last vertex defined), each polygon fanned into
// triangles (0, k, k+1). A face may only refer to vertices defined above it. Every other line
// (vt, vn, o, g, s, usemtl, mtllib, l, comments…) is ignored. +Y is up (what Blender and most
// tools export by default); lengths are multiplied by `scale` to give metres. Zero-area
// triangles are dropped and counted.
//
// Errors are kinema::Error naming the file, the place (a line for OBJ) and the reason: not a
// PNG, a truncated or corrupt image, an image too small or too large, a colour pixel; a malformed
// or non-finite number, a face with fewer than three vertices, an index of 0 or out of range, a
// file with no faces. Bad options (a cell size or scale that is not finite and positive, a
// non-finite range or offset) are errors too.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/ik/ground.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// How a height-map image maps to metres.
struct HeightMapOptions {
  double cell_size = 0.05;    ///< metres between neighbouring pixels (> 0)
  double height_range = 1.0;  ///< metres from black to white (may be negative: white is low)
  double base_height = 0;     ///< height of black, metres
  /// World (x, z) of pixel (0, 0). Unset: the image is centred on x = z = 0.
  std::optional<std::array<double, 2>> origin;
};

/// What a height-map image held (for messages): its size and bit depth.
struct HeightMapInfo {
  int width = 0, height = 0;
  int bits = 8;      ///< 8 or 16
  int channels = 1;  ///< 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
};

/// Decodes a PNG held in memory (`name` is used in error messages). Throws kinema::Error.
HeightField decode_height_map_png(std::string_view bytes, const std::string& name,
                                  const HeightMapOptions& options = {},
                                  HeightMapInfo* info = nullptr);
/// Reads and decodes a PNG file. Throws kinema::Error.
HeightField load_height_map_png(const std::string& path, const HeightMapOptions& options = {},
                                HeightMapInfo* info = nullptr);

/// How an OBJ mesh maps to metres: p_metres = scale·p_file + offset.
struct ObjGroundOptions {
  double scale = 1.0;  ///< metres per file unit (> 0)
  Vec3 offset{0, 0, 0};
};

/// The triangles of an OBJ file, before they become a ground.
struct ObjTriangles {
  std::vector<Vec3> vertices;  ///< metres (scale and offset applied)
  std::vector<int> indices;    ///< three per triangle, zero-area triangles removed
  int faces = 0;               ///< `f` lines read
  int dropped_degenerate = 0;  ///< zero-area triangles removed
};

/// Parses OBJ text (`name` is used in error messages). Throws kinema::Error.
ObjTriangles parse_obj_triangles(std::string_view text, const std::string& name,
                                 const ObjGroundOptions& options = {});
/// Reads an OBJ file into a TriangleMeshGround. `triangles` (optional) receives the counts.
TriangleMeshGround load_obj_ground(const std::string& path, const ObjGroundOptions& options = {},
                                   ObjTriangles* triangles = nullptr);

/// Options of load_ground: the height-map options for .png, the mesh options for .obj, and an
/// offset added to either (for a height map it moves the origin and the heights).
struct GroundFileOptions {
  HeightMapOptions height_map;
  double obj_scale = 1.0;
  Vec3 offset{0, 0, 0};
};

/// A ground read from a file, with its bounds and a one-line description ("height map 64×48
/// 16-bit, 0.05 m cells" / "mesh, 36 triangles").
struct GroundFile {
  std::unique_ptr<Ground> ground;
  Vec3 lo, hi;  ///< bounding box, metres
  std::string description;
};

/// Loads .png (height map) or .obj (mesh) by extension (case-insensitive). Throws kinema::Error,
/// also for any other extension.
GroundFile load_ground(const std::string& path, const GroundFileOptions& options = {});

}  // namespace kinema
