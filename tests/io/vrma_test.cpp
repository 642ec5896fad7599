// VRM Animation (.vrma): a clip on the VRM 1.0 debug robot written and read back keeps every
// humanoid bone's model-space rotation and position and the hips' path; expressions and gaze
// round-trip; three-vrm's own test.vrma reads with its humanoid, expression and gaze; bad input
// names the place and writes nothing.
//
// VrmaClientFiles also writes, into $KINEMA_VRMA_CHECK_DIR when set (scripts/
// check_vrma_with_clients.sh), the .vrma of a posed avatar and kinema's evaluated joint positions
// for the real-client comparison; $KINEMA_VRMA_CHECK_AVATAR picks another VRM 1.0 avatar.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/vrma.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kVrm = test_paths::data_dir() + "/vrm/";

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_vrma_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// A 2 s, 30 fps clip that bends every humanoid bone of `avatar` but the eyes (each about its
/// own axis, at its own pace, up to 35°) and walks the hips forward and bobs them.
Clip posed_clip(const Asset& avatar) {
  Clip clip;
  clip.name = "posed";
  clip.duration = 2.0;
  clip.sample_rate = 30;
  clip.tracks.resize(static_cast<size_t>(avatar.skeleton.joint_count()));
  int k = 0;
  for (const auto& [bone, joint] : avatar.humanoid->bones) {
    if (bone == "leftEye" || bone == "rightEye") continue;  // a .vrma gives the eyes to look-at
    auto& track = clip.tracks[static_cast<size_t>(joint)];
    const Transform rest = avatar.skeleton.joint(joint).rest;
    const Vec3 axis = normalize(Vec3{std::sin(1.3 * k), std::cos(0.7 * k), 0.5});
    for (int f = 0; f <= 60; ++f) {
      const double t = f / 30.0;
      track.rotation.times.push_back(t);
      track.rotation.values.push_back(
          rest.rotation * Quat::from_axis_angle(axis, 0.6 * std::sin(2.0 * t + 0.4 * k)));
      if (bone == "hips") {
        track.translation.times.push_back(t);
        track.translation.values.push_back(
            rest.translation + Vec3{0.05 * std::sin(3 * t), 0.03 * std::cos(4 * t), 0.4 * t});
      }
    }
    ++k;
  }
  return clip;
}

struct ModelPoses {
  std::vector<Quat> rotation;
  std::vector<Vec3> position;
};

ModelPoses model_pose(const Asset& a, const Clip& clip, double t) {
  ModelPoses p;
  for (const Mat4& m : sample_model_pose(clip, a.skeleton, t)) {
    p.rotation.push_back(normalize(rotation_of(m)));
    p.position.push_back(m.translation_part());
  }
  return p;
}

bool is_eye(const std::string& bone) { return bone == "leftEye" || bone == "rightEye"; }

TEST(Vrma, RoundTripKeepsBoneRotationsPositionsAndHipsPath) {
  const Asset robot = read_gltf(kVrm + "debug_robot.vrm");
  const Clip clip = posed_clip(robot);
  const std::string out = temp_dir() + "/robot.vrma";
  write_vrma(robot.skeleton, *robot.humanoid, clip, out);
  const VrmaAnimation back = read_vrma(out);
  ASSERT_TRUE(back.asset.humanoid.has_value());
  EXPECT_EQ(back.asset.source.format, "vrma");
  ASSERT_EQ(back.asset.clips.size(), 1u);
  EXPECT_NEAR(back.asset.clips[0].duration, 2.0, 1e-6);
  // Every bone but the eyes (which the format gives to look-at) has a node.
  EXPECT_EQ(back.asset.humanoid->bones.size(), robot.humanoid->bones.size() - 2);
  double worst_angle = 0, worst_distance = 0;
  for (int f = 0; f <= 60; f += 3) {
    const double t = f / 30.0;
    const ModelPoses a = model_pose(robot, clip, t);
    const ModelPoses b = model_pose(back.asset, back.asset.clips[0], t);
    for (const auto& [bone, joint] : robot.humanoid->bones) {
      if (is_eye(bone)) continue;
      const int other = back.asset.humanoid->find(bone);
      ASSERT_GE(other, 0) << bone;
      worst_angle = std::max(worst_angle, angle_between(a.rotation[static_cast<size_t>(joint)],
                                                        b.rotation[static_cast<size_t>(other)]));
      worst_distance = std::max(worst_distance, length(a.position[static_cast<size_t>(joint)] -
                                                       b.position[static_cast<size_t>(other)]));
    }
  }
  EXPECT_LT(worst_angle, 1e-6) << "radians";
  EXPECT_LT(worst_distance, 1e-6) << "metres";
  // The hips moved 0.8 m forward: the path is there, not just the rest.
  const ModelPoses end = model_pose(back.asset, back.asset.clips[0], 2.0);
  const ModelPoses start = model_pose(back.asset, back.asset.clips[0], 0.0);
  const auto hips = static_cast<size_t>(back.asset.humanoid->find("hips"));
  EXPECT_NEAR(end.position[hips].z - start.position[hips].z, 0.8, 1e-6);
}

