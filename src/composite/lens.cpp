// Brown–Conrady distortion, its inverse, ST-maps and bilinear remapping
// (kinema/composite/lens.h).
#include "kinema/composite/lens.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

constexpr float kNoSample = -1;  // an ST-map coordinate outside the source
constexpr int kMaxIterations = 100;
constexpr double kTolerance = 1e-12;

/// The distorted point and the distortion's Jacobian at (x, y). The Jacobian is symmetric:
/// ∂x′/∂y = ∂y′/∂x = 2xy·R′ + 2·p1·x + 2·p2·y, with R′ = dR/d(r²).
struct Evaluation {
  double x = 0, y = 0;
  double jxx = 0, jxy = 0, jyy = 0;
  double determinant() const { return jxx * jyy - jxy * jxy; }
};

Evaluation evaluate(const BrownConrady& l, double x, double y) {
  const double r2 = x * x + y * y;
  const double radial = 1 + r2 * (l.k1 + r2 * (l.k2 + r2 * l.k3));
  const double slope = l.k1 + r2 * (2 * l.k2 + r2 * 3 * l.k3);  // dR/d(r²)
  Evaluation e;
  e.x = x * radial + 2 * l.p1 * x * y + l.p2 * (r2 + 2 * x * x);
  e.y = y * radial + l.p1 * (r2 + 2 * y * y) + 2 * l.p2 * x * y;
  e.jxx = radial + 2 * x * x * slope + 2 * l.p1 * y + 6 * l.p2 * x;
  e.jxy = 2 * x * y * slope + 2 * l.p1 * x + 2 * l.p2 * y;
  e.jyy = radial + 2 * y * y * slope + 6 * l.p1 * y + 2 * l.p2 * x;
  return e;
}

bool finite(const BrownConrady& l) {
  return std::isfinite(l.k1) && std::isfinite(l.k2) && std::isfinite(l.k3) && std::isfinite(l.p1) &&
         std::isfinite(l.p2);
}

enum class Inverse { Found, NotFinite, Folded, NoConvergence };

/// undistort() without throwing: the ST-maps solve millions of points, some legitimately
/// outside the invertible region, and an exception apiece would dominate the cost.
Inverse invert(const NormalizedPoint& target, const BrownConrady& l, NormalizedPoint& out) {
  if (!std::isfinite(target.x) || !std::isfinite(target.y) || !finite(l)) return Inverse::NotFinite;
  const double tolerance = kTolerance * std::max({1.0, std::abs(target.x), std::abs(target.y)});
  const auto residual = [&](const Evaluation& e) {
    return std::max(std::abs(e.x - target.x), std::abs(e.y - target.y));
  };
  double x = target.x, y = target.y;
  Evaluation e = evaluate(l, x, y);
  double error = residual(e);
  // One step of OpenCV's fixed-point iteration (cv::undistortPoints), kept if it helps: it takes
  // out most of a mild lens's distortion, and Newton finishes quadratically.
  if (e.x != x || e.y != y) {
    const double r2 = x * x + y * y;
    const double radial = 1 + r2 * (l.k1 + r2 * (l.k2 + r2 * l.k3));
    if (radial > 0) {
      const double fx = (target.x - (2 * l.p1 * x * y + l.p2 * (r2 + 2 * x * x))) / radial;
      const double fy = (target.y - (l.p1 * (r2 + 2 * y * y) + 2 * l.p2 * x * y)) / radial;
      const Evaluation f = evaluate(l, fx, fy);
      if (residual(f) < error) x = fx, y = fy, e = f, error = residual(f);
    }
  }
  for (int i = 0; i <= kMaxIterations; ++i) {
    // det ≤ 0: past the fold, where the map stops being one-to-one; no answer there is right.
    const double det = e.determinant();
    if (!(det > 0)) return Inverse::Folded;
    const double rx = e.x - target.x, ry = e.y - target.y;
    const double dx = (e.jyy * rx - e.jxy * ry) / det, dy = (e.jxx * ry - e.jxy * rx) / det;
    if (error <= tolerance) {
      // One more step, nearly free, takes a residual just under 1e-12 down to rounding.
      const Evaluation n = evaluate(l, x - dx, y - dy);
      out = residual(n) <= error ? NormalizedPoint{x - dx, y - dy} : NormalizedPoint{x, y};
      return Inverse::Found;
    }
    if (i == kMaxIterations) break;
    // Halve the step until the residual falls: Newton can overshoot on a strong lens.
    double step = 1;
    for (;;) {
      const double nx = x - step * dx, ny = y - step * dy;
      const Evaluation n = evaluate(l, nx, ny);
      if (residual(n) < error) {
        x = nx, y = ny, e = n, error = residual(n);
        break;
      }
      step *= 0.5;
      if (step < 1e-6) return Inverse::NoConvergence;
    }
  }
  return Inverse::NoConvergence;
}

void check_size(int width, int height, const char* what) {
  if (width < 0 || height < 0)
    throw Error({}, what,
                "the size must not be negative, not " + std::to_string(width) + "×" +
                    std::to_string(height));
}

