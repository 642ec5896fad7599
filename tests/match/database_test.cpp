// The motion-matching feature database: features in the root frame, normalization, variants
// (speed, mirror), exclusion, tags, real clips, and the .kmm file with hostile inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/retarget/humanoid.h"
#include "test_paths.h"

using namespace kinema;
using namespace kinema::match;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Hips, two upper legs 0.1 m to the sides, two feet 0.8 m below them.
Skeleton walker_skeleton() {
  std::vector<Joint> j(5);
  j[0] = {"hips", kNoParent, {}, {}};
  j[1] = {"left_up_leg", 0, {{0.1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[2] = {"right_up_leg", 0, {{-0.1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[3] = {"left_foot", 1, {{0, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[4] = {"right_foot", 2, {{0, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  return Skeleton::build(j);
}

FeatureJoints walker_joints() { return {0, 3, 4, 1, 2, -1, -1}; }

// The hips move along a path given by `at(t)` → (position, heading about +Y), the legs swing
// ±0.3 rad at 1 Hz in antiphase. 120 keys a second.
template <class Path>
Clip walker_clip(double seconds, Path at) {
  Clip c;
  c.name = "walk";
  c.duration = seconds;
  c.sample_rate = 120;
  c.tracks.resize(5);
  for (int k = 0; k <= int(seconds * 120 + 0.5); ++k) {
    const double t = k / 120.0;
    const auto [p, heading] = at(t);
    c.tracks[0].translation.times.push_back(t);
    c.tracks[0].translation.values.push_back(p);
    c.tracks[0].rotation.times.push_back(t);
    c.tracks[0].rotation.values.push_back(Quat::from_axis_angle({0, 1, 0}, heading));
    const double swing = 0.3 * std::sin(2 * kPi * t);
    for (int leg : {1, 2}) {
      c.tracks[size_t(leg)].rotation.times.push_back(t);
      c.tracks[size_t(leg)].rotation.values.push_back(
          Quat::from_axis_angle({1, 0, 0}, leg == 1 ? swing : -swing));
    }
  }
  return c;
}

std::pair<Vec3, double> straight(double t) { return {{0, 0.9, 1.5 * t}, 0.0}; }

// Raw (unnormalized) value of dimension d of frame f.
float raw_of(const Database& db, size_t f, size_t d) {
  for (const FeatureGroup& g : db.groups)
    if (d >= g.offset && d < g.offset + g.dims)
      return db.features.values[f * db.dims() + d] / g.weight * g.scale + db.mean[d];
  return NAN;
}

Database build_one(const Clip& clip, const Skeleton& sk, DatabaseOptions options = {},
                   std::vector<TagRange> tags = {}) {
  const ClipSource src{"walk", &sk, &clip, walker_joints(), 0, std::move(tags)};
  return build_database(std::span<const ClipSource>(&src, 1), options);
}

}  // namespace

TEST(MatchDatabase, DefaultLayoutIs27FeaturesInHoldensOrder) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(4, straight);
  const Database db = build_one(clip, sk);
  EXPECT_EQ(db.dims(), 27u);
  ASSERT_EQ(db.groups.size(), 7u);
  EXPECT_EQ(db.groups[5].name, "trajectory_position");
  EXPECT_EQ(db.groups[5].offset, 15u);
  EXPECT_EQ(db.groups[6].offset, 21u);
  EXPECT_EQ(db.frames(), 121u);  // 4 s at 30 fps, both ends
  EXPECT_EQ(db.feature_bytes(), 121u * (27 * 4 + 1));
}

TEST(MatchDatabase, StraightWalkTrajectoryAndVelocitiesInTheRootFrame) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(4, straight);
  const Database db = build_one(clip, sk);
  const size_t f = 30;  // 1 s in: every future time inside the clip
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(raw_of(db, f, 15 + 2 * size_t(i)), 0, 1e-4) << i;  // x: straight ahead
    EXPECT_NEAR(raw_of(db, f, 16 + 2 * size_t(i)), 1.5 * db.trajectory_times[size_t(i)], 2e-3);
    EXPECT_NEAR(raw_of(db, f, 21 + 2 * size_t(i)), 0, 1e-4);  // facing +Z in the root frame
    EXPECT_NEAR(raw_of(db, f, 22 + 2 * size_t(i)), 1, 1e-4);
  }
  EXPECT_NEAR(raw_of(db, f, 14), 1.5, 1e-3);  // hip velocity forward
  EXPECT_NEAR(raw_of(db, f, 12), 0, 1e-4);
  // Left foot on the character's left (+x), under the hip, ~0.9 m below it at rest height.
  EXPECT_GT(raw_of(db, f, 0), 0.05);
  EXPECT_LT(raw_of(db, f, 3), -0.05);
}

TEST(MatchDatabase, TurningLeftPutsTheFutureOnTheLeft) {
  // A 2 m-radius circle counter-clockwise seen from above (+Y), facing along the motion.
  const auto circle = [](double t) {
    const double a = 0.5 * t;  // rad
    return std::pair<Vec3, double>{{2 - 2 * std::cos(a), 0.9, 2 * std::sin(a)}, a};
  };
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(6, circle);
  const Database db = build_one(clip, sk);
  // Heading a turns +Z towards +X (the character's left): the future is on the left (x > 0)
  // and the future facing has turned left by 0.5 rad/s · Δ.
  for (int i = 0; i < 3; ++i) {
    const double dt = db.trajectory_times[size_t(i)];
    EXPECT_GT(raw_of(db, 60, 15 + 2 * size_t(i)), 0) << i;
    EXPECT_NEAR(raw_of(db, 60, 21 + 2 * size_t(i)), std::sin(0.5 * dt), 0.02) << i;
    EXPECT_NEAR(raw_of(db, 60, 22 + 2 * size_t(i)), std::cos(0.5 * dt), 0.02) << i;
  }
}

TEST(MatchDatabase, NormalizationGivesMeanZeroAndTheGroupsWeightAsScale) {
  const auto wander = [](double t) {
    return std::pair<Vec3, double>{{std::sin(0.7 * t), 0.9, 1.2 * t + 0.3 * std::sin(2 * t)},
                                   0.4 * std::sin(0.9 * t)};
  };
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(10, wander);
  DatabaseOptions o;
  o.weight_foot_position = 0.5f;
  o.weight_trajectory_direction = 2;
  const Database db = build_one(clip, sk, o);
  const size_t n = db.frames(), D = db.dims();
  std::vector<double> mean(D, 0), var(D, 0);
  for (size_t f = 0; f < n; ++f)
    for (size_t d = 0; d < D; ++d) mean[d] += db.features.values[f * D + d] / double(n);
  for (size_t f = 0; f < n; ++f)
    for (size_t d = 0; d < D; ++d) var[d] += std::pow(db.features.values[f * D + d] - mean[d], 2);
  for (size_t d = 0; d < D; ++d) EXPECT_NEAR(mean[d], 0, 1e-4) << d;
  // Over a group, the mean of the per-dimension standard deviations is the group's weight.
  for (const FeatureGroup& g : db.groups) {
    double sum = 0;
    for (uint32_t d = g.offset; d < g.offset + g.dims; ++d) sum += std::sqrt(var[d] / double(n));
    EXPECT_NEAR(sum / g.dims, g.weight, 1e-4) << g.name;
  }
  // normalize() of a frame's raw features gives its stored row.
  std::vector<float> raw(D), out(D);
  for (size_t d = 0; d < D; ++d) raw[d] = raw_of(db, 17, d);
  ASSERT_TRUE(db.normalize(raw, out));
  for (size_t d = 0; d < D; ++d) EXPECT_NEAR(out[d], db.features.values[17 * D + d], 1e-4);
  EXPECT_FALSE(db.normalize(std::span<const float>(raw.data(), D - 1), out));
}

TEST(MatchDatabase, MirroringSwapsTheFeetAndNegatesX) {
  const auto wander = [](double t) {
    return std::pair<Vec3, double>{{0.5 * t, 0.9, 1.2 * t}, 0.3 + 0.2 * std::sin(t)};
  };
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(5, wander);
  DatabaseOptions o;
  o.mirror = true;
  const Database db = build_one(clip, sk, o);
  ASSERT_EQ(db.clips.size(), 2u);
  EXPECT_TRUE(db.clips[1].mirrored);
  const uint32_t half = db.clips[1].first_frame;
  ASSERT_EQ(half * 2, db.frames());
  for (const size_t f : {size_t(10), size_t(40), size_t(70)}) {
    const size_t m = half + f;
    for (int c = 0; c < 3; ++c) {  // left foot of the mirror = right foot of the original, x → −x
      const float s = c == 0 ? -1.0f : 1.0f;
      EXPECT_NEAR(raw_of(db, m, size_t(c)), s * raw_of(db, f, 3 + size_t(c)), 1e-4);
      EXPECT_NEAR(raw_of(db, m, 6 + size_t(c)), s * raw_of(db, f, 9 + size_t(c)), 1e-4);
      EXPECT_NEAR(raw_of(db, m, 12 + size_t(c)), s * raw_of(db, f, 12 + size_t(c)), 1e-4);
    }
    for (int i = 0; i < 6; ++i) {  // trajectory x negated, z kept
      const float s = i % 2 == 0 ? -1.0f : 1.0f;
      EXPECT_NEAR(raw_of(db, m, 15 + size_t(i)), s * raw_of(db, f, 15 + size_t(i)), 1e-4);
      EXPECT_NEAR(raw_of(db, m, 21 + size_t(i)), s * raw_of(db, f, 21 + size_t(i)), 1e-4);
    }
  }
}

TEST(MatchDatabase, SpeedVariantsScaleVelocitiesAndFrameCounts) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(4, straight);
  DatabaseOptions o;
  o.speeds = {1.0, 2.0};
  const Database db = build_one(clip, sk, o);
  ASSERT_EQ(db.clips.size(), 2u);
  EXPECT_EQ(db.clips[0].frame_count, 121u);
  EXPECT_EQ(db.clips[1].frame_count, 61u);
  const size_t fast = db.clips[1].first_frame + 10;
  EXPECT_NEAR(raw_of(db, fast, 14), 3.0, 2e-3);
  EXPECT_NEAR(raw_of(db, fast, 20), 3.0 * db.trajectory_times[2], 5e-3);
  EXPECT_NEAR(db.source_time(uint32_t(fast)), 10 * 2.0 / 30, 1e-9);
}

TEST(MatchDatabase, LastFramesOfEachClipAreNotSearchable) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(4, straight);
  DatabaseOptions o;
  o.end_exclusion = 0.5;
  const Database db = build_one(clip, sk, o);
  size_t excluded = 0;
  for (size_t f = 0; f < db.frames(); ++f) {
    const bool tail = f + 15 >= db.frames();  // the last 15 frames are < 0.5 s from the end
    EXPECT_EQ(db.features.searchable[f] == 0, tail) << f;
    excluded += db.features.searchable[f] == 0;
  }
  EXPECT_EQ(excluded, 15u);
  const Database by_default = build_one(clip, sk);  // the last trajectory time, 1.0 s
  size_t d = 0;
  for (const uint8_t s : by_default.features.searchable) d += s == 0;
  EXPECT_EQ(d, 30u);
}

TEST(MatchDatabase, TagRangesBecomeBits) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(4, straight);
  const Database db = build_one(clip, sk, {}, {{"walk", 0, 2}, {"turn", 1.5, 4}, {"walk", 3.5, 4}});
  ASSERT_EQ(db.tag_names.size(), 2u);
  const uint64_t walk = db.tag_mask("walk"), turn = db.tag_mask("turn");
  EXPECT_EQ(walk, 1u);
  EXPECT_EQ(turn, 2u);
  EXPECT_EQ(db.tag_mask("run"), 0u);
  EXPECT_EQ(db.features.tags[0], walk);
  EXPECT_EQ(db.features.tags[50], walk | turn);  // 1.67 s
  EXPECT_EQ(db.features.tags[90], turn);         // 3 s
  EXPECT_EQ(db.features.tags[120], walk | turn);
}

TEST(MatchDatabase, BadInputIsRejectedWithThePlace) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(2, straight);
  const auto message = [&](ClipSource src, DatabaseOptions o = {}) {
    try {
      build_database(std::span<const ClipSource>(&src, 1), o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ClipSource good{"walk", &sk, &clip, walker_joints(), 0, {}};
  ClipSource no_feet = good;
  no_feet.joints.left_foot = -1;
  EXPECT_NE(message(no_feet).find("left foot joint is not known"), std::string::npos);
  ClipSource outside = good;
  outside.joints.hips = 9;
  EXPECT_NE(message(outside).find("outside the skeleton"), std::string::npos);
  ClipSource one_leg = good;
  one_leg.joints.right_upper_leg = -1;
  EXPECT_NE(message(one_leg).find("both upper legs"), std::string::npos);
  ClipSource late = good;
  late.start_time = 5;
  EXPECT_NE(message(late).find("outside the clip"), std::string::npos);
  DatabaseOptions o;
  o.trajectory_times = {0.5, 0.4};
  EXPECT_NE(message(good, o).find("increasing"), std::string::npos);
  o = {};
  o.speeds = {0};
  EXPECT_NE(message(good, o).find("speeds"), std::string::npos);
  o = {};
  o.fps = NAN;
  EXPECT_NE(message(good, o).find("fps"), std::string::npos);
  EXPECT_THROW(build_database({}, {}), Error);
  ClipSource many = good;
  for (int i = 0; i < 65; ++i) many.tags.push_back({"t" + std::to_string(i), 0, 1});
  EXPECT_NE(message(many).find("at most 64"), std::string::npos);
  // An extra feature that produces NaN names the clip and frame.
  o = {};
  o.extra.push_back(
      {"broken", 1, 1, [](const Skeleton&, const Clip&, double t, bool, std::span<float> out) {
         out[0] = t > 1 ? NAN : 0.0f;
       }});
  const std::string nan = message(good, o);
  EXPECT_NE(nan.find("clip \"walk\", frame 31"), std::string::npos) << nan;
}

TEST(MatchDatabase, ExtraFeaturesAreStoredAndNormalized) {
  const Skeleton sk = walker_skeleton();
  const Clip clip = walker_clip(2, straight);
  DatabaseOptions o;
  o.extra.push_back(
      {"time", 2, 3, [](const Skeleton&, const Clip&, double t, bool m, std::span<float> out) {
         out[0] = float(t);
         out[1] = m ? 1.0f : 0.0f;
       }});
  const Database db = build_one(clip, sk, o);
  EXPECT_EQ(db.dims(), 29u);
  EXPECT_EQ(db.groups.back().name, "time");
  EXPECT_NEAR(raw_of(db, 30, 27), 1.0, 1e-5);
  EXPECT_EQ(db.groups.back().scale > 0, true);
}

TEST(MatchDatabase, RealWalkFromCmuBvh) {
  const Asset asset = load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const auto human = humanoid_of(asset);
  ASSERT_TRUE(human.has_value());
  ClipSource src;
  src.name = "02_01";
  src.skeleton = &asset.skeleton;
  src.clip = &asset.clips.at(0);
  src.joints = {human->find("hips"), human->find("leftFoot"), human->find("rightFoot"),
                human->find("leftUpperLeg"), human->find("rightUpperLeg")};
  DatabaseOptions o;
  o.mirror = true;
  const Database db = build_database(std::span<const ClipSource>(&src, 1), o);
  EXPECT_EQ(db.clips.size(), 2u);
  // CMU 02_01 walks forward at about 1–1.5 m/s: the root frame makes that +z.
  double speed = 0;
  size_t count = 0;
  for (uint32_t f = 10; f < db.clips[0].frame_count - 10; ++f, ++count) speed += raw_of(db, f, 14);
  speed /= double(count);
  EXPECT_GT(speed, 0.8);
  EXPECT_LT(speed, 2.0);
  // Feet ~ 0.8–1.0 m below the hips' height, on their own side.
  EXPECT_GT(raw_of(db, 20, 0), 0.0);
  EXPECT_LT(raw_of(db, 20, 3), 0.0);
  for (const float v : db.features.values) ASSERT_TRUE(std::isfinite(v));
}

// ---- The .kmm file ----------------------------------------------------------------------------

namespace {

Database small_database(bool poses = true) {
  static const Skeleton sk = walker_skeleton();
  static const Clip clip = walker_clip(2, straight);
  DatabaseOptions o;
  o.mirror = true;
  o.store_poses = poses;
  return build_one(clip, sk, o, {{"walk", 0, 1}});
}

std::string message_of(std::string_view bytes) {
  try {
    deserialize_database(bytes, "db.kmm");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Rewrites the header's checksum after an edit, so that the reader gets past it.
void fix_checksum(std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 32; i < bytes.size(); ++i) {
    h ^= uint8_t(bytes[i]);
    h *= 1099511628211ull;
  }
  const uint64_t size = bytes.size() - 32;
  std::memcpy(&bytes[16], &size, 8);
  std::memcpy(&bytes[24], &h, 8);
}

}  // namespace

TEST(MatchDatabaseFile, RoundTripIsExact) {
  const Database db = small_database();
  const std::string bytes = serialize_database(db);
  const Database back = deserialize_database(bytes, "db.kmm");
  EXPECT_EQ(serialize_database(back), bytes);
  EXPECT_EQ(back.features.values, db.features.values);
  EXPECT_EQ(back.features.tags, db.features.tags);
  EXPECT_EQ(back.features.searchable, db.features.searchable);
  EXPECT_EQ(back.tag_names, db.tag_names);
  ASSERT_EQ(back.clips.size(), 2u);
  EXPECT_TRUE(back.clips[1].mirrored);
  EXPECT_EQ(back.groups[5].scale, db.groups[5].scale);
}

TEST(MatchDatabaseFile, CorruptedTruncatedAndForeignFilesGiveClearErrors) {
  const Database db = small_database(false);
  const std::string bytes = serialize_database(db);
  EXPECT_NE(message_of("").find("truncated"), std::string::npos);
  EXPECT_NE(message_of("KMMATCH").find("truncated"), std::string::npos);
  EXPECT_NE(message_of(std::string(64, 'x')).find("no KMMATCH magic"), std::string::npos);
  std::string version = bytes;
  version[8] = 9;
  EXPECT_NE(message_of(version).find("format version 9"), std::string::npos);
  for (const size_t cut : {size_t(33), bytes.size() / 2, bytes.size() - 1}) {
    const std::string m = message_of(std::string_view(bytes).substr(0, cut));
    EXPECT_NE(m.find("truncated"), std::string::npos) << cut << ": " << m;
    EXPECT_NE(m.find("db.kmm"), std::string::npos);
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_NE(message_of(flipped).find("checksum mismatch"), std::string::npos);
  // Hostile content with a valid checksum: a huge count, a NaN feature, clips out of order.
  std::string huge = bytes;
  const uint64_t big = uint64_t(1) << 40;
  std::memcpy(&huge[32 + 8], &big, 8);  // trajectory time count
  fix_checksum(huge);
  EXPECT_NE(message_of(huge).find("does not fit the file"), std::string::npos) << message_of(huge);
  std::string nan = bytes;
  const float bad = NAN;
  // After the values: tag flag, tags, searchable flags, root frames, joint count 0.
  const size_t values_end = bytes.size() - 8 - 1 - db.frames() * (9 + 16);
  std::memcpy(&nan[values_end - 4], &bad, 4);  // the last frame's last feature
  fix_checksum(nan);
  const std::string m = message_of(nan);
  EXPECT_NE(m.find("feature 26 of frame " + std::to_string(db.frames() - 1) + " is not a finite"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("byte "), std::string::npos);
  std::string extra = bytes + "x";
  fix_checksum(extra);
  EXPECT_NE(message_of(extra).find("unexpected bytes after the end"), std::string::npos)
      << message_of(extra);
}

TEST(MatchDatabaseFile, PosesRoundTripAndBadPosesAreRejected) {
  const Database db = small_database(true);
  ASSERT_TRUE(db.has_poses());
  EXPECT_EQ(db.poses.size(), db.frames() * 5);
  const std::string bytes = serialize_database(db);
  const Database back = deserialize_database(bytes, "db.kmm");
  EXPECT_EQ(back.skeleton.joint_count(), 5);
  EXPECT_EQ(back.skeleton.joint(3).name, "left_foot");
  EXPECT_EQ(std::memcmp(back.poses.data(), db.poses.data(), db.poses.size() * 40), 0);
  std::string nan = bytes;
  const float bad = INFINITY;
  std::memcpy(&nan[bytes.size() - 4], &bad, 4);  // the last frame's last joint's scale z
  fix_checksum(nan);
  EXPECT_NE(message_of(nan).find("joint 4 of frame " + std::to_string(db.frames() - 1) +
                                 " has a non-finite pose"),
            std::string::npos)
      << message_of(nan);
  std::string cut = bytes.substr(0, bytes.size() - 40);
  fix_checksum(cut);
  EXPECT_NE(message_of(cut).find("poses do not match"), std::string::npos) << message_of(cut);
}

TEST(MatchDatabaseFile, RandomByteFlipsNeverCrash) {
  // Every single-byte change with the checksum fixed must either load or throw kinema::Error.
  const std::string bytes = serialize_database(small_database());
  size_t rejected = 0;
  for (size_t i = 32; i < bytes.size(); i += 7) {
    std::string edited = bytes;
    edited[i] = char(edited[i] ^ 0xA5);
    fix_checksum(edited);
    try {
      const Database db = deserialize_database(edited, "db.kmm");
      EXPECT_EQ(db.features.values.size(), db.frames() * db.dims());
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0u);
}
