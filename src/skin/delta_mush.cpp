// Delta mush (Mancewicz et al. 2014): the bind (weld, neighbours, smoothing, frames, deltas)
// and the deformation. The offline LBS weight bake from it is in lbs_weight_bake.cpp.
#include "kinema/skin/delta_mush.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// The node positions smoothed `iterations` times, ping-ponging between a and b. Returns the buffer
// holding the result.
std::span<Vec3f> smooth(const DeltaMushBind& bind, std::span<Vec3f> a, std::span<Vec3f> b) {
  const float lambda = bind.settings.lambda;
  for (int it = 0; it < bind.settings.iterations; ++it) {
    for (size_t i = 0; i < bind.node_count; ++i) {
      const uint32_t begin = bind.neighbour_start[i], end = bind.neighbour_start[i + 1];
      if (begin == end) {
        b[i] = a[i];
        continue;
      }
      Vec3f sum{};
      for (uint32_t k = begin; k < end; ++k) sum += a[bind.neighbours[k]];
      const Vec3f mean = sum * (1.0f / float(end - begin));
      b[i] = a[i] + (mean - a[i]) * lambda;
    }
    std::swap(a, b);
  }
  return a;
}

// Area-weighted (unnormalized) node normals of the smoothed mesh.
void node_normals(const DeltaMushBind& bind, std::span<const Vec3f> p, std::span<Vec3f> n) {
  std::fill(n.begin(), n.end(), Vec3f{});
  for (size_t t = 0; t + 2 < bind.triangles.size(); t += 3) {
    const uint32_t a = bind.triangles[t], b = bind.triangles[t + 1], c = bind.triangles[t + 2];
    const Vec3f fn = cross(p[b] - p[a], p[c] - p[a]);
    n[a] += fn;
    n[b] += fn;
    n[c] += fn;
  }
}

struct Frame {
  Vec3f t{1, 0, 0}, b{0, 1, 0}, n{0, 0, 1};
};

// The local frame at node i (identity where undefined; see the header).
Frame frame_at(const DeltaMushBind& bind, std::span<const Vec3f> p, std::span<const Vec3f> normals,
               size_t i) {
  Frame f;
  const uint32_t nb = bind.frame_neighbour[i];
  if (nb == kNone) return f;
  const float nlen = length(normals[i]);
  if (!(nlen > 1e-30f) || !std::isfinite(nlen)) return f;
  const Vec3f n = normals[i] * (1.0f / nlen);
  const Vec3f e = p[nb] - p[i];
  const Vec3f tp = e - n * dot(e, n);
  const float tlen = length(tp);
  if (!(tlen > 1e-30f) || !std::isfinite(tlen)) return f;
  f.n = n;
  f.t = tp * (1.0f / tlen);
  f.b = cross(n, f.t);
  return f;
}

// Node positions (each the mean of its vertices' positions) relative to the mean of all of them,
// which is returned: smoothing is translation-invariant, and working near the origin keeps the
// small differences of a strongly smoothed mesh precise in float wherever the mesh is.
Vec3f node_positions(const DeltaMushBind& bind, std::span<const Vec3f> src, std::span<Vec3f> a) {
  double ox = 0, oy = 0, oz = 0;
  for (const Vec3f& p : src) {
    ox += p.x;
    oy += p.y;
    oz += p.z;
  }
  const double inv = src.empty() ? 0.0 : 1.0 / double(src.size());
  const Vec3f origin{float(ox * inv), float(oy * inv), float(oz * inv)};
  for (size_t i = 0; i < bind.node_count; ++i) {
    const uint32_t begin = bind.node_vertex_start[i], end = bind.node_vertex_start[i + 1];
    Vec3f sum{};
    for (uint32_t s = begin; s < end; ++s) sum += src[bind.node_vertices[s]] - origin;
    a[i] = end - begin == 1 ? sum : sum * (1.0f / float(end - begin));
  }
  return origin;
}

