// Joint limits read from JSON: hinges, circular and elliptical swing–twist limits by joint or
// humanoid name, and each malformed file refused at its place.
#include "kinema/retarget/joint_limits_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace kinema {
namespace {

const Asset& godette() {
  static const Asset a = load_asset(test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm");
  return a;
}

constexpr double kDeg = std::numbers::pi / 180;

TEST(JointLimitsFile, ReadsHingesAndConesByJointOrHumanoidName) {
  const Asset& a = godette();
  const std::vector<JointLimit> limits = parse_joint_limits(R"({
    "leftLowerLeg": {"hinge": [2, 0, 0], "range": [0, 150]},
    "upper_arm.l_Armature": {"twist_axis": [1, 0, 0], "swing": 80, "twist": [-60, 60]},
    "spine": {"twist_axis": [0, 1, 0], "swing_axis": [1, 0, 0], "swing": [20, 35],
              "twist": [-20, 20]}})",
                                                            a, "limits.json");
  ASSERT_EQ(limits.size(), size_t(a.skeleton.joint_count()));
  const JointLimit& knee = limits[size_t(a.humanoid->find("leftLowerLeg"))];
  ASSERT_EQ(knee.kind, JointLimit::Kind::kHinge);
  EXPECT_DOUBLE_EQ(knee.hinge.axis.x, 1);  // normalized
  EXPECT_NEAR(knee.hinge.max_angle, 150 * kDeg, 1e-12);
  const JointLimit& arm = limits[size_t(a.skeleton.find("upper_arm.l_Armature"))];
  ASSERT_EQ(arm.kind, JointLimit::Kind::kSwingTwist);
  EXPECT_NEAR(arm.swing_twist.swing_a, 80 * kDeg, 1e-12);
  EXPECT_NEAR(arm.swing_twist.swing_b, 80 * kDeg, 1e-12);
  EXPECT_NEAR(arm.swing_twist.twist_min, -60 * kDeg, 1e-12);
  const JointLimit& spine = limits[size_t(a.humanoid->find("spine"))];
  EXPECT_NEAR(spine.swing_twist.swing_b, 35 * kDeg, 1e-12);
  size_t limited = 0;
  for (const JointLimit& l : limits) limited += l.kind != JointLimit::Kind::kNone;
  EXPECT_EQ(limited, 3u);
}

void expect_refused(const std::string& text, const std::string& place, const std::string& words) {
  try {
    parse_joint_limits(text, godette(), "limits.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "limits.json");
    EXPECT_EQ(e.place(), place) << text;
    EXPECT_NE(e.reason().find(words), std::string::npos) << e.reason();
  }
}

TEST(JointLimitsFile, MalformedFilesAreRefusedAtTheirPlace) {
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [0, 150]})", "line 1, column 57",
                 "malformed JSON");
  expect_refused("{\n  \"tail\": {}\n}", "/tail", "no joint or humanoid bone named \"tail\"");
  expect_refused(R"([1, 2])", "/", "JSON object");
  expect_refused(R"({"leftLowerLeg": 3})", "/leftLowerLeg", "a limit is an object");
  expect_refused(R"({"leftLowerLeg": {"hinge": [0, 0, 0], "range": [0, 90]}})",
                 "/leftLowerLeg/hinge", "non-zero axis");
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0], "range": [0, 90]}})", "/leftLowerLeg/hinge",
                 "[x, y, z]");
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [90, 0]}})",
                 "/leftLowerLeg/range", "min is greater than max");
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [0, 400]}})",
                 "/leftLowerLeg/range/1", "between -180 and 180");
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0, 0]}})", "/leftLowerLeg", "\"range\"");
  expect_refused(R"({"leftLowerLeg": {"hinge": [1, 0, 0], "range": [0, 9], "stiff": 1}})",
                 "/leftLowerLeg/stiff", "unknown key");
  expect_refused(R"({"spine": {"twist_axis": [0, 1, 0], "swing": 20}})", "/spine", "\"twist\"");
  expect_refused(R"({"spine": {"twist_axis": [0, 1, 0], "swing": [20, 30], "twist": [0, 1]}})",
                 "/spine", "swing_axis");
  expect_refused(R"({"spine": {"twist_axis": [0, 1, 0], "swing": -5, "twist": [0, 1]}})",
                 "/spine/swing", "≥ 0");
  // The swing axis along the twist axis: the builder's refusal, at the limit's place.
  expect_refused(R"({"spine": {"twist_axis": [0, 1, 0], "swing_axis": [0, 2, 0], "swing": [20, 30],
                               "twist": [0, 1]}})",
                 "/spine", "parallel");
}

}  // namespace
}  // namespace kinema
