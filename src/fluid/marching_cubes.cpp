// Marching cubes over a ScalarGrid (see kinema/fluid/marching_cubes.h).
//
// Three passes after marking which samples are inside (one byte each), the first two parallel over
// z layers:
//   1. each sample layer L makes the vertices of the crossed edges that start in it (along +x,
//      +y within the layer, +z to layer L + 1), in a fixed scan order: j, i, then the axis;
//   2. each cube layer k (between sample layers k and k + 1) numbers the crossed edges of its two
//      sample layers by the same scan (cheap: sign tests only) and emits its cubes' triangles
//      with indices local to the pair of layers, plus any centre vertices;
//   3. prefix sums over the layers give every layer's first vertex and triangle, and each layer
//      copies its part into place with the indices made global.
// Every layer writes only its own buffers and the merge follows layer order, so the mesh is the
// same bits whatever the thread count or the way oneTBB splits the layers.
#include "kinema/fluid/marching_cubes.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "marching_cubes_table.h"

namespace kinema {
namespace {

namespace mc = detail::mc;

constexpr double kClamp = 1e-3;  // crossings stay this fraction of an edge away from its corners
constexpr std::size_t kMaxSamples = std::size_t(1) << 30;
constexpr std::size_t kSmallGrid = std::size_t(1) << 15;

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error("marching cubes", place, reason);
}

/// Runs body(l) for l in [0, n): here in order for one thread, else on an arena of `threads`.
template <class Body>
void for_layers(int threads, int n, const Body& body) {
  if (threads == 1 || n <= 1) {
    for (int l = 0; l < n; ++l) body(l);
    return;
  }
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(0, n, [&](int l) { body(l); }); });
}

/// Runs body(begin, end) over consecutive ranges that cover [0, n): all of it here for one thread,
/// else ranges chosen by oneTBB on an arena of `threads` (callers' results must not depend on
/// them).
template <class Body>
void for_layer_ranges(int threads, int n, const Body& body) {
  if (threads == 1 || n <= 1) {
    body(0, n);
    return;
  }
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int>(0, n),
                      [&](const tbb::blocked_range<int>& r) { body(r.begin(), r.end()); });
  });
}

/// Per-edge constants: the base corner's offset and the axis.
struct EdgeInfo {
  int dx, dy, dz, axis;
};

std::array<EdgeInfo, 12> edge_info() {
  std::array<EdgeInfo, 12> out{};
  for (int e = 0; e < 12; ++e) {
    const int c = mc::edge_corners(e)[0];
    out[e] = {mc::corner_bit(c, 0), mc::corner_bit(c, 1), mc::corner_bit(c, 2), e / 4};
  }
  return out;
}

/// The grid seen as g = ±(value − iso), negative inside, with the strides of its axes.
class Field {
 public:
  Field(const ScalarGrid& grid, float iso, bool inside_is_below)
      : grid_(grid), iso_(iso), sign_(inside_is_below ? 1.0 : -1.0) {
    stride_ = {1, std::size_t(grid.nx), std::size_t(grid.nx) * std::size_t(grid.ny)};
    count_ = {grid.nx, grid.ny, grid.nz};
    inside_.resize(grid.values.size());
  }

  double g(std::size_t index) const { return sign_ * (double(grid_.values[index]) - double(iso_)); }
  /// Whether sample `index` is inside (g < 0), from the flags of mark_inside.
  bool inside(std::size_t index) const { return inside_[index] != 0; }

  /// Pass 0 for sample layer k: its inside flags, read by every later scan instead of the values.
  void mark_inside(int k) {
    const std::size_t begin = stride_[2] * std::size_t(k);
    for (std::size_t s = begin; s < begin + stride_[2]; ++s) inside_[s] = g(s) < 0 ? 1 : 0;
  }
  std::size_t stride(int axis) const { return stride_[axis]; }
  int count(int axis) const { return count_[axis]; }

  /// ∇g at sample (i, j, k) in units of the spacing: central differences, one-sided on the border.
  Vec3 gradient(int i, int j, int k) const {
    const std::array<int, 3> at{i, j, k};
    const std::size_t index = grid_.index(i, j, k);
    Vec3 out;
    for (int a = 0; a < 3; ++a) {
      const std::size_t lo = at[a] > 0 ? index - stride_[a] : index;
      const std::size_t hi = at[a] + 1 < count_[a] ? index + stride_[a] : index;
      const double span = double(hi == index ? 0 : 1) + double(lo == index ? 0 : 1);
      out[a] = (g(hi) - g(lo)) / span;
    }
    return out;
  }

