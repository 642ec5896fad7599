// VRM spring bones: read from VRM 0.x and 1.0 files, simulated as three-vrm simulates them (every
// joint within 1 mm of three-vrm's positions on Godette walking), and the properties the
// algorithm promises: rest stays rest, bone lengths are kept, tails stay out of colliders, a
// centre joint carries the inertia with it.
#include "kinema/physics/spring_bones.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/spring_bones.h"
#include "test_paths.h"

namespace kinema {
namespace {

std::string data(const std::string& name) { return test_paths::data_dir() + "/vrm/" + name; }

/// Largest distance (m) between kinema's joint positions and three-vrm's over every sampled
/// time, and where it happened.
struct Agreement {
  double worst = 0;
  std::string joint;
  double time = 0;
  int samples = 0;
  double swing = 0;  ///< largest distance between a joint and where the clip alone puts it
};

Agreement compare_with_three_vrm(const std::string& fixture, const std::string& reference) {
  const Asset avatar = load_asset(data(fixture));
  std::ifstream in(data(reference));
  const nlohmann::json ref = nlohmann::json::parse(in);
  const double step = ref["step"].get<double>();
  std::map<int, double> time_of_frame;  // three-vrm samples at the first step at or past t
  const auto& times = ref["times"];
  for (size_t i = 0; i < times.size(); ++i)
    time_of_frame[static_cast<int>(std::ceil(times[i].get<double>() / step - 1e-9))] =
        times[i].get<double>();
  const int frames = time_of_frame.rbegin()->first + 1;
  Agreement a;
  pipeline::bake_spring_bones(
      avatar, 0, step, frames, [&](int frame, double, std::span<const Mat4> world) {
        const auto it = time_of_frame.find(frame);
        if (it == time_of_frame.end()) return;
        const size_t sample =
            static_cast<size_t>(std::find(times.begin(), times.end(), it->second) - times.begin());
        const std::vector<Mat4> kinematic = sample_model_pose(
            avatar.clips[0], avatar.skeleton, std::min(frame * step, avatar.clips[0].duration));
        for (int j = 0; j < avatar.skeleton.joint_count(); ++j) {
          const std::string& name = avatar.skeleton.joint(j).name;
          if (!ref["positions"].contains(name)) continue;
          const auto& p = ref["positions"][name][sample];
          const Vec3 theirs{p[0].get<double>(), p[1].get<double>(), p[2].get<double>()};
          const double d = length(world[static_cast<size_t>(j)].translation_part() - theirs);
          if (d > a.worst) a = {d, name, it->second, a.samples, a.swing};
          ++a.samples;
          a.swing = std::max(a.swing, length(world[static_cast<size_t>(j)].translation_part() -
                                             kinematic[static_cast<size_t>(j)].translation_part()));
        }
      });
  return a;
}

void expect_within_1mm_of_three_vrm(const std::string& stem) {
  const std::string ext = stem.ends_with("vrm0") ? ".glb" : ".vrm";
  const Agreement a = compare_with_three_vrm(stem + ext, stem + ".three_vrm.json");
  EXPECT_GT(a.samples, 60 * 66);
  EXPECT_GT(a.swing, 0.02);  // the hair and skirt do swing: the comparison is not of rest poses
  EXPECT_LT(a.worst, 1e-3) << a.joint << " at " << a.time << " s";
  std::cout << stem << ": worst " << a.worst * 1e3 << " mm (" << a.joint << ", " << a.time
            << " s) over " << a.samples << " joint samples; swing " << a.swing * 1e2 << " cm\n";
}

TEST(SpringBones, GodetteVrm0WalkingMatchesThreeVrmWithin1mm) {
  expect_within_1mm_of_three_vrm("godette_walk_springs_vrm0");
}

TEST(SpringBones, GodetteVrm1WalkingMatchesThreeVrmWithin1mm) {
  expect_within_1mm_of_three_vrm("godette_walk_springs_vrm1");
}

TEST(SpringBones, GodetteVrm0SpringsAreReadAsThreeVrmReadsThem) {
  const Asset godette = load_asset(data("Godette_vrm_v4.vrm"));
  const SpringBones& sb = godette.spring_bones;
  // 3 bone groups with 4 + 1 + 3 roots; every node under a root is a joint (three-vrm: 16).
  EXPECT_EQ(sb.springs.size(), 8u);
  EXPECT_EQ(sb.joint_count(), 16u);
  ASSERT_EQ(sb.collider_groups.size(), 2u);
  const SpringJoint& first = sb.springs[0].joints[0];
  EXPECT_DOUBLE_EQ(first.stiffness, 2.5);  // 0.x "stiffiness"
  EXPECT_DOUBLE_EQ(first.drag_force, 0.4);
  EXPECT_NEAR(first.hit_radius, 0.02, 1e-9);
  EXPECT_EQ(first.child, godette.skeleton.children(first.joint).front());
  // A leaf gets the virtual 7 cm tail.
  EXPECT_EQ(sb.springs[0].joints.back().child, -1);
  // Collider offsets come in Unity's axes: z is flipped (0.x stored −0.04 → +0.04).
  EXPECT_NEAR(sb.colliders[0].offset.z, 0.04, 1e-6);
  EXPECT_NEAR(sb.colliders[0].radius, 0.1, 1e-6);
}

TEST(SpringBones, TheVrm1MigrationIsReadBackAsChainsOfTwoJoints) {
  const Asset a = load_asset(data("godette_walk_springs_vrm1.vrm"));
  EXPECT_EQ(a.source.format, "vrm1");
  EXPECT_EQ(a.spring_bones.springs.size(), 8u);
  for (const Spring& s : a.spring_bones.springs) {
    ASSERT_EQ(s.joints.size(), 1u);  // two joints: one swings, the last is its tail
    EXPECT_EQ(a.skeleton.parent(s.joints[0].child), s.joints[0].joint);
  }
}

/// A chain root → a → b → c along +X, 0.1 m apart, simulated as one spring.
struct Chain {
  Skeleton skeleton;
  SpringBones setup;
};

Chain horizontal_chain(double gravity_power, double stiffness, int center = -1) {
  std::vector<Joint> joints{{"root", kNoParent, {}, {}}};
  for (int i = 0; i < 4; ++i) {
    Joint j{"j" + std::to_string(i), i, {}, {}};
    j.rest.translation = {i == 0 ? 0.0 : 0.1, i == 0 ? 1.0 : 0.0, 0};
    joints.push_back(j);
  }
  Chain c{Skeleton::build(joints), {}};
  Spring s;
  s.center = center;
  for (int j = 1; j <= 3; ++j) {
    SpringJoint sj;
    sj.joint = j;
    sj.child = j + 1;
    sj.gravity_power = gravity_power;
    sj.stiffness = stiffness;
    sj.drag_force = 0.4;
    s.joints.push_back(sj);
  }
  c.setup.springs.push_back(s);
  return c;
}

TEST(SpringBones, WithoutGravityOrMotionTheRestPoseStaysPut) {
  Chain c = horizontal_chain(0, 1);
  SpringBoneSim sim(c.skeleton, c.setup);
  std::vector<Transform> pose = c.skeleton.rest_pose();
  for (int k = 0; k < 600; ++k) sim.step(pose, 1.0 / 60);
  for (int j = 0; j < c.skeleton.joint_count(); ++j)
    EXPECT_LT(
        angle_between(pose[static_cast<size_t>(j)].rotation, c.skeleton.joint(j).rest.rotation),
        1e-9);
}

TEST(SpringBones, GravityBendsTheChainAndKeepsEveryBoneLength) {
  Chain c = horizontal_chain(2, 0.1);
  SpringBoneSim sim(c.skeleton, c.setup);
  std::vector<Transform> pose = c.skeleton.rest_pose();
  sim.step(pose, 0);
  for (int k = 0; k < 300; ++k) {
    sim.step(pose, 1.0 / 60);
    const auto w = sim.world();
    for (int j = 1; j < 4; ++j)
      ASSERT_NEAR(length(w[static_cast<size_t>(j + 1)].translation_part() -
                         w[static_cast<size_t>(j)].translation_part()),
                  0.1, 1e-9);
  }
  // Hanging: the tip ends well below the root's height, nearly straight down from j0.
  const Vec3 tip = sim.world()[4].translation_part();
  EXPECT_LT(tip.y, 1.0 - 0.2);
  EXPECT_LT(std::abs(tip.x), 0.1);
}

TEST(SpringBones, ATailFallsOntoASphereColliderAndRestsOnIt) {
  // One 10 cm bone from (0, 1, 0) along +X swings down under gravity onto a 5 cm ball in its way.
  const Vec3 centre{0.06, 0.88, 0};
  double closest_free = 1, closest = 1, final_distance = 0;
  for (bool with_ball : {false, true}) {
    Chain c = horizontal_chain(2, 0.1);
    c.setup.springs[0].joints.resize(1);
    c.setup.springs[0].joints[0].hit_radius = 0.01;
    if (with_ball) {
      SpringCollider ball;
      ball.joint = 0;
      ball.offset = centre;
      ball.radius = 0.05;
      c.setup.colliders.push_back(ball);
      c.setup.collider_groups.push_back({0});
      c.setup.springs[0].collider_groups = {0};
    }
    SpringBoneSim sim(c.skeleton, c.setup);
    std::vector<Transform> pose = c.skeleton.rest_pose();
    for (int k = 0; k < 300; ++k) {
      sim.step(pose, 1.0 / 60);
      const Vec3 tip = sim.world()[2].translation_part();
      if (with_ball) {
        closest = std::min(closest, length(tip - centre));
        final_distance = length(tip - centre);
      } else {
        closest_free = std::min(closest_free, length(tip - centre));
      }
    }
  }
  EXPECT_LT(closest_free, 0.04);  // without the ball the tip swings through where it is
  // With it the tip rests on radius + hit radius. On the way it may sink in for a few steps: the
  // reference pushes a tail out once per step and then returns it to the bone's length, which
  // undoes part of the push when the contact normal points along the bone.
  EXPECT_GT(closest, closest_free);
  EXPECT_NEAR(final_distance, 0.06, 1e-3);
}

TEST(SpringBones, ACentreJointCarriesTheInertiaWithTheCharacter) {
  // The character slides along +Z at 3 m/s: in world space the chain lags behind, in the root's
  // space it does not notice.
  for (int center : {-1, 0}) {
    Chain c = horizontal_chain(0, 1, center);
    SpringBoneSim sim(c.skeleton, c.setup);
    std::vector<Transform> pose = c.skeleton.rest_pose();
    sim.step(pose, 0);
    double lag = 0;
    for (int k = 1; k <= 30; ++k) {
      pose = c.skeleton.rest_pose();
      pose[0].translation.z = 3.0 * k / 60;
      sim.step(pose, 1.0 / 60);
      const Vec3 tip = sim.world()[4].translation_part();
      lag = std::max(lag, pose[0].translation.z - tip.z);
    }
    if (center < 0)
      EXPECT_GT(lag, 0.05);
    else
      EXPECT_LT(lag, 1e-9);
  }
}

TEST(SpringBones, SettingsTheSimulationCannotUseAreErrors) {
  auto expect_error = [](Chain c, const std::string& text) {
    try {
      SpringBoneSim sim(c.skeleton, c.setup);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  Chain c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[1].child = 1;  // j1's child is not j0
  expect_error(c, "is not a child");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[2].joint = 1;
  c.setup.springs[0].joints[2].child = 2;
  expect_error(c, "simulated twice");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[0].drag_force = 2;
  expect_error(c, "drag");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[0].stiffness = std::nan("");
  expect_error(c, "finite");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[0].gravity_power = 1e308;  // would overflow a step's sums
  expect_error(c, "at most 10⁶");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].collider_groups = {3};
  expect_error(c, "collider group 3");
  c = horizontal_chain(0, 1);
  c.setup.springs[0].joints[0].joint = 99;
  expect_error(c, "does not exist");
}

/// A .gltf of a three-node chain with `spring` as its VRMC_springBone extension.
std::string chain_gltf(const std::string& spring) {
  return R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
  "nodes":[{"name":"root","children":[1]},{"name":"a","translation":[0,1,0],"children":[2]},
           {"name":"b","translation":[0.1,0,0]}],
  "extensionsUsed":["VRMC_springBone"],"extensions":{"VRMC_springBone":)" +
         spring + "}}";
}

TEST(SpringBones, Vrm1SpringsAreReadWithTheirSettingsAndExtendedColliders) {
  const std::string dir = testing::TempDir() + "/kinema_spring_read";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/chain.gltf";
  write_file_atomically(path, chain_gltf(R"({"specVersion":"1.0",
    "colliders":[{"node":0,"shape":{"sphere":{"offset":[0,1,0],"radius":0.5}},
      "extensions":{"VRMC_springBone_extended_collider":{"specVersion":"1.0",
        "shape":{"plane":{"offset":[0,0.5,0],"normal":[0,2,0]}}}}},
      {"node":0,"shape":{"capsule":{"offset":[0,0,0],"tail":[0,1,0],"radius":0.1}}}],
    "colliderGroups":[{"colliders":[0,1]}],
    "springs":[{"name":"tail","center":0,"colliderGroups":[0],"joints":[
      {"node":1,"hitRadius":0.01,"stiffness":2,"gravityPower":0.5,"gravityDir":[1,0,0],
       "dragForce":0.25},{"node":2}]}]})"));
  const Asset a = load_asset(path);
  ASSERT_EQ(a.spring_bones.springs.size(), 1u);
  const Spring& s = a.spring_bones.springs[0];
  EXPECT_EQ(s.name, "tail");
  EXPECT_EQ(s.center, a.skeleton.find("root"));
  ASSERT_EQ(s.joints.size(), 1u);
  EXPECT_EQ(s.joints[0].joint, a.skeleton.find("a"));
  EXPECT_EQ(s.joints[0].child, a.skeleton.find("b"));
  EXPECT_DOUBLE_EQ(s.joints[0].stiffness, 2);
  EXPECT_DOUBLE_EQ(s.joints[0].drag_force, 0.25);
  EXPECT_EQ(s.joints[0].gravity_dir, (Vec3{1, 0, 0}));
  ASSERT_EQ(a.spring_bones.colliders.size(), 2u);
  EXPECT_EQ(a.spring_bones.colliders[0].shape, SpringColliderShape::Plane);
  EXPECT_EQ(a.spring_bones.colliders[0].normal, (Vec3{0, 1, 0}));
  EXPECT_EQ(a.spring_bones.colliders[1].shape, SpringColliderShape::Capsule);
}

TEST(SpringBones, MalformedSpringBonesNameTheJsonPointer) {
  const std::string dir = testing::TempDir() + "/kinema_spring_bad";
  std::filesystem::create_directories(dir);
  const std::pair<const char*, const char*> cases[] = {
      {R"({"specVersion":"1.0","springs":[{"joints":[{"node":1},{"node":7}]}]})",
       "/extensions/VRMC_springBone/springs/0/joints/1/node"},
      {R"({"specVersion":"1.0","springs":[{"joints":[{"node":2},{"node":1}]}]})",
       "is not a child of node 2"},
      {R"({"specVersion":"1.0","springs":[{"joints":[{"node":1,"dragForce":3},{"node":2}]}]})",
       "/extensions/VRMC_springBone/springs/0/joints/0/dragForce"},
      {R"({"specVersion":"1.0","colliders":[{"node":0,"shape":{"sphere":{"radius":-1}}}]})",
       "/extensions/VRMC_springBone/colliders/0/shape/sphere/radius"},
      {R"({"specVersion":"1.0","colliders":[{"node":0,"shape":{"box":{"size":1}}}]})",
       "has no sphere or capsule"},
      {R"({"specVersion":"1.0","springs":[{"colliderGroups":[4],"joints":[{"node":1}]}]})",
       "collider group does not exist"},
      {R"({"specVersion":"1.0","springs":[{"joints":[{"node":1,"gravityDir":[0,"down",0]},
       {"node":2}]}]})",
       "gravityDir/1"},
  };
  for (const auto& [spring, expected] : cases) {
    const std::string path = dir + "/bad.gltf";
    const std::string text = chain_gltf(spring);
    write_file_atomically(path, text);
    try {
      load_asset(path);
      ADD_FAILURE() << "no error for " << spring;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.gltf"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_file(path), text);  // the input is untouched
  }
}

