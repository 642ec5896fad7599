// MeshSdf (kinema/fluid/mesh_sdf.h): closedness checks, angle-weighted pseudo-normals (Bærentzen &
// Aanæs 2005), a median-split BVH and the nearest-triangle query.
#include "kinema/fluid/mesh_sdf.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "kinema/core/error.h"

namespace kinema {

namespace {

std::uint64_t edge_key(int a, int b) {
  return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint64_t(std::uint32_t(b));
}

/// The feature of a triangle that a closest point lies on.
enum class Feature { Face, EdgeAB, EdgeBC, EdgeCA, VertexA, VertexB, VertexC };

/// The point of triangle abc closest to p, and its feature (Ericson, "Real-Time Collision
/// Detection", 5.1.5).
Vec3 closest_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                         Feature& feature) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) {
    feature = Feature::VertexA;
    return a;
  }
  const Vec3 bp = p - b;
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) {
    feature = Feature::VertexB;
    return b;
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    feature = Feature::EdgeAB;
    return a + ab * (d1 / (d1 - d3));
  }
  const Vec3 cp = p - c;
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) {
    feature = Feature::VertexC;
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    feature = Feature::EdgeCA;
    return a + ac * (d2 / (d2 - d6));
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    feature = Feature::EdgeBC;
    return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  }
  const double denom = 1 / (va + vb + vc);
  feature = Feature::Face;
  return a + ab * (vb * denom) + ac * (vc * denom);
}

double box_distance_squared(const Vec3& p, const Vec3& lo, const Vec3& hi) {
  double d2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double e = std::max({lo[a] - p[a], 0.0, p[a] - hi[a]});
    d2 += e * e;
  }
  return d2;
}

Vec3 min3(const Vec3& a, const Vec3& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
}
Vec3 max3(const Vec3& a, const Vec3& b) {
  return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
}

}  // namespace

