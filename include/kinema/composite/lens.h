// kinema/composite/lens.h — lens distortion on points and on whole images: the Brown–Conrady
// model as OpenCV defines it, and ST-maps that undistort a plate or distort a render.
//
// Pixel coordinates follow OpenCV: u to the right, v DOWN, both in pixels, with the CENTRE of the
// top-left pixel at (0, 0) — pixel (i, j) covers [i − ½, i + ½] × [j − ½, j + ½], a W × H frame
// spans [−½, W − ½] × [−½, H − ½], and its centre is ((W − 1)/2, (H − 1)/2). Intrinsics in this
// convention come straight from cv::calibrateCamera. (camera_model.h measures from the image centre
// with y up instead; see BrownConrady for how its one-term model maps onto this one.)
//
// Normalized coordinates divide out the intrinsics: x = (u − cx)/fx, y = (v − cy)/fy (y down, the
// tangent of the ray's angle). Distortion maps where an ideal pinhole puts a point (x, y) to where
// the real lens did (x′, y′):
//   r² = x² + y²,  R = 1 + k1·r² + k2·r⁴ + k3·r⁶
//   x′ = x·R + 2·p1·x·y + p2·(r² + 2x²)
//   y′ = y·R + p1·(r² + 2y²) + 2·p2·x·y
// [Brown 1966; Conrady 1919], OpenCV's "plumb bob" with its coefficient order (k1, k2, p1, p2, k3).
// k1 < 0 is barrel distortion (straight lines bow outward, the usual wide lens), k1 > 0 pincushion.
//
// The model has no closed-form inverse; undistort() solves it by Newton's method to 1e-12. Strong
// barrel coefficients fold the plane over far from the centre (r′ stops growing with r): a point
// there has no inverse, or two, and undistort() refuses it rather than return either.
#pragma once

#include <vector>

#include "kinema/composite/image.h"

