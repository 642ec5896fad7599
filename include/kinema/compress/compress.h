// kinema/compress/compress.h — building compressed clips with a guaranteed error bound.
//
// The layers of animation compression, in the order they run:
//
//  1. Resampling at a uniform rate (the clip's own rate by default), rotations normalized and put
//     in one hemisphere from frame to frame.
//  2. Lossless stages (classify_tracks): a channel whose every frame equals the identity
//     (zero translation, identity rotation, unit scale — for BVH and most rigs the rest rotation
//     and scale) is stored nowhere; a channel whose every frame is bit-identical (as float) to
//     its first is stored once at full float precision (bone offsets, unused rotations).
//  3. Range reduction: every animated component gets a float range over the clip and an 8-bit
//     sub-range over each segment of `segment_frames` frames; samples are stored as fractions
//     of their segment range. Rotations use smallest-three per segment (compressed_clip.h).
//  4. Bit rates per component, track and segment (0–14 or 16 bits, or the track's raw floats),
//     chosen by an
//     error-driven search against the object-space error of virtual vertices: points at
//     `vertex_distance` along each joint's three local axes, composed down the chain (FK), at
//     every frame and every midpoint between frames. The search first splits the bound over the
//     longest chain of animated tracks through each joint (a rotation error θ at joint a moves a
//     vertex at distance D_a by at most θ·D_a, a translation error τ moves it by τ), scales the
//     split up while the measured error allows, then lowers single components greedily while
//     every vertex of the joint's subtree stays inside the bound.
//  5. Verification: the finished buffer is decoded with the real decoder at every frame and
//     midpoint and compared with the resampled clip; any vertex over `max_error` raises the bit
//     rates of its chain in the segments involved, up to raw floats, and the clip is rebuilt.
//     So the bound is a guarantee, not a target (it fails with an Error only if it lies below
//     float precision).
//
// Key reduction (reduce_keys in quantize.h) is not used by the format: measured on 120 fps
// mocap at 0.01 cm it pays less than the bits it saves cost in key indices (docs/compress.md).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/compress/compressed_clip.h"
#include "kinema/math/transform.h"

namespace kinema {

class Skeleton;

struct CompressOptions {
  /// The error bound in metres (default 0.01 cm): no virtual vertex, at any frame or midpoint
  /// between frames, lands farther than this from where the uncompressed clip puts it.
  double max_error = 1e-4;
  /// Distance of the virtual vertices from each joint along its local axes (metres).
  double vertex_distance = 0.03;
  /// Frames per segment (range reduction and bit rates are chosen per segment), 2…1024.
  int segment_frames = 16;
  /// Frames per second to resample at; 0 keeps the clip's own rate (30 when it has none).
  double sample_rate = 0;
  /// Greedy passes that lower single tracks' bit rates (0 = the scaled split alone).
  int refine_passes = 2;
};

/// Object-space error of a compressed clip (metres), over every joint and every frame and
/// midpoint between frames: the largest distance of any virtual vertex, and the 99th percentile
/// of the per-joint maxima.
struct ErrorStats {
  double max = 0;
  double p99 = 0;
  int worst_joint = -1;
  double worst_time = 0;  ///< seconds
  size_t samples = 0;     ///< joint × time samples measured
};

struct CompressionStats {
  size_t raw_bytes = 0;         ///< 10 floats × joints × frames × 4 bytes
  size_t compressed_bytes = 0;  ///< the serialized clip
  double ratio = 0;             ///< raw / compressed
  ErrorStats error;             ///< measured with the real decoder on the final buffer
  int identity_tracks = 0, constant_tracks = 0, animated_tracks = 0;
  double mean_bits = 0;   ///< mean bits per stored component over animated tracks and frames
  int repair_rounds = 0;  ///< verification rounds that had to raise bit rates
  int frames = 0, joints = 0;
};

/// Compresses `clip` (validated against `skeleton`) within options.max_error. Throws
/// kinema::Error when the clip does not validate, its duration is not positive and finite, an
/// option is out of range, or the bound cannot be met even with raw floats.
CompressedClip compress(const Clip& clip, const Skeleton& skeleton,
                        const CompressOptions& options = {}, CompressionStats* stats = nullptr);

/// The lossless stages on a resampled clip: `poses` holds frames × joints local transforms
/// (frame-major). kinds[j · 3 + channel] is the kind of joint j's channel (channel 0
/// translation, 1 rotation, 2 scale).
struct TrackClassification {
  std::vector<TrackKind> kinds;
  int identity = 0, constant = 0, animated = 0;
  /// Bytes per frame of the animated channels at full float precision (12 per translation or
  /// scale, 16 per rotation) — what is left per frame after the lossless stages.
  size_t animated_bytes_per_frame = 0;
  /// Bytes of the constant channels, stored once.
  size_t constant_bytes = 0;
};
TrackClassification classify_tracks(std::span<const Transform> poses, int joint_count);

/// The resampled frames compress() works on (frames × joints, frame-major), rotations
/// normalized and hemisphere-continuous; `rate` receives the frames per second.
std::vector<Transform> resample_frames(const Clip& clip, const Skeleton& skeleton,
                                       double sample_rate, double& rate);

/// Largest distance between the virtual vertices of two local poses of `skeleton` (each joint's
/// origin moved by `vertex_distance` along its three local axes, then FK). With vertex_distance
/// 0 it is the largest joint displacement. `per_joint`, when not empty, receives each joint's.
double pose_error(const Skeleton& skeleton, std::span<const Transform> a,
                  std::span<const Transform> b, double vertex_distance,
                  std::span<double> per_joint = {});

/// Measures a compressed clip against the clip it was built from, with the real decoder, at
/// every frame and midpoint of the compressed clip's rate.
ErrorStats measure_error(const Clip& clip, const Skeleton& skeleton,
                         const CompressedClip& compressed, double vertex_distance = 0.03);

}  // namespace kinema
