// A humanoid's solver rigs (kinema/retarget/rig.h).
#include <gtest/gtest.h>

#include <string>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/retarget/rig.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

TEST(HumanoidLegs, FoundByNameOnMocapAndByTheVrmMap) {
  const Asset walk = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const HumanoidLegs legs = humanoid_legs(walk, "walk.bvh");
  const Skeleton& sk = walk.skeleton;
  EXPECT_EQ(sk.joint(legs.rig.pelvis).name, "Hips");
  ASSERT_EQ(legs.rig.legs.size(), 2u);
  EXPECT_EQ(legs.names, (std::vector<std::string>{"left", "right"}));
  EXPECT_EQ(sk.joint(legs.rig.legs[0].hip).name, "LeftUpLeg");
  EXPECT_EQ(sk.joint(legs.rig.legs[0].knee).name, "LeftLeg");
  EXPECT_EQ(sk.joint(legs.rig.legs[1].ankle).name, "RightFoot");
  EXPECT_EQ(sk.joint(legs.rig.toes[1]).name, "RightToeBase");
  const Asset godette = load_asset(kData + "/vrm/Godette_vrm_v4.vrm");
  const HumanoidLegs vrm = humanoid_legs(godette, "godette.vrm");
  EXPECT_EQ(vrm.rig.pelvis, godette.humanoid->find("hips"));
  EXPECT_EQ(vrm.rig.legs[1].knee, godette.humanoid->find("rightLowerLeg"));
}

TEST(HumanoidLegs, MissingLegsAreAnErrorNamingTheFile) {
  Asset a;
  std::vector<Joint> joints(2);
  joints[0].name = "Hips";
  joints[1].name = "Spine";
  joints[1].parent = 0;
  a.skeleton = Skeleton::build(joints, true);
  try {
    humanoid_legs(a, "torso.glb");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "torso.glb");
    EXPECT_NE(e.reason().find("cannot find the legs"), std::string::npos);
  }
}

}  // namespace
}  // namespace kinema
