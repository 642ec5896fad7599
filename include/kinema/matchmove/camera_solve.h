// kinema/matchmove/camera_solve.h — a camera solve: from 2D tracks to a moving camera, its lens
// and a cloud of 3D points, by incremental structure from motion and bundle adjustment.
//
// Conventions. Pixels as in composite/lens.h (u right, v DOWN, (0, 0) the top-left pixel's
// centre). The solved camera follows OpenCV: camera space has x right, y DOWN and the camera
// looking down +z; a world point X lands at camera point x_c = R·(X − C), with R the world →
// camera rotation and C the camera centre, then at normalized (x_c/z_c, y_c/z_c), through the
// Brown–Conrady lens (composite::distort) and the intrinsics to pixels, as cv::projectPoints
// does. kinema's renderer looks down −z with y up instead: to_look_at() converts.
//
// The lens is shared by every frame: one focal length in pixels (fx = fy, square pixels), the
// principal point fixed at the image centre ((W − 1)/2, (H − 1)/2), radial k1, k2 (k3 = 0) and,
// when asked, tangential p1, p2. A plate whose lens zooms or breathes needs a per-frame focal
// length, which this solve does not model.
//
// Method. (1) Initial pair: among up to 12 evenly spread frames, the pairs sharing enough
// tracks get an essential matrix (cv::findEssentialMat and cv::recoverPose at the initial focal
// guess, no distortion); of those whose parallax reaches min_parallax_degrees, the one with the
// most inliers, weighted by parallax up to 3 × that minimum, wins. Its first frame is the world
// origin and the baseline has length 1. (2) Points seen by both are triangulated; then
// frames join one at a time, the one seeing most triangulated points first, by PnP RANSAC
// (cv::solvePnPRansac), and every track seen by two solved frames is triangulated. A Ceres bundle
// adjustment (Huber loss) refines poses, points, focal length and distortion together whenever
// the solved frames have grown by a quarter. (3) A final adjustment over everything, then
// observations reprojecting farther than outlier_threshold, and tracks whose RMS error is far
// above the rest, are dropped and it runs again.
//
// The gauge. Tracks alone fix the camera path only up to a similarity: any rotation, translation
// and positive scale of the whole world (cameras and points together) reprojects the same. The
// solve picks the initial pair's first camera as the origin with its axes, and the baseline to
// the second as unit length. align_to() moves a solve onto known camera positions (a survey, a
// test's truth) by the best similarity.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/composite/lens.h"
#include "kinema/matchmove/tracking.h"
#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"

