// The marching-cubes case table, generated from the cube's geometry (see marching_cubes_table.h).
//
// For each configuration: on each face, the edges whose corners differ are crossed; a face with
// two crossings gets one segment, an ambiguous face (four) gets two, cutting off either its two
// inside corners (decision 0: separated) or its two outside corners (decision 1: joined). Each
// segment is directed so that the inside corners lie on its right seen from outside the cube;
// every crossed edge belongs to two faces, so it ends one segment and starts another, and the
// segments chain into closed loops. Each loop is triangulated without adding vertices when it can
// be (dynamic programming over the polygon's triangulations, least total perimeter between edge
// midpoints, no diagonal joining two edges of one face: the cube across that face could draw the
// same diagonal and the edge would have four triangles); otherwise as a fan around a centre vertex.
// Triangles (i, k, j) with i < k < j keep the loop's direction, so all face outwards.
#include "marching_cubes_table.h"

#include <cmath>
#include <stdexcept>

namespace kinema::detail::mc {
namespace {

struct P3 {
  double x, y, z;
};

P3 sub(P3 a, P3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
P3 cross3(P3 a, P3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
double dot3(P3 a, P3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

P3 corner_point(int c) {
  return {double(corner_bit(c, 0)), double(corner_bit(c, 1)), double(corner_bit(c, 2))};
}

/// The midpoint of edge e: stands in for the crossing when orienting segments (any point strictly
/// inside the edges would do: a segment between two edges of a face never passes through a corner).
P3 edge_mid(int e) {
  const auto [c0, c1] = edge_corners(e);
  const P3 a = corner_point(c0), b = corner_point(c1);
  return {(a.x + b.x) / 2, (a.y + b.y) / 2, (a.z + b.z) / 2};
}

/// The edge joining corners c0 and c1 (which differ in one bit).
int edge_between(int c0, int c1) {
  const int diff = c0 ^ c1;
  const int axis = diff == 1 ? 0 : (diff == 2 ? 1 : 2);
  const int base = c0 & c1;
  int rank = 0;
  for (int c = 0; c < base; ++c) rank += corner_bit(c, axis) == 0 ? 1 : 0;
  return axis * 4 + rank;
}

/// True when edges e1 and e2 lie on a common face. A fan diagonal between two such edges could be
/// drawn by the cube on the face's other side as well, and the edge would then have four triangles.
bool share_face(int e1, int e2) {
  const auto faces = [](int e) {
    const int axis = e / 4, base = edge_corners(e)[0];
    std::array<int, 2> out{};
    int n = 0;
    for (int b = 0; b < 3; ++b)
      if (b != axis) out[n++] = 2 * b + corner_bit(base, b);
    return out;
  };
  const auto f1 = faces(e1), f2 = faces(e2);
  return f1[0] == f2[0] || f1[0] == f2[1] || f1[1] == f2[0] || f1[1] == f2[1];
}

/// Appends the loop's triangles: of the triangulations whose diagonals all cross the cube's
/// interior (none joins two edges of one face), the one of least total triangle perimeter measured
/// between edge midpoints (a static stand-in for "no slivers"; ties go to the lowest split vertex).
/// Returns false, appending nothing, when there is none.
bool triangulate(const std::vector<int>& loop, std::vector<std::uint8_t>& out) {
  const int n = int(loop.size());
  constexpr double kNone = 1e300;
  const auto dist = [&](int i, int j) {
    const P3 d = sub(edge_mid(loop[i]), edge_mid(loop[j]));
    return std::sqrt(dot3(d, d));
  };
  const auto allowed = [&](int i, int j) {
    return j == i + 1 || (i == 0 && j == n - 1) || !share_face(loop[i], loop[j]);
  };
  // cost[i][j]: the best triangulation of the sub-polygon i..j (j > i); split[i][j]: its apex.
  std::array<std::array<double, 12>, 12> cost{};
  std::array<std::array<int, 12>, 12> split{};
  for (int len = 2; len < n; ++len) {
    for (int i = 0; i + len < n; ++i) {
      const int j = i + len;
      cost[i][j] = kNone;
      if (!allowed(i, j)) continue;
      for (int k = i + 1; k < j; ++k) {
        if (cost[i][k] >= kNone || cost[k][j] >= kNone) continue;
        const double c = cost[i][k] + cost[k][j] + dist(i, k) + dist(k, j) + dist(i, j);
        if (c < cost[i][j]) cost[i][j] = c, split[i][j] = k;
      }
    }
  }
  if (cost[0][n - 1] >= kNone) return false;
  const auto emit = [&](auto&& self, int i, int j) -> void {
    if (j - i < 2) return;
    const int k = split[i][j];
    out.push_back(std::uint8_t(loop[i]));
    out.push_back(std::uint8_t(loop[k]));
    out.push_back(std::uint8_t(loop[j]));
    self(self, i, k);
    self(self, k, j);
  };
  emit(emit, 0, n - 1);
  return true;
}

CaseTable build() {
  CaseTable t;
  t.tri_begin.push_back(0);
  std::uint32_t configs = 0;
  for (int c = 0; c < 256; ++c) {
    std::uint8_t amb = 0;
    for (int f = 0; f < 6; ++f) {
      const auto q = face_corners(f);
      const bool in0 = (c >> q[0]) & 1, in1 = (c >> q[1]) & 1;
      const bool in2 = (c >> q[2]) & 1, in3 = (c >> q[3]) & 1;
      if (in0 == in2 && in1 == in3 && in0 != in1) amb |= std::uint8_t(1 << f);
    }
    t.ambiguous[c] = amb;
    t.first_config[c] = configs;
    const int n_amb = __builtin_popcount(amb);
    for (int d = 0; d < (1 << n_amb); ++d) {
      // Spread the packed decisions d over the ambiguous faces' bits.
      int decisions = 0, n = 0;
      for (int f = 0; f < 6; ++f)
        if ((amb >> f) & 1) decisions |= ((d >> n++) & 1) << f;
      std::uint16_t centre = 0;
      for (const auto& loop : crossing_loops(c, decisions)) {
        if (triangulate(loop, t.tri_edges)) continue;
        // A fan around the loop's centre vertex.
        if (centre != 0) throw std::logic_error("marching cubes table: two centre vertices");
        for (size_t m = 0; m < loop.size(); ++m) {
          centre |= std::uint16_t(1 << loop[m]);
          t.tri_edges.push_back(kCentre);
          t.tri_edges.push_back(std::uint8_t(loop[m]));
          t.tri_edges.push_back(std::uint8_t(loop[(m + 1) % loop.size()]));
        }
      }
      t.centre_edges.push_back(centre);
      t.tri_begin.push_back(std::uint32_t(t.tri_edges.size() / 3));
      ++configs;
    }
  }
  return t;
}

}  // namespace

std::array<int, 2> edge_corners(int e) {
  const int axis = e / 4;
  int rank = e % 4;
  for (int c = 0; c < 8; ++c) {
    if (corner_bit(c, axis) != 0) continue;
    if (rank-- == 0) return {c, c | (1 << axis)};
  }
  return {0, 0};  // unreachable for e in [0, 12)
}

std::array<int, 4> face_corners(int f) {
  const int axis = f / 2, base = (f % 2) << axis;
  const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
  return {base, base | (1 << u), base | (1 << u) | (1 << v), base | (1 << v)};
}

std::vector<std::vector<int>> crossing_loops(int corner_case, int decisions) {
  const auto inside = [&](int c) { return ((corner_case >> c) & 1) != 0; };
  std::array<int, 12> next;
  next.fill(-1);
  const auto add_segment = [&](int f, int e1, int e2, int cut_corner) {
    // Direct it so that the inside lies on its right: (n × d)·(q − p1) < 0 for an inside corner q.
    const int axis = f / 2;
    P3 n{0, 0, 0};
    (axis == 0 ? n.x : (axis == 1 ? n.y : n.z)) = f % 2 == 0 ? -1.0 : 1.0;
    const P3 p1 = edge_mid(e1), p2 = edge_mid(e2);
    const double side = dot3(cross3(n, sub(p2, p1)), sub(corner_point(cut_corner), p1));
    if ((side < 0) != inside(cut_corner)) std::swap(e1, e2);
    if (next[e1] != -1) throw std::logic_error("marching cubes table: edge starts two segments");
    next[e1] = e2;
  };
  for (int f = 0; f < 6; ++f) {
    const auto q = face_corners(f);
    std::array<int, 4> crossed{};  // the face's crossed edges, in cyclic order
    int n = 0;
    for (int m = 0; m < 4; ++m)
      if (inside(q[m]) != inside(q[(m + 1) % 4])) crossed[n++] = m;
    if (n == 2) {
      // One segment; the corner before its first edge is on one side of it, alone or not.
      const int m1 = crossed[0], m2 = crossed[1];
      add_segment(f, edge_between(q[m1], q[(m1 + 1) % 4]), edge_between(q[m2], q[(m2 + 1) % 4]),
                  q[(m1 + 1) % 4]);
    } else if (n == 4) {
      // Ambiguous: cut off the inside corners (separated) or the outside ones (joined).
      const bool joined = ((decisions >> f) & 1) != 0;
      for (int m = 0; m < 4; ++m) {
        if (inside(q[m]) == joined) continue;
        add_segment(f, edge_between(q[(m + 3) % 4], q[m]), edge_between(q[m], q[(m + 1) % 4]),
                    q[m]);
      }
    }
  }
  std::vector<std::vector<int>> loops;
  std::array<bool, 12> used{};
  for (int e = 0; e < 12; ++e) {
    if (next[e] == -1 || used[e]) continue;
    std::vector<int> loop;
    int at = e;
    do {
      if (next[at] == -1) throw std::logic_error("marching cubes table: open loop");
      used[at] = true;
      loop.push_back(at);
      at = next[at];
    } while (!used[at]);
    if (at != e) throw std::logic_error("marching cubes table: edge ends two segments");
    loops.push_back(std::move(loop));
  }
  return loops;
}

const CaseTable& case_table() {
  static const CaseTable table = build();
  return table;
}

}  // namespace kinema::detail::mc