TEST(Vrma, LoadAssetReadsTheHumanoidOfAVrma) {
  const Asset a = load_asset(kVrm + "test.vrma");
  EXPECT_EQ(a.source.format, "vrma");
  ASSERT_TRUE(a.humanoid.has_value());
  EXPECT_EQ(a.humanoid->bones.size(), 51u);
  EXPECT_EQ(a.skeleton.joint(a.humanoid->find("hips")).name, "hips");
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].duration, 3.0, 1e-6);
}

TEST(Vrma, ReadsExpressionsAndGazeOfThreeVrmsTestFile) {
  const VrmaAnimation v = read_vrma(kVrm + "test.vrma");
  ASSERT_EQ(v.expressions.size(), 1u);
  EXPECT_EQ(v.expressions[0].name, "happy");
  EXPECT_EQ(v.expressions[0].times.size(), 7u);
  for (double w : v.expressions[0].weights) {
    EXPECT_GE(w, 0.0);
    EXPECT_LE(w, 1.0);
  }
  ASSERT_TRUE(v.look_at.has_value());
  EXPECT_EQ(v.look_at->rotation.key_count(), 7u);
}

TEST(Vrma, ExpressionsAndGazeRoundTrip) {
  const Asset robot = read_gltf(kVrm + "debug_robot.vrm");
  VrmaWriteOptions options;
  options.expressions.push_back({"happy", Interpolation::Linear, {0, 1, 2}, {0, 1, 0.25}});
  options.expressions.push_back({"wink", Interpolation::Step, {0, 0.5}, {1, 0}});
  VrmaLookAt look;
  look.offset_from_head = {0, 0.06, 0.02};
  look.rotation.times = {0, 2};
  look.rotation.values = {Quat::identity(), Quat::from_axis_angle({0, 1, 0}, 0.3)};
  options.look_at = look;
  const std::string out = temp_dir() + "/faces.vrma";
  write_vrma(robot.skeleton, *robot.humanoid, posed_clip(robot), out, options);
  const VrmaAnimation back = read_vrma(out);
  ASSERT_EQ(back.expressions.size(), 2u);
  for (const auto& e : back.expressions) {
    const auto& want = e.name == "happy" ? options.expressions[0] : options.expressions[1];
    EXPECT_EQ(e.interpolation, want.interpolation) << e.name;
    ASSERT_EQ(e.weights.size(), want.weights.size()) << e.name;
    for (size_t k = 0; k < e.weights.size(); ++k) EXPECT_NEAR(e.weights[k], want.weights[k], 1e-6);
  }
  ASSERT_TRUE(back.look_at.has_value());
  EXPECT_NEAR(back.look_at->offset_from_head.y, 0.06, 1e-9);
  ASSERT_EQ(back.look_at->rotation.key_count(), 2u);
  EXPECT_LT(angle_between(back.look_at->rotation.values[1], look.rotation.values[1]), 1e-6);
}

TEST(Vrma, ExpressionsFollowTheAvatarsMorphTargetBinds) {
  // Godette is VRM 0.x: her blend-shape groups are read through their VRM 1.0 migration.
  const Asset godette = read_gltf(kVrm + "Godette_vrm_v4.vrm");
  Clip clip;
  clip.duration = 1;
  for (size_t m = 0; m < godette.meshes.size(); ++m) {
    const int targets = static_cast<int>(godette.meshes[m].morph_targets.size());
    if (targets == 0) continue;
    MorphTrack track{static_cast<int>(m), targets, Interpolation::Linear, {0, 1}, {}};
    for (int key = 0; key < 2; ++key)
      for (int i = 0; i < targets; ++i) track.values.push_back(key == 0 ? 0.0 : 0.5);
    clip.morph_tracks.push_back(track);
  }
  ASSERT_FALSE(clip.morph_tracks.empty());
  const auto expressions = vrma_expressions(godette, clip);
  ASSERT_FALSE(expressions.empty());
  for (const auto& e : expressions) {
    EXPECT_NE(e.name.rfind("look", 0), 0u) << "look-at expressions are not animated";
    ASSERT_EQ(e.weights.size(), 2u) << e.name;
    EXPECT_NEAR(e.weights[0], 0.0, 1e-12) << e.name;
    EXPECT_GT(e.weights[1], 0.0) << e.name;
  }
  // A plain glTF has no expressions.
  Asset plain = godette;
  plain.gltf.reset();
  EXPECT_TRUE(vrma_expressions(plain, clip).empty());
}