MeshSdf::MeshSdf(std::vector<Vec3> vertices, std::vector<std::array<int, 3>> triangles,
                 std::string name)
    : vertices_(std::move(vertices)), triangles_(std::move(triangles)) {
  const auto fail = [&](const std::string& reason) { throw Error(name, "mesh", reason); };
  if (triangles_.empty()) fail("has no triangles");
  const int nv = int(vertices_.size());
  if (vertices_.size() > size_t(std::numeric_limits<int>::max())) fail("has too many vertices");
  for (size_t t = 0; t < triangles_.size(); ++t)
    for (int i : triangles_[t])
      if (i < 0 || i >= nv)
        fail("has triangle " + std::to_string(t) + " with vertex index " + std::to_string(i) +
             " outside 0…" + std::to_string(nv - 1));
  // Only the vertices that a triangle uses must be finite (an OBJ may carry unused ones).
  lo_ = Vec3::one() * std::numeric_limits<double>::infinity();
  hi_ = -lo_;
  for (const auto& tri : triangles_)
    for (int i : tri) {
      if (!is_finite(vertices_[size_t(i)])) fail("has vertex " + std::to_string(i) + " not finite");
      lo_ = min3(lo_, vertices_[size_t(i)]);
      hi_ = max3(hi_, vertices_[size_t(i)]);
    }
  const double scale = std::max(length(hi_ - lo_), std::numeric_limits<double>::min());

  // Face normals; zero-area triangles (all three corners on a line) are refused.
  face_normal_.resize(triangles_.size());
  double six_volume = 0;
  for (size_t t = 0; t < triangles_.size(); ++t) {
    const auto& [i, j, k] = triangles_[t];
    const Vec3 &a = vertices_[size_t(i)], &b = vertices_[size_t(j)], &c = vertices_[size_t(k)];
    const Vec3 n = cross(b - a, c - a);
    const double area2 = length(n);
    if (!(area2 > 1e-14 * scale * scale))
      fail("has a degenerate (zero-area) triangle " + std::to_string(t) + " (vertices " +
           std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + ")");
    face_normal_[t] = n / area2;
    six_volume += dot(a, cross(b, c));
  }

  // Edges: each undirected edge must be used by exactly two triangles, once in each direction.
  std::unordered_map<std::uint64_t, int> uses, directed;
  uses.reserve(triangles_.size() * 2);
  directed.reserve(triangles_.size() * 4);
  for (const auto& tri : triangles_)
    for (int e = 0; e < 3; ++e) {
      const int a = tri[size_t(e)], b = tri[size_t((e + 1) % 3)];
      ++uses[edge_key(std::min(a, b), std::max(a, b))];
      ++directed[edge_key(a, b)];
    }
  size_t open = 0, nonmanifold = 0;
  for (const auto& [key, n] : uses) {
    open += n == 1;
    nonmanifold += n > 2;
  }
  // The first offending edge in triangle order, so that the message does not depend on hashing.
  const auto first_edge = [&](auto&& bad) {
    for (const auto& tri : triangles_)
      for (int e = 0; e < 3; ++e) {
        const int a = tri[size_t(e)], b = tri[size_t((e + 1) % 3)];
        if (bad(a, b))
          return "vertices " + std::to_string(std::min(a, b)) + " and " +
                 std::to_string(std::max(a, b));
      }
    return std::string("?");
  };
  const auto count_of = [&](int a, int b) {
    return uses[edge_key(std::min(a, b), std::max(a, b))];
  };
  if (open > 0)
    fail("is not closed: " + std::to_string(open) + " open edge" + (open == 1 ? "" : "s") +
         " (the first between " + first_edge([&](int a, int b) { return count_of(a, b) == 1; }) +
         "); an obstacle mesh must bound a volume");
  if (nonmanifold > 0)
    fail("is not manifold: " + std::to_string(nonmanifold) + " edge" +
         (nonmanifold == 1 ? " is" : "s are") + " shared by more than two triangles (the first " +
         "between " + first_edge([&](int a, int b) { return count_of(a, b) > 2; }) + ")");
  const std::string flipped =
      first_edge([&](int a, int b) { return directed[edge_key(a, b)] != 1; });
  if (flipped != "?")
    fail(
        "is not consistently oriented: two triangles run through the edge "
        "between " +
        flipped + " in the same direction");
  volume_ = six_volume / 6;
  if (!(std::abs(volume_) > 0)) fail("encloses no volume");
  if (volume_ < 0) {  // wound inside out: turn every triangle around
    volume_ = -volume_;
    for (size_t t = 0; t < triangles_.size(); ++t) {
      std::swap(triangles_[t][1], triangles_[t][2]);
      face_normal_[t] = -face_normal_[t];
    }
  }

  // Pseudo-normals: edges, the sum of the two faces' normals (both faces have angle π at the edge);
  // vertices, the faces' normals weighted by their angles at the vertex.
  std::unordered_map<std::uint64_t, Vec3> edge_sum;
  edge_sum.reserve(uses.size());
  for (size_t t = 0; t < triangles_.size(); ++t)
    for (int e = 0; e < 3; ++e) {
      const int a = triangles_[t][size_t(e)], b = triangles_[t][size_t((e + 1) % 3)];
      edge_sum[edge_key(std::min(a, b), std::max(a, b))] += face_normal_[t];
    }
  edge_normal_.resize(triangles_.size());
  vertex_normal_.assign(vertices_.size(), Vec3{0, 0, 0});
  for (size_t t = 0; t < triangles_.size(); ++t)
    for (int e = 0; e < 3; ++e) {
      const int a = triangles_[t][size_t(e)], b = triangles_[t][size_t((e + 1) % 3)],
                c = triangles_[t][size_t((e + 2) % 3)];
      edge_normal_[t][size_t(e)] = edge_sum[edge_key(std::min(a, b), std::max(a, b))];
      const Vec3 u = normalize(vertices_[size_t(b)] - vertices_[size_t(a)]);
      const Vec3 v = normalize(vertices_[size_t(c)] - vertices_[size_t(a)]);
      const double angle = std::acos(std::clamp(dot(u, v), -1.0, 1.0));
      vertex_normal_[size_t(a)] += face_normal_[t] * angle;
    }

  order_.resize(triangles_.size());
  std::iota(order_.begin(), order_.end(), 0);
  nodes_.reserve(triangles_.size());
  build(0, int(triangles_.size()));
}