void check_delta_mush_input(std::span<const Vec3f> positions, std::span<const uint32_t> indices,
                            const DeltaMushSettings& settings) {
  const std::string place = "delta mush";
  if (settings.iterations < 0)
    throw Error({}, place, "iterations must be ≥ 0 (" + std::to_string(settings.iterations) + ")");
  if (!(settings.lambda > 0 && settings.lambda <= 1))
    throw Error({}, place, "λ must be in (0, 1] (" + std::to_string(settings.lambda) + ")");
  if (std::isnan(settings.weld_distance)) throw Error({}, place, "weld distance is NaN");
  if (indices.size() % 3 != 0)
    throw Error({}, place,
                std::to_string(indices.size()) + " indices is not a whole number of triangles");
  const size_t n = positions.size();
  if (n >= kNone) throw Error({}, place, "too many vertices");
  for (size_t v = 0; v < n; ++v)
    if (!finite3(positions[v]))
      throw Error({}, "vertex " + std::to_string(v), "position is NaN or infinite");
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] >= n)
      throw Error({}, "index " + std::to_string(i),
                  "vertex " + std::to_string(indices[i]) + " is outside the mesh (" +
                      std::to_string(n) + " vertices)");
}

// Welds the vertices into smoothing nodes (bind.node_of, node_count, node_vertex_start,
// node_vertices): a sweep of the vertices sorted by x joins each to an earlier node within
// weld_distance (none when it is negative).
void weld_nodes(std::span<const Vec3f> positions, float weld, DeltaMushBind& bind) {
  const size_t n = positions.size();
  bind.node_of.assign(n, kNone);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Vec3f &p = positions[a], &q = positions[b];
    if (p.x != q.x) return p.x < q.x;
    if (p.y != q.y) return p.y < q.y;
    if (p.z != q.z) return p.z < q.z;
    return a < b;
  });
  size_t k = 0;
  for (size_t s = 0; s < n; ++s) {
    const uint32_t v = order[s];
    uint32_t node = kNone;
    if (weld >= 0)
      for (size_t r = s; r-- > 0;) {
        const uint32_t u = order[r];
        if (positions[v].x - positions[u].x > weld) break;
        if (distance(positions[v], positions[u]) <= weld) {
          node = bind.node_of[u];
          break;
        }
      }
    if (node == kNone) node = static_cast<uint32_t>(k++);
    bind.node_of[v] = node;
  }
  bind.node_count = k;
  bind.node_vertex_start.assign(k + 1, 0);
  for (uint32_t node : bind.node_of) ++bind.node_vertex_start[node + 1];
  for (size_t i = 0; i < k; ++i) bind.node_vertex_start[i + 1] += bind.node_vertex_start[i];
  bind.node_vertices.resize(n);
  std::vector<uint32_t> fill(bind.node_vertex_start.begin(), bind.node_vertex_start.end() - 1);
  for (uint32_t v = 0; v < n; ++v) bind.node_vertices[fill[bind.node_of[v]]++] = v;
}

// The triangles over nodes (dropping the ones the weld collapsed) and each node's unique
// neighbours (bind.triangles, neighbour_start, neighbours).
void connect_nodes(std::span<const uint32_t> indices, DeltaMushBind& bind) {
  const size_t k = bind.node_count;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (size_t t = 0; t < indices.size(); t += 3) {
    const uint32_t a = bind.node_of[indices[t]], b = bind.node_of[indices[t + 1]],
                   c = bind.node_of[indices[t + 2]];
    if (a == b || b == c || a == c) continue;
    bind.triangles.insert(bind.triangles.end(), {a, b, c});
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, c}, std::pair{c, a}}) {
      edges.emplace_back(x, y);
      edges.emplace_back(y, x);
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  bind.neighbour_start.assign(k + 1, 0);
  for (const auto& e : edges) ++bind.neighbour_start[e.first + 1];
  for (size_t i = 0; i < k; ++i) bind.neighbour_start[i + 1] += bind.neighbour_start[i];
  bind.neighbours.reserve(edges.size());
  for (const auto& e : edges) bind.neighbours.push_back(e.second);
}

