// BVH reading: real CMU files, channel orders and layouts, units, a hand-computed FK example, and
// hostile input (every failure is a kinema::Error naming the line).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/math/euler.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();
const std::string kCmuWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kCc3Walk = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";

constexpr double kDeg = 3.14159265358979323846 / 180.0;

// A two-joint arm with an End Site; known world positions (see
// TwoJointArmGivesHandComputedWorldPositions).
const char* kArm =
    "HIERARCHY\n"
    "ROOT root\n"
    "{\n"
    "  OFFSET 1 2 3\n"
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "  JOINT arm\n"
    "  {\n"
    "    OFFSET 0 10 0\n"
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "    End Site\n"
    "    {\n"
    "      OFFSET 0 5 0\n"
    "    }\n"
    "  }\n"
    "}\n"
    "MOTION\n"
    "Frames: 2\n"
    "Frame Time: 0.5\n"
    "0 0 0 0 0 0 0 0 0\n"
    "10 0 0 90 0 0 0 90 0\n";

BvhReadOptions metres() {
  BvhReadOptions o;
  o.unit_in_meters = 1.0;
  return o;
}

std::vector<Mat4> model_at(const Asset& a, double t) {
  return sample_model_pose(a.clips[0], a.skeleton, t);
}

void expect_near(const Vec3& a, const Vec3& b, double tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

// Parses `text` expecting a kinema::Error whose place is `line` and whose message mentions
// `reason_part`.
void expect_error(const std::string& text, long line, const std::string& reason_part) {
  try {
    parse_bvh(text, "hostile.bvh");
    ADD_FAILURE() << "no error; expected one at line " << line;
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), at_line(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("line " + std::to_string(line)), std::string::npos);
    EXPECT_NE(e.reason().find(reason_part), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), "hostile.bvh");
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(Bvh, ReadsCmuWalk) {
  const Asset a = read_bvh(kCmuWalk);
  EXPECT_EQ(a.skeleton.joint_count(), 31);
  EXPECT_EQ(a.skeleton.joint(0).name, "Hips");
  EXPECT_EQ(a.skeleton.roots().size(), 1u);
  EXPECT_EQ(a.source.format, "bvh");
  EXPECT_EQ(a.source.path, kCmuWalk);
  EXPECT_EQ(a.source.unit_name, "cmu-asf");
  EXPECT_TRUE(a.source.unit_detected);
  EXPECT_NEAR(a.source.unit_in_meters, 0.05644, 1e-5);
  EXPECT_EQ(a.source.up_axis, "+Y");
  EXPECT_EQ(a.source.forward_axis, "+Z");
  EXPECT_TRUE(a.source.warnings.empty());

  ASSERT_EQ(a.clips.size(), 1u);
  const Clip& c = a.clips[0];
  EXPECT_EQ(c.name, "02_01");
  EXPECT_NEAR(c.sample_rate, 1.0 / 0.008333, 1e-9);
  EXPECT_NEAR(c.duration, 342 * 0.008333, 1e-12);
  EXPECT_EQ(c.frame_count(), 343);
  EXPECT_NO_THROW(c.validate(a.skeleton.joint_count(), kCmuWalk));
  // Root: 6 channels (translation + rotation); others: rotation only.
  EXPECT_EQ(c.tracks[0].translation.key_count(), 343u);
  EXPECT_EQ(c.tracks[0].rotation.key_count(), 343u);
  EXPECT_TRUE(c.tracks[1].translation.empty());
  EXPECT_EQ(c.tracks[1].rotation.key_count(), 343u);
  EXPECT_NEAR(c.tracks[0].rotation.times[342], 342 * 0.008333, 1e-12);

  // Frame 0, root: "11.077051 17.759173 -32.000170 -3.144128 -13.081670 1.872652" (ZYX).
  const double u = a.source.unit_in_meters;
  expect_near(c.tracks[0].translation.values[0], Vec3{11.077051, 17.759173, -32.000170} * u, 1e-12);
  const Quat expected =
      quat_from_euler(Vec3{1.872652, -13.081670, -3.144128} * kDeg, EulerOrder::ZYX);
  EXPECT_LT(angle_between(c.tracks[0].rotation.values[0], expected), 1e-12);

  // LeftUpLeg OFFSET 1.363060 -1.794630 0.839290, End Sites kept in the layout.
  const int left_up_leg = a.skeleton.find("LeftUpLeg");
  ASSERT_GE(left_up_leg, 0);
  expect_near(a.skeleton.joint(left_up_leg).rest.translation,
              Vec3{1.363060, -1.794630, 0.839290} * u, 1e-12);
  ASSERT_EQ(a.bvh_layout.size(), 31u);
  EXPECT_EQ(a.bvh_layout[0].channels,
            (std::vector<std::string>{"Xposition", "Yposition", "Zposition", "Zrotation",
                                      "Yrotation", "Xrotation"}));
  int end_sites = 0;
  for (const auto& l : a.bvh_layout) end_sites += l.has_end_site ? 1 : 0;
  EXPECT_EQ(end_sites, 7);

  // A walking human stands between 1.4 and 2 m tall and the hips stay about 1 m up.
  const std::vector<Mat4> m = model_at(a, 1.0);
  double lo = 1e9, hi = -1e9;
  for (const Mat4& x : m)
    lo = std::min(lo, x.translation_part().y), hi = std::max(hi, x.translation_part().y);
  EXPECT_GT(hi - lo, 1.3);
  EXPECT_LT(hi - lo, 2.0);
}

TEST(Bvh, ReadsIcloneCc3WithRootOffset) {
  const Asset a = read_bvh(kCc3Walk);
  EXPECT_EQ(a.skeleton.joint_count(), 100);
  EXPECT_EQ(a.skeleton.joint(0).name, "CC_Base_Hip");
  EXPECT_EQ(a.source.unit_name, "cm");
  EXPECT_TRUE(a.source.unit_detected);
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 0.01);
  // Root OFFSET 0 105.214226 0.000021 is the rest translation, and the root position channels
  // add to it (frame 0 starts "0.572235 -0.225479 5.863145").
  expect_near(a.skeleton.joint(0).rest.translation, Vec3{0, 1.05214226, 0.00000021}, 1e-12);
  expect_near(a.clips[0].tracks[0].translation.values[0],
              Vec3{0.00572235, 1.05214226 - 0.00225479, 0.00000021 + 0.05863145}, 1e-12);
  EXPECT_EQ(a.clips[0].frame_count(), 132);
  EXPECT_NEAR(a.clips[0].sample_rate, 60.0, 0.01);
  int end_sites = 0;
  for (const auto& l : a.bvh_layout) end_sites += l.has_end_site ? 1 : 0;
  EXPECT_EQ(end_sites, 41);
}

