// The clean job (kinema/pipeline/clean.h): the demo walk retargeted onto the demo character and
// cleaned (the outputs, the report, the body and legs left alone, frames inside not increased);
// bad inputs (a clip for another skeleton, visibility of the wrong length, a character without
// skin weights on the torso) refused with a clear error, no output files and the input
// untouched; the visibility reader and the choice of the worst frames.
#include "kinema/pipeline/clean.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/gltf.h"
#include "kinema/pipeline/retarget.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/skeleton/skeleton.h"
#include "pipeline/pipeline_test_util.h"

namespace kinema {
namespace {

using pipeline::CleanRequest;
using pipeline::CleanResult;

const std::string kWalk = test::kDemo + "/walk.bvh";
const std::string kCharacter = test::kDemo + "/character.vrm";

class Clean : public test::PipelineTest {
 protected:
  /// The demo walk retargeted onto the demo character, as a GLB in the scratch folder.
  std::string retargeted() {
    pipeline::RetargetRequest rq;
    rq.in = kWalk;
    rq.onto = kCharacter;
    rq.out = path("walk_on_character.glb");
    pipeline::retarget_file(rq);
    return rq.out;
  }
  CleanRequest request(const std::string& in) {
    CleanRequest rq;
    rq.in = in;
    rq.character = kCharacter;
    rq.out = path("clean.glb");
    rq.report = path("clean.json");
    rq.plot = path("depth.png");
    return rq;
  }
  /// Runs the job expecting kinema::Error; returns it.
  Error refused(const CleanRequest& rq) {
    try {
      pipeline::clean_file(rq);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "clean_file accepted the request";
    return Error("", "", "");
  }
};

/// True for the shoulders, the arms and everything that hangs from them (hands, fingers, helper
/// joints the map does not name): what clearing the arms may move.
bool in_an_arm(const Skeleton& skeleton, const Humanoid& map, int joint) {
  for (int j = joint; j >= 0; j = skeleton.parent(j))
    for (const char* bone : {"leftShoulder", "rightShoulder", "leftUpperArm", "rightUpperArm"})
      if (map.find(bone) == j) return true;
  return false;
}

TEST_F(Clean, CleansTheRetargetedWalkAndLeavesTheBodyAlone) {
  const std::string in = retargeted();
  const std::string in_bytes = read_file(in);
  CleanRequest rq = request(in);
  rq.preview = path("preview.png");
  rq.preview_optional = true;  // no OpenGL here: the rest is still written
  const CleanResult r = pipeline::clean_file(rq);

  EXPECT_EQ(read_file(in), in_bytes);
  const ArmClearanceResult& c = r.clearance;
  ASSERT_GT(c.frames, 10);
  EXPECT_GT(r.matched_joints, 20);
  for (const ArmClearanceMetrics& arm : c.arms) {
    EXPECT_EQ(long(arm.depth_before_m.size()), c.frames);
    EXPECT_EQ(long(arm.depth_after_m.size()), c.frames);
    // The walk's arms swing through the skirt: most frames start inside, almost none end there.
    EXPECT_GT(arm.frames_inside_before, c.frames / 4);
    EXPECT_LE(arm.frames_inside_after * 4, arm.frames_inside_before);
    EXPECT_LE(arm.jerk_p99_after_mm, arm.jerk_p99_before_mm + 1);  // no rougher than the input
    // Not switches ≤ per-frame switches: the path minimizes motion, not switches, and in a walk
    // a mostly sideways push may lean a centimetre back between two forward ones.
  }
  EXPECT_GT(c.body_vertices, 0u);
  EXPECT_TRUE(c.clip.tracks.empty());  // moved into written

  // What was written reads back as the character with one clip; outside the arms every joint
  // is where the input put it.
  const Asset out = load_asset(rq.out);
  ASSERT_EQ(out.clips.size(), 1u);
  EXPECT_EQ(out.skeleton.joint_count(), r.written.skeleton.joint_count());
  const Asset input = load_asset(in);
  const Humanoid map = require_humanoid(r.written, kCharacter);
  for (long f = 0; f < c.frames; f += 17) {
    const double t = double(f) / c.rate;
    const auto a = sample_model_pose(input.clips[0], input.skeleton, t);
    const auto b = sample_model_pose(out.clips[0], out.skeleton, t);
    for (int j = 0; j < out.skeleton.joint_count(); ++j) {
      if (in_an_arm(out.skeleton, map, j)) continue;
      EXPECT_LT(distance(a[size_t(j)].translation_part(), b[size_t(j)].translation_part()), 1e-4)
          << out.skeleton.joint(j).name << " at frame " << f;
    }
  }

  const nlohmann::json report = nlohmann::json::parse(read_file(rq.report));
  EXPECT_EQ(report["frames"].get<long>(), c.frames);
  for (const char* hand : {"left", "right"}) {
    const auto& arm = report["arms"][hand];
    for (const char* key : {"frames_inside_before", "frames_inside_after", "switches_per_frame",
                            "switches", "jerk_peak_before_mm", "jerk_p99_after_mm", "added_mean_mm",
                            "added_max_mm", "acceleration_limit"})
      EXPECT_TRUE(arm.contains(key)) << hand << " " << key;
  }
  EXPECT_TRUE(report["clasped_hands"].contains("frames"));
  EXPECT_TRUE(report["timings_s"].contains("candidates"));
  EXPECT_EQ(read_file(rq.plot).substr(1, 3), "PNG");
  EXPECT_LE(r.preview_frame_indices.size(), 4u);
  if (r.preview_skipped.empty()) {
    EXPECT_EQ(read_file(rq.preview).substr(1, 3), "PNG");
  }
}

TEST_F(Clean, ASalsaHandThroughTheSkirtIsClearedWithoutAJoltOnlyWithTheAccelerationLimit) {
  // 2.8 s of a CMU salsa dancer on Godette: the left hand sweeps through skirt and thighs, where
  // clearing a 12 mm penetration takes a 17 cm push. Without the limit the pushed wrist's p99
  // second difference jumps from 29 to 181 mm/frame²; with it it stays within 0.5 mm/frame² of
  // the input's (the issue's check: 1) and the frames left inside stay few.
  pipeline::RetargetRequest retarget;
  retarget.in = test::kData + "/bvh/cmu_daz_acrnn/salsa_20_excerpt_30fps.bvh";
  retarget.onto = test::kData + "/vrm/Godette_vrm_v4.vrm";
  retarget.out = path("salsa_on_godette.glb");
  pipeline::retarget_file(retarget);
  CleanRequest rq;
  rq.in = retarget.out;
  rq.character = retarget.onto;
  rq.out = path("salsa_clean.glb");
  rq.options.limit_acceleration = false;
  const CleanResult unlimited = pipeline::clean_file(rq);
  rq.options.limit_acceleration = true;
  const CleanResult limited = pipeline::clean_file(rq);
  const ArmClearanceMetrics& before = unlimited.clearance.arms[0];
  const ArmClearanceMetrics& after = limited.clearance.arms[0];
  EXPECT_GT(before.jerk_p99_after_mm, before.jerk_p99_before_mm + 50);
  EXPECT_EQ(before.limit.frames_changed, 0);
  for (const ArmClearanceMetrics& arm : limited.clearance.arms) {
    EXPECT_LE(arm.jerk_p99_after_mm, arm.jerk_p99_before_mm + 0.5 + 1e-6);
    EXPECT_LE(arm.jerk_peak_after_mm,
              std::max(arm.jerk_peak_before_mm, arm.limit.bound_m * 1000) + 1e-3);
    EXPECT_LE(arm.limit.max_violation_m, 1e-6);
    EXPECT_LE(arm.frames_inside_after * 4, arm.frames_inside_before);
  }
  EXPECT_GT(after.limit.frames_changed, 0);
  EXPECT_GT(after.frames_inside_before, 20);
}

TEST_F(Clean, AVrmaIsMovedOntoTheCharacterByBoneAndWrittenBackAsVrma) {
  // A VRM Animation needs a VRM 1.0 avatar: the demo character (VRM 0.x) written as 1.0.
  const std::string avatar = path("character1.vrm");
  GltfWriteOptions options;
  options.binary = true;
  options.vrm = true;
  write_gltf(load_asset(kCharacter), avatar, options);
  pipeline::RetargetRequest walk;
  walk.in = kWalk;
  walk.onto = avatar;
  walk.out = path("walk.vrma");
  pipeline::retarget_file(walk);

  CleanRequest rq = request(walk.out);
  rq.character = avatar;
  rq.out = path("clean.vrma");
  const CleanResult r = pipeline::clean_file(rq);
  EXPECT_GE(r.matched_joints, 15);  // humanoid bones both sides map
  const Asset back = load_asset(rq.out);
  ASSERT_EQ(back.clips.size(), 1u);
  EXPECT_NEAR(back.clips[0].duration, load_asset(walk.out).clips[0].duration, 1e-3);
  for (const ArmClearanceMetrics& arm : r.clearance.arms)
    EXPECT_LE(arm.frames_inside_after, arm.frames_inside_before);
}

TEST_F(Clean, AClipForAnotherSkeletonIsRefusedNamingItsJoints) {
  CleanRequest rq = request(kWalk);  // the CMU skeleton, not the character's
  const Error e = refused(rq);
  EXPECT_EQ(e.file(), kWalk);
  const Asset walk = load_asset(kWalk);
  EXPECT_NE(std::string(e.what()).find(walk.skeleton.joint(1).name), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("another skeleton"), std::string::npos) << e.what();
  EXPECT_EQ(file_count(), 0u);
}

TEST_F(Clean, VisibilityOfTheWrongLengthIsRefusedNamingTheHandAndBothLengths) {
  const std::string in = retargeted();
  const std::string in_bytes = read_file(in);
  const long frames = load_asset(in).clips[0].frame_count();
  CleanRequest rq = request(in);
  rq.visibility = path("visibility.json");
  nlohmann::json v{{"left", std::vector<double>(size_t(frames), 1.0)},
                   {"right", std::vector<double>(size_t(frames) - 5, 0.0)}};
  write_file_atomically(rq.visibility, v.dump());
  const Error e = refused(rq);
  EXPECT_EQ(e.file(), rq.visibility);
  const std::string what = e.what();
  EXPECT_NE(what.find("right"), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(frames - 5)), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(frames)), std::string::npos) << what;
  EXPECT_EQ(file_count(), 2u);  // the input and the visibility file: nothing written
  EXPECT_EQ(read_file(in), in_bytes);
}

// Hand visibility from the footage and a camera 4 m out along +Z: with the hands seen, the
// camera's side is preferred, so the wrists end up further towards +Z than without the evidence;
// a visibility file for one hand alone is taken for that hand.
TEST_F(Clean, SeenHandsLeanTowardsTheCameraSide) {
  const std::string in = retargeted();
  const long frames = load_asset(in).clips[0].frame_count();
  auto mean_towards_camera_mm = [&](const CleanRequest& rq) {
    const CleanResult r = pipeline::clean_file(rq);
    const Asset input = load_asset(in);
    const Humanoid map = require_humanoid(r.written, kCharacter);
    double sum = 0;
    for (const char* hand : {"leftHand", "rightHand"}) {
      const int j = map.find(hand);
      for (long f = 0; f < frames; ++f) {
        const double t = double(f) / r.clearance.rate;
        const auto a = sample_model_pose(input.clips[0], input.skeleton, t);
        const auto b = sample_model_pose(r.written.clips[0], r.written.skeleton, t);
        sum += 1000 * (b[size_t(j)].translation_part().z - a[size_t(j)].translation_part().z);
      }
    }
    return sum / double(2 * frames);
  };
  CleanRequest plain = request(in);
  const double without = mean_towards_camera_mm(plain);
  CleanRequest seen = request(in);
  seen.out = path("seen.glb");
  seen.report.clear();
  seen.plot.clear();
  seen.visibility = path("visibility.json");
  seen.camera = Vec3{0, 1, 4};
  write_file_atomically(seen.visibility,
                        nlohmann::json{{"left", std::vector<double>(size_t(frames), 1.0)},
                                       {"right", std::vector<double>(size_t(frames), 1.0)}}
                            .dump());
  EXPECT_GT(mean_towards_camera_mm(seen), without + 1.0);
  write_file_atomically(seen.visibility,
                        nlohmann::json{{"left", std::vector<double>(size_t(frames), 1.0)}}.dump());
  EXPECT_NO_THROW(pipeline::clean_file(seen));
}

TEST_F(Clean, ACharacterWithoutSkinWeightsOnTheTorsoIsRefused) {
  const std::string in = retargeted();
  // The character with every vertex bound to its left hand: no body surface to push out of.
  Asset character = load_asset(kCharacter);
  const int hand = require_humanoid(character, kCharacter).find("leftHand");
  ASSERT_GE(hand, 0);
  int skinned = 0;
  for (Mesh& mesh : character.meshes) {
    if (mesh.skin < 0 || mesh.influences == 0) continue;
    const std::vector<int>& joints = character.skins[size_t(mesh.skin)].joints;
    const auto it = std::find(joints.begin(), joints.end(), hand);
    if (it == joints.end()) continue;
    for (size_t v = 0; v < mesh.vertex_count(); ++v)
      for (int k = 0; k < mesh.influences; ++k) {
        const size_t i = v * size_t(mesh.influences) + size_t(k);
        mesh.joints[i] = uint16_t(it - joints.begin());
        mesh.weights[i] = k == 0 ? 1.0f : 0.0f;
      }
    ++skinned;
  }
  ASSERT_GT(skinned, 0);
  const std::string armless = path("all_on_the_hand.vrm");
  GltfWriteOptions options;
  options.binary = true;
  options.vrm = true;
  write_gltf(character, armless, options);

  CleanRequest rq = request(in);
  rq.character = armless;
  const Error e = refused(rq);
  EXPECT_EQ(e.file(), armless) << e.what();
  EXPECT_NE(std::string(e.what()).find("torso"), std::string::npos) << e.what();
  EXPECT_EQ(file_count(), 2u);  // the input and the character: nothing written
}

TEST_F(Clean, OutputsThatAreInputsOrWrittenTwiceAreUsageErrors) {
  CleanRequest rq = request(kWalk);
  rq.plot = kWalk;
  EXPECT_THROW(pipeline::clean_file(rq), UsageError);
  rq.plot = rq.report;
  EXPECT_THROW(pipeline::clean_file(rq), UsageError);
  rq = request(kWalk);
  rq.out = path("clean.png");
  EXPECT_THROW(pipeline::clean_file(rq), UsageError);
  EXPECT_EQ(file_count(), 0u);
}

TEST_F(Clean, VisibilityFilesAreReadAndCheckedValueByValue) {
  const std::string p = path("v.json");
  write_file_atomically(p, R"({"left": [0, 0.5, 1]})");
  const auto v = pipeline::read_visibility(p, 3);
  EXPECT_EQ(v[0], (std::vector<double>{0, 0.5, 1}));
  EXPECT_TRUE(v[1].empty());  // no evidence for the right hand
  EXPECT_THROW(pipeline::read_visibility(p, 4), Error);
  for (const char* bad : {R"([0, 1])", R"({"left": [0, 1.5]})", R"({"right": "seen"})",
                          R"({"left": [0, null]})", R"({})", R"({"left": [0, )"}) {
    write_file_atomically(p, bad);
    try {
      pipeline::read_visibility(p, 0);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), p) << bad;
    }
  }
  write_file_atomically(p, R"({"left": [0, 1.5]})");
  try {
    pipeline::read_visibility(p, 0);
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "/left/1");
  }
}

TEST(CleanWorstFrames, DeepestFirstApartAndInTimeOrder) {
  std::array<std::vector<double>, 2> depth{std::vector<double>(100, 0.0),
                                           std::vector<double>(100, 0.0)};
  depth[0][50] = 0.09;
  depth[1][52] = 0.08;  // within 10 frames of 50: skipped
  depth[1][20] = 0.05;
  depth[0][90] = 0.03;
  depth[0][5] = 0.02;
  EXPECT_EQ(pipeline::worst_frames(depth, 4, 10), (std::vector<long>{5, 20, 50, 90}));
  EXPECT_EQ(pipeline::worst_frames(depth, 2, 10), (std::vector<long>{20, 50}));
  EXPECT_EQ(pipeline::worst_frames(depth, 2, 1), (std::vector<long>{50, 52}));
  const auto few = pipeline::worst_frames({std::vector<double>(3, 0.0), {}}, 4, 10);
  EXPECT_EQ(few, (std::vector<long>{0}));
}

}  // namespace
}  // namespace kinema
