// Rotoscoping: keyed Bézier shapes rasterized into mattes (kinema/composite/roto.h).
#include "kinema/composite/roto.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string shape_place(const RotoShape& shape, long index) {
  if (!shape.name.empty()) return "roto shape '" + shape.name + "'";
  return index < 0 ? "roto shape" : "roto shape " + std::to_string(index);
}

void check_point(const Vec2& v, const char* what, const std::string& place) {
  if (!is_finite(v)) throw Error({}, place, std::string("the ") + what + " is not finite");
  if (std::abs(v.x) > kRotoMaxCoordinate || std::abs(v.y) > kRotoMaxCoordinate)
    throw Error({}, place,
                std::string("the ") + what + " (" + number(v.x) + ", " + number(v.y) +
                    ") lies beyond ±1,000,000 px");
}

void check_vertices(std::span<const RotoVertex> vertices, const std::string& place) {
  if (vertices.size() < 3)
    throw Error(
        {}, place,
        "has " + std::to_string(vertices.size()) + " vertices: a closed shape needs at least 3");
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const RotoVertex& v = vertices[i];
    const std::string at = place + ", vertex " + std::to_string(i);
    check_point(v.position, "position", at);
    check_point(v.in_tangent, "in tangent", at);
    check_point(v.out_tangent, "out tangent", at);
    if (!std::isfinite(v.feather)) throw Error({}, at, "the feather is not finite");
    if (v.feather < 0)
      throw Error({}, at, "the feather " + number(v.feather) + " is negative: it must be ≥ 0 px");
    if (v.feather > kRotoMaxCoordinate)
      throw Error({}, at, "the feather " + number(v.feather) + " is over 1,000,000 px");
  }
}

void check_shape(const RotoShape& shape, const std::string& place) {
  if (shape.keys.empty()) throw Error({}, place, "has no keys: a shape needs at least one");
  if (!(shape.opacity >= 0 && shape.opacity <= 1))
    throw Error({}, place, "the opacity " + number(shape.opacity) + " is outside [0, 1]");
  if (shape.interpolation != RotoInterpolation::Linear &&
      shape.interpolation != RotoInterpolation::CatmullRom)
    throw Error({}, place, "unknown interpolation");
  if (shape.blend != RotoBlend::Add && shape.blend != RotoBlend::Subtract &&
      shape.blend != RotoBlend::Multiply)
    throw Error({}, place, "unknown blend mode");
  for (std::size_t k = 0; k < shape.keys.size(); ++k) {
    const RotoKey& key = shape.keys[k];
    const std::string at = place + ", key " + std::to_string(k);
    if (!std::isfinite(key.time)) throw Error({}, at, "the time is not finite");
    if (k > 0 && !(key.time > shape.keys[k - 1].time))
      throw Error({}, at,
                  "the time " + number(key.time) + " s is not after key " + std::to_string(k - 1) +
                      "'s " + number(shape.keys[k - 1].time) +
                      " s: key times must increase strictly");
    if (k > 0 && key.vertices.size() != shape.keys[0].vertices.size())
      throw Error({}, at,
                  "has " + std::to_string(key.vertices.size()) + " vertices where key 0 has " +
                      std::to_string(shape.keys[0].vertices.size()) +
                      ": every key of a shape needs the same count");
    check_vertices(key.vertices, at);
  }
}

void check_time(double time, const std::string& place) {
  if (!std::isfinite(time)) throw Error({}, place, "the time " + number(time) + " is not finite");
}