TEST(Bvh, TwoJointArmGivesHandComputedWorldPositions) {
  const Asset a = parse_bvh(kArm, "arm.bvh", metres());
  ASSERT_EQ(a.skeleton.joint_count(), 2);
  EXPECT_EQ(a.clips[0].name, "arm");
  EXPECT_DOUBLE_EQ(a.clips[0].sample_rate, 2.0);
  EXPECT_DOUBLE_EQ(a.clips[0].duration, 0.5);
  EXPECT_FALSE(a.source.unit_detected);
  EXPECT_EQ(a.source.unit_name, "m");
  EXPECT_TRUE(a.bvh_layout[1].has_end_site);
  expect_near(a.bvh_layout[1].end_site, {0, 5, 0}, 0);

  // Frame 0: everything at rest. root (1,2,3), arm (1,12,3), tip (1,17,3).
  std::vector<Mat4> m = model_at(a, 0.0);
  expect_near(m[0].translation_part(), {1, 2, 3}, 1e-12);
  expect_near(m[1].translation_part(), {1, 12, 3}, 1e-12);
  // Frame 1: root moved by +10 in X and turned 90° about Z; arm turned 90° about X.
  //   root = (11,2,3); arm = root + Rz90·(0,10,0) = (1,2,3);
  //   tip = arm + Rz90·Rx90·(0,5,0) = arm + Rz90·(0,0,5) = (1,2,8).
  m = model_at(a, 0.5);
  expect_near(m[0].translation_part(), {11, 2, 3}, 1e-12);
  expect_near(m[1].translation_part(), {1, 2, 3}, 1e-12);
  const Vec3 tip = m[1].transform_point(a.bvh_layout[1].end_site);
  expect_near(tip, {1, 2, 8}, 1e-12);
}

