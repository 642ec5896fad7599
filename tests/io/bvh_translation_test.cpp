// BVH position channels: the two readings (a joint's local translation that replaces its
// OFFSET, or a displacement added to it), the per-joint decision that chooses between them, and
// a writer whose files every reader reads the same way. The fixtures in data/bvh/translation/
// (make_fixtures.py) come with how Blender 3.4 and three.js read them (record_references.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/match/database.h"
#include "kinema/retarget/humanoid.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();
const std::string kFixtures = kData + "/bvh/translation/";
const std::string kCmuWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kCc3Walk = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";

// The fixtures' figure: 1.68 m from the soles to the top of the head.
constexpr double kFigureHeight = 1.68;

BvhReadOptions reading(BvhTranslation t) {
  BvhReadOptions o;
  o.translation = t;
  return o;
}

/// World positions of every joint at frame `f` (the clip's keys are the file's frames).
std::vector<Vec3> world_at_frame(const Asset& a, int f) {
  const double t = f / a.clips[0].sample_rate;
  std::vector<Vec3> out;
  for (const Mat4& m : sample_model_pose(a.clips[0], a.skeleton, t))
    out.push_back(m.translation_part());
  return out;
}

/// A reference reading recorded from another program: per frame, joint name → world position in
/// centimetres.
std::vector<std::map<std::string, Vec3>> read_reference(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<std::map<std::string, Vec3>> frames;
  for (const auto& frame : j.at("frames")) {
    std::map<std::string, Vec3> positions;
    for (const auto& [name, p] : frame.items())
      positions[name] = Vec3{p[0].get<double>(), p[1].get<double>(), p[2].get<double>()};
    frames.push_back(std::move(positions));
  }
  return frames;
}

/// Largest distance (metres) between kinema's reading of a fixture and another program's.
double distance_to_reference(const Asset& a, const std::string& reference_path) {
  const auto reference = read_reference(reference_path);
  EXPECT_EQ(static_cast<int>(reference.size()), a.clips[0].frame_count());
  double worst = 0;
  for (size_t f = 0; f < reference.size(); ++f) {
    const std::vector<Vec3> world = world_at_frame(a, static_cast<int>(f));
    EXPECT_EQ(reference[f].size(), world.size());
    for (int j = 0; j < a.skeleton.joint_count(); ++j) {
      const auto it = reference[f].find(a.skeleton.joint(j).name);
      if (it == reference[f].end()) {
        ADD_FAILURE() << "no reference for " << a.skeleton.joint(j).name;
        continue;
      }
      worst = std::max(worst, distance(world[static_cast<size_t>(j)], it->second * 0.01));
    }
  }
  return worst;
}

/// Largest world-position difference between two readings over every frame.
double world_difference(const Asset& a, const Asset& b) {
  EXPECT_EQ(a.clips[0].frame_count(), b.clips[0].frame_count());
  double worst = 0;
  for (int f = 0; f < a.clips[0].frame_count(); ++f) {
    const auto wa = world_at_frame(a, f), wb = world_at_frame(b, f);
    for (size_t j = 0; j < wa.size(); ++j) worst = std::max(worst, distance(wa[j], wb[j]));
  }
  return worst;
}

/// Highest minus lowest world y over the joints at frame `f`.
double height_at_frame(const Asset& a, int f) {
  double lo = 1e300, hi = -1e300;
  for (const Vec3& p : world_at_frame(a, f)) lo = std::min(lo, p.y), hi = std::max(hi, p.y);
  return hi - lo;
}

bool has_position_channels(const BvhJointLayout& layout) {
  return std::any_of(layout.channels.begin(), layout.channels.end(),
                     [](const std::string& c) { return c.find("position") != std::string::npos; });
}