  /// Calls f(i, j, axis, index) for every crossed edge that starts in sample layer k, in the scan
  /// order that numbers that layer's vertices.
  template <class F>
  void for_each_crossing(int k, const F& f) const {
    for (int j = 0; j < count_[1]; ++j) {
      const std::size_t start = grid_.index(0, j, k);
      // The rows along +y and +z; on the last row or layer, the row itself (never differs).
      const std::uint8_t* row = inside_.data() + start;
      const std::uint8_t* up = j + 1 < count_[1] ? row + stride_[1] : row;
      const std::uint8_t* next = k + 1 < count_[2] ? row + stride_[2] : row;
      for (int i = 0; i < count_[0]; ++i) {
        const std::uint8_t in = row[i];
        const bool dx = i + 1 < count_[0] && row[i + 1] != in;
        const bool dy = up[i] != in, dz = next[i] != in;
        if (!(dx || dy || dz)) continue;
        if (dx) f(i, j, 0, start + std::size_t(i));
        if (dy) f(i, j, 1, start + std::size_t(i));
        if (dz) f(i, j, 2, start + std::size_t(i));
      }
    }
  }

 private:
  const ScalarGrid& grid_;
  float iso_;
  double sign_;
  std::array<std::size_t, 3> stride_{};
  std::array<int, 3> count_{};
  std::vector<std::uint8_t> inside_;
};

struct Layer {
  std::vector<Vec3f> positions, normals;                // the edge vertices of this sample layer
  std::vector<Vec3f> centre_positions, centre_normals;  // centre vertices of this cube layer
  std::vector<std::uint32_t> triangles;                 // local: see emit_cubes
};

void validate(const ScalarGrid& grid, float iso) {
  if (grid.nx < 2 || grid.ny < 2 || grid.nz < 2)
    fail("grid", "needs at least 2 samples along each axis, has " + std::to_string(grid.nx) +
                     " x " + std::to_string(grid.ny) + " x " + std::to_string(grid.nz));
  const std::size_t n = std::size_t(grid.nx) * std::size_t(grid.ny) * std::size_t(grid.nz);
  if (n > kMaxSamples)
    fail("grid", std::to_string(n) + " samples; at most " + std::to_string(kMaxSamples));
  if (grid.values.size() != n)
    fail("grid.values", "has " + std::to_string(grid.values.size()) + " samples; nx·ny·nz is " +
                            std::to_string(n));
  if (!std::isfinite(grid.spacing) || !(grid.spacing > 0))
    fail("grid.spacing", "must be finite and positive, is " + std::to_string(grid.spacing));
  if (!is_finite(grid.origin)) fail("grid.origin", "is not finite");
  if (!std::isfinite(iso)) fail("iso", "is not finite");
  for (std::size_t s = 0; s < n; ++s) {
    if (std::isfinite(grid.values[s])) continue;
    const std::size_t i = s % std::size_t(grid.nx), j = (s / std::size_t(grid.nx)) % grid.ny;
    const std::size_t k = s / (std::size_t(grid.nx) * std::size_t(grid.ny));
    fail("grid.values[" + std::to_string(s) + "] (i " + std::to_string(i) + ", j " +
             std::to_string(j) + ", k " + std::to_string(k) + ")",
         "sample is " + std::to_string(grid.values[s]) + "; samples must be finite");
  }
}

/// Pass 1: the vertices of sample layer k.
void make_vertices(const ScalarGrid& grid, const Field& field, int k, Layer& out) {
  field.for_each_crossing(k, [&](int i, int j, int a, std::size_t index) {
    const double g0 = field.g(index), g1 = field.g(index + field.stride(a));
    const double t = std::clamp(g0 / (g0 - g1), kClamp, 1 - kClamp);
    Vec3 at{double(i), double(j), double(k)};
    at[a] += t;
    out.positions.push_back(Vec3f(grid.origin + at * grid.spacing));
    std::array<int, 3> next{i, j, k};
    ++next[a];
    const Vec3 n = lerp(field.gradient(i, j, k), field.gradient(next[0], next[1], next[2]), t);
    Vec3 fallback{0, 0, 0};  // along the edge, from its inside end to its outside one
    fallback[a] = g0 < 0 ? 1 : -1;
    out.normals.push_back(Vec3f(normalize(n, fallback)));
  });
}

/// Local vertex numbers of sample layer k's crossed edges: ids[3·(i + nx·j) + axis].
void number_layer(const Field& field, int k, std::vector<std::uint32_t>& ids) {
  ids.assign(std::size_t(3) * field.stride(2), std::numeric_limits<std::uint32_t>::max());
  std::uint32_t next = 0;
  field.for_each_crossing(k, [&](int i, int j, int a, std::size_t) {
    ids[3 * (std::size_t(i) + field.stride(1) * std::size_t(j)) + std::size_t(a)] = next++;
  });
}