TEST(Bvh, RotationChannelsComposeInListedOrder) {
  for (EulerOrder order : {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ, EulerOrder::YZX,
                           EulerOrder::ZXY, EulerOrder::ZYX}) {
    const auto axes = euler_axes(order);
    const Vec3 angles_deg{30, -50, 70};
    std::string channels, values;
    for (int ax : axes) {
      channels += std::string(" ") + char('X' + ax) + "rotation";
      values += " " + std::to_string(angles_deg[ax]);
    }
    const std::string text = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3" + channels +
                             "\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n" + values + "\n";
    const Asset a = parse_bvh(text, "order.bvh", metres());
    const Quat expected = quat_from_euler(angles_deg * kDeg, order);
    EXPECT_LT(angle_between(a.clips[0].tracks[0].rotation.values[0], expected), 1e-12)
        << to_string(order);
    EXPECT_TRUE(a.clips[0].tracks[0].translation.empty());
  }
}

TEST(Bvh, PositionChannelsAfterRotationsAndOnChildren) {
  // Unusual layout: rotations first, then positions, on a child joint too. The root's channels
  // (1, 2, 3) fit neither reading of its OFFSET (0, 1, 0) (ratio 2) and add by the rule for
  // roots; the child's sit near zero (ratio 0.125) and add as a displacement.
  const std::string text =
      "HIERARCHY\nROOT a\n{\n\tOFFSET 0 1 0\n"
      "\tCHANNELS 6 Yrotation Xrotation Zrotation Zposition Xposition Yposition\n"
      "\tJOINT b\n\t{\n\t\tOFFSET 0 2 0\n\t\tCHANNELS 4 Xrotation Xposition Yposition Zposition\n"
      "\t}\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n90 0 0 3 1 2 0 0.5 0.25 0.125\n";
  const Asset a = parse_bvh(text, "layout.bvh", metres());
  const Clip& c = a.clips[0];
  expect_near(c.tracks[0].translation.values[0], {1, 1 + 2, 3}, 1e-12);
  EXPECT_LT(
      angle_between(c.tracks[0].rotation.values[0], Quat::from_axis_angle({0, 1, 0}, 90 * kDeg)),
      1e-12);
  expect_near(c.tracks[1].translation.values[0], {0.5, 2.25, 0.125}, 1e-12);
  EXPECT_EQ(a.bvh_layout[0].translation_basis, BvhTranslationBasis::Rule);
  EXPECT_EQ(a.bvh_layout[1].translation, BvhTranslation::Add);
  EXPECT_EQ(a.bvh_layout[1].translation_basis, BvhTranslationBasis::Measured);
  EXPECT_EQ(a.bvh_layout[1].channels,
            (std::vector<std::string>{"Xrotation", "Xposition", "Yposition", "Zposition"}));
}

TEST(Bvh, ZeroChannelJointsAndRotationOnlyRoot) {
  const std::string text =
      "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT fixed\n{\nOFFSET 1 0 0\nCHANNELS 0\nJOINT tip\n{\nOFFSET 1 0 0\n"
      "CHANNELS 1 Yrotation\n}\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 10\n0 0 90 20\n";
  const Asset a = parse_bvh(text, "few.bvh", metres());
  ASSERT_EQ(a.skeleton.joint_count(), 3);
  EXPECT_TRUE(a.clips[0].tracks[0].translation.empty());
  EXPECT_TRUE(a.clips[0].tracks[1].empty());
  EXPECT_LT(angle_between(a.clips[0].tracks[2].rotation.values[1],
                          Quat::from_axis_angle({0, 1, 0}, 20 * kDeg)),
            1e-12);
}

TEST(Bvh, MultipleRoots) {
  const std::string text =
      "HIERARCHY\n"
      "ROOT one\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
      "Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n"
      "ROOT two\n{\nOFFSET 5 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
      "Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n"
      "MOTION\nFrames: 1\nFrame Time: 0.1\n1 0 0 0 0 0 2 0 0 0 0 0\n";
  const Asset a = parse_bvh(text, "two.bvh", metres());
  ASSERT_EQ(a.skeleton.roots().size(), 2u);
  expect_near(a.clips[0].tracks[0].translation.values[0], {1, 0, 0}, 0);
  expect_near(a.clips[0].tracks[1].translation.values[0], {7, 0, 0}, 0);
}

