// kinema/matchmove/tracking.h — 2D feature tracking through a plate: corners found on one frame
// and followed frame to frame by pyramidal Lucas–Kanade, the input to a camera solve.
//
// Pixel coordinates follow OpenCV and composite/lens.h: u to the right, v DOWN, in pixels, with
// the CENTRE of the top-left pixel at (0, 0). A W × H frame spans [−½, W − ½] × [−½, H − ½].
//
// Tracking runs on 8-bit grey: each pixel's Rec. 709 luma (0.2126 R + 0.7152 G + 0.0722 B) of the
// premultiplied linear colour (the plate over black), sRGB-encoded and rounded. The encoding
// spreads the shadows over as many codes as the highlights, as the corner detector expects.
//
// A track ends when Lucas–Kanade loses it (the OpenCV status), when it leaves the frame, or when
// it fails the forward–backward check (Kalal et al. 2010): the point found on frame n + 1 is
// tracked back to frame n, and the track ends unless it comes back within a threshold of where
// it started. That catches occlusion, drift off a corner onto an edge, and repeated texture.
// Whenever fewer tracks are alive than a fraction of max_corners, new corners are detected
// away from the live ones, and refined to the corner's sub-pixel saddle point (cv::cornerSubPix):
// a window centred on the corner itself stays centred on it as perspective reshapes the patch,
// where one centred a pixel off slides.
#pragma once

#include <span>
#include <vector>

#include "kinema/composite/image.h"

namespace kinema::matchmove {

/// Where a track was seen on one frame.
struct Observation {
  int frame = 0;        ///< index into the plate, 0 the first frame
  double u = 0, v = 0;  ///< px, u right, v down, (0, 0) the top-left pixel's centre
};

/// One feature followed through consecutive frames: observations in increasing frame order, one
/// per frame, with no gaps (a track that is lost is never resumed; a new track takes its place).
struct Track {
  int id = 0;  ///< unique within a TrackSet, ≥ 0
  std::vector<Observation> observations;
};

/// The tracks of one plate, with the plate's size (the camera solve needs it).
struct TrackSet {
  int width = 0, height = 0;  ///< px, of every frame
  int frame_count = 0;        ///< frames in the plate; observations have frame < frame_count
  std::vector<Track> tracks;  ///< in increasing id order
};

/// How track_features() finds and follows corners. The defaults suit a 640–2048 px wide plate.
struct TrackOptions {
  /// Most corners alive at once (cv::goodFeaturesToTrack's maxCorners). More tracks make a
  /// steadier solve and a slower one.
  int max_corners = 600;
  /// A corner's minimum-eigenvalue response must reach this fraction of the frame's strongest
  /// (cv::goodFeaturesToTrack's qualityLevel), in (0, 1).
  double quality_level = 0.01;
  /// px between any two corners, new or alive: spreads the tracks over the frame, which
  /// conditions the solve better than a cluster on the busiest texture. Held on the pixel grid;
  /// sub-pixel refinement then moves each new corner by at most (block_size − 1)/2 px along
  /// each axis (a corner it would move farther is dropped).
  double min_distance = 12;
  /// Side of the window, px, corners are scored over (odd, ≥ 3).
  int block_size = 7;
  /// Side of the Lucas–Kanade window, px (odd, ≥ 5). Larger follows blurrier or noisier
  /// texture; smaller slides less as perspective reshapes the patch (the window moves as one
  /// piece) and follows closer to depth edges.
  int window_size = 15;
  /// Pyramid levels above full resolution (≥ 0): each halves the image, so motion up to about
  /// window_size · 2^levels / 2 px per frame is followed.
  int pyramid_levels = 3;
  /// px: a track ends when tracking its new position back to the previous frame misses where it
  /// came from by more than this. ≤ 0 turns the check off (and halves the cost).
  double forward_backward_threshold = 0.5;
  /// New corners are detected when fewer than this fraction of max_corners are alive, in [0, 1].
  double redetect_fraction = 0.7;
  /// px: a track ends when it comes within this distance of the frame's edge (where its window
  /// no longer fits the image and Lucas–Kanade guesses); corners are not detected there either.
  double border = 4;
  /// Tracks seen on fewer frames than this are dropped from the result (≥ 1): a track on one
  /// frame says nothing about the camera, and very short ones are mostly noise.
  int min_track_length = 2;
};

/// Detects and tracks corners through `frames` (consecutive frames of one plate, all the same
/// size). Frame 0's corners start tracks with ids 0, 1, …; later detections continue the ids.
/// Throws kinema::Error for fewer than 2 frames, an empty frame, frames of differing sizes, and
/// options out of range (each names the frame or option at fault).
TrackSet track_features(std::span<const composite::Image> frames, const TrackOptions& options = {});

/// The 8-bit grey image the tracker sees (see the file comment): width × height bytes, row by
/// row from the top-left.
std::vector<unsigned char> tracking_luma(const composite::Image& image);

}  // namespace kinema::matchmove