namespace kinema::matchmove {

/// How solve_camera() works. Defaults suit a plate with a few hundred tracks.
struct SolveOptions {
  /// The focal length, px, the solve starts from; ≤ 0 means 1.2 × width (about a 45° horizontal
  /// field of view). Within a factor of 1.5 of the truth is plenty: the adjustment solves it.
  double initial_focal = 0;
  /// Solve the focal length (otherwise it stays at initial_focal, which must then be right).
  bool solve_focal = true;
  /// Solve radial distortion k1, k2 (otherwise both stay 0).
  bool solve_radial = true;
  /// Solve tangential distortion p1, p2 too (otherwise both stay 0). Rarely worth it: a modern
  /// lens's decentring is small, and p1, p2 trade off against the principal point, held fixed.
  bool solve_tangential = false;
  /// Tracks seen on fewer frames than this are left out (≥ 2).
  int min_track_length = 3;
  /// Fewest tracks the initial pair must share, and the fewest triangulated points a later
  /// frame must see to be solved (≥ 8: the essential matrix needs 5 and RANSAC a margin).
  int min_shared_tracks = 20;
  /// Degrees: the initial pair's parallax must reach this — the median angle between the two
  /// rays to each point that remains once the best pure rotation between the frames is taken
  /// out. A pan or tilt, however wide, has none: depth is noise unless the camera moves.
  double min_parallax_degrees = 0.75;
  /// px: RANSAC's inlier distance for the essential matrix and PnP.
  double ransac_threshold = 1.5;
  /// px: the Huber loss's scale; residuals beyond it count linearly, not quadratically.
  double huber_scale = 1.0;
  /// px: after the first final adjustment, observations reprojecting farther than this are
  /// dropped (and points left on fewer than 2 frames), and the adjustment runs again.
  double outlier_threshold = 1.0;
  /// Then whole tracks whose RMS error exceeds this many times the RMS over all tracks are
  /// dropped too, and the adjustment runs once more: a sliding feature (a window straddling a
  /// crease or a shadow edge) fits no 3D point, though each observation may pass the threshold
  /// above. ≤ 0 keeps every track.
  double track_rms_factor = 2.0;
  /// Ceres iterations per bundle adjustment.
  int max_iterations = 100;
};

/// One frame's camera. Unsolved frames (too few triangulated points in view) have solved false
/// and the other members zero.
struct SolvedCamera {
  int frame = 0;
  bool solved = false;
  Vec3 position;  ///< camera centre C, world units
  /// World → camera rotation R (x_c = R·(X − C)), OpenCV camera axes: x right, y down, looking
  /// down +z. Its inverse (conjugate) is the camera's orientation in the world.
  Quat rotation;
  int observations = 0;   ///< inlier observations on this frame
  double mean_error = 0;  ///< px, mean reprojection distance of those
};

/// One track's 3D point.
struct SolvedPoint {
  int track_id = 0;
  Vec3 position;         ///< world units
  int observations = 0;  ///< inlier observations of it
};

/// A camera solve: the lens, one camera per frame, the points, and how well they fit.
struct CameraSolve {
  int width = 0, height = 0;             ///< px, of the plate
  composite::LensIntrinsics intrinsics;  ///< fx = fy the solved focal length; cx, cy the centre
  composite::BrownConrady lens;          ///< k1, k2 (p1, p2 if solved); k3 = 0
  std::vector<SolvedCamera> cameras;     ///< one per frame, index = frame
  std::vector<SolvedPoint> points;       ///< triangulated tracks kept after outlier rejection
  int initial_frames[2] = {0, 0};        ///< the pair the solve started from
  int observations = 0;                  ///< inlier observations in the final adjustment
  double mean_error = 0;                 ///< px, mean reprojection distance over those
  double rms_error = 0;                  ///< px, root mean square of the same
  double seconds = 0;                    ///< wall-clock time of solve_camera()
};

/// Solves the camera and lens from `tracks` on a width × height plate of frame_count frames
/// (every observation's frame < frame_count). Throws kinema::Error when the tracks cannot carry a
/// solve, saying what to change: fewer than min_shared_tracks usable tracks, no frame pair
/// sharing enough of them, an initial pair with too little parallax, a failed adjustment; and for
/// invalid input (a non-positive size, an observation off the frame or out of frame order).
CameraSolve solve_camera(std::span<const Track> tracks, int width, int height, int frame_count,
                         const SolveOptions& options = {});
/// The same on a TrackSet's tracks and size.
CameraSolve solve_camera(const TrackSet& tracks, const SolveOptions& options = {});

/// Reprojects world point X through a solve's camera and lens: px, as the solve measures its
/// error. Returns false (and leaves `pixel` alone) for a point at or behind the camera plane.
bool project(const CameraSolve& solve, const SolvedCamera& camera, const Vec3& point,
             composite::PixelPoint& pixel);

/// A similarity transform X ↦ s·Q·X + t.
struct Similarity {
  double scale = 1;
  Quat rotation;
  Vec3 translation;
  Vec3 apply(const Vec3& x) const { return rotate(rotation, x) * scale + translation; }
};

/// The similarity taking the solved camera centres closest (least squares) to reference_positions
/// (one per frame, index = frame; unsolved frames are ignored), by Umeyama's closed form (1991):
/// the rotation from the SVD of the centred cross-covariance, with a reflection ruled out. Throws
/// kinema::Error unless there is one reference per camera, all finite, and at least 3 solved
/// frames whose centres (and references) are not all on one point. A straight camera path fixes
/// no rotation about its own line: compare orientations relative to one frame (R_f·R_0ᵀ, free
/// of the gauge) rather than after alignment when the path is nearly straight.
Similarity similarity_to(const CameraSolve& solve, std::span<const Vec3> reference_positions);

/// The solve moved by similarity_to(): cameras (centres and orientations) and points in the
/// reference's frame and scale. Reprojection, the lens and the errors are unchanged — this only
/// chooses the gauge. Throws as similarity_to().
CameraSolve align_to(const CameraSolve& solve, std::span<const Vec3> reference_positions);

/// A solved camera in the look-at form of kinema's renderer (render/renderer.h's Camera: looks
/// down −z, y up): eye, a target one unit ahead, up, and the vertical field of view of the
/// solved focal length. The renderer is a pinhole: distort its output with the solve's lens
/// (composite::st_map_distort) to lay it over the plate.
struct LookAt {
  Vec3 eye, target, up;
  double fov_y_degrees = 0;
};
LookAt to_look_at(const CameraSolve& solve, const SolvedCamera& camera);

}  // namespace kinema::matchmove