namespace kinema::composite {

/// A camera's pinhole intrinsics, in pixels (OpenCV's camera matrix [fx 0 cx; 0 fy cy; 0 0 1]).
struct LensIntrinsics {
  double fx = 0, fy = 0;  ///< focal length in pixels, horizontally and vertically (> 0)
  double cx = 0, cy = 0;  ///< principal point in pixels, (0, 0) the top-left pixel's centre
};

/// Brown–Conrady coefficients: k1, k2, k3 radial; p1, p2 tangential (decentring). Dimensionless,
/// on normalized coordinates, so they stay valid when the plate is resized (scale the
/// intrinsics instead).
///
/// camera_model.h's one-term r′ = r·(1 + k·r²) is the case k1 = k, all others 0, with fx = fy = L
/// the length the caller normalized r by (half-width, half-diagonal) and (cx, cy) the centre. With
/// fx = fy = the real focal length f instead, the same lens has k1 = k·(f/L)².
struct BrownConrady {
  double k1 = 0, k2 = 0, k3 = 0;  ///< radial: R = 1 + k1·r² + k2·r⁴ + k3·r⁶
  double p1 = 0, p2 = 0;          ///< tangential
};

/// A point in normalized coordinates: x = (u − cx)/fx right, y = (v − cy)/fy down.
struct NormalizedPoint {
  double x = 0, y = 0;
};

/// A point in pixel coordinates: u right, v down, (0, 0) the top-left pixel's centre.
struct PixelPoint {
  double u = 0, v = 0;
};

/// Throws kinema::Error unless every coefficient is finite.
void validate(const BrownConrady& lens);
/// Throws kinema::Error unless fx and fy are positive and finite and cx, cy finite.
void validate(const LensIntrinsics& intrinsics);

/// (u, v) → ((u − cx)/fx, (v − cy)/fy), and back. No checks: validate() the intrinsics first.
NormalizedPoint to_normalized(const PixelPoint& pixel, const LensIntrinsics& intrinsics);
PixelPoint to_pixel(const NormalizedPoint& point, const LensIntrinsics& intrinsics);

/// Where the lens puts an ideal (pinhole) point: the formula above, as cv::projectPoints applies
/// it. Never throws; a non-finite point or coefficient gives a non-finite result.
NormalizedPoint distort(const NormalizedPoint& undistorted, const BrownConrady& lens);

/// The ideal point the lens moved to `distorted`: Newton's method with the 2 × 2 Jacobian,
/// started from one step of OpenCV's fixed-point iteration (x = (x′ − tangential)/R), until the
/// residual |distort(x) − x′| (max norm) is below 1e-12 (times |x′| where that is over 1), then
/// one more step: the result is good to rounding, ~1e-13 px after the intrinsics. Throws
/// kinema::Error for a non-finite point or coefficient, and for a point outside the invertible
/// region: where the Jacobian's determinant is ≤ 0 at an iterate (past where the lens folds
/// over) or 100 iterations, each halving its step until the residual falls, do not converge.
NormalizedPoint undistort(const NormalizedPoint& distorted, const BrownConrady& lens);

/// distort() and undistort() on pixel coordinates through the intrinsics. Both validate() the
/// lens and intrinsics first, and throw kinema::Error as those and undistort() do.
PixelPoint distort_pixel(const PixelPoint& undistorted, const BrownConrady& lens,
                         const LensIntrinsics& intrinsics);
PixelPoint undistort_pixel(const PixelPoint& distorted, const BrownConrady& lens,
                           const LensIntrinsics& intrinsics);

/// An ST-map: for each output pixel, where in the source image to sample, as Nuke's STMap node
/// reads it. width × height entries row by row from the top-left, like Image. The coordinates are
/// normalized to the source's size with t up from the bottom: the source position (u, v) (pixels,
/// the convention above) is stored as
///   s = (u + ½)/width,  t = 1 − (v + ½)/height,
/// so (0, 0) is the source's bottom-left corner, (1, 1) its top-right, and the identity map holds
/// each pixel's own centre. Normalized, the same map resamples a proxy of any resolution. An
/// output pixel with no source (outside the lens's invertible region) holds s = t = −1, outside
/// the source, so remap() — and Nuke's STMap with black outside — leaves it transparent.
struct StMap {
  int width = 0, height = 0;
  std::vector<float> s, t;
};

/// The map that UNdistorts a plate: its output is the undistorted (pinhole) image, each output
/// pixel p sampling the distorted plate at distort_pixel(p). Pixels past where the lens folds
/// over (whose distorted position does not undistort back to them) get no sample. width ×
/// height is both the plate's and the output's size, the frame the intrinsics describe. Throws
/// kinema::Error for bad lens or intrinsics or a negative size.
StMap st_map_undistort(const BrownConrady& lens, const LensIntrinsics& intrinsics, int width,
                       int height);

/// The map that DIStorts a render: its output is the distorted image (to go over the plate), each
/// output pixel p sampling the undistorted image at undistort_pixel(p); pixels where undistort()
/// fails get no sample. Throws as st_map_undistort().
StMap st_map_distort(const BrownConrady& lens, const LensIntrinsics& intrinsics, int width,
                     int height);

/// Resamples `source` through the map: a map.width × map.height image whose pixel i is the
/// source bilinearly filtered at (s[i], t[i]). Premultiplied pixels filter correctly as they are.
/// Outside the source is transparent: a sample within a pixel of the edge blends the edge pixels
/// with transparency, and one farther out (or at a non-finite position) is transparent. A
/// position within float precision of a pixel centre (about 5e-4 px at 2K) takes that pixel
/// alone, so the identity map copies the image exactly. Build the map once per lens and reuse it
/// for every frame. Throws kinema::Error when s or t does not hold width × height values.
Image remap(const Image& source, const StMap& map);
/// The same for a matte (outside the source is 0).
Matte remap(const Matte& source, const StMap& map);

/// The map as an image to write out for Nuke or Fusion: s in r, t in g, b = 0, a = 1 (no-sample
/// pixels keep their −1s). Values are positions, not colours: write them to a float format
/// as they are, never through an sRGB or 8-bit encoding. Throws kinema::Error when s or t does not
/// hold width × height values.
Image st_map_as_image(const StMap& map);

}  // namespace kinema::composite
