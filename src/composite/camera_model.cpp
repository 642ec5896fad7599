// Pinhole projection, reprojection error and radial distortion
// (kinema/composite/camera_model.h).
#include "kinema/composite/camera_model.h"

#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema::composite {

double focal_length_pixels(double focal_mm, double sensor_width_mm, double image_width_px) {
  for (double v : {focal_mm, sensor_width_mm, image_width_px})
    if (!(v > 0) || !std::isfinite(v))
      throw Error({}, "camera",
                  "focal length, sensor width and image width must be positive and finite");
  return focal_mm / sensor_width_mm * image_width_px;
}

Pixel project(const Vec3& p, double focal_pixels) {
  if (!(p.z < 0) || !is_finite(p))
    throw Error({}, "camera", "the point must be finite and in front of the camera (z < 0)");
  return {focal_pixels * p.x / -p.z, focal_pixels * p.y / -p.z};
}

Reprojection reprojection_error(const Vec3& camera_point, double focal_pixels,
                                const Pixel& measured) {
  const Pixel projected = project(camera_point, focal_pixels);
  Reprojection r;
  r.error = {measured.x - projected.x, measured.y - projected.y};
  r.distance = std::hypot(r.error.x, r.error.y);
  return r;
}

Pixel distort(const Pixel& p, double k) {
  const double scale = 1 + k * (p.x * p.x + p.y * p.y);
  return {p.x * scale, p.y * scale};
}

Pixel undistort(const Pixel& p, double k) {
  const double target = std::hypot(p.x, p.y);
  if (target == 0) return p;
  if (k < 0) {
    // r′(r) = r + k·r³ grows until r² = −1/(3k), where it reaches (2/3)·r.
    const double fold = std::sqrt(-1 / (3 * k));
    if (target > 2.0 / 3 * fold)
      throw Error({}, "lens",
                  "radius " + std::to_string(target) +
                      " is past where the distortion folds over (k = " + std::to_string(k) + ")");
  }
  double r = target;
  for (int i = 0; i < 50; ++i) {
    const double f = r + k * r * r * r - target, slope = 1 + 3 * k * r * r;
    const double step = f / slope;
    r -= step;
    if (std::abs(step) <= 1e-15 * (1 + r)) break;
  }
  const double scale = r / target;
  return {p.x * scale, p.y * scale};
}

}  // namespace kinema::composite