/// The vertices at `time` of a checked shape.
std::vector<RotoVertex> interpolate(const RotoShape& shape, double time) {
  const std::vector<RotoKey>& keys = shape.keys;
  if (keys.size() == 1 || time <= keys.front().time) return keys.front().vertices;
  if (time >= keys.back().time) return keys.back().vertices;
  const std::size_t n = keys.size();
  const std::size_t i =
      std::size_t(std::upper_bound(keys.begin(), keys.end(), time,
                                   [](double t, const RotoKey& k) { return t < k.time; }) -
                  keys.begin()) -
      1;
  const double h = keys[i + 1].time - keys[i].time, s = (time - keys[i].time) / h;
  // The result is a weighted sum of keys i − 1 … i + 2 (weights[0] … weights[3]).
  std::array<double, 4> weights{0, 1 - s, s, 0};
  if (shape.interpolation == RotoInterpolation::CatmullRom) {
    const double s2 = s * s, s3 = s2 * s;
    const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2,
                 h11 = s3 - s2;
    weights = {0, h00, h01, 0};
    // h·h10·mᵢ, mᵢ the slope between key i's neighbours (one-sided at the first key).
    if (i > 0) {
      const double c = h * h10 / (keys[i + 1].time - keys[i - 1].time);
      weights[2] += c, weights[0] -= c;
    } else {
      weights[2] += h10, weights[1] -= h10;
    }
    // h·h11·mᵢ₊₁ (one-sided at the last key).
    if (i + 2 < n) {
      const double c = h * h11 / (keys[i + 2].time - keys[i].time);
      weights[3] += c, weights[1] -= c;
    } else {
      weights[2] += h11, weights[1] -= h11;
    }
  }
  std::vector<RotoVertex> out(keys[i].vertices.size());
  for (int w = 0; w < 4; ++w) {
    if (weights[std::size_t(w)] == 0) continue;
    const double weight = weights[std::size_t(w)];
    const std::vector<RotoVertex>& from = keys[i + std::size_t(w) - 1].vertices;
    for (std::size_t v = 0; v < out.size(); ++v) {
      out[v].position += from[v].position * weight;
      out[v].in_tangent += from[v].in_tangent * weight;
      out[v].out_tangent += from[v].out_tangent * weight;
      out[v].feather += from[v].feather * weight;
    }
  }
  for (RotoVertex& v : out) v.feather = std::max(v.feather, 0.0);  // Catmull–Rom overshoot
  return out;
}

// ---- flattening ---------------------------------------------------------------------------------

/// Distance from p to the segment a–b.
double distance_to_segment(const Vec2& p, const Vec2& a, const Vec2& b) {
  const Vec2 d = b - a;
  const double len2 = length_squared(d);
  const double u = len2 > 0 ? std::clamp(dot(p - a, d) / len2, 0.0, 1.0) : 0.0;
  return length(p - (a + d * u));
}

/// Appends the points after p0 of a polyline within kRotoFlatness of the cubic p0 … p3, p3 last.
/// The curve lies in its control points' hull, so once p1 and p2 are within the tolerance of
/// the chord, so is the whole curve; otherwise halve it (de Casteljau).
void flatten_cubic(const Vec2& p0, const Vec2& p1, const Vec2& p2, const Vec2& p3, int depth,
                   std::vector<Vec2>& out) {
  // Coordinates are bounded (kRotoMaxCoordinate), so 2²⁴ pieces always suffice; the depth limit
  // is only a guard.
  if (depth >= 24 || (distance_to_segment(p1, p0, p3) <= kRotoFlatness &&
                      distance_to_segment(p2, p0, p3) <= kRotoFlatness)) {
    out.push_back(p3);
    return;
  }
  const Vec2 p01 = (p0 + p1) * 0.5, p12 = (p1 + p2) * 0.5, p23 = (p2 + p3) * 0.5;
  const Vec2 p012 = (p01 + p12) * 0.5, p123 = (p12 + p23) * 0.5;
  const Vec2 mid = (p012 + p123) * 0.5;
  flatten_cubic(p0, p01, p012, mid, depth + 1, out);
  flatten_cubic(mid, p123, p23, p3, depth + 1, out);
}

/// A flattened closed outline: points (the last joined back to the first) and the feather at
/// each.
struct Outline {
  std::vector<Vec2> points;
  std::vector<double> feather;
};

