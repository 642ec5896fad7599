// merge_assets: two assets play together — b's joints, meshes, skins and morph tracks re-indexed
// after a's, one clip that poses both as their own clips do.
#include "kinema/character/merge.h"

#include <gtest/gtest.h>

#include "kinema/clip/clip.h"

namespace kinema {
namespace {

/// Two joints "root" → `child` with a 1 s clip turning the child, and a rigid one-triangle mesh
/// on the child with a morph target played by the clip.
Asset two_joints(const std::string& child, double x) {
  Asset a;
  Joint c{child, 0, {}, {}};
  c.rest.translation = {x, 1, 0};
  a.skeleton = Skeleton::build({Joint{"root", kNoParent, {}, {}}, c});
  Mesh m;
  m.name = child + "_mesh";
  m.node = 1;
  m.positions = {Vec3f{0, 0, 0}, Vec3f{1, 0, 0}, Vec3f{0, 1, 0}};
  m.indices = {0, 1, 2};
  m.morph_targets.push_back({"up", {Vec3f{0, 1, 0}, Vec3f{0, 1, 0}, Vec3f{0, 1, 0}}, {}});
  m.default_weights = {0};
  a.meshes.push_back(m);
  Clip clip;
  clip.name = child + "_clip";
  clip.duration = 1;
  clip.tracks.resize(2);
  clip.tracks[1].rotation.times = {0, 1};
  clip.tracks[1].rotation.values = {Quat{0, 0, 0, 1}, Quat::from_axis_angle({0, 0, 1}, x)};
  MorphTrack mt;
  mt.mesh = 0;
  mt.target_count = 1;
  mt.times = {0, 1};
  mt.values = {0, x};
  clip.morph_tracks.push_back(mt);
  a.clips.push_back(clip);
  return a;
}

TEST(MergeAssets, BothAssetsPoseAsTheirOwnClipsPoseThem) {
  const Asset a = two_joints("arm", 0.5), b = two_joints("arm", 0.25);
  const Asset m = merge_assets(a, 0, b, 0);
  ASSERT_EQ(m.skeleton.joint_count(), 4);
  EXPECT_EQ(m.skeleton.joint(3).name, "arm_1");  // a name a uses gets b's index
  EXPECT_EQ(m.skeleton.parent(3), 2);
  EXPECT_EQ(m.skeleton.parent(2), kNoParent);
  ASSERT_EQ(m.meshes.size(), 2u);
  EXPECT_EQ(m.meshes[1].node, 3);
  ASSERT_EQ(m.clips.size(), 1u);
  ASSERT_EQ(m.clips[0].morph_tracks.size(), 2u);
  EXPECT_EQ(m.clips[0].morph_tracks[1].mesh, 1);
  for (double t : {0.0, 0.3, 1.0}) {
    const auto merged = sample_model_pose(m.clips[0], m.skeleton, t);
    const auto pa = sample_model_pose(a.clips[0], a.skeleton, t);
    const auto pb = sample_model_pose(b.clips[0], b.skeleton, t);
    for (int j = 0; j < 2; ++j) {
      EXPECT_LT(length(merged[size_t(j)].translation_part() - pa[size_t(j)].translation_part()),
                1e-12);
      EXPECT_LT(length(merged[size_t(j + 2)].translation_part() - pb[size_t(j)].translation_part()),
                1e-12);
    }
  }
  // A rest pose on one side: that asset's joints have no tracks.
  const Asset rest = merge_assets(a, -1, b, 0);
  EXPECT_EQ(rest.clips[0].name, "arm_clip");
  EXPECT_TRUE(rest.clips[0].tracks[1].empty());
  EXPECT_FALSE(rest.clips[0].tracks[3].empty());
}

}  // namespace
}  // namespace kinema
