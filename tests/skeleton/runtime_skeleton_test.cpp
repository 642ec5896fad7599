// Runtime skeleton: SoA rest pose, SIMD local→model against the double-precision FK.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "kinema/clip/runtime_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

// Every kernel (SSE forced; AVX2 + FMA and AVX-512 where the CPU has them) against the
// double-precision FK.
enum class L2mKernel { Sse, Avx2, Avx512 };

// Forces `kernel`; false when this CPU cannot run it.
bool force_local_to_model_kernel(L2mKernel kernel) {
  const bool avx2 = set_local_to_model_avx2(kernel != L2mKernel::Sse);
  const bool avx512 = set_local_to_model_avx512(kernel == L2mKernel::Avx512);
  switch (kernel) {
    case L2mKernel::Sse:
      return !avx2;
    case L2mKernel::Avx2:
      return avx2 && !avx512;
    case L2mKernel::Avx512:
      return avx512;
  }
  return false;
}

void restore_local_to_model_kernels() {
  set_local_to_model_avx2(true);
  set_local_to_model_avx512(true);
}

class LocalToModelKernels : public ::testing::TestWithParam<L2mKernel> {
 protected:
  void SetUp() override {
    if (!force_local_to_model_kernel(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << local_to_model_kernel() << " kernel";
  }
  void TearDown() override { restore_local_to_model_kernels(); }
};
INSTANTIATE_TEST_SUITE_P(Kernels, LocalToModelKernels,
                         ::testing::Values(L2mKernel::Sse, L2mKernel::Avx2, L2mKernel::Avx512),
                         [](const auto& info) {
                           switch (info.param) {
                             case L2mKernel::Sse:
                               return "Sse";
                             case L2mKernel::Avx2:
                               return "Avx2";
                             default:
                               return "Avx512";
                           }
                         });

TEST_P(LocalToModelKernels, MatchesDoubleFkOnRealClips) {
  for (const char* file : {"/bvh/cmu_cgspeed_mb/02_01.bvh", "/bvh/cmu_iclone_cc3/007_12.bvh",
                           "/fbx/ozz_pab/walk.fbx"}) {
    const Asset asset = load_asset(test_paths::data_dir() + file);
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

// Every kernel agrees with the SSE one to float rounding on a real skeleton (every joint, every
// entry), with a world transform, over the whole clip; and each gives the same bits on a second
// call.
TEST_P(LocalToModelKernels, AgreesWithTheSseKernelAndRepeatsItsBits) {
  const Asset asset = load_asset(test_paths::data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh");
  const RuntimeSkeleton rs = RuntimeSkeleton::build(asset.skeleton);
  const RuntimeClip rc = RuntimeClip::build(asset.clips[0], asset.skeleton);
  std::vector<SoaTransform> pose(static_cast<size_t>(rs.soa_count()));
  std::vector<Mat4f> sse(static_cast<size_t>(rs.joint_count())), simd(sse.size()),
      again(sse.size());
  const Mat4f world = Mat4f::translation({1.5f, 0, -2});
  for (float t = 0; t < rc.duration(); t += 0.37f) {
    ASSERT_TRUE(sample(rc, t, pose));
    ASSERT_TRUE(force_local_to_model_kernel(L2mKernel::Sse));
    ASSERT_TRUE(local_to_model(rs, pose, sse, world));
    ASSERT_TRUE(force_local_to_model_kernel(GetParam()));
    ASSERT_TRUE(local_to_model(rs, pose, simd, world));
    ASSERT_TRUE(local_to_model(rs, pose, again, world));
    for (size_t j = 0; j < sse.size(); ++j)
      for (size_t k = 0; k < 16; ++k) {
        ASSERT_NEAR(simd[j].m[k], sse[j].m[k], 2e-6f * (1 + std::abs(sse[j].m[k])))
            << local_to_model_kernel() << " joint " << j << " entry " << k;
        ASSERT_EQ(std::bit_cast<uint32_t>(again[j].m[k]), std::bit_cast<uint32_t>(simd[j].m[k]))
            << local_to_model_kernel() << " joint " << j << " entry " << k;
      }
  }
}

// Skeletons whose joint count is not a multiple of four (the last group's unused lanes), whose
// joints branch at every lane position (a parent other than the previous joint in lanes 0..3),
// and several roots: every kernel against the double-precision FK.
TEST_P(LocalToModelKernels, BranchesAtEveryLaneAndPartialGroups) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int n : {1, 2, 3, 5, 6, 7, 9, 13, 31}) {
    std::vector<Joint> joints(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
      Joint& joint = joints[size_t(j)];
      joint.name = "j" + std::to_string(j);
      // Mostly chains; every third joint hangs off an earlier one; joint 4 is a second root.
      joint.parent = j == 0 || j == 4 ? -1 : (j % 3 == 0 ? j / 2 : j - 1);
      joint.rest.translation = {u(rng), u(rng), u(rng)};
    }
    const Skeleton sk = Skeleton::build(joints);
    const RuntimeSkeleton rs = RuntimeSkeleton::build(sk);
    std::vector<SoaTransform> pose(static_cast<size_t>(rs.soa_count()), SoaTransform::identity());
    std::vector<Transform> local(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
      Transformf t;
      t.rotation = normalize(Quatf{u(rng), u(rng), u(rng), u(rng)});
      t.translation = {u(rng), u(rng), u(rng)};
      const float s = 0.5f + 0.5f * (u(rng) + 1);
      t.scale = {s, s, s};
      set_joint(pose, j, t);
      local[size_t(j)] = Transform(get_joint(pose, j));
    }
    const Mat4f world = Mat4f::translation({0.25f, -1, 3});
    std::vector<Mat4f> model(static_cast<size_t>(n));
    ASSERT_TRUE(local_to_model(rs, pose, model, world));
    std::vector<Mat4> reference(static_cast<size_t>(n));
    ASSERT_TRUE(local_to_model(sk.parents(), std::span<const Transform>(local), reference));
    const Mat4 world_d = Mat4::from_column_major(world.m.data());
    for (int j = 0; j < n; ++j) {
      const Mat4 expected = world_d * reference[size_t(j)];
      for (size_t k = 0; k < 16; ++k)
        EXPECT_NEAR(model[size_t(j)].m[k], expected.m[k], 2e-5 * (1 + std::abs(expected.m[k])))
            << local_to_model_kernel() << " n " << n << " joint " << j << " entry " << k;
    }
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
