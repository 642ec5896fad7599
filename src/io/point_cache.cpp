// Point caches (kinema/io/point_cache.h).
#include "kinema/io/point_cache.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "text_scan.h"

namespace kinema {

namespace {

static_assert(std::endian::native == std::endian::little, "PC2 is little-endian");
constexpr char kSignature[12] = {'P', 'O', 'I', 'N', 'T', 'C', 'A', 'C', 'H', 'E', '2', '\0'};
constexpr size_t kHeaderBytes = 12 + 4 + 4 + 4 + 4 + 4;

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <class T>
T get(const std::string& in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

}  // namespace

void write_pc2(const std::string& path, const PointCache& cache) {
  auto fail = [&](const std::string& reason) { throw Error(path, "point cache", reason); };
  if (cache.points <= 0) fail("no points");
  if (cache.positions.size() % size_t(cache.points) != 0)
    fail(std::to_string(cache.positions.size()) +
         " positions are not a whole number of samples of " + std::to_string(cache.points) +
         " points");
  if (!std::isfinite(cache.start_frame)) fail("the start frame is not finite");
  if (!(cache.sample_rate > 0) || !std::isfinite(cache.sample_rate))
    fail("the sample rate must be positive and finite");
  const size_t samples = cache.positions.size() / size_t(cache.points);
  if (samples > size_t(INT32_MAX)) fail("too many samples for PC2");
  std::string out;
  out.reserve(kHeaderBytes + cache.positions.size() * 12);
  out.append(kSignature, sizeof(kSignature));
  put<std::int32_t>(out, 1);
  put<std::int32_t>(out, cache.points);
  put<float>(out, cache.start_frame);
  put<float>(out, cache.sample_rate);
  put<std::int32_t>(out, std::int32_t(samples));
  for (size_t i = 0; i < cache.positions.size(); ++i) {
    const Vec3f& p = cache.positions[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      fail("sample " + std::to_string(i / size_t(cache.points)) + ", point " +
           std::to_string(i % size_t(cache.points)) + " is not finite");
    put<float>(out, p.x);
    put<float>(out, p.y);
    put<float>(out, p.z);
  }
  write_file_atomically(path, out);
}

PointCache read_pc2(const std::string& path) {
  const std::string in = read_file(path);
  auto fail = [&](const std::string& place, const std::string& reason) {
    throw Error(path, place, reason);
  };
  if (in.size() < kHeaderBytes)
    fail("header", "truncated: " + std::to_string(in.size()) + " bytes, a PC2 header has " +
                       std::to_string(kHeaderBytes));
  if (std::memcmp(in.data(), kSignature, sizeof(kSignature)) != 0)
    fail("signature", "not a PC2 file (it does not start with \"POINTCACHE2\")");
  const std::int32_t version = get<std::int32_t>(in, 12);
  if (version != 1) fail("version", "version " + std::to_string(version) + ", only 1 is known");
  PointCache cache;
  const std::int32_t points = get<std::int32_t>(in, 16);
  cache.start_frame = get<float>(in, 20);
  cache.sample_rate = get<float>(in, 24);
  const std::int32_t samples = get<std::int32_t>(in, 28);
  if (points <= 0) fail("point count", std::to_string(points) + " points");
  if (samples < 0) fail("sample count", std::to_string(samples) + " samples");
  if (!std::isfinite(cache.start_frame)) fail("start frame", "not finite");
  if (!(cache.sample_rate > 0) || !std::isfinite(cache.sample_rate))
    fail("sample rate", "must be positive and finite");
  // 64-bit arithmetic: hostile counts must not wrap into a size that matches.
  const std::uint64_t expected = kHeaderBytes + std::uint64_t(points) * std::uint64_t(samples) * 12;
  if (expected != in.size())
    fail("data", std::to_string(samples) + " samples of " + std::to_string(points) +
                     " points need " + std::to_string(expected) + " bytes, the file has " +
                     std::to_string(in.size()) +
                     (in.size() < expected ? " (truncated)" : " (trailing bytes)"));
  cache.points = points;
  cache.positions.resize(size_t(points) * size_t(samples));
  for (size_t i = 0; i < cache.positions.size(); ++i) {
    const size_t offset = kHeaderBytes + i * 12;
    const Vec3f p{get<float>(in, offset), get<float>(in, offset + 4), get<float>(in, offset + 8)};
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      fail("byte " + std::to_string(offset), "sample " + std::to_string(i / size_t(points)) +
                                                 ", point " + std::to_string(i % size_t(points)) +
                                                 " is not finite");
    cache.positions[i] = p;
  }
  return cache;
}

void write_obj_mesh(const std::string& path, const std::vector<Vec3>& positions,
                    const std::vector<std::array<std::uint32_t, 3>>& triangles) {
  std::ostringstream out;
  out << "# kinema: " << positions.size() << " vertices, " << triangles.size() << " triangles\n"
      << std::setprecision(9);
  for (const Vec3& p : positions) out << "v " << p.x << ' ' << p.y << ' ' << p.z << '\n';
  for (size_t t = 0; t < triangles.size(); ++t) {
    const auto& tri = triangles[t];
    for (std::uint32_t v : tri)
      if (v >= positions.size())
        throw Error(
            path, "triangle " + std::to_string(t),
            "names vertex " + std::to_string(v) + " of " + std::to_string(positions.size()));
    out << "f " << tri[0] + 1 << ' ' << tri[1] + 1 << ' ' << tri[2] + 1 << '\n';
  }
  write_file_atomically(path, out.str());
}

void write_obj_polylines(const std::string& path, const std::vector<Vec3>& positions,
                         const std::vector<std::vector<std::uint32_t>>& polylines) {
  std::ostringstream out;
  out << "# kinema: " << positions.size() << " vertices, " << polylines.size() << " polylines\n"
      << std::setprecision(9);
  for (const Vec3& p : positions) out << "v " << p.x << ' ' << p.y << ' ' << p.z << '\n';
  for (size_t l = 0; l < polylines.size(); ++l) {
    if (polylines[l].size() < 2)
      throw Error(path, "polyline " + std::to_string(l), "has fewer than 2 vertices");
    for (std::uint32_t v : polylines[l])
      if (v >= positions.size())
        throw Error(
            path, "polyline " + std::to_string(l),
            "names vertex " + std::to_string(v) + " of " + std::to_string(positions.size()));
    // One two-vertex `l` per segment: Blender's importer (3.4) keeps only the first edge of a
    // longer one and drops the other vertices.
    for (size_t k = 0; k + 1 < polylines[l].size(); ++k)
      out << "l " << polylines[l][k] + 1 << ' ' << polylines[l][k + 1] + 1 << '\n';
  }
  write_file_atomically(path, out.str());
}

ObjSegments parse_obj_segments(std::string_view text, const std::string& name) {
  ObjSegments out;
  std::vector<std::string_view> tokens;
  long line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    text_scan::tokenize(text.substr(pos, end - pos), tokens);
    pos = end + 1;
    ++line_number;
    if (tokens.empty()) continue;
    if (tokens[0] == "v") {
      if (tokens.size() < 4)
        throw Error(
            name, at_line(line_number),
            "a vertex needs three coordinates (v x y z), got " + std::to_string(tokens.size() - 1));
      ++out.vertices;
    } else if (tokens[0] == "l") {
      if (tokens.size() < 3)
        throw Error(name, at_line(line_number),
                    "a line needs at least two vertices, got " + std::to_string(tokens.size() - 1));
      long long previous = -1;
      for (size_t k = 1; k < tokens.size(); ++k) {
        long long v = 0;
        if (const std::string why = text_scan::obj_vertex_index(
                tokens[k], static_cast<long long>(out.vertices), "line vertex", v);
            !why.empty())
          throw Error(name, at_line(line_number), why);
        if (previous >= 0)
          out.segments.push_back(
              {static_cast<std::uint32_t>(previous), static_cast<std::uint32_t>(v)});
        previous = v;
      }
    }
  }
  return out;
}

}  // namespace kinema