/// Flattens the outline through checked vertices. With an image size, a Bézier whose control
/// hull, grown by its feather, misses the image is replaced by its chord: above, below or right
/// of the image neither touches any pixel, and left of it both only count, row by row, how far
/// they run up or down — which depends on the ends alone.
Outline flatten_outline(std::span<const RotoVertex> vertices, int width = 0, int height = 0) {
  Outline outline;
  const std::size_t n = vertices.size();
  for (std::size_t i = 0; i < n; ++i) {
    const RotoVertex &a = vertices[i], &b = vertices[(i + 1) % n];
    const Vec2 p0 = a.position, p1 = p0 + a.out_tangent, p3 = b.position, p2 = p3 + b.in_tangent;
    const std::size_t start = outline.points.size();
    outline.points.push_back(p0);
    bool visible = true;
    if (width > 0) {
      const double reach = std::max(a.feather, b.feather);
      const double x_lo = std::min({p0.x, p1.x, p2.x, p3.x}) - reach,
                   x_hi = std::max({p0.x, p1.x, p2.x, p3.x}) + reach,
                   y_lo = std::min({p0.y, p1.y, p2.y, p3.y}) - reach,
                   y_hi = std::max({p0.y, p1.y, p2.y, p3.y}) + reach;
      visible = x_hi > 0 && x_lo < width && y_hi > 0 && y_lo < height;
    }
    if (visible) {
      flatten_cubic(p0, p1, p2, p3, 0, outline.points);
      outline.points.pop_back();  // p3: the next segment's first point
    }
    // The feather, linear in distance along this segment's polyline.
    double total = length(p3 - outline.points.back());
    for (std::size_t k = start + 1; k < outline.points.size(); ++k)
      total += length(outline.points[k] - outline.points[k - 1]);
    outline.feather.push_back(a.feather);
    double along = 0;
    for (std::size_t k = start + 1; k < outline.points.size(); ++k) {
      along += length(outline.points[k] - outline.points[k - 1]);
      outline.feather.push_back(a.feather +
                                (b.feather - a.feather) * (total > 0 ? along / total : 0.0));
    }
  }
  return outline;
}

// ---- coverage -----------------------------------------------------------------------------------

/// Exact-area coverage of a band of a region, `cols` pixels wide and `rows` high, by a closed
/// polyline given edge by edge in the band's pixel coordinates. Each row holds cols + 2 cells: a
/// line adds, in the cells it crosses, the signed area of the pixel to its right, and the rest of
/// its height to the next cell, so that a running sum along the row is each pixel's integrated
/// winding number.
class AreaAccumulator {
 public:
  explicit AreaAccumulator(int cols) : cols_(cols), stride_(std::size_t(cols) + 2) {}

  /// Clears the cells for a band `rows` high.
  void start(int rows) {
    rows_ = rows;
    cells_.assign(stride_ * std::size_t(rows), 0.0);
  }

  void add_line(const Vec2& a, const Vec2& b) {
    if (a.y == b.y) return;
    // Split where the line crosses the region's left and right sides, then clamp x onto them:
    // all of a line left of the region runs up or down beside every pixel of its rows (as a
    // line on the left side would), and all of one right of it touches none.
    std::array<double, 4> t{0, 1, 1, 1};
    int count = 1;
    for (const double side : {0.0, double(cols_)})
      if ((a.x < side) != (b.x < side)) {
        const double u = (side - a.x) / (b.x - a.x);
        if (u > 0 && u < 1) t[std::size_t(count++)] = u;
      }
    if (count == 3 && t[1] > t[2]) std::swap(t[1], t[2]);
    t[std::size_t(count)] = 1;
    for (int k = 0; k < count; ++k) {
      const double u0 = t[std::size_t(k)], u1 = t[std::size_t(k) + 1];
      Vec2 p = u0 == 0 ? a : a + (b - a) * u0, q = u1 == 1 ? b : a + (b - a) * u1;
      p.x = std::clamp(p.x, 0.0, double(cols_)), q.x = std::clamp(q.x, 0.0, double(cols_));
      add_inside(p, q);
    }
  }

