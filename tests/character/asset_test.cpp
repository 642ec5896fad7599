// Looking up an asset's clips (kinema/character/asset.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

TEST(AssetCounts, CountsJointsRootsMeshesTrianglesAndMorphTargets) {
  Asset a;
  std::vector<Joint> joints(3);
  joints[0].name = "hips";
  joints[1].name = "spine";
  joints[1].parent = 0;
  joints[2].name = "prop";  // a second root
  a.skeleton = Skeleton::build(joints);
  Mesh quad;
  quad.positions.resize(4);
  quad.indices = {0, 1, 2, 0, 2, 3};
  quad.morph_targets.resize(2);
  Mesh tri;
  tri.positions.resize(3);
  tri.indices = {0, 1, 2};
  a.meshes = {quad, tri};
  a.skins.resize(1);
  const AssetCounts c = count_contents(a);
  EXPECT_EQ(c.joints, 3);
  EXPECT_EQ(c.roots, 2);
  EXPECT_EQ(c.meshes, 2);
  EXPECT_EQ(c.skins, 1);
  EXPECT_EQ(c.vertices, 7u);
  EXPECT_EQ(c.triangles, 3u);
  EXPECT_EQ(c.morph_targets, 2);
  EXPECT_EQ(count_contents(Asset{}).vertices, 0u);
}

TEST(AssetClips, FoundByNameThenByIndex) {
  Asset a;
  a.clips.resize(3);
  a.clips[0].name = "walk";
  a.clips[1].name = "2";  // a name that looks like an index wins over the index
  a.clips[2].name = "run";
  EXPECT_EQ(find_clip(a, "walk", "f.glb"), 0);
  EXPECT_EQ(find_clip(a, "run", "f.glb"), 2);
  EXPECT_EQ(find_clip(a, "2", "f.glb"), 1);
  EXPECT_EQ(find_clip(a, "0", "f.glb"), 0);
  try {
    find_clip(a, "swim", "f.glb");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "f.glb: no clip 'swim' (clips: 0 'walk', 1 '2', 2 'run')");
  }
  EXPECT_THROW(find_clip(a, "3", "f.glb"), UsageError);
  EXPECT_THROW(find_clip(a, "-1", "f.glb"), UsageError);
  try {
    find_clip(Asset{}, "0", "rest.vrm");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "rest.vrm: no clip '0' (the file has no animation)");
  }
}

}  // namespace
}  // namespace kinema