/// A one-root, one-child file; `root_pos` / `child_pos` are each frame's position channels.
std::string two_joint_file(const Vec3& root_offset, const Vec3& child_offset,
                           const std::vector<Vec3>& root_pos, const std::vector<Vec3>& child_pos) {
  std::ostringstream s;
  s << "HIERARCHY\nROOT root\n{\n  OFFSET " << root_offset.x << ' ' << root_offset.y << ' '
    << root_offset.z << "\n  CHANNELS 3 Xposition Yposition Zposition\n  JOINT child\n  {\n"
    << "    OFFSET " << child_offset.x << ' ' << child_offset.y << ' ' << child_offset.z
    << "\n    CHANNELS 3 Xposition Yposition Zposition\n    End Site\n    {\n"
    << "      OFFSET 0 1 0\n    }\n  }\n}\nMOTION\nFrames: " << root_pos.size()
    << "\nFrame Time: 0.1\n";
  for (size_t f = 0; f < root_pos.size(); ++f)
    s << root_pos[f].x << ' ' << root_pos[f].y << ' ' << root_pos[f].z << ' ' << child_pos[f].x
      << ' ' << child_pos[f].y << ' ' << child_pos[f].z << '\n';
  return s.str();
}

BvhReadOptions metres_auto() {
  BvhReadOptions o;
  o.unit_in_meters = 1.0;
  return o;
}