TEST(Bvh, CrlfAndLfReadTheSame) {
  std::string crlf;
  for (const char* p = kArm; *p; ++p) {
    if (*p == '\n') crlf += '\r';
    crlf += *p;
  }
  const Asset a = parse_bvh(kArm, "arm.bvh", metres());
  const Asset b = parse_bvh(crlf, "arm.bvh", metres());
  ASSERT_EQ(b.skeleton.joint_count(), 2);
  for (size_t f = 0; f < 2; ++f) {
    expect_near(a.clips[0].tracks[0].translation.values[f],
                b.clips[0].tracks[0].translation.values[f], 0);
    EXPECT_EQ(a.clips[0].tracks[1].rotation.values[f], b.clips[0].tracks[1].rotation.values[f]);
  }
  // Errors in a CRLF file still name the right line.
  try {
    parse_bvh(replace(crlf, "0 10 0", "0 x 0"), "crlf.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "line 8");
  }
}

TEST(Bvh, UnitOptionOverridesDetection) {
  BvhReadOptions o;
  o.unit_in_meters = 0.01;
  const Asset a = read_bvh(kCmuWalk, o);
  EXPECT_FALSE(a.source.unit_detected);
  EXPECT_EQ(a.source.unit_name, "cm");
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 0.01);
  expect_near(a.skeleton.joint(a.skeleton.find("LeftUpLeg")).rest.translation,
              Vec3{0.0136306, -0.0179463, 0.0083929}, 1e-12);
}

TEST(Bvh, DetectUnitRanges) {
  std::string name;
  EXPECT_DOUBLE_EQ(*bvh_detect_unit(1.75, &name), 1.0);
  EXPECT_EQ(name, "m");
  EXPECT_DOUBLE_EQ(*bvh_detect_unit(175, &name), 0.01);
  EXPECT_EQ(name, "cm");
  EXPECT_DOUBLE_EQ(*bvh_detect_unit(69, &name), 0.0254);
  EXPECT_EQ(name, "inch");
  EXPECT_NEAR(*bvh_detect_unit(31, &name), 0.05644, 1e-5);
  EXPECT_EQ(name, "cmu-asf");
  EXPECT_DOUBLE_EQ(*bvh_detect_unit(1750, &name), 0.001);
  EXPECT_EQ(name, "mm");
  EXPECT_FALSE(bvh_detect_unit(10));
  EXPECT_FALSE(bvh_detect_unit(0.2));
  EXPECT_FALSE(bvh_detect_unit(500));
  EXPECT_FALSE(bvh_detect_unit(1e6));
  EXPECT_FALSE(bvh_detect_unit(std::nan("")));
}

TEST(Bvh, UndetectableUnitWarnsAndAssumesMetres) {
  const Asset a = parse_bvh(replace(kArm, "OFFSET 0 5 0", "OFFSET 0 500 0"), "big.bvh");
  EXPECT_FALSE(a.source.unit_detected);
  EXPECT_DOUBLE_EQ(a.source.unit_in_meters, 1.0);
  ASSERT_EQ(a.source.warnings.size(), 1u);
  EXPECT_NE(a.source.warnings[0].find("unit"), std::string::npos);
}

TEST(Bvh, ZeroFramesGiveAnEmptyClip) {
  const std::string text = replace(replace(kArm, "Frames: 2", "Frames: 0"),
                                   "0 0 0 0 0 0 0 0 0\n10 0 0 90 0 0 0 90 0\n", "");
  const Asset a = parse_bvh(text, "none.bvh", metres());
  EXPECT_EQ(a.clips[0].key_count(), 0u);
  EXPECT_EQ(a.clips[0].duration, 0.0);
}

TEST(Bvh, TextAfterTheDeclaredFramesIsIgnoredWithAWarning) {
  const Asset a = parse_bvh(std::string(kArm) + "1 2 3 4 5 6 7 8 9\n", "extra.bvh", metres());
  EXPECT_EQ(a.clips[0].frame_count(), 2);
  ASSERT_EQ(a.source.warnings.size(), 1u);
  EXPECT_NE(a.source.warnings[0].find("line 21"), std::string::npos) << a.source.warnings[0];
}

// ---- hostile input -------------------------------------------------------------------------

TEST(BvhHostile, EmptyFile) {
  expect_error("", 1, "empty");
  expect_error("   \n\n", 1, "empty");
}

