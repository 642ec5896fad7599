// Looking up an asset's clips (kinema/character/asset.h).
#include <gtest/gtest.h>

#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

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
