// tests/graph/graph_compression_test.cpp — a graph's "compression" member: every clip compressed
// within the bound and sampled compressed (kinema/compress), on the bundled walk/run locomotion
// graph (real mocap, root motion, phase-synchronized blend space) against the same graph on
// runtime clips; and bad "compression" values.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/graph/graph.h"
#include "kinema/graph/graph_builder.h"
#include "kinema/graph/graph_instance.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/graph_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kGraph = test_paths::source_dir() + "/data/demo/locomotion.graph.json";

/// Options that read the graph's clips from disk.
GraphBuildOptions files() {
  GraphBuildOptions o;
  o.load_file = [](const std::string& path) { return load_asset(path); };
  o.clips_are_files = true;
  return o;
}

/// The bundled graph with `member` added at the top level.
std::string with_member(const std::string& member) {
  std::string text = read_file(kGraph);
  const size_t at = text.find("\"root_motion\"");
  EXPECT_NE(at, std::string::npos);
  return text.insert(at, member + ",\n  ");
}

TEST(GraphCompression, CompressedClipsPlayWithinTheBoundOfRuntimeClips) {
  const BuiltGraph plain_build = load_anim_graph(kGraph);
  const AnimGraph& plain = plain_build.graph;
  const BuiltGraph packed_build =
      build_graph(with_member(R"("compression": {"max_error_cm": 0.01})"), kGraph, files());
  const AnimGraph& packed = packed_build.graph;
  ASSERT_TRUE(packed_build.compression.enabled);
  EXPECT_DOUBLE_EQ(packed_build.compression.max_error, 1e-4);
  ASSERT_EQ(packed.clips().size(), 2u);
  for (const GraphClip& c : packed.clips()) {
    ASSERT_TRUE(c.compressed.has_value()) << c.name;
    EXPECT_EQ(c.runtime.frame_count(), 0) << "the runtime form is not kept";
    EXPECT_NEAR(c.duration(), plain.clips()[&c - packed.clips().data()].duration(), 1e-3);
    EXPECT_LT(c.compressed->memory_bytes(),
              plain.clips()[&c - packed.clips().data()].runtime.memory_bytes());
  }
  GraphInstance a(plain), b(packed);
  const size_t soa = size_t(plain.soa_count());
  std::vector<SoaTransform> pa(soa), pb(soa);
  const size_t joints = size_t(plain.runtime_skeleton().joint_count());
  std::vector<Mat4f> ma(joints), mb(joints);
  double worst = 0;
  for (int frame = 0; frame < 240; ++frame) {  // 4 s at 60 fps, speed 1.5 → 4.5 m/s
    const float speed = 1.5f + 3.0f * float(frame) / 240;
    a.set_float("speed", speed);
    b.set_float("speed", speed);
    ASSERT_TRUE(a.update(1.0f / 60) && b.update(1.0f / 60));
    ASSERT_TRUE(a.evaluate(pa) && b.evaluate(pb));
    ASSERT_TRUE(local_to_model(plain.runtime_skeleton(), pa, ma));
    ASSERT_TRUE(local_to_model(packed.runtime_skeleton(), pb, mb));
    for (size_t j = 0; j < joints; ++j)
      worst = std::max(worst, double(distance(ma[j].translation_part(), mb[j].translation_part())));
    // Root motion comes from the raw clips either way.
    EXPECT_NEAR(a.world().translation.z, b.world().translation.z, 1e-9);
  }
  // The compressed clips are within 0.01 cm of the raw ones; the runtime clips store rotations
  // in 16 bits (≈ 0.002°), a few hundredths of a millimetre at arm's length; blending weights
  // sum to one, so the poses stay within the sum.
  EXPECT_LT(worst, 2e-4) << "max joint distance " << worst * 1e3 << " mm";
}

TEST(GraphCompression, BadCompressionMembersNameThePointer) {
  const auto message = [](const std::string& member) {
    try {
      build_graph(with_member(member), kGraph, files());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(message(R"("compression": {"max_error_cm": -1})").find("/compression/max_error_cm"),
            std::string::npos);
  EXPECT_NE(message(R"("compression": {"error": 1})").find("error"), std::string::npos);
  EXPECT_NE(message(R"("compression": {"vertex_distance_cm": 0})").find("must be positive"),
            std::string::npos);
  EXPECT_EQ(message(R"("compression": false)"), "loaded");
  EXPECT_EQ(message(R"("compression": true)"), "loaded");
}

}  // namespace
}  // namespace kinema
