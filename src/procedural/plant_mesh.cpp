// Plant meshes (kinema/procedural/lsystem.h): generalized cylinders along the segments and
// diamond leaves. Every choice depends on the segments' structure only (never on a length), so
// a fixed-topology growth gives the same vertices and triangles at every time.
#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/math/quat.h"
#include "kinema/math/scalar.h"
#include "kinema/procedural/lsystem.h"

namespace kinema {

namespace {

/// A ring's plane: its axis and two unit vectors across it with a × b = axis.
struct RingFrame {
  Vec3 axis, a, b;
};

/// `frame` turned by the shortest arc onto `axis`: carried along a branch without any roll.
RingFrame carried(const RingFrame& frame, const Vec3& axis) {
  const Quat q = from_to(frame.axis, axis);
  return {axis, rotate(q, frame.a), rotate(q, frame.b)};
}

class MeshWriter {
 public:
  MeshWriter(PlantMesh& mesh, int ring) : mesh_(mesh), ring_(std::uint32_t(ring)) {
    for (std::uint32_t k = 0; k < ring_; ++k) {
      const double theta = 2 * kPi * double(k) / double(ring_);
      cos_.push_back(std::cos(theta));
      sin_.push_back(std::sin(theta));
    }
  }

  /// A ring of vertices around `centre`; returns its first vertex.
  std::uint32_t ring(const Vec3& centre, const RingFrame& f, double radius) {
    const auto first = std::uint32_t(mesh_.positions.size());
    for (std::uint32_t k = 0; k < ring_; ++k) {
      const Vec3 out = f.a * cos_[k] + f.b * sin_[k];
      vertex(centre + out * radius, out);
    }
    return first;
  }
  /// The side between two rings (`from` below `to` along the axis), facing out.
  void side(std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t k = 0; k < ring_; ++k) {
      const std::uint32_t next = (k + 1) % ring_;
      mesh_.triangles.push_back({from + k, from + next, to + k});
      mesh_.triangles.push_back({from + next, to + next, to + k});
    }
  }
  /// A fan closing `ring` at `centre`, facing along the axis.
  void cap(std::uint32_t ring, const Vec3& centre, const Vec3& axis) {
    const std::uint32_t middle = vertex(centre, axis);
    for (std::uint32_t k = 0; k < ring_; ++k)
      mesh_.triangles.push_back({ring + k, ring + (k + 1) % ring_, middle});
  }
  /// A two-sided diamond from the leaf's base to its tip, 0.6 of its size wide.
  void leaf(const PlantLeaf& l) {
    const Vec3 middle = l.base + l.heading * (0.5 * l.size), side = l.left * (0.3 * l.size);
    const Vec3 corners[4] = {l.base, middle + side, l.base + l.heading * l.size, middle - side};
    for (int face = 0; face < 2; ++face) {
      const Vec3 normal = face == 0 ? l.up : -l.up;
      const auto first = std::uint32_t(mesh_.positions.size());
      for (const Vec3& c : corners) vertex(c, normal);
      if (face == 0) {  // counter-clockwise seen from +U
        mesh_.triangles.push_back({first, first + 2, first + 1});
        mesh_.triangles.push_back({first, first + 3, first + 2});
      } else {
        mesh_.triangles.push_back({first, first + 1, first + 2});
        mesh_.triangles.push_back({first, first + 2, first + 3});
      }
    }
  }

 private:
  std::uint32_t vertex(const Vec3& p, const Vec3& n) {
    mesh_.positions.push_back(p);
    mesh_.normals.push_back(n);
    return std::uint32_t(mesh_.positions.size() - 1);
  }
  PlantMesh& mesh_;
  std::uint32_t ring_;
  std::vector<double> cos_, sin_;
};

}  // namespace

PlantMesh build_plant_mesh(const PlantSkeleton& plant, const PlantMeshOptions& options) {
  if (options.ring < 3 || options.ring > 64)
    throw UsageError("plant mesh: " + std::to_string(options.ring) +
                     " vertices a ring (3 … 64 are allowed)");
  const std::vector<BranchSegment>& segments = plant.segments;
  const std::size_t n = segments.size();
  std::vector<char> kept(n);
  for (std::size_t i = 0; i < n; ++i) kept[i] = options.fixed_topology || segments[i].length() > 0;
  // The segment that carries each one's axis on: its end ring is theirs to share.
  std::vector<int> next(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const int p = segments[i].parent;
    if (kept[i] && segments[i].continues && p >= 0 && kept[std::size_t(p)])
      next[std::size_t(p)] = int(i);
  }
  PlantMesh mesh;
  // At most two rings and a cap a segment, two faces of 4 vertices and 2 triangles a leaf.
  const std::size_t ring = std::size_t(options.ring),
                    leaves = options.leaves ? plant.leaves.size() : 0;
  mesh.positions.reserve(n * (2 * ring + 1) + 8 * leaves);
  mesh.normals.reserve(mesh.positions.capacity());
  mesh.triangles.reserve(n * 3 * ring + 4 * leaves);
  MeshWriter writer(mesh, options.ring);
  std::vector<std::uint32_t> end_ring(n);
  std::vector<RingFrame> end_frame(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!kept[i]) continue;
    const BranchSegment& s = segments[i];
    const int p = s.parent;
    std::uint32_t start;
    RingFrame frame;
    if (p >= 0 && next[std::size_t(p)] == int(i)) {
      start = end_ring[std::size_t(p)];
      frame = end_frame[std::size_t(p)];
    } else {
      frame = {s.heading, s.left, s.up};
      start = writer.ring(s.start, frame, s.start_radius);
    }
    // The end ring bisects this heading and the next one's, so the joint does not pinch.
    const Vec3 axis = next[i] >= 0
                          ? normalize(s.heading + segments[std::size_t(next[i])].heading, s.heading)
                          : s.heading;
    end_frame[i] = carried(frame, axis);
    end_ring[i] = writer.ring(s.end, end_frame[i], s.end_radius);
    writer.side(start, end_ring[i]);
    if (next[i] < 0) writer.cap(end_ring[i], s.end, axis);
  }
  if (options.leaves)
    for (const PlantLeaf& l : plant.leaves)
      if (options.fixed_topology || l.size > 0) writer.leaf(l);
  return mesh;
}

}  // namespace kinema