  /// min(1, |running sum|) for every pixel of the band, into rows × cols floats; rounding below
  /// 1e-9 is snapped to 0 or 1.
  void resolve(float* out) const {
    for (int y = 0; y < rows_; ++y) {
      const double* row = &cells_[std::size_t(y) * stride_];
      float* dst = out + std::size_t(y) * std::size_t(cols_);
      double sum = 0;
      for (int x = 0; x < cols_; ++x) {
        sum += row[x];
        const double c = std::abs(sum);
        dst[x] = c < 1e-9 ? 0.0f : c > 1 - 1e-9 ? 1.0f : float(c);
      }
    }
  }

 private:
  /// A line with x in [0, cols].
  void add_inside(Vec2 p, Vec2 q) {
    double direction = 1;
    if (p.y > q.y) std::swap(p, q), direction = -1;
    if (q.y <= 0 || p.y >= rows_ || p.y == q.y) return;
    const double dxdy = (q.x - p.x) / (q.y - p.y);
    const double y_top = std::max(p.y, 0.0), y_bottom = std::min(q.y, double(rows_));
    auto x_at = [&](double y) {
      if (y == p.y) return p.x;
      if (y == q.y) return q.x;
      return std::clamp(p.x + (y - p.y) * dxdy, 0.0, double(cols_));
    };
    for (int row = int(std::floor(y_top)); row < y_bottom; ++row) {
      const double ya = std::max(y_top, double(row)), yb = std::min(y_bottom, double(row + 1));
      if (yb > ya) add_in_row(row, x_at(ya), x_at(yb), direction * (yb - ya));
    }
  }

  /// A piece within one row from x = xa to xb, `height` its signed height.
  void add_in_row(int row, double xa, double xb, double height) {
    double* cell = &cells_[std::size_t(row) * stride_];
    const double left = std::min(xa, xb), right = std::max(xa, xb);
    const int c0 = std::min(int(left), cols_);
    const int c1 = std::clamp(int(std::ceil(right)) - 1, c0, cols_);
    // A piece in column c from x = p to x = q covers (c + 1 − (p + q)/2) of its height in c.
    if (c0 == c1) {
      const double f = 0.5 * (left + right) - c0;
      cell[c0] += height * (1 - f), cell[c0 + 1] += height * f;
      return;
    }
    const double per_x = height / (right - left);
    for (int c = c0; c <= c1; ++c) {
      const double p = std::max(left, double(c)), q = std::min(right, double(c + 1));
      const double share = (q - p) * per_x, f = 0.5 * (p + q) - c;
      cell[c] += share * (1 - f), cell[c + 1] += share * f;
    }
  }

  int cols_, rows_ = 0;
  std::size_t stride_;
  std::vector<double> cells_;
};

// ---- feather ------------------------------------------------------------------------------------

/// An outline edge from a to a + d, its feather linear from fa to fb, in region coordinates.
struct FeatherEdge {
  Vec2 a, d;
  double length2 = 0, fa = 0, fb = 0, reach = 0;  // reach = max(fa, fb)
};

/// The least (|p − q(u)| / f(u))² over the points q(u) = a + u·d of the edge, f(u) linear from fa
/// to fb (∞ where the edge has no feather); `where` gets that u.
double least_ratio2(const Vec2& p, const FeatherEdge& e, double* where = nullptr) {
  const double k = e.fb - e.fa;
  const Vec2 w = p - e.a;
  double best = std::numeric_limits<double>::infinity(), best_u = 0;
  auto consider = [&](double u) {
    const double f = e.fa + k * u;
    if (!(f > 0)) return;
    const double r2 = length_squared(w - e.d * u) / (f * f);
    if (r2 < best) best = r2, best_u = u;
  };
  consider(0);
  consider(1);
  // d/du (|w − u·d|² / f(u)²) vanishes where u·(2·|d|²·fa − k·B) = 2·k·|w|² − B·fa, B = −2 w·d:
  // one critical point at most, since the quadratic terms cancel.
  const double B = -2 * dot(w, e.d), denominator = 2 * e.length2 * e.fa - k * B;
  if (denominator != 0) {
    const double u = (2 * k * length_squared(w) - B * e.fa) / denominator;
    if (u > 0 && u < 1) consider(u);
  }
  if (where) *where = best_u;
  return best;
}