int MeshSdf::build(int first, int count) {
  const int index = int(nodes_.size());
  nodes_.push_back({});
  Vec3 lo = Vec3::one() * std::numeric_limits<double>::infinity(), hi = -lo;
  Vec3 clo = lo, chi = hi;  // the bounds of the centroids
  for (int n = first; n < first + count; ++n) {
    const auto& tri = triangles_[size_t(order_[size_t(n)])];
    Vec3 centroid{0, 0, 0};
    for (int i : tri) {
      lo = min3(lo, vertices_[size_t(i)]);
      hi = max3(hi, vertices_[size_t(i)]);
      centroid += vertices_[size_t(i)] / 3.0;
    }
    clo = min3(clo, centroid);
    chi = max3(chi, centroid);
  }
  nodes_[size_t(index)].lo = lo;
  nodes_[size_t(index)].hi = hi;
  if (count <= 4) {
    nodes_[size_t(index)].first = first;
    nodes_[size_t(index)].count = count;
    return index;
  }
  const Vec3 extent = chi - clo;
  const int axis =
      extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
  const int half = count / 2;
  const auto centroid = [&](int t) {
    const auto& tri = triangles_[size_t(t)];
    return vertices_[size_t(tri[0])][axis] + vertices_[size_t(tri[1])][axis] +
           vertices_[size_t(tri[2])][axis];
  };
  std::nth_element(order_.begin() + first, order_.begin() + first + half,
                   order_.begin() + first + count, [&](int a, int b) {
                     const double ca = centroid(a), cb = centroid(b);
                     return ca < cb || (ca == cb && a < b);
                   });
  const int left = build(first, half);
  const int right = build(first + half, count - half);
  nodes_[size_t(index)].left = left;
  nodes_[size_t(index)].right = right;
  return index;
}

double MeshSdf::distance(const Vec3& p) const {
  double best = std::numeric_limits<double>::infinity();
  Vec3 best_point{0, 0, 0}, best_normal{0, 0, 1};
  // Nodes to visit with their boxes' squared distances (the tree is ≤ 64 levels deep).
  std::pair<int, double> stack[128];
  int top = 0;
  stack[top++] = {0, box_distance_squared(p, nodes_[0].lo, nodes_[0].hi)};
  while (top > 0) {
    const auto [index, box_d2] = stack[--top];
    if (box_d2 >= best) continue;
    const Node& node = nodes_[size_t(index)];
    if (node.left < 0) {
      for (int n = node.first; n < node.first + node.count; ++n) {
        const int t = order_[size_t(n)];
        const auto& tri = triangles_[size_t(t)];
        // The distance to the triangle's plane is a lower bound: skip it when that is no nearer.
        const double plane = dot(p - vertices_[size_t(tri[0])], face_normal_[size_t(t)]);
        if (plane * plane >= best) continue;
        Feature f;
        const Vec3 q = closest_on_triangle(p, vertices_[size_t(tri[0])], vertices_[size_t(tri[1])],
                                           vertices_[size_t(tri[2])], f);
        const double d2 = length_squared(p - q);
        if (d2 >= best) continue;
        best = d2;
        best_point = q;
        switch (f) {
          case Feature::Face:
            best_normal = face_normal_[size_t(t)];
            break;
          case Feature::EdgeAB:
            best_normal = edge_normal_[size_t(t)][0];
            break;
          case Feature::EdgeBC:
            best_normal = edge_normal_[size_t(t)][1];
            break;
          case Feature::EdgeCA:
            best_normal = edge_normal_[size_t(t)][2];
            break;
          case Feature::VertexA:
            best_normal = vertex_normal_[size_t(tri[0])];
            break;
          case Feature::VertexB:
            best_normal = vertex_normal_[size_t(tri[1])];
            break;
          case Feature::VertexC:
            best_normal = vertex_normal_[size_t(tri[2])];
            break;
        }
      }
      continue;
    }
    // Nearer child last, so that it is popped first.
    const Node &l = nodes_[size_t(node.left)], &r = nodes_[size_t(node.right)];
    const double dl = box_distance_squared(p, l.lo, l.hi), dr = box_distance_squared(p, r.lo, r.hi);
    if (dl < dr) {
      if (dr < best) stack[top++] = {node.right, dr};
      if (dl < best) stack[top++] = {node.left, dl};
    } else {
      if (dl < best) stack[top++] = {node.left, dl};
      if (dr < best) stack[top++] = {node.right, dr};
    }
  }
  const double d = std::sqrt(best);
  return dot(p - best_point, best_normal) < 0 ? -d : d;
}

}  // namespace kinema
