// Animation LOD: update rates by distance, staggered update frames (the joint-update budget is
// worked in docs/worked_examples.md, "Animation LOD and vertex animation textures").
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kinema/lod/update_lod.h"

namespace kinema {
namespace {

// 200 characters with 60 bones at 60 Hz: 720,000 joint updates per second. With 150 far away at
// 15 Hz: 50·60·60 + 150·60·15 = 315,000, less than half.
TEST(UpdateLod, FarCharactersAt15HzMoreThanHalveJointUpdates) {
  const LodLevel levels[] = {{0, 60}, {30, 15}};
  constexpr int kCharacters = 200, kBones = 60, kFrames = 60;  // one second at 60 fps
  auto count = [&](int far_characters) {
    long updates = 0;
    for (int64_t frame = 0; frame < kFrames; ++frame)
      for (int c = 0; c < kCharacters; ++c) {
        const float distance = c < far_characters ? 50.0f : 5.0f;
        const int period = lod_period(lod_update_hz(levels, distance, 60), 60);
        if (lod_updates_on(frame, c, period)) updates += kBones;
      }
    return updates;
  };
  EXPECT_EQ(count(0), 720000);
  EXPECT_EQ(count(150), 315000);
}

TEST(UpdateLod, StaggeringSpreadsTheWorkEvenly) {
  // 150 characters at period 4: every frame updates 37 or 38 of them, never 150 at once.
  for (int64_t frame = 0; frame < 16; ++frame) {
    int n = 0;
    for (int c = 0; c < 150; ++c) n += lod_updates_on(frame, c, 4);
    EXPECT_GE(n, 37);
    EXPECT_LE(n, 38);
  }
  // Each character updates exactly once per period and advances a whole period's time.
  for (int c = 0; c < 7; ++c) {
    int n = 0;
    for (int64_t frame = 100; frame < 104; ++frame) n += lod_updates_on(frame, c, 4);
    EXPECT_EQ(n, 1);
  }
  EXPECT_FLOAT_EQ(lod_step_seconds(4, 60), 4.0f / 60.0f);
}

TEST(UpdateLod, LevelChoiceAndEdgeCases) {
  const LodLevel levels[] = {{50, 10}, {0, 60}, {20, 30}};  // any order
  EXPECT_EQ(lod_update_hz(levels, 0, 60), 60);
  EXPECT_EQ(lod_update_hz(levels, 25, 60), 30);
  EXPECT_EQ(lod_update_hz(levels, 80, 60), 10);
  EXPECT_EQ(lod_update_hz(levels, std::nanf(""), 60), 60);  // never freeze on a bad distance
  EXPECT_EQ(lod_update_hz({}, 80, 60), 60);
  const LodLevel faster[] = {{0, 120}};
  EXPECT_EQ(lod_update_hz(faster, 1, 60), 60);  // capped at the frame rate
  EXPECT_EQ(lod_period(15, 60), 4);
  EXPECT_EQ(lod_period(60, 60), 1);
  EXPECT_EQ(lod_period(0, 60), 1);
  EXPECT_EQ(lod_period(std::nanf(""), 60), 1);
  EXPECT_TRUE(lod_updates_on(7, 3, 1));
}

}  // namespace
}  // namespace kinema