/// Raises values[…] (cols × rows, region coordinates) to the feather's φ = 1 − smoothstep(r),
/// r the least distance-to-feather ratio over the edges. Distances are measured tile by tile
/// (8 × 8 pixels), and only to the edges that can hold a tile's least ratio: an edge whose
/// lower bound (its distance from the tile, over its largest feather) is not below 1, or above
/// some edge's upper bound for the whole tile, is left out. So the work grows with the band the
/// feather covers times the few edges near each pixel, not with every edge within reach.
void add_feather(std::span<const FeatherEdge> edges, int cols, int rows,
                 std::vector<float>& values) {
  constexpr int kTile = 8, kChunk = 16;
  // Runs of up to kChunk consecutive edges and their bounding boxes, grown by their reach, reject
  // far-off edges a run at a time.
  struct Chunk {
    double x0, y0, x1, y1;
    std::size_t first, last;
  };
  std::vector<Chunk> chunks;
  for (std::size_t first = 0; first < edges.size(); first += kChunk) {
    Chunk c{std::numeric_limits<double>::infinity(),
            std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity(),
            first,
            std::min(first + kChunk, edges.size())};
    for (std::size_t k = c.first; k < c.last; ++k) {
      const FeatherEdge& e = edges[k];
      const Vec2 b = e.a + e.d;
      c.x0 = std::min(c.x0, std::min(e.a.x, b.x) - e.reach);
      c.x1 = std::max(c.x1, std::max(e.a.x, b.x) + e.reach);
      c.y0 = std::min(c.y0, std::min(e.a.y, b.y) - e.reach);
      c.y1 = std::max(c.y1, std::max(e.a.y, b.y) + e.reach);
    }
    chunks.push_back(c);
  }
  std::vector<std::pair<const FeatherEdge*, double>> near;  // edge, lower bound
  std::vector<const FeatherEdge*> kept;
  for (int ty = 0; ty < rows; ty += kTile)
    for (int tx = 0; tx < cols; tx += kTile) {
      const int x_end = std::min(tx + kTile, cols), y_end = std::min(ty + kTile, rows);
      // The rectangle of the tile's pixel centres: its centre and half-diagonal (a micropixel
      // more, so that rounding cannot turn the bounds below against the edge that sets them).
      const double cx0 = tx + 0.5, cy0 = ty + 0.5, cx1 = x_end - 0.5, cy1 = y_end - 0.5;
      const Vec2 centre{0.5 * (cx0 + cx1), 0.5 * (cy0 + cy1)};
      const double half_diagonal = 0.5 * std::hypot(cx1 - cx0, cy1 - cy0) + 1e-6;
      bool inside = true;  // a tile wholly inside the shape has nothing to raise
      for (int y = ty; y < y_end && inside; ++y)
        for (int x = tx; x < x_end && inside; ++x)
          inside = values[std::size_t(y) * std::size_t(cols) + std::size_t(x)] == 1;
      if (inside) continue;
      near.clear();
      double upper = 1;  // no pixel of the tile has a least ratio above this
      for (const Chunk& c : chunks) {
        // The box holds every point within reach of the run's edges.
        if (c.x1 <= cx0 || c.x0 >= cx1 || c.y1 <= cy0 || c.y0 >= cy1) continue;
        for (std::size_t k = c.first; k < c.last; ++k) {
          const FeatherEdge& e = edges[k];
          double u = 0;
          const double r2 = least_ratio2(centre, e, &u);
          // |centre − q(u)| = r·f(u); any point q of the edge is at least (distance − half
          // diagonal) from every pixel centre of the tile.
          const Vec2 q = e.a + e.d * u;
          const double s =
              e.length2 > 0 ? std::clamp(dot(centre - e.a, e.d) / e.length2, 0.0, 1.0) : 0.0;
          const double lower =
              std::max(0.0, length(centre - (e.a + e.d * s)) - half_diagonal) / e.reach;
          if (!(lower < 1) || lower > upper) continue;
          if (r2 < std::numeric_limits<double>::infinity())
            upper =
                std::min(upper, (length(centre - q) + half_diagonal) / (e.fa + (e.fb - e.fa) * u));
          near.push_back({&e, lower});
        }
      }
      kept.clear();
      for (const auto& [e, lower] : near)
        if (lower <= upper) kept.push_back(e);
      if (kept.empty()) continue;
      for (int y = ty; y < y_end; ++y) {
        float* row = &values[std::size_t(y) * std::size_t(cols)];
        for (int x = tx; x < x_end; ++x) {
          if (row[x] == 1) continue;
          const Vec2 p{x + 0.5, y + 0.5};
          double best = std::numeric_limits<double>::infinity();
          for (const FeatherEdge* e : kept) best = std::min(best, least_ratio2(p, *e));
          if (!(best < 1)) continue;
          const double r = std::sqrt(best);
          row[x] = std::max(row[x], float(1 - r * r * (3 - 2 * r)));
        }
      }
    }
}