TEST(SpringBones, HostileSpringDataIsAnErrorOrASafeSimulation) {
  // Values of every type in every place: each load either throws kinema::Error or gives settings
  // the simulation accepts or refuses with kinema::Error — never a crash (the ASan run checks).
  const std::string dir = testing::TempDir() + "/kinema_spring_hostile";
  std::filesystem::create_directories(dir);
  const std::vector<std::string> values = {
      "-1", "0",  "1",    "2",    "3",     "1e308",       "-1e308", "\"x\"",
      "[]", "{}", "null", "true", "[0,1]", "[1e999,0,0]", "0.5",    "2147483648"};
  const std::vector<std::string> templates = {
      R"({"specVersion":"1.0","springs":[{"joints":[{"node":@},{"node":2}]}]})",
      R"({"specVersion":"1.0","springs":[{"joints":[{"node":1,"stiffness":@},{"node":2}]}]})",
      R"({"specVersion":"1.0","springs":[{"center":@,"joints":[{"node":1},{"node":2}]}]})",
      R"({"specVersion":"1.0","springs":[{"joints":[{"node":1,"gravityDir":@},{"node":2}]}]})",
      R"({"specVersion":"1.0","springs":[{"joints":[{"node":1,"gravityPower":@,
          "gravityDir":[1e308,1e308,0]},{"node":2}]}]})",
      R"({"specVersion":"1.0","colliders":[{"node":0,"shape":{"sphere":{"offset":@}}}],
          "colliderGroups":[{"colliders":[0]}],
          "springs":[{"colliderGroups":[0],"joints":[{"node":1},{"node":2}]}]})",
      R"({"specVersion":"1.0","colliders":[{"node":@,"shape":{"capsule":{"radius":1}}}]})",
      R"({"specVersion":"1.0","colliderGroups":[{"colliders":@}]})",
      R"({"specVersion":@,"springs":[{"joints":[{"node":1},{"node":2}]}]})",
      R"({"specVersion":"1.0","springs":@})",
      R"({"specVersion":"1.0","colliders":[{"node":0,"shape":{"sphere":{"radius":0.1}},
          "extensions":{"VRMC_springBone_extended_collider":{"specVersion":"1.0",
          "shape":{"plane":{"normal":@}}}}}]})"};
  int loaded = 0, refused = 0;
  for (const std::string& t : templates)
    for (const std::string& v : values) {
      std::string spring = t;
      spring.replace(spring.find('@'), 1, v);
      const std::string path = dir + "/hostile.gltf";
      write_file_atomically(path, chain_gltf(spring));
      try {
        const Asset a = load_asset(path);
        SpringBoneSim sim(a.skeleton, a.spring_bones);
        std::vector<Transform> pose = a.skeleton.rest_pose();
        for (int k = 0; k < 10; ++k) sim.step(pose, 1.0 / 60);
        for (const Mat4& m : sim.world()) ASSERT_TRUE(is_finite(m)) << spring;
        ++loaded;
      } catch (const Error&) {
        ++refused;
      }
    }
  EXPECT_GT(loaded, 10);
  EXPECT_GT(refused, 50);
}

