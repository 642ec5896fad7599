// kinema/io/point_cache.h — point caches: the positions of a fixed set of points over evenly
// spaced samples, as PC2 files (the format of Blender's Mesh Cache modifier, 3ds Max and Maya's
// point-cache importers), and the rest mesh they deform as Wavefront OBJ.
//
// PC2 layout (little-endian): the 12 bytes "POINTCACHE2\0", int32 version 1, int32 point count,
// float32 start frame, float32 sample rate (frames per sample: 1 = one sample a frame), int32
// sample count, then sample count × point count × 3 float32 (x, y, z), sample-major.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

struct PointCache {
  int points = 0;                ///< points per sample
  float start_frame = 0;         ///< the frame of the first sample
  float sample_rate = 1;         ///< frames between samples (> 0)
  std::vector<Vec3f> positions;  ///< samples × points, sample-major (m)

  int samples() const { return points > 0 ? int(positions.size() / size_t(points)) : 0; }
  const Vec3f& at(int sample, int point) const {
    return positions[size_t(sample) * size_t(points) + size_t(point)];
  }
};

/// Writes `cache` as PC2 atomically (a failure leaves no half-written file). Throws kinema::Error
/// for no points, positions that are not a whole number of samples, a non-finite position or
/// header value, or a write failure.
void write_pc2(const std::string& path, const PointCache& cache);

/// Reads a PC2 file. Throws kinema::Error naming the file and the place (header field or byte
/// offset) for a wrong signature or version, counts that are negative or do not match the file's
/// size (truncated or trailing bytes), a non-positive or non-finite sample rate, non-finite
/// positions.
PointCache read_pc2(const std::string& path);

/// Writes a triangle mesh as Wavefront OBJ atomically: `v` lines in vertex order (so that a point
/// cache's point i is vertex i in any importer that keeps the order) and `f` lines. Throws
/// kinema::Error for indices out of range or a write failure.
void write_obj_mesh(const std::string& path, const std::vector<Vec3>& positions,
                    const std::vector<std::array<std::uint32_t, 3>>& triangles);

/// Writes polylines (hair strands) as Wavefront OBJ atomically: `v` lines in vertex order, then
/// one two-vertex `l` line per segment (Blender imports them as loose edges, vertices in order;
/// its importer keeps only the first edge of a longer `l`). Throws
/// kinema::Error for a polyline of fewer than 2 vertices, indices out of range or a write failure.
void write_obj_polylines(const std::string& path, const std::vector<Vec3>& positions,
                         const std::vector<std::vector<std::uint32_t>>& polylines);

/// The line elements of an OBJ file (hair strands as write_obj_polylines writes them).
struct ObjSegments {
  size_t vertices = 0;  ///< `v` lines
  /// Two 0-based vertex indices per segment: each `l a b c …` line gives a–b, b–c, ….
  std::vector<std::array<std::uint32_t, 2>> segments;
};

/// Parses the `v` and `l` lines of OBJ text (`name` is used in error messages; other statements
/// are ignored). Throws kinema::Error naming the line for a vertex with fewer than three
/// coordinates, an `l` with fewer than two vertices, or an index that is not a number, is 0 or
/// refers past the vertices defined so far.
ObjSegments parse_obj_segments(std::string_view text, const std::string& name);

}  // namespace kinema
