// Cloth meshes and their springs (kinema/physics/cloth.h): grids, checks, the three spring kinds.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "kinema/core/error.h"
#include "kinema/physics/cloth.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "cloth";
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | b;
}

}  // namespace

// ---- meshes and springs ------------------------------------------------------------------------

ClothMesh make_grid_cloth(int columns, int rows, double width, double height, const Vec3& corner,
                          const Vec3& u_axis, const Vec3& v_axis) {
  if (columns < 2 || rows < 2)
    throw Error({}, kPlace,
                "a grid cloth needs at least 2 × 2 vertices, not " + std::to_string(columns) +
                    " × " + std::to_string(rows));
  if (!(width > 0) || !(height > 0) || !std::isfinite(width) || !std::isfinite(height))
    throw Error({}, kPlace, "a grid cloth's width and height must be positive and finite");
  ClothMesh m;
  m.grid_columns = columns;
  m.grid_rows = rows;
  m.positions.reserve(size_t(columns) * size_t(rows));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c)
      m.positions.push_back(corner + u_axis * (width * c / (columns - 1)) +
                            v_axis * (height * r / (rows - 1)));
  auto at = [&](int c, int r) { return std::uint32_t(r * columns + c); };
  for (int r = 0; r + 1 < rows; ++r)
    for (int c = 0; c + 1 < columns; ++c) {
      m.triangles.push_back({at(c, r), at(c + 1, r), at(c + 1, r + 1)});
      m.triangles.push_back({at(c, r), at(c + 1, r + 1), at(c, r + 1)});
    }
  return m;
}

void validate_cloth_mesh(const ClothMesh& mesh, const std::string& name) {
  auto fail = [&](const std::string& reason) { throw Error({}, name, reason); };
  const size_t n = mesh.positions.size();
  if (n < 2) fail("a cloth needs at least 2 vertices, it has " + std::to_string(n));
  for (size_t i = 0; i < n; ++i)
    if (!is_finite(mesh.positions[i])) fail("vertex " + std::to_string(i) + " is not finite");
  for (size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    const std::string what = "triangle " + std::to_string(t);
    for (std::uint32_t v : tri)
      if (v >= n) fail(what + " names vertex " + std::to_string(v) + " of " + std::to_string(n));
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2]) fail(what + " repeats a vertex");
    const Vec3 a = mesh.positions[tri[0]], b = mesh.positions[tri[1]], c = mesh.positions[tri[2]];
    const double longest =
        std::max({length_squared(b - a), length_squared(c - b), length_squared(a - c)});
    if (!(0.5 * length(cross(b - a, c - a)) > 1e-12 * longest) || longest == 0)
      fail(what + " is degenerate (no area)");
  }
  for (size_t e = 0; e < mesh.edges.size(); ++e) {
    const auto& edge = mesh.edges[e];
    const std::string what = "edge " + std::to_string(e);
    if (edge[0] >= n || edge[1] >= n) fail(what + " names a vertex past " + std::to_string(n));
    if (edge[0] == edge[1]) fail(what + " joins a vertex to itself");
    if (!(length(mesh.positions[edge[1]] - mesh.positions[edge[0]]) > 0))
      fail(what + " has zero length");
  }
  if (mesh.grid_columns != 0 || mesh.grid_rows != 0) {
    if (mesh.grid_columns < 2 || mesh.grid_rows < 2 ||
        size_t(mesh.grid_columns) * size_t(mesh.grid_rows) != n)
      fail("its grid (" + std::to_string(mesh.grid_columns) + " × " +
           std::to_string(mesh.grid_rows) + ") does not match its " + std::to_string(n) +
           " vertices");
  }
}

std::vector<ClothSpring> cloth_springs(const ClothMesh& mesh) {
  std::vector<ClothSpring> springs;
  std::map<std::uint64_t, bool> joined;  // ordered: the same springs in the same order every run
  auto add = [&](std::uint32_t a, std::uint32_t b, ClothSpringKind kind) {
    if (a == b || !joined.emplace(pair_key(a, b), true).second) return;
    springs.push_back({a, b, length(mesh.positions[b] - mesh.positions[a]), kind});
  };
  if (mesh.grid_columns > 0) {
    const int cols = mesh.grid_columns, rows = mesh.grid_rows;
    auto at = [&](int c, int r) { return std::uint32_t(r * cols + c); };
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        if (c + 1 < cols) add(at(c, r), at(c + 1, r), ClothSpringKind::Structural);
        if (r + 1 < rows) add(at(c, r), at(c, r + 1), ClothSpringKind::Structural);
      }
    for (const auto& e : mesh.edges) add(e[0], e[1], ClothSpringKind::Structural);
    for (int r = 0; r + 1 < rows; ++r)
      for (int c = 0; c + 1 < cols; ++c) {
        add(at(c, r), at(c + 1, r + 1), ClothSpringKind::Shear);
        add(at(c + 1, r), at(c, r + 1), ClothSpringKind::Shear);
      }
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        if (c + 2 < cols) add(at(c, r), at(c + 2, r), ClothSpringKind::Bend);
        if (r + 2 < rows) add(at(c, r), at(c, r + 2), ClothSpringKind::Bend);
      }
    return springs;
  }
  // Structural: the triangles' edges, then the extra edges. Remember each edge's opposite vertices.
  std::map<std::uint64_t, std::vector<std::uint32_t>> opposite;
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      const std::uint32_t a = t[k], b = t[(k + 1) % 3];
      add(a, b, ClothSpringKind::Structural);
      opposite[pair_key(a, b)].push_back(t[(k + 2) % 3]);
    }
  for (const auto& e : mesh.edges) add(e[0], e[1], ClothSpringKind::Structural);
  // Shear: across every edge shared by exactly two triangles.
  for (const auto& [key, across] : opposite)
    if (across.size() == 2) add(across[0], across[1], ClothSpringKind::Shear);
  // Bend: through each vertex, each neighbour with its most nearly opposite neighbour.
  const size_t n = mesh.positions.size();
  std::vector<std::vector<std::uint32_t>> neighbours(n);
  for (const ClothSpring& s : springs)
    if (s.kind == ClothSpringKind::Structural) {
      neighbours[s.a].push_back(s.b);
      neighbours[s.b].push_back(s.a);
    }
  const double cos150 = -std::sqrt(3.0) / 2;
  for (std::uint32_t v = 0; v < n; ++v) {
    std::sort(neighbours[v].begin(), neighbours[v].end());
    for (std::uint32_t a : neighbours[v]) {
      const Vec3 da = normalize(mesh.positions[a] - mesh.positions[v]);
      std::uint32_t best = kNone;
      double best_cos = cos150 + 1e-12;
      for (std::uint32_t b : neighbours[v]) {
        const double c = dot(da, normalize(mesh.positions[b] - mesh.positions[v]));
        if (b != a && c <= best_cos) best = b, best_cos = c;
      }
      if (best != kNone) add(a, best, ClothSpringKind::Bend);
    }
  }
  return springs;
}

}  // namespace kinema
