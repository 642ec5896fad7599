// Internal: the marching-cubes case table, generated in code at first use (no pasted tables).
//
// Cube layout. Corner c (0..7) sits at offset (c & 1, (c >> 1) & 1, (c >> 2) & 1) from the cube's
// lowest sample. Edge e (0..11) runs along axis a = e / 4 from its base corner, the (e % 4)-th
// corner in ascending order whose bit a is clear, to that corner with bit a set. Face f (0..5)
// is the side where axis f / 2 has offset f % 2.
//
// A cube's configuration is its corner case (bit c set: corner c is inside) plus one decision
// per ambiguous face (two diagonal corners inside, two outside): are the inside corners joined
// across the face? The caller decides those from the corner values (the asymptotic decider), the
// same way for both cubes that share the face; the table keeps one entry per case and per
// combination of decisions on that case's ambiguous faces.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace kinema::detail::mc {

/// Corner c's offset along axis a (0 or 1).
constexpr int corner_bit(int c, int a) { return (c >> a) & 1; }

/// The corners at either end of edge e: {base, base | 1 << axis}.
std::array<int, 2> edge_corners(int e);

/// The four corners of face f in cyclic order (counter-clockwise or not: callers only pair
/// diagonals, entries 0 and 2 against entries 1 and 3).
std::array<int, 4> face_corners(int f);

struct CaseTable {
  /// Per corner case: the ambiguous faces (bit f set), in ascending face order.
  std::array<std::uint8_t, 256> ambiguous{};
  /// Per corner case: the first configuration; configuration first + d, where bit n of d is the
  /// decision for the n-th ambiguous face (1: inside corners joined), holds its triangles.
  std::array<std::uint32_t, 256> first_config{};
  /// Per configuration: its triangles are tri_edges[3 * tri_begin[k] ... 3 * tri_begin[k + 1]).
  std::vector<std::uint32_t> tri_begin;
  /// Three vertices per triangle, counter-clockwise seen from outside the inside region: an edge
  /// index (its crossing), or kCentre.
  std::vector<std::uint8_t> tri_edges;
  /// Per configuration: the edges (bit e set) of the loop that has a centre vertex, or 0.
  std::vector<std::uint16_t> centre_edges;
};

/// A vertex at the mean of one loop's crossings, for loops (8 crossings or more, on cubes with
/// ambiguous faces) that no triangulation can cover without a diagonal between two edges of one
/// face. At most one loop per cube needs it.
constexpr std::uint8_t kCentre = 12;

/// The table, built once (thread-safe static initialisation).
const CaseTable& case_table();

/// The closed loops of edge crossings for one configuration (`decisions`: bit f set when the
/// inside corners of face f are joined; ignored on faces that are not ambiguous), each loop
/// ordered so that the inside corners lie on its right seen from outside the cube.
std::vector<std::vector<int>> crossing_loops(int corner_case, int decisions);

}  // namespace kinema::detail::mc