// Each node's frame edge on the smoothed bind mesh (bind.frame_neighbour): the neighbour whose
// edge is the most perpendicular to the node's normal, none where every edge is (nearly) along
// it or the normal is zero.
void pick_frame_neighbours(std::span<const Vec3f> smoothed, std::span<const Vec3f> normals,
                           DeltaMushBind& bind) {
  const size_t k = bind.node_count;
  bind.frame_neighbour.assign(k, kNone);
  for (size_t i = 0; i < k; ++i) {
    const float nlen = length(normals[i]);
    if (!(nlen > 1e-30f)) continue;
    const Vec3f nn = normals[i] * (1.0f / nlen);
    float best = 1e-4f;  // |sin| of the edge's angle to n: reject edges (nearly) along n
    for (uint32_t e = bind.neighbour_start[i]; e < bind.neighbour_start[i + 1]; ++e) {
      const Vec3f edge = smoothed[bind.neighbours[e]] - smoothed[i];
      const float elen = length(edge);
      if (!(elen > 1e-30f)) continue;
      const float s = length(cross(edge, nn)) / elen;
      if (s > best) {
        best = s;
        bind.frame_neighbour[i] = bind.neighbours[e];
      }
    }
  }
}

}  // namespace

Vec3f delta_mush_frame_point(const Vec3f& smoothed, const Vec3f& tangent, const Vec3f& normal,
                             const Vec3f& local_delta) {
  const Vec3f bitangent = cross(normal, tangent);
  return smoothed + tangent * local_delta.x + bitangent * local_delta.y + normal * local_delta.z;
}

size_t delta_mush_scratch_size(const DeltaMushBind& bind) { return 3 * bind.node_count; }

DeltaMushBind build_delta_mush(std::span<const Vec3f> positions, std::span<const uint32_t> indices,
                               const DeltaMushSettings& settings) {
  check_delta_mush_input(positions, indices, settings);
  DeltaMushBind bind;
  bind.settings = settings;
  bind.vertex_count = positions.size();
  weld_nodes(positions, settings.weld_distance, bind);
  connect_nodes(indices, bind);

  // Smooth the bind mesh, pick each node's frame edge, store the deltas in the frames.
  const size_t k = bind.node_count;
  std::vector<Vec3f> scratch(3 * k);
  const std::span<Vec3f> all(scratch);
  const Vec3f origin = node_positions(bind, positions, all.subspan(0, k));
  const std::span<Vec3f> smoothed = smooth(bind, all.subspan(0, k), all.subspan(k, k));
  const std::span<Vec3f> normals = all.subspan(2 * k, k);
  node_normals(bind, smoothed, normals);
  pick_frame_neighbours(smoothed, normals, bind);
  bind.deltas.resize(positions.size());
  for (size_t i = 0; i < k; ++i) {
    const Frame f = frame_at(bind, smoothed, normals, i);
    for (uint32_t s = bind.node_vertex_start[i]; s < bind.node_vertex_start[i + 1]; ++s) {
      const uint32_t v = bind.node_vertices[s];
      const Vec3f d = (positions[v] - origin) - smoothed[i];
      bind.deltas[v] = {dot(d, f.t), dot(d, f.b), dot(d, f.n)};
    }
  }
  return bind;
}

bool delta_mush_deform(const DeltaMushBind& bind, std::span<const Vec3f> deformed,
                       std::span<Vec3f> scratch, std::span<Vec3f> out) {
  const size_t n = bind.vertex_count, k = bind.node_count;
  if (deformed.size() != n || out.size() != n || scratch.size() < 3 * k) return false;
  if (bind.deltas.size() != n || bind.frame_neighbour.size() != k ||
      bind.node_vertex_start.size() != k + 1 || bind.neighbour_start.size() != k + 1)
    return false;
  const auto overlaps = [](const Vec3f* a, size_t na, const Vec3f* b, size_t nb) {
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
  };
  if (overlaps(out.data(), n, deformed.data(), n) ||
      overlaps(out.data(), n, scratch.data(), scratch.size()))
    return false;
  const std::span<Vec3f> a = scratch.subspan(0, k), b = scratch.subspan(k, k),
                         normals = scratch.subspan(2 * k, k);
  const Vec3f origin = node_positions(bind, deformed, a);
  const std::span<Vec3f> smoothed = smooth(bind, a, b);
  node_normals(bind, smoothed, normals);
  for (size_t i = 0; i < k; ++i) {
    const Frame f = frame_at(bind, smoothed, normals, i);
    for (uint32_t s = bind.node_vertex_start[i]; s < bind.node_vertex_start[i + 1]; ++s) {
      const uint32_t v = bind.node_vertices[s];
      const Vec3f d = bind.deltas[v];
      out[v] = (smoothed[i] + f.t * d.x + f.b * d.y + f.n * d.z) + origin;
    }
  }
  return true;
}

}  // namespace kinema
