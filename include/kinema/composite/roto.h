// kinema/composite/roto.h — rotoscoping: Bézier shapes keyed over time, rasterized into mattes.
//
// A roto shape is a closed outline drawn over the plate, keyed on the frames where it was drawn,
// that isolates what a keyer cannot (no screen behind it) or cleans up what a keyer left. Each key
// lists control vertices; consecutive vertices, and the last back to the first, bound one cubic
// Bézier segment with control points
//   P0 = vᵢ.position,  P1 = P0 + vᵢ.out_tangent,  P2 = P3 + vᵢ₊₁.in_tangent,  P3 = vᵢ₊₁.position,
// so zero tangents give straight edges (a polygon).
//
// Coordinates are pixels of the image the matte is for: x right, y DOWN from the image's
// top-left corner; pixel (i, j) is the square [i, i + 1] × [j, j + 1], its centre at
// (i + 0.5, j + 0.5). A kinema::Vec2 here holds pixels (not the ground-plane metres of
// math/vec2.h). Times are seconds.
//
// Rasterizing, shape by shape:
//   outline   each Bézier is flattened adaptively (halved by de Casteljau until both inner
//             control points lie within kRotoFlatness = 0.02 px of the chord, so that the
//             polyline stays within 0.02 px of the curve);
//   coverage  the polyline's exact area coverage of every pixel, accumulated row by row as signed
//             trapezoids the way font rasterizers do, under the non-zero winding rule:
//             c = min(1, |the winding number integrated over the pixel|). Exact (to rounding) for
//             the polyline of an outline that does not cross itself, whichever way it turns: a
//             polygon's coverage is exact, a curve's off by at most 0.02 × the length of curve in
//             the pixel (a circle of radius 100 px as four arcs loses 0.01 % of its area). Where a
//             self-crossing outline overlaps itself (winding 2, or +1 against −1) the few pixels
//             holding the crossing are approximate. Rounding below 1e-9 is snapped, so pixels
//             wholly inside or outside are exactly 1 or 0;
//   feather   each vertex's feather f (pixels) varies linearly with distance along the curve to
//             the next vertex's, and a pixel whose centre p lies within it gets
//               φ(p) = 1 − smoothstep(min over outline points q of |p − q| / f(q)),
//             smoothstep(x) = 3x² − 2x³ (with one f all round: 1 on the outline, falling smoothly
//             to 0 at distance f). The shape's value is max(c, φ): the interior (c = 1) stays as
//             it is and the edge fades out over the feather width beyond the outline;
//   invert    value → 1 − value (the shape keeps everything but itself);
//   blend     onto the matte m, which starts at 0, in the order the shapes are given, with the
//             shape's opacity o:
//               Add       m ← max(m, o·v)          union
//               Subtract  m ← m·(1 − o·v)          cut out (Porter–Duff "out")
//               Multiply  m ← m·(1 − o·(1 − v))    intersection (o = 1: m·v)
// Cost: the coverage grows with the area of the shape's bounding box (accumulated in bands of 64
// rows), the feather with the band it covers (distances measured tile by tile, only to the
// outline's nearby edges). One 8-vertex shape with a 10 px feather on a 1920 × 1080 matte: about
// 5 ms on one core; with a 400 px feather, about 0.25 s.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/composite/image.h"
#include "kinema/math/vec2.h"