TEST(BvhHostile, BinaryGarbage) {
  std::string garbage;
  std::mt19937 rng(7);
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>(rng() & 0xFF);
  try {
    parse_bvh(garbage, "garbage.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().rfind("line ", 0), 0u) << e.what();
  }
  expect_error(std::string("\x7f"
                           "ELF\x02\x01\x01\0\0\0",
                           10),
               1, "not a BVH file");
}

TEST(BvhHostile, TruncatedFiles) {
  expect_error("HIERARCHY\nROOT root\n{\n  OFFSET 1 2", 4, "end of file");
  expect_error(
      replace(kArm, "MOTION\nFrames: 2\nFrame Time: 0.5\n0 0 0 0 0 0 0 0 0\n10 0 0 90 0 0 0 90 0\n",
              ""),
      16, "expected 'MOTION'");
  // Only one of the two frames: the error names the last line.
  const std::string padded = replace(kArm, "0 0 0 0 0 0 0 0 0\n",
                                     std::string(9, ' ') +
                                         "0.0000000 0.0000000 0.0000000 0.0000000 0.0000000 "
                                         "0.0000000 0.0000000 0.0000000 0.0000000\n");
  expect_error(replace(padded, "10 0 0 90 0 0 0 90 0\n", ""), 20, "1 of 2 frames");
  // Far too few bytes for the frames the header claims: caught before reading them.
  expect_error(replace(kArm, "10 0 0 90 0 0 0 90 0\n", ""), 17, "only 18 bytes follow");
  // A real file cut in the middle of its motion.
  const std::string walk = read_file(kCmuWalk);
  for (double cut : {0.3, 0.55, 0.9, 0.999}) {
    try {
      parse_bvh(walk.substr(0, static_cast<size_t>(cut * static_cast<double>(walk.size()))),
                "cut.bvh");
      ADD_FAILURE() << cut;
    } catch (const Error& e) {
      EXPECT_EQ(e.place().rfind("line ", 0), 0u) << e.what();
    }
  }
  expect_error(replace(kArm, "Frame Time: 0.5\n0 0 0 0 0 0 0 0 0\n10 0 0 90 0 0 0 90 0\n", ""), 18,
               "Frame Time");
}

TEST(BvhHostile, EveryPrefixOfAFileFailsCleanlyOrParses) {
  const std::string text = kArm;
  for (size_t n = 0; n < text.size(); ++n) {
    try {
      parse_bvh(text.substr(0, n), "prefix.bvh", metres());
      // Only a prefix that still holds both frames may parse.
      EXPECT_GE(n, text.size() - 2) << n;
    } catch (const Error& e) {
      EXPECT_EQ(e.place().rfind("line ", 0), 0u) << e.what();
    }
  }
}

TEST(BvhHostile, RandomByteEditsNeverCrash) {
  std::mt19937 rng(12345);
  const std::string text = kArm;
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) t[rng() % t.size()] = static_cast<char>(rng() & 0xFF);
    try {
      parse_bvh(t, "fuzz.bvh", metres());
    } catch (const Error&) {
    }
  }
}

TEST(BvhHostile, WrongValueCountPerFrameLine) {
  expect_error(replace(kArm, "10 0 0 90 0 0 0 90 0", "10 0 0 90 0 0 0 90"), 20, "has 8 values");
  expect_error(replace(kArm, "10 0 0 90 0 0 0 90 0", "10 0 0 90 0 0 0 90 0 7"), 20,
               "more than the 9");
  const std::string padded = replace(kArm, "10 0 0 90 0 0 0 90 0\n",
                                     "10.0000000 0.0000000 0.0000000 90.0000000 0.0000000 "
                                     "0.0000000 0.0000000 90.0000000 0.0000000\n");
  expect_error(replace(padded, "0 0 0 0 0 0 0 0 0\n", "\n"), 21, "1 of 2 frames");
}

TEST(BvhHostile, NanAndInf) {
  expect_error(replace(kArm, "10 0 0 90", "10 nan 0 90"), 20, "not finite");
  expect_error(replace(kArm, "10 0 0 90", "10 0 inf 90"), 20, "not finite");
  expect_error(replace(kArm, "10 0 0 90", "10 0 1e999 90"), 20, "not");
  expect_error(replace(kArm, "OFFSET 0 10 0", "OFFSET 0 NaN 0"), 8, "not a finite number");
  expect_error(replace(kArm, "OFFSET 0 5 0", "OFFSET -Infinity 5 0"), 12, "not a finite number");
  expect_error(replace(kArm, "Frame Time: 0.5", "Frame Time: nan"), 18, "frame time");
  expect_error(replace(kArm, "10 0 0 90", "10 0 abc 90"), 20, "not a number");
}

