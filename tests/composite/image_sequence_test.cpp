// Frame-numbered file names: # and %0Nd placeholders, padding and overflow, negative frames, and
// finding the frames on disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kinema/composite/image_sequence.h"
#include "kinema/core/error.h"

namespace kinema::composite {
namespace {

namespace fs = std::filesystem;

TEST(ImageSequence, HashesAndPrintfPlaceholdersPadTheFrameNumber) {
  EXPECT_EQ(sequence_frame_path(parse_sequence_pattern("plate.####.png"), 7), "plate.0007.png");
  EXPECT_EQ(sequence_frame_path(parse_sequence_pattern("plate.%04d.exr"), 12), "plate.0012.exr");
  EXPECT_EQ(sequence_frame_path(parse_sequence_pattern("p_%d.png"), 3), "p_3.png");
  EXPECT_EQ(sequence_frame_path(parse_sequence_pattern("p.##.png"), 12345), "p.12345.png");
  EXPECT_EQ(sequence_frame_path(parse_sequence_pattern("p.###.png"), -1), "p.-001.png");
  EXPECT_TRUE(is_sequence_pattern("a/b.####.png"));
  EXPECT_FALSE(is_sequence_pattern("a/b.0001.png"));
  EXPECT_THROW(parse_sequence_pattern("plate.png"), UsageError);
  EXPECT_THROW(parse_sequence_pattern("a.##.b.##.png"), UsageError);
}

TEST(ImageSequence, FindsExistingFramesInOrderAndIgnoresLookalikes) {
  const fs::path dir = fs::temp_directory_path() / "kinema_image_sequence_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* name :
       {"shot.0003.png", "shot.0001.png", "shot.0010.png", "shot.12345.png", "shot.001.png",
        "shot.0002.exr", "shot.00012.png", "other.0004.png", "shot.00x1.png"})
    std::ofstream(dir / name) << "x";
  const auto frames =
      find_sequence_frames(parse_sequence_pattern((dir / "shot.####.png").string()));
  EXPECT_EQ(frames, (std::vector<int>{1, 3, 10, 12345}));
  EXPECT_TRUE(
      find_sequence_frames(parse_sequence_pattern((dir / "none/x.####.png").string())).empty());
}

}  // namespace
}  // namespace kinema::composite