/// Expects write_vrma to throw an Error whose message contains `place` and to write nothing.
void expect_refused(const Skeleton& s, const Humanoid& h, const Clip& c, const std::string& place,
                    const VrmaWriteOptions& options = {}) {
  const std::string out = temp_dir() + "/bad.vrma";
  try {
    write_vrma(s, h, c, out, options);
    ADD_FAILURE() << "no error for " << place;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(place), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.vrma"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << place;
}

TEST(Vrma, BadInputNamesThePlaceAndWritesNothing) {
  const Asset robot = read_gltf(kVrm + "debug_robot.vrm");
  const Clip good = posed_clip(robot);

  Clip other_skeleton = good;  // a clip for a bigger skeleton
  other_skeleton.tracks.resize(200);
  expect_refused(robot.skeleton, *robot.humanoid, other_skeleton, "200 joint tracks");

  Humanoid no_hips = *robot.humanoid;
  std::erase_if(no_hips.bones, [](const auto& b) { return b.first == "hips"; });
  expect_refused(robot.skeleton, no_hips, good, "hips");

  Clip nan_key = good;
  const auto hips = static_cast<size_t>(robot.humanoid->find("hips"));
  nan_key.tracks[hips].rotation.values[5].x = std::numeric_limits<double>::quiet_NaN();
  expect_refused(robot.skeleton, *robot.humanoid, nan_key, "joint " + std::to_string(hips));

  Humanoid unknown = *robot.humanoid;
  unknown.bones.emplace_back("tail", 0);
  expect_refused(robot.skeleton, unknown, good, "humanoid bone 'tail'");

  Humanoid outside = *robot.humanoid;
  outside.bones.emplace_back("jaw", 500);
  expect_refused(robot.skeleton, outside, good, "humanoid bone 'jaw'");

  VrmaWriteOptions look_expression;
  look_expression.expressions.push_back({"lookUp", Interpolation::Linear, {0}, {1}});
  expect_refused(robot.skeleton, *robot.humanoid, good, "expression 'lookUp'", look_expression);

  VrmaWriteOptions nan_weight;
  nan_weight.expressions.push_back(
      {"happy", Interpolation::Linear, {0, 1}, {0, std::numeric_limits<double>::quiet_NaN()}});
  expect_refused(robot.skeleton, *robot.humanoid, good, "expression 'happy'", nan_weight);
}

TEST(Vrma, ReadRefusesAGltfWithoutTheExtension) {
  EXPECT_THROW(read_vrma(kVrm + "debug_robot.vrm"), Error);
}

// The real-client check's files (see the top of this file): the .vrma of a posed avatar and
// kinema's model-space joint positions at every tenth frame, keyed by joint (node) name.
TEST(VrmaClientFiles, WritesTheAnimationAndKinemasJointPositions) {
  const char* dir_env = std::getenv("KINEMA_VRMA_CHECK_DIR");
  const char* avatar_env = std::getenv("KINEMA_VRMA_CHECK_AVATAR");
  const std::string dir = dir_env ? dir_env : temp_dir();
  const Asset avatar = read_gltf(avatar_env ? avatar_env : kVrm + "debug_robot.vrm");
  ASSERT_EQ(avatar.source.format, "vrm1");
  const Clip clip = posed_clip(avatar);
  write_vrma(avatar.skeleton, *avatar.humanoid, clip, dir + "/posed.vrma");
  nlohmann::json report{{"times", nlohmann::json::array()}, {"samples", nlohmann::json::array()}};
  for (int f = 0; f <= 60; f += 10) {
    const double t = f / 30.0;
    nlohmann::json positions;
    const std::vector<Mat4> model = sample_model_pose(clip, avatar.skeleton, t);
    for (int j = 0; j < avatar.skeleton.joint_count(); ++j) {
      const Vec3 p = model[static_cast<size_t>(j)].translation_part();
      positions[avatar.skeleton.joint(j).name] = {p.x, p.y, p.z};
    }
    report["times"].push_back(t);
    report["samples"].push_back({{"time", t}, {"positions", positions}});
  }
  std::ofstream(dir + "/kinema.json") << report.dump(1);
  EXPECT_TRUE(std::filesystem::exists(dir + "/posed.vrma"));
  EXPECT_EQ(read_vrma(dir + "/posed.vrma").asset.clips.size(), 1u);
}

}  // namespace
}  // namespace kinema