bool warns_about(const Asset& a, const std::string& part) {
  return std::any_of(a.source.warnings.begin(), a.source.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

// ---- the two readings on real-client references -----------------------------------------------

TEST(BvhTranslation, ChannelsAtTheOffsetsAreLocalTranslationsAndKeepBoneLengths) {
  const Asset a = read_bvh(kFixtures + "local_translation.bvh");
  EXPECT_EQ(a.source.unit_name, "cm");
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    const BvhJointLayout& l = a.bvh_layout[static_cast<size_t>(j)];
    EXPECT_EQ(l.translation, BvhTranslation::Replace) << a.skeleton.joint(j).name;
    EXPECT_EQ(l.translation_basis, BvhTranslationBasis::Measured);
    EXPECT_NEAR(l.offset_ratio, 1.0, j == 0 ? 0.03 : 1e-12);
  }
  // Every bone keeps its OFFSET's length in every frame (adding would make each twice as long).
  for (int f = 0; f < a.clips[0].frame_count(); ++f) {
    const std::vector<Vec3> world = world_at_frame(a, f);
    for (int j = 1; j < a.skeleton.joint_count(); ++j) {
      const double bone =
          distance(world[static_cast<size_t>(j)], world[static_cast<size_t>(a.skeleton.parent(j))]);
      EXPECT_NEAR(bone, length(a.skeleton.joint(j).rest.translation), 1e-12)
          << a.skeleton.joint(j).name << " frame " << f;
    }
  }
  // The hips stand where the root's channels put them (0.95 m), not at 0.95 m + OFFSET.
  EXPECT_NEAR(world_at_frame(a, 0)[0].y, 0.95, 1e-12);
}

TEST(BvhTranslation, LocalTranslationFixturesMatchBlender) {
  for (const char* name : {"local_translation", "local_translation_moving"}) {
    const Asset a = read_bvh(kFixtures + name + ".bvh");
    for (const BvhJointLayout& l : a.bvh_layout) EXPECT_EQ(l.translation, BvhTranslation::Replace);
    EXPECT_LT(distance_to_reference(a, kFixtures + name + ".blender.json"), 1e-6 * kFigureHeight)
        << name;
  }
}

TEST(BvhTranslation, DisplacementFixtureMatchesThreeJs) {
  const Asset a = read_bvh(kFixtures + "displacement.bvh");
  for (const BvhJointLayout& l : a.bvh_layout) {
    EXPECT_EQ(l.translation, BvhTranslation::Add);
    EXPECT_EQ(l.translation_basis, BvhTranslationBasis::Measured);
  }
  EXPECT_LT(distance_to_reference(a, kFixtures + "displacement.threejs.json"),
            1e-6 * kFigureHeight);
  // Blender reads the same file as local translations: kinema does too when asked.
  const Asset replaced = read_bvh(kFixtures + "displacement.bvh", reading(BvhTranslation::Replace));
  EXPECT_LT(distance_to_reference(replaced, kFixtures + "displacement.blender.json"),
            1e-6 * kFigureHeight);
  EXPECT_GT(world_difference(a, replaced), 0.5);  // the two readings are far apart
}

TEST(BvhTranslation, ForcedReadingOverridesTheDecision) {
  const Asset added = read_bvh(kFixtures + "local_translation.bvh", reading(BvhTranslation::Add));
  for (const BvhJointLayout& l : added.bvh_layout) {
    EXPECT_EQ(l.translation, BvhTranslation::Add);
    EXPECT_EQ(l.translation_basis, BvhTranslationBasis::Requested);
    EXPECT_NEAR(l.offset_ratio, 1.0, 0.03);  // still measured, for `kinema info`
  }
  // Added to the OFFSET, channels equal to the OFFSET double every bone (the old reading).
  const std::vector<Vec3> world = world_at_frame(added, 3);
  for (int j = 1; j < added.skeleton.joint_count(); ++j)
    EXPECT_NEAR(distance(world[static_cast<size_t>(j)],
                         world[static_cast<size_t>(added.skeleton.parent(j))]),
                2 * length(added.skeleton.joint(j).rest.translation), 1e-12);
  const Asset automatic = read_bvh(kFixtures + "local_translation.bvh");
  const Asset replaced =
      read_bvh(kFixtures + "local_translation.bvh", reading(BvhTranslation::Replace));
  EXPECT_EQ(world_difference(automatic, replaced), 0.0);
}

// ---- the decision -------------------------------------------------------------------------------

TEST(BvhTranslation, ARootThatTravelsDecidesByItsHeightAlongTheOffset) {
  // The root walks 20 m away while its height stays near the OFFSET's: only the projection on
  // the OFFSET tells the readings apart, and it says "local translation".
  std::vector<Vec3> root, child;
  for (int f = 0; f < 5; ++f) {
    root.push_back({4.0 * f, 0.95 + 0.02 * f, -3.0 * f});
    child.push_back({0, 0.4, 0});
  }
  const Asset a =
      parse_bvh(two_joint_file({0, 0.95, 0}, {0, 0.4, 0}, root, child), "walk.bvh", metres_auto());
  EXPECT_EQ(a.bvh_layout[0].translation, BvhTranslation::Replace);
  EXPECT_EQ(a.bvh_layout[0].translation_basis, BvhTranslationBasis::Measured);
  EXPECT_NEAR(a.bvh_layout[0].offset_ratio, (0.95 + 0.04) / 0.95, 1e-12);  // the median frame
  EXPECT_NEAR(a.clips[0].tracks[0].translation.values[4].y, 0.95 + 0.08, 1e-12);
  EXPECT_EQ(a.bvh_layout[1].translation, BvhTranslation::Replace);
}

TEST(BvhTranslation, NeitherReadingFitsSoTheRuleDecidesAndIsReported) {
  // Channels at half the OFFSET: the root adds, the child replaces, and both are named.
  std::vector<Vec3> root(3, Vec3{0, 0.5, 0}), child(3, Vec3{0, 0.2, 0});
  const Asset a =
      parse_bvh(two_joint_file({0, 1, 0}, {0, 0.4, 0}, root, child), "half.bvh", metres_auto());
  EXPECT_EQ(a.bvh_layout[0].translation, BvhTranslation::Add);
  EXPECT_EQ(a.bvh_layout[0].translation_basis, BvhTranslationBasis::Rule);
  EXPECT_EQ(a.bvh_layout[1].translation, BvhTranslation::Replace);
  EXPECT_EQ(a.bvh_layout[1].translation_basis, BvhTranslationBasis::Rule);
  EXPECT_NEAR(a.bvh_layout[1].offset_ratio, 0.5, 1e-12);
  EXPECT_TRUE(warns_about(a, "joint 'root' (line 2)")) << a.source.warnings.size();
  EXPECT_TRUE(warns_about(a, "joint 'child' (line 6)"));
  EXPECT_TRUE(warns_about(a, "the rule for roots"));
  EXPECT_NEAR(a.clips[0].tracks[0].translation.values[0].y, 1.5, 1e-12);
  EXPECT_NEAR(a.clips[0].tracks[1].translation.values[0].y, 0.2, 1e-12);
  // Requested readings are not warned about.
  BvhReadOptions add = metres_auto();
  add.translation = BvhTranslation::Add;
  EXPECT_TRUE(parse_bvh(two_joint_file({0, 1, 0}, {0, 0.4, 0}, root, child), "half.bvh", add)
                  .source.warnings.empty());
}

TEST(BvhTranslation, TheFitBoundsAreAThirdOnEitherSide) {
  auto reading_at = [](double ratio) {
    std::vector<Vec3> root(1, Vec3{0, 1, 0}), child(1, Vec3{0, 0.4 * ratio, 0});
    const Asset a =
        parse_bvh(two_joint_file({0, 1, 0}, {0, 0.4, 0}, root, child), "r.bvh", metres_auto());
    return a.bvh_layout[1].translation_basis == BvhTranslationBasis::Rule
               ? std::string("rule")
               : std::string(to_string(a.bvh_layout[1].translation));
  };
  EXPECT_EQ(reading_at(0.0), "add");
  EXPECT_EQ(reading_at(0.3), "add");
  EXPECT_EQ(reading_at(-0.3), "add");
  EXPECT_EQ(reading_at(0.4), "rule");
  EXPECT_EQ(reading_at(0.6), "rule");
  EXPECT_EQ(reading_at(0.7), "replace");
  EXPECT_EQ(reading_at(1.3), "replace");
  EXPECT_EQ(reading_at(1.4), "rule");
  EXPECT_EQ(reading_at(-1.0), "rule");
}

TEST(BvhTranslation, LowerMedianForAnEvenFrameCount) {
  // Two frames: ratios 0 and 0.9. The lower median (0) decides: a displacement.
  std::vector<Vec3> root{{0, 0, 0}, {0, 0.9, 0}}, child{{0, 0, 0}, {0, 0, 0}};
  const Asset a =
      parse_bvh(two_joint_file({0, 1, 0}, {0, 0.4, 0}, root, child), "even.bvh", metres_auto());
  EXPECT_EQ(a.bvh_layout[0].offset_ratio, 0.0);
  EXPECT_EQ(a.bvh_layout[0].translation, BvhTranslation::Add);
}

TEST(BvhTranslation, ZeroOffsetsLetBothReadingsAgree) {
  std::vector<Vec3> root(2, Vec3{1, 2, 3}), child(2, Vec3{0, 0.4, 0});
  const Asset a =
      parse_bvh(two_joint_file({0, 0, 0}, {0, 0, 0}, root, child), "zero.bvh", metres_auto());
  for (const BvhJointLayout& l : a.bvh_layout) {
    EXPECT_EQ(l.translation_basis, BvhTranslationBasis::OffsetZero);
    EXPECT_TRUE(std::isnan(l.offset_ratio));
  }
  EXPECT_TRUE(a.source.warnings.empty());
  EXPECT_NEAR(a.clips[0].tracks[1].translation.values[0].y, 0.4, 1e-12);
}

TEST(BvhTranslation, PartialPositionChannelsReplaceOnlyTheirAxes) {
  // A child with only Yposition: X and Z keep the OFFSET in both readings.
  const std::string text =
      "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\nJOINT c\n{\nOFFSET 0.3 1 0.2\n"
      "CHANNELS 1 Yposition\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n1\n1.1\n";
  const Asset a = parse_bvh(text, "partial.bvh", metres_auto());
  EXPECT_EQ(a.bvh_layout[1].translation, BvhTranslation::Replace);
  EXPECT_NEAR(a.bvh_layout[1].offset_ratio, 1.0, 1e-12);
  const Vec3 v = a.clips[0].tracks[1].translation.values[1];
  EXPECT_NEAR(v.x, 0.3, 1e-12);
  EXPECT_NEAR(v.y, 1.1, 1e-12);
  EXPECT_NEAR(v.z, 0.2, 1e-12);
}

TEST(BvhTranslation, NamesAndDescriptions) {
  EXPECT_EQ(bvh_translation_from_string("auto"), BvhTranslation::Auto);
  EXPECT_EQ(bvh_translation_from_string("replace"), BvhTranslation::Replace);
  EXPECT_EQ(bvh_translation_from_string("add"), BvhTranslation::Add);
  EXPECT_FALSE(bvh_translation_from_string("Add").has_value());
  EXPECT_FALSE(bvh_translation_from_string("").has_value());
  // One reading for all: a single line.
  const auto one = describe_bvh_translation(read_bvh(kFixtures + "local_translation.bvh"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].rfind("local translation (replaces OFFSET) on 17 joints, measured: Hips, ", 0),
            0u)
      << one[0];
  // Two readings: every joint named.
  std::vector<Vec3> root(3, Vec3{0, 0.5, 0}), child(3, Vec3{0, 0.4, 0});
  const auto two = describe_bvh_translation(
      parse_bvh(two_joint_file({0, 1, 0}, {0, 0.4, 0}, root, child), "two.bvh", metres_auto()));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0],
            "displacement (adds to OFFSET) on 1 joint, by the rule (neither reading "
            "fits): root");
  EXPECT_EQ(two[1], "local translation (replaces OFFSET) on 1 joint, measured: child");
  EXPECT_TRUE(describe_bvh_translation(Asset{}).empty());
}

