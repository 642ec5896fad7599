// kinema/match/database.h — the motion-matching feature database (Clavet, GDC 2016).
//
// Every frame of every clip gets a feature vector in the character's own frame: where the root
// will be and which way it will face at a few future times (the trajectory), and where the feet
// are and how fast they and the hips move (the pose). The runtime search compares a query built
// the same way (pose from the current character, trajectory from the player's stick) with every
// frame and jumps to the cheapest.
//
// The character's frame ("root") at a frame is the hips projected onto the ground (y = 0), facing
// the horizontal direction perpendicular to the line from the right to the left upper leg
// (+Z forward, +Y up, +X to the character's left, kinema's convention), both smoothed in time by
// a Gaussian of `root_smoothing` seconds so that the hips' sway does not shake the trajectory.
//
// Default layout, 27 numbers a frame (as in Daniel Holden's Motion-Matching demo):
//   left foot position (3), right foot position (3)      metres, root frame
//   left foot velocity (3), right foot velocity (3)      m/s, root frame
//   hip velocity (3)                                     m/s, root frame
//   trajectory positions (x, z) at each future time (2·T)   metres, root frame of the frame
//   trajectory directions (x, z) at each future time (2·T)  unit facing, root frame
//   extra user features, if any
// Normalization: each dimension d has the database mean μ_d subtracted; each feature group g is
// divided by one scale σ_g, the mean of its dimensions' standard deviations (one scale per group
// keeps the group's geometry: a foot position stays a Euclidean distance), then multiplied by the
// group's weight w_g. So feature = (raw − μ_d) / σ_g · w_g, and the search cost is the squared
// Euclidean distance between normalized vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/match/search.h"
#include "kinema/math/transform.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::match {

/// The joints features are read from (skeleton indices). Upper legs orient the root; without
/// them (−1) the facing is the hips' rotation from the rest pose applied to +Z.
struct FeatureJoints {
  int hips = -1;
  int left_foot = -1, right_foot = -1;
  int left_upper_leg = -1, right_upper_leg = -1;
  /// Knees: not features, but the controller's foot locking needs the hip–knee–ankle chains.
  int left_lower_leg = -1, right_lower_leg = -1;
};

/// A user feature computed per database frame: `compute(skeleton, clip, source_time, mirrored,
/// out)` writes `dims` numbers (any unit; normalized like the built-in groups).
struct ExtraFeature {
  std::string name;
  int dims = 1;
  float weight = 1;
  std::function<void(const Skeleton&, const Clip&, double, bool, std::span<float>)> compute;
};

struct DatabaseOptions {
  double fps = 30;  ///< database frames per second of (scaled) clip time
  /// Future times of the trajectory features, seconds (strictly increasing, > 0).
  std::vector<double> trajectory_times{0.33, 0.67, 1.0};
  /// The last frames of each clip never returned by a search: a jump there would run out of
  /// animation at once. Seconds; < 0 means the last trajectory time.
  double end_exclusion = -1;
  double root_smoothing = 0.1;  ///< σ of the root's Gaussian smoothing, seconds (0: none)
  float weight_foot_position = 0.75f;
  float weight_foot_velocity = 1;
  float weight_hip_velocity = 1;
  float weight_trajectory_position = 1;
  float weight_trajectory_direction = 1.5f;
  bool mirror = false;  ///< also add every clip mirrored left ↔ right (x → −x), doubling the data
  /// Store every frame's local pose for playback (needs one skeleton for all clips: same joint
  /// names and parents). Off: features only (e.g. a search benchmark across rigs).
  bool store_poses = true;
  /// Playback speeds of each clip (1 = as captured; 0.8…1.2 augment the database).
  std::vector<double> speeds{1.0};
  std::vector<ExtraFeature> extra;
};

/// A tag over a time range of a source clip (seconds of the source clip, inclusive).
struct TagRange {
  std::string tag;
  double start = 0, end = 0;
};