namespace kinema::composite {

/// How far (pixels) a flattened outline may stray from its Bézier curves.
inline constexpr double kRotoFlatness = 0.02;
/// The largest matte side rasterize_roto makes, pixels.
inline constexpr int kRotoMaxSize = 16384;
/// The largest |x|, |y| of a position or tangent, and the largest feather, pixels: roto shapes
/// may reach far beyond the image, but not without bound.
inline constexpr double kRotoMaxCoordinate = 1e6;

/// One control vertex of a shape at one key. Pixels: x right, y down from the top-left corner.
struct RotoVertex {
  Vec2 position;       ///< the point the outline passes through
  Vec2 in_tangent;     ///< the handle before the vertex, relative to `position`
  Vec2 out_tangent;    ///< the handle after the vertex, relative to `position`
  double feather = 0;  ///< outward falloff width, ≥ 0 (0: a hard, anti-aliased edge)
  bool operator==(const RotoVertex&) const = default;
};

/// The shape as drawn at one time.
struct RotoKey {
  double time = 0;                   ///< seconds; keys' times increase strictly
  std::vector<RotoVertex> vertices;  ///< ≥ 3, the same count at every key of a shape
};

/// How vertices move between keys; every position, tangent and feather is interpolated alike.
enum class RotoInterpolation {
  /// Straight from key to key: p = (1 − s)·pᵢ + s·pᵢ₊₁, s = (t − tᵢ)/(tᵢ₊₁ − tᵢ).
  Linear,
  /// A Catmull–Rom spline through the keys: cubic Hermite between keys i and i + 1 with, at each
  /// key, the slope between its neighbours, (pᵢ₊₁ − pᵢ₋₁)/(tᵢ₊₁ − tᵢ₋₁), and at the first and last
  /// key the slope to its one neighbour. Passes through every key with velocity continuous
  /// across it (no stop at each key, as smoothstep easing would make); reproduces motion at
  /// constant velocity exactly, however unevenly the keys are spaced; with two keys it is
  /// Linear. It may overshoot between keys; feathers are clamped at 0.
  CatmullRom,
};

/// How a shape combines with the matte built from the shapes before it (see the file comment).
enum class RotoBlend { Add, Subtract, Multiply };

/// A closed shape keyed over time, and how it goes into the matte.
struct RotoShape {
  std::string name;  ///< for error messages ("roto shape 'arm', key 2, vertex 5")
  std::vector<RotoKey> keys;
  RotoInterpolation interpolation = RotoInterpolation::Linear;
  RotoBlend blend = RotoBlend::Add;
  bool invert = false;  ///< the shape keeps what lies outside it
  double opacity = 1;   ///< in [0, 1]; scales what the shape does to the matte
};

/// Checks a shape: at least one key; key times finite and strictly increasing; every key with the
/// same number (≥ 3) of vertices; positions, tangents and feathers finite and within
/// ±kRotoMaxCoordinate; feathers ≥ 0; opacity in [0, 1]. Throws kinema::Error whose place names
/// the shape (by its name; "roto shape" when it has none), the key and the vertex, counted from 0:
/// "roto shape 'arm', key 2, vertex 5".
void validate(const RotoShape& shape);

/// The shape's vertices at `time` (seconds): the first key's before it, the last key's after it,
/// interpolated in between; exactly a key's vertices at its time. Throws kinema::Error for an
/// invalid shape or a non-finite time.
std::vector<RotoVertex> vertices_at(const RotoShape& shape, double time);

/// The closed outline through `vertices` as a polyline within kRotoFlatness px of the curves:
/// the first vertex's position first, every vertex's position on it, the first not repeated at
/// the end. Throws kinema::Error for fewer than 3 vertices or bad numbers.
std::vector<Vec2> roto_outline(std::span<const RotoVertex> vertices);

/// The matte of `shapes` at `time` (seconds), width × height pixels: each shape feathered,
/// inverted and blended in order onto 0. No shapes: all 0. Throws kinema::Error for a side
/// outside 1 to kRotoMaxSize, a non-finite time, or an invalid shape (unnamed shapes are named by
/// their index: "roto shape 3").
Matte rasterize_roto(std::span<const RotoShape> shapes, double time, int width, int height);

/// One shape's own matte: its value (feathered, inverted when asked) times its opacity; its blend
/// mode is not used. Throws as the other rasterize_roto.
Matte rasterize_roto(const RotoShape& shape, double time, int width, int height);

}  // namespace kinema::composite
