// How far two animations are apart, joint by joint (kinema/character/compare.h).
#include <gtest/gtest.h>

#include <string>

#include "kinema/character/compare.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace kinema {
namespace {

TEST(MaxJointDistance, ZeroForItselfAndTheShiftForAMovedRoot) {
  const Asset walk = load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const JointDistance same = max_joint_distance(walk, 0, walk, 0);
  EXPECT_EQ(same.max, 0.0);
  EXPECT_EQ(same.joints, 31);
  EXPECT_EQ(same.frames, 343);
  // Every root key moved 5 cm up: every joint is 5 cm away.
  Asset moved = walk;
  for (Vec3& v : moved.clips[0].tracks[0].translation.values) v.y += 0.05;
  int calls = 0;
  const JointDistance d = max_joint_distance(walk, 0, moved, 0, [&](int done, int total) {
    ++calls;
    EXPECT_EQ(total, 343);
    EXPECT_EQ(done, calls);
  });
  EXPECT_NEAR(d.max, 0.05, 1e-9);
  EXPECT_EQ(calls, 343);
  // Joints are matched by name: a renamed joint is not compared.
  Asset renamed = walk;
  std::vector<Joint> joints = renamed.skeleton.joints();
  joints[5].name = "Elsewhere";
  renamed.skeleton = Skeleton::build(joints, true);
  EXPECT_EQ(max_joint_distance(walk, 0, renamed, 0).joints, 30);
}

}  // namespace
}  // namespace kinema