/// v clamped to [lo, hi] as an int (v may be far outside int's range).
int clamp_to_int(double v, int lo, int hi) { return int(std::clamp(v, double(lo), double(hi))); }

/// A shape's value (coverage and feather, before invert and opacity) over the region of the image
/// its outline and feather reach; 0 elsewhere.
struct ShapeValue {
  int x0 = 0, y0 = 0, cols = 0, rows = 0;
  std::vector<float> values;  // cols × rows
};

ShapeValue shape_value(std::span<const RotoVertex> vertices, int width, int height) {
  const Outline outline = flatten_outline(vertices, width, height);
  const std::vector<Vec2>& points = outline.points;
  const std::size_t n = points.size();
  double x_lo = std::numeric_limits<double>::infinity(), y_lo = x_lo, x_hi = -x_lo, y_hi = -x_lo;
  for (std::size_t k = 0; k < n; ++k) {
    const double f = outline.feather[k];
    x_lo = std::min(x_lo, points[k].x - f), x_hi = std::max(x_hi, points[k].x + f);
    y_lo = std::min(y_lo, points[k].y - f), y_hi = std::max(y_hi, points[k].y + f);
  }
  ShapeValue out;
  out.x0 = clamp_to_int(std::floor(x_lo), 0, width);
  out.y0 = clamp_to_int(std::floor(y_lo), 0, height);
  out.cols = clamp_to_int(std::ceil(x_hi), 0, width) - out.x0;
  out.rows = clamp_to_int(std::ceil(y_hi), 0, height) - out.y0;
  if (out.cols <= 0 || out.rows <= 0) {
    out.cols = out.rows = 0;
    return out;
  }
  // Region coordinates: whole-pixel offsets, so that moving a shape by whole pixels moves its
  // matte exactly.
  const Vec2 origin{double(out.x0), double(out.y0)};
  std::vector<Vec2> local(n);
  for (std::size_t k = 0; k < n; ++k) local[k] = points[k] - origin;

  // The coverage in bands of rows, each edge added to the bands it crosses: the cells stay small
  // (and in cache) however large the shape.
  constexpr int kBand = 64;
  out.values.resize(std::size_t(out.cols) * std::size_t(out.rows));
  AreaAccumulator area(out.cols);
  for (int top = 0; top < out.rows; top += kBand) {
    const int rows = std::min(kBand, out.rows - top);
    area.start(rows);
    const Vec2 shift{0, double(top)};
    for (std::size_t k = 0; k < n; ++k) {
      const Vec2 a = local[k], b = local[(k + 1) % n];
      if (std::max(a.y, b.y) <= top || std::min(a.y, b.y) >= top + rows) continue;
      area.add_line(a - shift, b - shift);
    }
    area.resolve(&out.values[std::size_t(top) * std::size_t(out.cols)]);
  }

  std::vector<FeatherEdge> edges;
  for (std::size_t k = 0; k < n; ++k) {
    FeatherEdge e;
    e.a = local[k], e.d = local[(k + 1) % n] - local[k];
    e.length2 = length_squared(e.d);
    e.fa = outline.feather[k], e.fb = outline.feather[(k + 1) % n];
    e.reach = std::max(e.fa, e.fb);
    if (e.reach > 0) edges.push_back(e);
  }
  if (!edges.empty()) add_feather(edges, out.cols, out.rows, out.values);
  return out;
}

