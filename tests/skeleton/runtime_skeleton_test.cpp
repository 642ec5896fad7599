// Runtime skeleton: SoA rest pose, SIMD local→model against the double-precision FK.
#include <gtest/gtest.h>

#include <random>

#include "kinema/clip/runtime_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

// Both kernels (SSE forced; AVX2 + FMA where the CPU has it) against the double-precision FK.
class LocalToModelKernels : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (set_local_to_model_avx2(GetParam()) != GetParam())
      GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  }
  void TearDown() override { set_local_to_model_avx2(true); }
};
INSTANTIATE_TEST_SUITE_P(Kernels, LocalToModelKernels, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Avx2" : "Sse"; });

TEST_P(LocalToModelKernels, MatchesDoubleFkOnRealClips) {
  for (const char* file : {"/bvh/cmu_cgspeed_mb/02_01.bvh", "/bvh/cmu_iclone_cc3/007_12.bvh",
                           "/fbx/ozz_pab/walk.fbx"}) {
    const Asset asset = load_asset(std::string(KINEMA_TEST_DATA_DIR) + file);
    const Skeleton& sk = asset.skeleton;
    const RuntimeSkeleton rs = RuntimeSkeleton::build(sk);
    ASSERT_EQ(rs.joint_count(), sk.joint_count());
    const RuntimeClip rc = RuntimeClip::build(asset.clips[0], sk);
    std::vector<SoaTransform> pose(static_cast<size_t>(rs.soa_count()));
    std::vector<Mat4f> model(static_cast<size_t>(rs.joint_count()));
    std::vector<Transform> local(model.size());
    std::vector<Mat4> reference(model.size());
    double scale = 0, worst = 0;
    for (float t = 0; t < rc.duration(); t += 0.21f) {
      ASSERT_TRUE(sample(rc, t, pose));
      ASSERT_TRUE(local_to_model(rs, pose, model));
      for (int j = 0; j < sk.joint_count(); ++j) local[size_t(j)] = Transform(get_joint(pose, j));
      ASSERT_TRUE(local_to_model(sk.parents(), std::span<const Transform>(local), reference));
      for (size_t j = 0; j < model.size(); ++j)
        for (int k = 0; k < 16; ++k) {
          worst =
              std::max(worst, std::abs(double(model[j].m[size_t(k)]) - reference[j].m[size_t(k)]));
          scale = std::max(scale, std::abs(reference[j].m[size_t(k)]));
        }
    }
    EXPECT_LT(worst, 2e-6 * std::max(1.0, scale)) << file;
  }
}

// The two kernels agree to float rounding on a real skeleton (every joint, every entry).
TEST(RuntimeSkeleton, SseAndAvx2LocalToModelAgree) {
  const Asset asset =
      load_asset(std::string(KINEMA_TEST_DATA_DIR) + "/bvh/cmu_iclone_cc3/007_12.bvh");
  const RuntimeSkeleton rs = RuntimeSkeleton::build(asset.skeleton);
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  std::vector<SoaTransform> pose(static_cast<size_t>(rs.soa_count()));
  std::vector<Mat4f> sse(static_cast<size_t>(rs.joint_count())), avx(sse.size());
  const Mat4f world = Mat4f::translation({1.5f, 0, -2});
  for (float t = 0; t < rc.duration(); t += 0.37f) {
    ASSERT_TRUE(sample(rc, t, pose));
    set_local_to_model_avx2(false);
    ASSERT_TRUE(local_to_model(rs, pose, sse, world));
    const bool avx2 = set_local_to_model_avx2(true);
    ASSERT_TRUE(local_to_model(rs, pose, avx, world));
    if (!avx2) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
    for (size_t j = 0; j < sse.size(); ++j)
      for (size_t k = 0; k < 16; ++k)
        ASSERT_NEAR(avx[j].m[k], sse[j].m[k], 2e-6f * (1 + std::abs(sse[j].m[k])))
            << "joint " << j << " entry " << k;
  }
}

TEST(RuntimeSkeleton, RootTransformAndSizeChecks) {
  std::vector<Joint> joints(2);
  joints[0].name = "root";
  joints[1].name = "child";
  joints[1].parent = 0;
  joints[1].rest.translation = {0, 2, 0};
  const RuntimeSkeleton rs = RuntimeSkeleton::build(Skeleton::build(joints));
  std::vector<Mat4f> model(2);
  const Mat4f world = Mat4f::translation({5, 0, 0});
  ASSERT_TRUE(local_to_model(rs, rs.rest_pose(), model, world));
  EXPECT_FLOAT_EQ(model[1](0, 3), 5.0f);
  EXPECT_FLOAT_EQ(model[1](1, 3), 2.0f);
  std::vector<Mat4f> wrong(3);
  EXPECT_FALSE(local_to_model(rs, rs.rest_pose(), wrong));
  EXPECT_EQ(rs.find("child"), 1);
  EXPECT_EQ(rs.find("nope"), -1);
}

// A bone mask ramping up the spine spreads an upper-body layer's twist: three spine joints at
// 0.25, 0.5, 0.75, chest and above 1.
TEST(RuntimeSkeleton, SubtreeMaskRampsAlongTheSpine) {
  const char* names[] = {"hips", "leg", "spine", "spine1", "spine2", "chest", "head", "arm"};
  const int parents[] = {-1, 0, 0, 2, 3, 4, 5, 5};
  std::vector<Joint> joints;
  for (int j = 0; j < 8; ++j) joints.push_back({names[j], parents[j], {}, {}});
  const RuntimeSkeleton rs = RuntimeSkeleton::build(Skeleton::build(joints));
  const float ramp[] = {0.25f, 0.5f, 0.75f};
  const std::vector<float> mask = subtree_mask(rs, rs.find("spine"), ramp);
  const std::vector<float> expected = {0, 0, 0.25f, 0.5f, 0.75f, 1, 1, 1};
  EXPECT_EQ(mask, expected);
  EXPECT_EQ(subtree_mask(rs, -3), std::vector<float>(8, 0.0f));
}

}  // namespace
}  // namespace kinema