/// One clip to put into the database.
struct ClipSource {
  std::string name;  ///< reported and saved; tags refer to it
  const Skeleton* skeleton = nullptr;
  const Clip* clip = nullptr;
  FeatureJoints joints;
  double start_time = 0;  ///< seconds of the source clip skipped (e.g. an added T-pose frame)
  std::vector<TagRange> tags;
};

/// A group of consecutive feature dimensions normalized together.
struct FeatureGroup {
  std::string name;
  uint32_t offset = 0, dims = 0;
  float weight = 1;
  float scale = 1;  ///< σ_g: the mean of the group's per-dimension standard deviations (1 if 0)
};

/// The character's root frame at a database frame, in its clip's (model) space: ground position
/// (y = 0) and unit horizontal facing. Root motion is the change of it from frame to frame.
struct RootSample {
  float x = 0, z = 0;
  float facing_x = 0, facing_z = 1;
};

/// One clip variant in the database: a source clip at one speed, maybe mirrored.
struct DatabaseClip {
  std::string name;
  uint32_t source = 0;  ///< index of the ClipSource it came from
  bool mirrored = false;
  float speed = 1;
  double start_time = 0;     ///< source seconds of its first frame
  uint32_t first_frame = 0;  ///< database frames [first_frame, first_frame + frame_count)
  uint32_t frame_count = 0;
};

struct Database {
  double fps = 30;
  std::vector<double> trajectory_times;
  std::vector<FeatureGroup> groups;
  std::vector<float> mean;             ///< μ_d, one per dimension
  std::vector<std::string> tag_names;  ///< bit i of a frame's tags = tag_names[i]
  std::vector<DatabaseClip> clips;
  /// Normalized, weighted features, per-frame tags and searchable flags.
  FeatureMatrix features;
  /// Every frame's root frame (the one its features are expressed in).
  std::vector<RootSample> roots;
  /// With poses: the joints features were read from (the skeleton's indices).
  FeatureJoints joints;
  /// With poses: the clips' skeleton and every frame's local pose (frames × joints transforms,
  /// mirrored frames mirrored with mirror_pose). Empty without.
  Skeleton skeleton;
  std::vector<Transformf> poses;

  size_t frames() const { return features.frames(); }
  size_t dims() const { return features.dims; }
  bool has_poses() const { return !poses.empty(); }
  /// The local pose of a frame (joint_count transforms); empty without poses.
  std::span<const Transformf> pose(uint32_t frame) const;
  /// Database clip and source time of a frame.
  const DatabaseClip& clip_of(uint32_t frame) const;
  double source_time(uint32_t frame) const;
  /// Bytes of the features, tags and flags (what a search touches).
  size_t feature_bytes() const;
  /// raw (dims numbers in the units of the layout above) → normalized query; false on a size
  /// mismatch. Never allocates.
  bool normalize(std::span<const float> raw, std::span<float> out) const;
  /// The tag's bit mask, or 0 when no frame has that tag.
  uint64_t tag_mask(std::string_view tag) const;
};

/// Builds the database. Throws kinema::Error (naming the clip, frame or option) on bad input: no
/// clips, missing joints, a joint index outside its skeleton, non-finite features, more than 64
/// tag names, a tag range outside its clip, bad options, clips on different skeletons when
/// poses are stored.
Database build_database(std::span<const ClipSource> clips, const DatabaseOptions& options = {},
                        const std::function<void(size_t clips_done)>& progress = {});

/// The file format (.kmm): "KMMATCH\0", format version, byte count and a 64-bit FNV-1a checksum
/// of the payload, then the payload (little-endian). See docs/match.md.
inline constexpr uint32_t database_format_version = 1;
std::string serialize_database(const Database& db);
/// Throws kinema::Error naming `file` and the byte offset: wrong magic, another version, a
/// checksum mismatch, truncation, counts that do not fit the file, non-finite numbers. (Reading
/// and writing files is the caller's: kinema/core/file.h has read_file and write_file_atomically.)
Database deserialize_database(std::string_view bytes, const std::string& file = "");

}  // namespace kinema::match