NormalizedPoint normalized(double u, double v, const LensIntrinsics& k) {
  return {(u - k.cx) / k.fx, (v - k.cy) / k.fy};
}

/// A map whose pixel (i, j) samples the source at where(i, j) (pixels), or nowhere when `where`
/// returns false.
template <class Where>
StMap build(int width, int height, Where where) {
  StMap map;
  map.width = width, map.height = height;
  const std::size_t n = std::size_t(width) * std::size_t(height);
  map.s.resize(n), map.t.resize(n);
  for (int j = 0; j < height; ++j)
    for (int i = 0; i < width; ++i) {
      const std::size_t index = std::size_t(j) * std::size_t(width) + std::size_t(i);
      PixelPoint p;
      if (where(i, j, p)) {
        map.s[index] = float((p.u + 0.5) / width);
        map.t[index] = float(1 - (p.v + 0.5) / height);
      } else {
        map.s[index] = map.t[index] = kNoSample;
      }
    }
  return map;
}

void multiply_add(Rgba& sum, const Rgba& p, float w) {
  sum.r += w * p.r, sum.g += w * p.g, sum.b += w * p.b, sum.a += w * p.a;
}
void multiply_add(float& sum, float p, float w) { sum += w * p; }

/// One axis of a bilinear tap: the first pixel and the weight of the second. A position within
/// float precision of a centre snaps to it, so the identity map's float (i + ½)/n lands exactly.
struct Axis {
  int first = 0;
  float weight = 0;
};

Axis axis(double position, double snap) {
  const double floor = std::floor(position);
  Axis a{int(floor), float(position - floor)};
  if (a.weight <= snap) {
    a.weight = 0;
  } else if (a.weight >= 1 - snap) {
    a.weight = 0;
    ++a.first;
  }
  return a;
}

/// Throws unless the map holds width × height values of s and of t.
void check_map(const StMap& map, const char* what) {
  check_size(map.width, map.height, what);
  const std::size_t n = std::size_t(map.width) * std::size_t(map.height);
  if (map.s.size() != n || map.t.size() != n)
    throw Error({}, what,
                "the ST-map is " + std::to_string(map.width) + "×" + std::to_string(map.height) +
                    " but holds " + std::to_string(map.s.size()) + " s and " +
                    std::to_string(map.t.size()) + " t values");
}

template <class Pixel>
std::vector<Pixel> resample(const std::vector<Pixel>& source, int width, int height,
                            const StMap& map) {
  check_map(map, "remap");
  check_size(width, height, "remap");
  if (source.size() != std::size_t(width) * std::size_t(height))
    throw Error({}, "remap",
                "the source is " + std::to_string(width) + "×" + std::to_string(height) +
                    " but holds " + std::to_string(source.size()) + " pixels");
  const std::size_t n = map.s.size();
  // A float s carries 24 bits: (i + ½)/n comes back within n·2⁻²⁵ px of i; snap within 8× that.
  const double snap_u = width * 0x1p-22, snap_v = height * 0x1p-22;
  std::vector<Pixel> out(n, Pixel{});
  for (std::size_t i = 0; i < n; ++i) {
    const double u = double(map.s[i]) * width - 0.5, v = (1 - double(map.t[i])) * height - 0.5;
    // Also false for NaN; keeps the int conversion below in range.
    if (!(u > -1 && u < width && v > -1 && v < height)) continue;
    const Axis x = axis(u, snap_u), y = axis(v, snap_v);
    Pixel sum{};
    if (x.weight > 0 && y.weight > 0 && x.first >= 0 && x.first < width - 1 && y.first >= 0 &&
        y.first < height - 1) {
      // The common case, all four taps inside: no checks per tap.
      const Pixel* top = &source[std::size_t(y.first) * std::size_t(width) + std::size_t(x.first)];
      const Pixel* bottom = top + width;
      multiply_add(sum, top[0], (1 - x.weight) * (1 - y.weight));
      multiply_add(sum, top[1], x.weight * (1 - y.weight));
      multiply_add(sum, bottom[0], (1 - x.weight) * y.weight);
      multiply_add(sum, bottom[1], x.weight * y.weight);
      out[i] = sum;
      continue;
    }
    const int xs[2] = {x.first, x.first + 1}, ys[2] = {y.first, y.first + 1};
    const float wx[2] = {1 - x.weight, x.weight}, wy[2] = {1 - y.weight, y.weight};
    for (int b = 0; b < 2; ++b) {
      if (wy[b] == 0 || ys[b] < 0 || ys[b] >= height) continue;  // outside: transparent
      const std::size_t row = std::size_t(ys[b]) * std::size_t(width);
      for (int a = 0; a < 2; ++a) {
        // A zero weight is skipped, not multiplied: 0 · inf would be NaN.
        if (wx[a] == 0 || xs[a] < 0 || xs[a] >= width) continue;
        multiply_add(sum, source[row + std::size_t(xs[a])], wx[a] * wy[b]);
      }
    }
    out[i] = sum;
  }
  return out;
}

}  // namespace