// ---- real data reads as before ---------------------------------------------------------------

TEST(BvhTranslation, RealRootsStillAddTheirDisplacements) {
  // cgspeed: root OFFSET 0, both readings agree. iClone CC3: root OFFSET (0, 105.2, 0) with
  // channels near zero: measured as a displacement, as three.js reads it.
  const Asset cmu = read_bvh(kCmuWalk);
  EXPECT_EQ(cmu.bvh_layout[0].translation_basis, BvhTranslationBasis::OffsetZero);
  const Asset cc3 = read_bvh(kCc3Walk);
  EXPECT_EQ(cc3.bvh_layout[0].translation, BvhTranslation::Add);
  EXPECT_EQ(cc3.bvh_layout[0].translation_basis, BvhTranslationBasis::Measured);
  EXPECT_NEAR(cc3.bvh_layout[0].offset_ratio, 0.0, 1.0 / 3.0);
  EXPECT_EQ(world_difference(cc3, read_bvh(kCc3Walk, reading(BvhTranslation::Add))), 0.0);
  for (const Asset* a : {&cmu, &cc3})
    for (size_t j = 1; j < a->bvh_layout.size(); ++j)
      EXPECT_FALSE(has_position_channels(a->bvh_layout[j]));
}

/// The CMU walk as a MotionBuilder-style export: every joint gets position channels holding its
/// OFFSET (the root keeps its absolute positions).
std::string with_six_channels_everywhere(const std::string& bvh) {
  std::istringstream in(bvh);
  std::string line, out, motion;
  std::vector<std::string> offsets;    // per joint, in file order
  std::vector<int> rotation_channels;  // per joint
  std::vector<bool> had_positions;     // per joint
  std::string pending_offset;
  bool in_motion = false, end_site = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (in_motion) {
      if (line.rfind("Frames:", 0) == 0 || line.rfind("Frame Time:", 0) == 0) {
        out += line + '\n';
        continue;
      }
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      std::istringstream values(line);
      std::string row;
      for (size_t j = 0; j < offsets.size(); ++j) {
        if (!had_positions[j]) row += offsets[j] + ' ';
        const int n = rotation_channels[j] + (had_positions[j] ? 3 : 0);
        for (int c = 0; c < n; ++c) {
          std::string v;
          values >> v;
          row += v + ' ';
        }
      }
      row.pop_back();
      out += row + '\n';
      continue;
    }
    const std::string trimmed = line.substr(std::min(line.find_first_not_of(" \t"), line.size()));
    if (trimmed.rfind("End Site", 0) == 0) end_site = true;
    if (trimmed == "}" && end_site) end_site = false;
    if (trimmed.rfind("OFFSET", 0) == 0 && !end_site) pending_offset = trimmed.substr(7);
    if (trimmed.rfind("CHANNELS", 0) == 0) {
      std::istringstream c(trimmed);
      std::string word;
      int n = 0;
      c >> word >> n;
      std::string names;
      int rotations = 0;
      bool positions = false;
      for (int i = 0; i < n; ++i) {
        c >> word;
        if (word.find("rotation") != std::string::npos)
          ++rotations, names += ' ' + word;
        else
          positions = true;
      }
      offsets.push_back(pending_offset);
      rotation_channels.push_back(rotations);
      had_positions.push_back(positions);
      out += line.substr(0, line.find("CHANNELS")) + "CHANNELS " + std::to_string(rotations + 3) +
             " Xposition Yposition Zposition" + names + '\n';
      continue;
    }
    if (trimmed == "MOTION") in_motion = true;
    out += line + '\n';
  }
  return out;
}

