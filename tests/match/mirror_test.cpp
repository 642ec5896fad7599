// Left ↔ right mirroring: joint maps on real rigs, mirrored poses (positions reflected, rest pose
// fixed, mirroring twice is the identity).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/match/mirror.h"
#include "kinema/math/mat4.h"
#include "test_paths.h"

using namespace kinema;
using namespace kinema::match;

namespace {

std::vector<Mat4> fk(const Skeleton& sk, const std::vector<Transform>& local) {
  std::vector<Mat4> model(local.size());
  local_to_model(sk.parents(), local, model);
  return model;
}

// A random pose of the clip's skeleton: a clip frame with every joint turned a little more.
std::vector<Transform> random_pose(const Asset& a, std::mt19937& rng) {
  std::vector<Transform> local(size_t(a.skeleton.joint_count()));
  std::uniform_real_distribution<double> t(0, a.clips[0].duration), u(-0.3, 0.3);
  sample_pose(a.clips[0], a.skeleton, t(rng), WrapMode::Clamp, local);
  for (Transform& x : local)
    x.rotation =
        normalize(x.rotation * Quat::from_axis_angle(normalize(Vec3{u(rng), u(rng), 1}), u(rng)));
  return local;
}

}  // namespace

TEST(MatchMirror, JointMapsOfCmuAndCharacterCreatorRigs) {
  const Asset cmu = load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const std::vector<int> m = mirror_joints(cmu.skeleton);
  const int left_leg = cmu.skeleton.find("LeftUpLeg"), right_leg = cmu.skeleton.find("RightUpLeg");
  ASSERT_GE(left_leg, 0);
  EXPECT_EQ(m[size_t(left_leg)], right_leg);
  EXPECT_EQ(m[size_t(right_leg)], left_leg);
  EXPECT_EQ(m[size_t(cmu.skeleton.find("Hips"))], cmu.skeleton.find("Hips"));
  size_t paired = 0;
  for (size_t j = 0; j < m.size(); ++j) {
    EXPECT_EQ(m[size_t(m[j])], int(j));  // symmetric
    paired += m[j] != int(j);
  }
  EXPECT_EQ(paired, 24u);  // 12 joints a side: leg, arm and hand chains
  const Asset cc3 = load_asset(test_paths::data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh");
  const std::vector<int> c = mirror_joints(cc3.skeleton);
  EXPECT_EQ(c[size_t(cc3.skeleton.find("CC_Base_L_Thigh"))], cc3.skeleton.find("CC_Base_R_Thigh"));
  EXPECT_EQ(c[size_t(cc3.skeleton.find("CC_Base_L_Foot"))], cc3.skeleton.find("CC_Base_R_Foot"));
}

TEST(MatchMirror, DazStylePrefixes) {
  std::vector<Joint> j(5);
  j[0] = {"hip", kNoParent, {}, {}};
  j[1] = {"lThigh", 0, {{0.1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[2] = {"rThigh", 0, {{-0.1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[3] = {"abdomen", 0, {}, {}};
  j[4] = {"lowerJaw", 3, {}, {}};  // "l" + lower-case: not a side
  const Skeleton sk = Skeleton::build(j);
  const std::vector<int> m = mirror_joints(sk);
  EXPECT_EQ(m, (std::vector<int>{0, 2, 1, 3, 4}));
}

TEST(MatchMirror, PositionsAreReflectedCounterpartsAndTwiceIsIdentity) {
  for (const char* file : {"/bvh/cmu_cgspeed_mb/02_01.bvh", "/bvh/cmu_iclone_cc3/007_12.bvh"}) {
    const Asset a = load_asset(test_paths::data_dir() + file);
    const Skeleton& sk = a.skeleton;
    const std::vector<int> m = mirror_joints(sk);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<Transform> pose = random_pose(a, rng);
      std::vector<Transform> once(pose.size()), twice(pose.size());
      ASSERT_TRUE(mirror_pose(sk, m, pose, once));
      ASSERT_TRUE(mirror_pose(sk, m, once, twice));
      const std::vector<Mat4> p = fk(sk, pose), q = fk(sk, once), r = fk(sk, twice);
      for (size_t j = 0; j < pose.size(); ++j) {
        const Vec3 a0 = p[size_t(m[j])].translation_part(), b = q[j].translation_part();
        EXPECT_NEAR(b.x, -a0.x, 1e-9) << file << " " << sk.joint(int(j)).name;
        EXPECT_NEAR(b.y, a0.y, 1e-9);
        EXPECT_NEAR(b.z, a0.z, 1e-9);
        EXPECT_LT(distance(r[j].translation_part(), p[j].translation_part()), 1e-9);
        // Twice mirrored gives the same orientation (q or −q).
        const Quat q0 = rotation_of(p[j]), q2 = rotation_of(r[j]);
        EXPECT_GT(std::abs(q0.x * q2.x + q0.y * q2.y + q0.z * q2.z + q0.w * q2.w), 1 - 1e-9);
      }
    }
  }
}

TEST(MatchMirror, RestPoseOfASymmetricRigMirrorsToItself) {
  std::vector<Joint> j(5);
  const Quat tilt = Quat::from_axis_angle({0, 0, 1}, 0.4);
  j[0] = {"Hips", kNoParent, {{0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[1] = {"LeftLeg", 0, {{0.1, 0, 0}, tilt, {1, 1, 1}}, {}};
  j[2] = {"RightLeg", 0, {{-0.1, 0, 0}, conjugate(tilt), {1, 1, 1}}, {}};
  j[3] = {"LeftFoot", 1, {{0, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[4] = {"RightFoot", 2, {{0, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  const Skeleton sk = Skeleton::build(j);
  const std::vector<Transform> rest = sk.rest_pose();
  std::vector<Transform> out(rest.size());
  ASSERT_TRUE(mirror_pose(sk, mirror_joints(sk), rest, out));
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_LT(distance(out[i].translation, rest[i].translation), 1e-12) << i;
    const Quat a = out[i].rotation, b = rest[i].rotation;
    EXPECT_GT(std::abs(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w), 1 - 1e-12) << i;
  }
  std::vector<Transform> small(2);
  EXPECT_FALSE(mirror_pose(sk, mirror_joints(sk), rest, small));
}