/// Pass 2: the triangles of cube layer k. An index below n0 (layer k's vertex count) is layer k's
/// vertex; below n0 + n1, layer k + 1's; above, one of this cube layer's centre vertices.
/// `ids`: the numbers of sample layers k and k + 1 (number_layer).
void emit_cubes(const Field& field, int k, const std::vector<Layer>& layers,
                const std::array<std::vector<std::uint32_t>, 2>& ids, Layer& out) {
  const mc::CaseTable& table = mc::case_table();
  static const std::array<EdgeInfo, 12> edges = edge_info();
  static const std::array<std::array<int, 4>, 6> faces = [] {
    std::array<std::array<int, 4>, 6> f{};
    for (int i = 0; i < 6; ++i) f[i] = mc::face_corners(i);
    return f;
  }();
  const auto n0 = std::uint32_t(layers[k].positions.size());
  const auto n1 = std::uint32_t(layers[k + 1].positions.size());
  const int nx = field.count(0), ny = field.count(1);
  std::array<std::size_t, 8> offset{};
  for (int c = 0; c < 8; ++c)
    for (int a = 0; a < 3; ++a) offset[c] += std::size_t(mc::corner_bit(c, a)) * field.stride(a);

  // A column's four inside flags (y, z) spread to the bits of a cube's x = 0 corners (0, 2, 4, 6).
  constexpr std::array<int, 16> spread = [] {
    std::array<int, 16> out{};
    for (int b = 0; b < 16; ++b)
      out[b] = (b & 1) | ((b >> 1) & 1) << 2 | ((b >> 2) & 1) << 4 | ((b >> 3) & 1) << 6;
    return out;
  }();
  for (int j = 0; j + 1 < ny; ++j) {
    const std::size_t row = field.stride(1) * j + field.stride(2) * k;
    const auto column = [&](int i) {
      const std::size_t s = row + std::size_t(i);
      return int(field.inside(s)) | int(field.inside(s + field.stride(1))) << 1 |
             int(field.inside(s + field.stride(2))) << 2 |
             int(field.inside(s + field.stride(1) + field.stride(2))) << 3;
    };
    int right = column(0);
    for (int i = 0; i + 1 < nx; ++i) {
      const int left = right;
      right = column(i + 1);
      if (left == right && (left == 0 || left == 15)) continue;
      const std::size_t base = row + std::size_t(i);
      const int corner_case = spread[left] | spread[right] << 1;
      std::array<double, 8> g{};
      for (int c = 0; c < 8; ++c) g[c] = field.g(base + offset[c]);
      // The asymptotic decider on each ambiguous face: join the inside pair when its product of
      // values exceeds the outside pair's. Exactly the same arithmetic in the neighbouring cube.
      int decisions = 0, n = 0;
      for (int f = 0; f < 6; ++f) {
        if (((table.ambiguous[corner_case] >> f) & 1) == 0) continue;
        const auto& q = faces[f];
        const double p02 = g[q[0]] * g[q[2]], p13 = g[q[1]] * g[q[3]];
        const bool joined = g[q[0]] < 0 ? p02 > p13 : p13 > p02;
        decisions |= (joined ? 1 : 0) << n++;
      }
      const std::uint32_t config = table.first_config[corner_case] + std::uint32_t(decisions);
      const auto vertex = [&](int e) {
        const EdgeInfo& info = edges[e];
        const std::size_t cell = std::size_t(i + info.dx) + field.stride(1) * (j + info.dy);
        const std::uint32_t local = ids[info.dz][3 * cell + info.axis];
        return info.dz == 0 ? local : n0 + local;
      };
      std::uint32_t centre = 0;
      if (const std::uint16_t loop = table.centre_edges[config]; loop != 0) {
        // The mean of the loop's crossings, with the normalised mean of their normals.
        Vec3 p{0, 0, 0}, nsum{0, 0, 0}, first{0, 0, 0};
        for (int e = 0; e < 12; ++e) {
          if (((loop >> e) & 1) == 0) continue;
          const std::uint32_t v = vertex(e);
          const Layer& from = v < n0 ? layers[k] : layers[k + 1];
          const std::uint32_t at = v < n0 ? v : v - n0;
          p += Vec3(from.positions[at]);
          nsum += Vec3(from.normals[at]);
          if (first == Vec3{0, 0, 0}) first = Vec3(from.normals[at]);
        }
        centre = n0 + n1 + std::uint32_t(out.centre_positions.size());
        out.centre_positions.push_back(Vec3f(p / double(__builtin_popcount(loop))));
        out.centre_normals.push_back(Vec3f(normalize(nsum, first)));
      }
      for (std::uint32_t t = 3 * table.tri_begin[config]; t < 3 * table.tri_begin[config + 1];
           ++t) {
        const int e = table.tri_edges[t];
        out.triangles.push_back(e == mc::kCentre ? centre : vertex(e));
      }
    }
  }
}

}  // namespace