TEST(BvhTranslation, SixChannelCmuWalkReadsLikeTheOriginal) {
  // Every consumer downstream (retargeting by names, motion-matching features, foot contact,
  // compression) sees world positions and a rest skeleton: both are unchanged.
  const std::string original_text = read_file(kCmuWalk);
  const std::string six = with_six_channels_everywhere(original_text);
  const Asset original = parse_bvh(original_text, "02_01.bvh");
  const Asset a = parse_bvh(six, "02_01_six.bvh");
  ASSERT_EQ(a.skeleton.joint_count(), original.skeleton.joint_count());
  EXPECT_EQ(a.source.unit_name, original.source.unit_name);
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    EXPECT_EQ(a.skeleton.joint(j).rest.translation, original.skeleton.joint(j).rest.translation);
    if (j > 0) {
      EXPECT_EQ(a.bvh_layout[static_cast<size_t>(j)].translation, BvhTranslation::Replace);
    }
  }
  EXPECT_LT(world_difference(a, original), 1e-9);
  // The consumers, rechecked: motion-matching features (positions and velocities of the feet and
  // hips in the character's frame) are the same, and compression classifies the translation
  // tracks that now hold the rest as constant and stays within its bound at the same size.
  const auto human = humanoid_of(a);
  ASSERT_TRUE(human.has_value());
  auto features = [&](const Asset& asset) {
    match::ClipSource src;
    src.name = "walk";
    src.skeleton = &asset.skeleton;
    src.clip = &asset.clips[0];
    src.joints = {human->find("hips"), human->find("leftFoot"), human->find("rightFoot"),
                  human->find("leftUpperLeg"), human->find("rightUpperLeg")};
    return match::build_database(std::span<const match::ClipSource>(&src, 1)).features.values;
  };
  const std::vector<float> fa = features(a), fo = features(original);
  ASSERT_EQ(fa.size(), fo.size());
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_NEAR(fa[i], fo[i], 1e-5) << i;
  CompressionStats sa, so;
  compress(a.clips[0], a.skeleton, {}, &sa);
  compress(original.clips[0], original.skeleton, {}, &so);
  EXPECT_LE(sa.error.max, 1e-4);
  EXPECT_EQ(sa.animated_tracks, so.animated_tracks);
  EXPECT_NEAR(double(sa.compressed_bytes), double(so.compressed_bytes), 0.02 * so.compressed_bytes);
  // The old reading (add everywhere) made this 1.7 m performer twice as tall.
  const Asset doubled = parse_bvh(six, "02_01_six.bvh", reading(BvhTranslation::Add));
  EXPECT_NEAR(height_at_frame(doubled, 0) / height_at_frame(original, 0), 2.0, 0.1);
}