void validate(const BrownConrady& lens) {
  if (!finite(lens))
    throw Error({}, "lens",
                "the distortion coefficients k1, k2, k3, p1, p2 must be finite (k1 = " +
                    std::to_string(lens.k1) + ", k2 = " + std::to_string(lens.k2) +
                    ", k3 = " + std::to_string(lens.k3) + ", p1 = " + std::to_string(lens.p1) +
                    ", p2 = " + std::to_string(lens.p2) + ")");
}

void validate(const LensIntrinsics& k) {
  if (!(k.fx > 0) || !(k.fy > 0) || !std::isfinite(k.fx) || !std::isfinite(k.fy))
    throw Error({}, "intrinsics",
                "the focal lengths fx, fy must be positive and finite (fx = " +
                    std::to_string(k.fx) + ", fy = " + std::to_string(k.fy) + ")");
  if (!std::isfinite(k.cx) || !std::isfinite(k.cy))
    throw Error({}, "intrinsics",
                "the principal point must be finite (cx = " + std::to_string(k.cx) +
                    ", cy = " + std::to_string(k.cy) + ")");
}

NormalizedPoint to_normalized(const PixelPoint& p, const LensIntrinsics& k) {
  return normalized(p.u, p.v, k);
}

PixelPoint to_pixel(const NormalizedPoint& p, const LensIntrinsics& k) {
  return {k.cx + k.fx * p.x, k.cy + k.fy * p.y};
}

NormalizedPoint distort(const NormalizedPoint& p, const BrownConrady& lens) {
  const Evaluation e = evaluate(lens, p.x, p.y);
  return {e.x, e.y};
}

NormalizedPoint undistort(const NormalizedPoint& distorted, const BrownConrady& lens) {
  NormalizedPoint out;
  const Inverse result = invert(distorted, lens, out);
  if (result == Inverse::Found) return out;
  const std::string where =
      "(" + std::to_string(distorted.x) + ", " + std::to_string(distorted.y) + ")";
  switch (result) {
    case Inverse::NotFinite:
      validate(lens);
      throw Error({}, "lens", "cannot undistort the non-finite point " + where);
    case Inverse::Folded:
      throw Error({}, "lens",
                  "the point " + where +
                      " is past where the distortion folds over (the Jacobian's determinant "
                      "reaches 0): it has no unique undistorted position");
    default:
      throw Error({}, "lens",
                  "undistorting " + where + " did not converge in " +
                      std::to_string(kMaxIterations) +
                      " iterations: it is outside the region where the lens can be inverted");
  }
}

PixelPoint distort_pixel(const PixelPoint& p, const BrownConrady& lens,
                         const LensIntrinsics& intrinsics) {
  validate(lens);
  validate(intrinsics);
  return to_pixel(distort(to_normalized(p, intrinsics), lens), intrinsics);
}

PixelPoint undistort_pixel(const PixelPoint& p, const BrownConrady& lens,
                           const LensIntrinsics& intrinsics) {
  validate(lens);
  validate(intrinsics);
  return to_pixel(undistort(to_normalized(p, intrinsics), lens), intrinsics);
}

StMap st_map_undistort(const BrownConrady& lens, const LensIntrinsics& intrinsics, int width,
                       int height) {
  validate(lens);
  validate(intrinsics);
  check_size(width, height, "ST-map");
  return build(width, height, [&](int i, int j, PixelPoint& source) {
    const NormalizedPoint ideal = normalized(i, j, intrinsics);
    const NormalizedPoint bent = distort(ideal, lens);
    // Past the fold, distort() lands back inside the plate on what belongs to another ideal
    // point; sampling there would show a mirrored ghost. Such points do not invert back.
    NormalizedPoint back;
    if (invert(bent, lens, back) != Inverse::Found ||
        std::max(std::abs(back.x - ideal.x), std::abs(back.y - ideal.y)) > 1e-6)
      return false;
    source = to_pixel(bent, intrinsics);
    return true;
  });
}

StMap st_map_distort(const BrownConrady& lens, const LensIntrinsics& intrinsics, int width,
                     int height) {
  validate(lens);
  validate(intrinsics);
  check_size(width, height, "ST-map");
  return build(width, height, [&](int i, int j, PixelPoint& source) {
    NormalizedPoint ideal;
    if (invert(normalized(i, j, intrinsics), lens, ideal) != Inverse::Found) return false;
    source = to_pixel(ideal, intrinsics);
    return true;
  });
}

Image remap(const Image& source, const StMap& map) {
  Image out;
  out.pixels = resample(source.pixels, source.width, source.height, map);
  out.width = map.width, out.height = map.height;
  return out;
}

Matte remap(const Matte& source, const StMap& map) {
  Matte out;
  out.values = resample(source.values, source.width, source.height, map);
  out.width = map.width, out.height = map.height;
  return out;
}

Image st_map_as_image(const StMap& map) {
  check_map(map, "ST-map");
  Image image(map.width, map.height);
  for (std::size_t i = 0; i < image.pixels.size(); ++i)
    image.pixels[i] = {map.s[i], map.t[i], 0, 1};
  return image;
}

}  // namespace kinema::composite
