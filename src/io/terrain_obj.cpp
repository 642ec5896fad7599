// kinema/io/terrain_obj.cpp — a small Wavefront OBJ reader for ground meshes (v and f lines).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"
#include "text_scan.h"

namespace kinema {

namespace {

using text_scan::printable;
using text_scan::tokenize;

}  // namespace

ObjTriangles parse_obj_triangles(std::string_view text, const std::string& name,
                                 const ObjGroundOptions& options) {
  if (!std::isfinite(options.scale) || !(options.scale > 0))
    throw Error(name, "", "the OBJ scale must be finite and > 0");
  if (!is_finite(options.offset)) throw Error(name, "", "the OBJ offset must be finite");
  ObjTriangles out;
  std::vector<std::string_view> tokens;
  std::vector<int> polygon;
  long line_number = 0;
  size_t pos = 0;
  const auto fail = [&](const std::string& reason) -> void {
    throw Error(name, at_line(line_number), reason);
  };
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    tokenize(line, tokens);
    if (tokens.empty()) continue;
    if (tokens[0] == "v") {
      if (tokens.size() < 4)
        fail("a vertex needs three coordinates (v x y z), got " +
             std::to_string(tokens.size() - 1));
      Vec3 p;
      for (int a = 0; a < 3; ++a) {
        const std::string_view t = tokens[static_cast<size_t>(a) + 1];
        double v = 0;
        const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || ptr != t.data() + t.size())
          fail("vertex coordinate '" + printable(t) + "' is not a number");
        if (!std::isfinite(v)) fail("vertex coordinate '" + printable(t) + "' is not finite");
        p[a] = v;
      }
      p = p * options.scale + options.offset;
      if (!is_finite(p)) fail("vertex is not finite once scaled");
      if (out.vertices.size() >= static_cast<size_t>(std::numeric_limits<int>::max()))
        fail("too many vertices");
      out.vertices.push_back(p);
    } else if (tokens[0] == "f") {
      if (tokens.size() < 4)
        fail("a face needs at least three vertices, got " + std::to_string(tokens.size() - 1));
      polygon.clear();
      const long long count = static_cast<long long>(out.vertices.size());
      for (size_t k = 1; k < tokens.size(); ++k) {
        long long resolved = 0;
        if (const std::string why =
                text_scan::obj_vertex_index(tokens[k], count, "face vertex", resolved);
            !why.empty())
          fail(why);
        polygon.push_back(static_cast<int>(resolved));
      }
      ++out.faces;
      for (size_t k = 1; k + 1 < polygon.size(); ++k) {
        const Vec3& a = out.vertices[static_cast<size_t>(polygon[0])];
        const Vec3& b = out.vertices[static_cast<size_t>(polygon[k])];
        const Vec3& c = out.vertices[static_cast<size_t>(polygon[k + 1])];
        // The zero-area rule of TriangleMeshGround, applied here so that such triangles are
        // dropped instead of failing the whole mesh.
        const double scale = std::max({length_squared(b - a), length_squared(c - a), 1e-300});
        if (!(length(cross(b - a, c - a)) > 1e-12 * scale)) {
          ++out.dropped_degenerate;
          continue;
        }
        if (out.indices.size() / 3 >= static_cast<size_t>(std::numeric_limits<int>::max() / 4))
          fail("too many triangles");
        out.indices.insert(out.indices.end(), {polygon[0], polygon[k], polygon[k + 1]});
      }
    }
    // Every other statement (vt, vn, vp, o, g, s, usemtl, mtllib, l, p…) is ignored.
  }
  if (out.faces == 0) throw Error(name, "", "has no faces ('f' lines): nothing to stand on");
  if (out.indices.empty())
    throw Error(name, "",
                "every face is degenerate (zero area): " + std::to_string(out.dropped_degenerate) +
                    " triangles dropped");
  return out;
}

TriangleMeshGround load_obj_ground(const std::string& path, const ObjGroundOptions& options,
                                   ObjTriangles* triangles) {
  ObjTriangles t = parse_obj_triangles(read_file(path), path, options);
  try {
    TriangleMeshGround ground(t.vertices, t.indices);
    if (triangles) *triangles = std::move(t);
    return ground;
  } catch (const Error& e) {
    throw Error(path, e.place(), e.reason());
  }
}

}  // namespace kinema