TEST(BvhHostile, MissingBraces) {
  expect_error(replace(kArm, "  JOINT arm\n  {\n", "  JOINT arm\n"), 7, "expected '{'");
  expect_error(replace(kArm, "    }\n  }\n}\n", "    }\n  }\n"), 15, "missing '}'");
  expect_error(replace(kArm, "}\nMOTION", "}\n}\nMOTION"), 16, "unmatched '}'");
  // The End Site borrows the arm's '}', so the root is left open when MOTION comes.
  expect_error(replace(kArm, "      OFFSET 0 5 0\n    }\n", "      OFFSET 0 5 0\n"), 15,
               "missing '}'");
}

TEST(BvhHostile, UnknownOrRepeatedChannel) {
  expect_error(replace(kArm, "CHANNELS 3 Zrotation Xrotation Yrotation",
                       "CHANNELS 3 Zrotation Wrotation Yrotation"),
               9, "unknown channel 'Wrotation'");
  expect_error(replace(kArm, "CHANNELS 3 Zrotation Xrotation Yrotation",
                       "CHANNELS 3 Zrotation Zrotation Yrotation"),
               9, "repeated");
  expect_error(replace(kArm, "CHANNELS 3 Zrotation", "CHANNELS 99 Zrotation"), 9, "channel count");
  expect_error(replace(kArm, "CHANNELS 3 Zrotation", "CHANNELS -1 Zrotation"), 9, "channel count");
}

TEST(BvhHostile, AbsurdFrameCountIsRejectedBeforeAllocating) {
  expect_error(replace(kArm, "Frames: 2", "Frames: 1000000000"), 17, "1000000000 frames");
  expect_error(replace(kArm, "Frames: 2", "Frames: 9223372036854775807"), 17, "frames");
  expect_error(replace(kArm, "Frames: 2", "Frames: 99999999999999999999999"), 17, "frame count");
  expect_error(replace(kArm, "Frames: 2", "Frames: -3"), 17, "frame count");
}

TEST(BvhHostile, NegativeOrZeroFrameTime) {
  expect_error(replace(kArm, "Frame Time: 0.5", "Frame Time: 0"), 18, "positive");
  expect_error(replace(kArm, "Frame Time: 0.5", "Frame Time: -0.01"), 18, "positive");
}

TEST(BvhHostile, StructureErrors) {
  expect_error(replace(kArm, "ROOT root", "JOINT root"), 2, "outside any ROOT");
  expect_error(replace(kArm, "JOINT arm", "JOINT root"), 6, "duplicate joint name");
  expect_error(replace(kArm, "JOINT arm", "JOINT"), 6, "without a name");
  expect_error(replace(kArm, "    OFFSET 0 10 0\n", ""), 6, "no OFFSET");
  expect_error(replace(kArm, "Frames: 2", "Frame: 2"), 17, "Frames:");
  expect_error(replace(kArm, "  OFFSET 1 2 3\n", "  OFFSET 1 2 3\n  OFFSET 1 2 3\n"), 5,
               "two OFFSETs");
  expect_error(replace(kArm, "End Site", "End Sight"), 10, "End Site");
  expect_error(replace(kArm, "JOINT arm", "BONE arm"), 6, "unexpected 'BONE'");
}

TEST(BvhHostile, DeepNesting) {
  // 300 levels parse (a long chain is legal)…
  auto chain = [](int depth) {
    std::string s = "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 0\n";
    for (int i = 1; i < depth; ++i) s += "JOINT j" + std::to_string(i) + "\n{\nOFFSET 0 0.001 0\n";
    for (int i = 1; i < depth; ++i) s += "}\n";
    return s + "}\nMOTION\nFrames: 1\nFrame Time: 0.1\n\n";
  };
  EXPECT_EQ(parse_bvh(chain(300), "deep.bvh", metres()).skeleton.joint_count(), 300);
  // …100 000 levels are refused with the line where the limit is crossed, without recursion.
  std::string s = "HIERARCHY\nROOT j0\n{\n";
  for (int i = 1; i < 100000; ++i) s += "JOINT j" + std::to_string(i) + "\n{\n";
  expect_error(s, 3 + 2 * 512 - 1, "nested deeper");
}

}  // namespace
}  // namespace kinema
