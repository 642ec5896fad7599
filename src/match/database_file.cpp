// The .kmm file: a motion-matching database as bytes. Header (32 bytes): "KMMATCH\0", u32
// format version, u32 zero, u64 payload bytes, u64 FNV-1a of the payload; then the payload,
// little-endian, in the order of the Database fields. The reader checks every count against the
// bytes left before allocating, so a hostile file cannot ask for gigabytes.
#include <cmath>
#include <cstring>
#include <string>

#include "kinema/core/byte_io.h"
#include "kinema/core/error.h"
#include "kinema/match/database.h"
#include "kinema/skeleton/skeleton_bytes.h"

namespace kinema::match {

namespace {

constexpr char kMagic[8] = {'K', 'M', 'M', 'A', 'T', 'C', 'H', '\0'};
constexpr size_t kHeaderBytes = 32;
static_assert(sizeof(Transformf) == 40, "poses are stored as 10 packed floats");
static_assert(sizeof(RootSample) == 16, "root frames are stored as 4 packed floats");

using detail::ByteReader;
using detail::ByteWriter;

}  // namespace

std::string serialize_database(const Database& db) {
  ByteWriter w;
  w.put(db.fps);
  w.put(uint64_t(db.trajectory_times.size()));
  for (const double t : db.trajectory_times) w.put(t);
  w.put(uint64_t(db.groups.size()));
  for (const FeatureGroup& g : db.groups) {
    w.put_string(g.name);
    w.put(g.offset);
    w.put(g.dims);
    w.put(g.weight);
    w.put(g.scale);
  }
  w.put(uint64_t(db.mean.size()));
  w.put_array(db.mean);
  w.put(uint64_t(db.tag_names.size()));
  for (const std::string& t : db.tag_names) w.put_string(t);
  w.put(uint64_t(db.clips.size()));
  for (const DatabaseClip& c : db.clips) {
    w.put_string(c.name);
    w.put(c.source);
    w.put(uint8_t(c.mirrored ? 1 : 0));
    w.put(c.speed);
    w.put(c.start_time);
    w.put(c.first_frame);
    w.put(c.frame_count);
  }
  w.put(uint64_t(db.frames()));
  w.put_array(db.features.values);
  w.put(uint8_t(db.features.tags.empty() ? 0 : 1));
  w.put_array(db.features.tags);
  w.put_array(db.features.searchable);
  w.put_array(db.roots);
  w.put(uint64_t(db.has_poses() ? db.skeleton.joint_count() : 0));
  if (db.has_poses()) {
    for (const int j :
         {db.joints.hips, db.joints.left_foot, db.joints.right_foot, db.joints.left_upper_leg,
          db.joints.right_upper_leg, db.joints.left_lower_leg, db.joints.right_lower_leg})
      w.put(int32_t(j));
    detail::put_skeleton_joints(w, db.skeleton);
    w.put_array(db.poses);
  }

  return detail::with_header(kMagic, database_format_version, w.out);
}

namespace {

/// The layout: fps, trajectory times, feature groups (each following the previous one), the
/// per-dimension means, the tag names. Returns the dimensions of a frame.
size_t read_layout(ByteReader& r, Database& db, const std::string& file) {
  db.fps = r.get<double>("fps");
  if (!(db.fps > 0) || !std::isfinite(db.fps)) r.fail("fps is not a positive number");
  const size_t T = r.get_count("trajectory time count", sizeof(double), 64);
  for (size_t i = 0; i < T; ++i) db.trajectory_times.push_back(r.get<double>("trajectory time"));
  const size_t G = r.get_count("group count", 20, 4096);
  uint32_t dims = 0;
  for (size_t i = 0; i < G; ++i) {
    FeatureGroup g;
    g.name = r.get_string("group name");
    const size_t at = r.offset();
    g.offset = r.get<uint32_t>("group offset");
    g.dims = r.get<uint32_t>("group dims");
    g.weight = r.get_finite("group weight");
    g.scale = r.get_finite("group scale");
    if (g.offset != dims || g.dims == 0 || g.dims > 4096 || !(g.scale > 0))
      throw Error(file, "byte " + std::to_string(kHeaderBytes + at),
                  "feature group \"" + g.name + "\" does not follow the previous one");
    dims += g.dims;
    db.groups.push_back(g);
  }
  const size_t D = r.get_count("dimension count", sizeof(float), 4096);
  if (D != dims || D == 0) r.fail("the dimension count does not match the feature groups");
  for (size_t d = 0; d < D; ++d) db.mean.push_back(r.get_finite("feature mean"));
  const size_t tag_count = r.get_count("tag count", 4, 64);
  for (size_t i = 0; i < tag_count; ++i) db.tag_names.push_back(r.get_string("tag name"));
  return D;
}

/// The clip variants, each starting where the previous one ends. Returns their frames.
size_t read_clips(ByteReader& r, Database& db, const std::string& file) {
  const size_t clip_count = r.get_count("clip count", 29, uint64_t(1) << 24);
  uint32_t next = 0;
  for (size_t i = 0; i < clip_count; ++i) {
    DatabaseClip c;
    c.name = r.get_string("clip name");
    const size_t at = r.offset();
    c.source = r.get<uint32_t>("clip source");
    c.mirrored = r.get<uint8_t>("clip mirror flag") != 0;
    c.speed = r.get_finite("clip speed");
    c.start_time = r.get<double>("clip start");
    c.first_frame = r.get<uint32_t>("clip first frame");
    c.frame_count = r.get<uint32_t>("clip frame count");
    if (c.first_frame != next || c.frame_count == 0 || !(c.speed > 0))
      throw Error(file, "byte " + std::to_string(kHeaderBytes + at),
                  "clip \"" + c.name + "\" does not follow the previous clip's frames");
    next += c.frame_count;
    db.clips.push_back(c);
  }
  return next;
}

/// The n frames' features (D finite numbers each), tags, searchable flags and root frames.
void read_frames(ByteReader& r, size_t n, size_t D, Database& db, const std::string& file) {
  db.features.dims = D;
  const size_t values_at = r.offset();
  r.get_array(db.features.values, n * D);
  for (size_t i = 0; i < db.features.values.size(); ++i)
    if (!std::isfinite(db.features.values[i]))
      throw Error(file, "byte " + std::to_string(kHeaderBytes + values_at + 4 * i),
                  "feature " + std::to_string(i % D) + " of frame " + std::to_string(i / D) +
                      " is not a finite number");
  if (r.get<uint8_t>("tag flag") != 0) {
    if (r.left() < n * sizeof(uint64_t)) r.fail("truncated: per-frame tags are missing");
    r.get_array(db.features.tags, n);
  }
  if (r.left() < n) r.fail("truncated: the per-frame searchable flags are missing");
  r.get_array(db.features.searchable, n);
  if (r.left() < n * sizeof(RootSample)) r.fail("truncated: the root frames are missing");
  const size_t roots_at = r.offset();
  r.get_array(db.roots, n);
  for (size_t i = 0; i < n; ++i) {
    const RootSample& s = db.roots[i];
    const float f2 = s.facing_x * s.facing_x + s.facing_z * s.facing_z;
    if (!std::isfinite(s.x) || !std::isfinite(s.z) || !(std::abs(f2 - 1) < 1e-3f))
      throw Error(file, "byte " + std::to_string(kHeaderBytes + roots_at + 16 * i),
                  "the root frame of frame " + std::to_string(i) +
                      " is not a finite position with a unit facing");
  }
}

/// The skeleton, its feature joints and the n frames' poses, when the database has them.
void read_poses(ByteReader& r, size_t n, Database& db, const std::string& file) {
  const size_t joints = r.get_count("joint count", 50, 65535);
  if (joints == 0) return;
  int32_t feature_joints[7];
  for (int32_t& j : feature_joints) {
    j = r.get<int32_t>("feature joint");
    if (j < -1 || j >= int32_t(joints)) r.fail("a feature joint is outside the skeleton");
  }
  db.joints = {feature_joints[0], feature_joints[1], feature_joints[2], feature_joints[3],
               feature_joints[4], feature_joints[5], feature_joints[6]};
  if (db.joints.hips < 0 || db.joints.left_foot < 0 || db.joints.right_foot < 0)
    r.fail("the hips and feet joints are missing");
  db.skeleton = detail::get_skeleton_joints(r, joints, file);
  const size_t count = n * joints;
  if (r.left() != count * sizeof(Transformf))
    r.fail("the poses do not match the frame and joint counts");
  const size_t poses_at = r.offset();
  r.get_array(db.poses, count);
  for (size_t i = 0; i < count; ++i) {
    const Transformf& t = db.poses[i];
    for (const float x :
         {t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y,
          t.rotation.z, t.rotation.w, t.scale.x, t.scale.y, t.scale.z})
      if (!std::isfinite(x))
        throw Error(file, "byte " + std::to_string(kHeaderBytes + poses_at + 40 * i),
                    "joint " + std::to_string(i % joints) + " of frame " +
                        std::to_string(i / joints) + " has a non-finite pose");
  }
}

}  // namespace

Database deserialize_database(std::string_view bytes, const std::string& file) {
  const std::string_view payload =
      detail::checked_payload(bytes, kMagic, database_format_version, file,
                              "kinema motion-matching database", " (rebuild the database)");
  ByteReader r(payload, kHeaderBytes, file);
  Database db;
  const size_t D = read_layout(r, db, file);
  const size_t frames_of_clips = read_clips(r, db, file);
  const size_t n = r.get_count("frame count", D * sizeof(float) + 1, uint64_t(1) << 31);
  if (n != frames_of_clips || n == 0) r.fail("the frame count does not match the clips");
  read_frames(r, n, D, db, file);
  read_poses(r, n, db, file);
  if (r.left() != 0) r.fail("unexpected bytes after the end of the database");
  return db;
}

}  // namespace kinema::match