// ---- the writer ---------------------------------------------------------------------------------

TEST(BvhTranslation, WrittenFilesReadTheSameUnderEitherReading) {
  for (const char* name : {"local_translation", "local_translation_moving", "displacement"}) {
    const Asset a = read_bvh(kFixtures + name + ".bvh");
    const std::string text = format_bvh(a);
    for (BvhTranslation t : {BvhTranslation::Auto, BvhTranslation::Replace, BvhTranslation::Add}) {
      const Asset b = parse_bvh(text, std::string(name) + ".bvh", reading(t));
      EXPECT_EQ(b.source.unit_name, "cm") << name;
      EXPECT_LT(world_difference(a, b), 1e-9) << name << ' ' << to_string(t);
    }
  }
}

TEST(BvhTranslation, WriterGivesPositionChannelsOnlyToJointsTheClipMoves) {
  // Static local translations (channels = OFFSET): the non-root joints lose their position
  // channels and keep their OFFSET; the root keeps six channels over OFFSET 0.
  const Asset still = read_bvh(kFixtures + "local_translation.bvh");
  const Asset still_back = parse_bvh(format_bvh(still), "still.bvh");
  EXPECT_EQ(still_back.bvh_layout[0].channels.size(), 6u);
  EXPECT_EQ(still_back.skeleton.joint(0).rest.translation, (Vec3{0, 0, 0}));
  for (int j = 1; j < still.skeleton.joint_count(); ++j) {
    EXPECT_EQ(still_back.bvh_layout[static_cast<size_t>(j)].channels.size(), 3u);
    EXPECT_LT(distance(still_back.skeleton.joint(j).rest.translation,
                       still.skeleton.joint(j).rest.translation),
              1e-12);
  }
  // Moving ones: every joint keeps three position channels over OFFSET 0 0 0.
  const std::string moving = format_bvh(read_bvh(kFixtures + "local_translation_moving.bvh"));
  const Asset moving_back = parse_bvh(moving, "moving.bvh");
  for (int j = 0; j < moving_back.skeleton.joint_count(); ++j) {
    EXPECT_TRUE(has_position_channels(moving_back.bvh_layout[static_cast<size_t>(j)]));
    EXPECT_EQ(moving_back.skeleton.joint(j).rest.translation, (Vec3{0, 0, 0}));
    EXPECT_EQ(moving_back.bvh_layout[static_cast<size_t>(j)].translation_basis,
              BvhTranslationBasis::OffsetZero);
  }
  EXPECT_EQ(moving.find("OFFSET 0 -42 0"), std::string::npos);
  // With every OFFSET zero the unit is still detected, from the frame-0 translations.
  EXPECT_TRUE(moving_back.source.unit_detected);
  EXPECT_EQ(moving_back.source.unit_name, "cm");
}