TEST(SpringBones, TheBakedClipPlaysTheSimulationAndTheFileLosesItsSpringDefinitions) {
  const std::string dir = testing::TempDir() + "/kinema_spring_bake";
  std::filesystem::create_directories(dir);
  pipeline::SpringBakeRequest request;
  request.avatar = data("godette_walk_springs_vrm1.vrm");
  request.out = dir + "/baked.vrm";
  const pipeline::SpringBakeResult r = pipeline::run_spring_bake(request);
  EXPECT_EQ(r.clip_name, "walk");
  EXPECT_EQ(r.joints, 8);
  EXPECT_GT(r.largest_swing_deg, 10);
  const Asset baked = load_asset(request.out);
  EXPECT_TRUE(baked.spring_bones.empty());
  ASSERT_EQ(baked.clips.size(), 1u);
  EXPECT_EQ(baked.clips[0].name, "walk_springs");
  // The baked file at frame k equals the simulation at step k.
  const Asset avatar = load_asset(request.avatar);
  double worst = 0;
  pipeline::bake_spring_bones(
      avatar, 0, 1.0 / 60, r.frames, [&](int frame, double t, std::span<const Mat4> world) {
        if (frame % 10) return;
        const auto played = sample_model_pose(baked.clips[0], baked.skeleton, t);
        for (size_t j = 0; j < world.size(); ++j)
          worst =
              std::max(worst, length(world[j].translation_part() - played[j].translation_part()));
      });
  EXPECT_LT(worst, 1e-5);  // float keys
  // No spring bones, an unknown clip, a bad OUT: usage errors, nothing written.
  request.avatar = test_paths::data_dir() + "/vrm/debug_robot.vrm";
  request.out = dir + "/robot.glb";
  EXPECT_THROW(pipeline::run_spring_bake(request), UsageError);
  request.avatar = data("godette_walk_springs_vrm1.vrm");
  request.clip = "run";
  EXPECT_THROW(pipeline::run_spring_bake(request), UsageError);
  request.clip.clear();
  request.out = dir + "/out.bvh";
  EXPECT_THROW(pipeline::run_spring_bake(request), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/robot.glb"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.bvh"));
}

}  // namespace
}  // namespace kinema
