// kinema/composite/camera_model.h — matching a real camera: pinhole projection in pixels, the
// reprojection error a camera solve minimizes, and radial lens distortion.
//
// Camera space looks down −z with +y up; pixel offsets are measured from the image centre, x to
// the right and y up. The focal length in pixels is f = focal_mm / sensor_width_mm ·
// image_width_px (35 mm on a 36 mm sensor, 1920 px wide: 1866.7 px).
//
// Lenses bend straight lines; a renderer's pinhole does not. The one-term radial model
//   r′ = r·(1 + k·r²)
// on normalized image coordinates (r = 1 at the half-diagonal or half-width the caller chooses)
// maps where an ideal lens puts a point (r) to where the real one did (r′): plates are undistorted
// for tracking, CG renders undistorted, and the finished CG is distorted back with the same k
// before it goes over the original plate.
#pragma once

#include "kinema/math/vec3.h"

namespace kinema::composite {

struct Pixel {
  double x = 0, y = 0;  ///< px from the image centre, x right, y up
};

/// f in pixels. Throws kinema::Error unless all three are positive and finite.
double focal_length_pixels(double focal_mm, double sensor_width_mm, double image_width_px);

/// Where a camera-space point (z < 0, in front) lands: (f·x/−z, f·y/−z). Throws kinema::Error for
/// a point at or behind the camera plane.
Pixel project(const Vec3& camera_point, double focal_pixels);

/// measured − projected, and its length (px): one term of the solve's sum of squares.
struct Reprojection {
  Pixel error;
  double distance = 0;
};
Reprojection reprojection_error(const Vec3& camera_point, double focal_pixels,
                                const Pixel& measured);

/// r′ = r·(1 + k·r²) applied to a normalized point (x, y) about the centre.
Pixel distort(const Pixel& undistorted, double k);

/// The inverse of distort(), by Newton's method on the radius. Throws kinema::Error where the
/// model folds over (k < 0 past r² = −1/(3k), where r′ stops growing with r).
Pixel undistort(const Pixel& distorted, double k);

}  // namespace kinema::composite