TEST(BvhTranslation, PartialRootChannelsGrowWhenAnAxisWithoutOneHasARestTranslation) {
  // Root with only Yposition and a rest X of 0.5: Blender would read X as 0, so the writer
  // gives it all three channels over OFFSET 0.
  const std::string text =
      "HIERARCHY\nROOT r\n{\nOFFSET 0.5 0 0\nCHANNELS 4 Yposition Zrotation Xrotation Yrotation\n"
      "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n1 0 0 0\n1.2 0 0 0\n";
  const Asset a = parse_bvh(text, "partial.bvh", metres_auto());
  BvhWriteOptions w;
  w.unit_in_meters = 1.0;
  const std::string written = format_bvh(a, w);
  EXPECT_NE(written.find("CHANNELS 6 Yposition Xposition Zposition Zrotation"), std::string::npos)
      << written;
  for (BvhTranslation t : {BvhTranslation::Replace, BvhTranslation::Add}) {
    BvhReadOptions o = metres_auto();
    o.translation = t;
    EXPECT_LT(world_difference(a, parse_bvh(written, "w.bvh", o)), 1e-12);
  }
  // Without a rest translation off its axis, the root keeps its single channel.
  std::string plain = text;
  plain.replace(plain.find("OFFSET 0.5 0 0"), 14, "OFFSET 0 0 0");
  EXPECT_NE(format_bvh(parse_bvh(plain, "p.bvh", metres_auto()), w)
                .find("CHANNELS 4 Yposition Zrotation Xrotation Yrotation"),
            std::string::npos);
}

}  // namespace
}  // namespace kinema