SurfaceMesh marching_cubes(const ScalarGrid& grid, float iso, bool inside_is_below, int threads) {
  validate(grid, iso);
  Field field(grid, iso, inside_is_below);
  const int nz = grid.nz;
  // A small grid is not worth an arena: run it here.
  if (grid.values.size() < kSmallGrid) threads = 1;
  std::vector<Layer> layers(std::size_t(nz), Layer{});
  for_layers(threads, nz, [&](int k) { field.mark_inside(k); });
  for_layers(threads, nz, [&](int k) { make_vertices(grid, field, k, layers[k]); });
  for_layer_ranges(threads, nz - 1, [&](int begin, int end) {
    // Each sample layer is numbered once per range, for the cube layers below and above it.
    std::array<std::vector<std::uint32_t>, 2> ids;
    number_layer(field, begin, ids[0]);
    for (int k = begin; k < end; ++k) {
      number_layer(field, k + 1, ids[1]);
      emit_cubes(field, k, layers, ids, layers[k]);
      std::swap(ids[0], ids[1]);
    }
  });

  // Pass 3: each sample layer's edge vertices, then its cube layer's centre vertices.
  std::vector<std::size_t> vertex_base(std::size_t(nz) + 1, 0), centre_base(nz, 0);
  std::vector<std::size_t> triangle_base(std::size_t(nz) + 1, 0);
  for (int k = 0; k < nz; ++k) {
    centre_base[k] = vertex_base[k] + layers[k].positions.size();
    vertex_base[k + 1] = centre_base[k] + layers[k].centre_positions.size();
    triangle_base[k + 1] = triangle_base[k] + layers[k].triangles.size();
  }
  if (vertex_base[nz] > std::numeric_limits<std::uint32_t>::max())
    fail("grid", "the surface has more vertices than 32-bit indices can address");
  SurfaceMesh mesh;
  mesh.positions.resize(vertex_base[nz]);
  mesh.normals.resize(vertex_base[nz]);
  mesh.triangles.resize(triangle_base[nz]);
  for_layers(threads, nz, [&](int k) {
    const Layer& layer = layers[k];
    std::copy(layer.positions.begin(), layer.positions.end(),
              mesh.positions.begin() + std::ptrdiff_t(vertex_base[k]));
    std::copy(layer.normals.begin(), layer.normals.end(),
              mesh.normals.begin() + std::ptrdiff_t(vertex_base[k]));
    std::copy(layer.centre_positions.begin(), layer.centre_positions.end(),
              mesh.positions.begin() + std::ptrdiff_t(centre_base[k]));
    std::copy(layer.centre_normals.begin(), layer.centre_normals.end(),
              mesh.normals.begin() + std::ptrdiff_t(centre_base[k]));
    if (k + 1 == nz) return;
    const std::size_t n0 = layer.positions.size(), n1 = layers[k + 1].positions.size();
    for (std::size_t t = 0; t < layer.triangles.size(); ++t) {
      const std::size_t v = layer.triangles[t];
      const std::size_t global = v < n0        ? vertex_base[k] + v
                                 : v < n0 + n1 ? vertex_base[k + 1] + (v - n0)
                                               : centre_base[k] + (v - n0 - n1);
      mesh.triangles[triangle_base[k] + t] = std::uint32_t(global);
    }
  });
  return mesh;
}

bool is_watertight(const SurfaceMesh& mesh) {
  // Directed edges as (from << 32 | to): each must be unique and have its reverse.
  const std::size_t n = mesh.positions.size();
  std::vector<std::uint64_t> directed;
  directed.reserve(mesh.triangles.size());
  for (std::size_t t = 0; t + 2 < mesh.triangles.size(); t += 3) {
    const std::uint32_t a = mesh.triangles[t], b = mesh.triangles[t + 1], c = mesh.triangles[t + 2];
    if (a >= n || b >= n || c >= n || a == b || b == c || c == a) return false;
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, c}, std::pair{c, a}})
      directed.push_back(std::uint64_t(from) << 32 | to);
  }
  if (mesh.triangles.size() % 3 != 0) return false;
  std::sort(directed.begin(), directed.end());
  if (std::adjacent_find(directed.begin(), directed.end()) != directed.end()) return false;
  for (const std::uint64_t e : directed) {
    const std::uint64_t reverse = (e << 32) | (e >> 32);
    if (!std::binary_search(directed.begin(), directed.end(), reverse)) return false;
  }
  return true;
}

}  // namespace kinema