/// Calls apply(m, v) with every pixel m of the matte in the shape's region and the shape's value
/// v there; with `outside_too`, also with every other pixel and v = 0.
template <class Apply>
void over_pixels(Matte& matte, const ShapeValue& value, bool outside_too, Apply apply) {
  for (int y = 0; y < matte.height; ++y) {
    float* m = &matte.values[std::size_t(y) * std::size_t(matte.width)];
    const bool in_rows = y >= value.y0 && y < value.y0 + value.rows;
    const int lo = in_rows ? value.x0 : matte.width, hi = in_rows ? lo + value.cols : matte.width;
    if (outside_too) {
      for (int x = 0; x < lo; ++x) apply(m[x], 0.0f);
      for (int x = hi; x < matte.width; ++x) apply(m[x], 0.0f);
    }
    if (!in_rows) continue;
    const float* v = &value.values[std::size_t(y - value.y0) * std::size_t(value.cols)];
    for (int x = lo; x < hi; ++x) apply(m[x], v[x - lo]);
  }
}

void check_size(int width, int height) {
  if (width < 1 || height < 1 || width > kRotoMaxSize || height > kRotoMaxSize)
    throw Error({}, "roto matte",
                "the size " + std::to_string(width) + " × " + std::to_string(height) +
                    " is outside 1 to 16,384 px a side");
}

}  // namespace

void validate(const RotoShape& shape) { check_shape(shape, shape_place(shape, -1)); }

std::vector<RotoVertex> vertices_at(const RotoShape& shape, double time) {
  validate(shape);
  check_time(time, shape_place(shape, -1));
  return interpolate(shape, time);
}

std::vector<Vec2> roto_outline(std::span<const RotoVertex> vertices) {
  check_vertices(vertices, "roto outline");
  return flatten_outline(vertices).points;
}

Matte rasterize_roto(std::span<const RotoShape> shapes, double time, int width, int height) {
  check_size(width, height);
  check_time(time, "roto matte");
  for (std::size_t s = 0; s < shapes.size(); ++s)
    check_shape(shapes[s], shape_place(shapes[s], long(s)));
  Matte matte(width, height);
  for (const RotoShape& shape : shapes) {
    const ShapeValue value = shape_value(interpolate(shape, time), width, height);
    const float o = float(shape.opacity);
    const bool invert = shape.invert;
    // Outside its region the shape's value is 0 (1 inverted): there Add and Subtract change
    // nothing unless inverted, Multiply nothing if inverted.
    switch (shape.blend) {
      case RotoBlend::Add:
        over_pixels(matte, value, invert && o > 0,
                    [&](float& m, float v) { m = std::max(m, o * (invert ? 1 - v : v)); });
        break;
      case RotoBlend::Subtract:
        over_pixels(matte, value, invert && o > 0,
                    [&](float& m, float v) { m *= 1 - o * (invert ? 1 - v : v); });
        break;
      case RotoBlend::Multiply:
        over_pixels(matte, value, !invert && o > 0,
                    [&](float& m, float v) { m *= 1 - o * (invert ? v : 1 - v); });
        break;
    }
  }
  return matte;
}

Matte rasterize_roto(const RotoShape& shape, double time, int width, int height) {
  check_size(width, height);
  check_time(time, "roto matte");
  check_shape(shape, shape_place(shape, -1));
  const ShapeValue value = shape_value(interpolate(shape, time), width, height);
  const float o = float(shape.opacity);
  const bool invert = shape.invert;
  Matte matte(width, height, invert ? o : 0.0f);
  over_pixels(matte, value, false, [&](float& m, float v) { m = o * (invert ? 1 - v : v); });
  return matte;
}

}  // namespace kinema::composite
