// The locomotion_warp node (kinema/graph/graph.h: LocomotionWarpNode) on the CMU 02_01 walk:
// identity at scale 1 and angle 0, the stride scaled along the movement, the legs turned while
// the chest keeps its facing, parameters read every frame, and clear errors for bad definitions.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph_test_util.h"
#include "kinema/io/asset_file.h"
#include "test_paths.h"

namespace kinema {
namespace {

using namespace graph_test;

const std::string kWalkFile = test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh";

std::map<std::string, Asset> warp_walk_files() {
  Asset walk = load_asset(kWalkFile);
  walk.clips.at(0).name = "walk";
  return {{"walk.bvh", walk}};
}

const char* kLegs = R"([{"hip": "LeftUpLeg", "knee": "LeftLeg", "ankle": "LeftFoot"},
                        {"hip": "RightUpLeg", "knee": "RightLeg", "ankle": "RightFoot"}])";

std::string walk_graph(const std::string& root) {
  return std::string(R"({"parameters": [{"name": "scale", "type": "float", "default": 1},
                                        {"name": "angle", "type": "float"}],
                         "clips": [{"name": "walk", "file": "walk.bvh", "clip": "walk"}],
                         "root": )") +
         root + "}";
}

std::string warp_node(const std::string& extra = "") {
  return std::string(R"({"type": "locomotion_warp", "input": "walk", "pelvis": "Hips",
                         "stride_scale": "scale", "direction": "angle", "legs": )") +
         kLegs + extra + "}";
}

TEST(GraphLocomotionWarp, ScaleOneAndNoTurnPlayTheClipAsItIs) {
  Player plain(parse_graph(walk_graph(R"("walk")"), warp_walk_files()));
  Player warped(parse_graph(walk_graph(warp_node(R"(, "spine": ["LowerBack", "Spine", "Spine1"])")),
                            warp_walk_files()));
  for (int i = 0; i < 20; ++i) {
    plain.tick(1 / 30.0f);
    warped.tick(1 / 30.0f);
    ASSERT_EQ(std::memcmp(plain.pose.data(), warped.pose.data(),
                          plain.pose.size() * sizeof(SoaTransform)),
              0)
        << i;
  }
}

TEST(GraphLocomotionWarp, StrideScalesAlongTheMovementAndBonesKeepTheirLengths) {
  Player plain(parse_graph(walk_graph(R"("walk")"), warp_walk_files()));
  Player warped(parse_graph(walk_graph(warp_node()), warp_walk_files()));
  warped.g.set_float("scale", 1.25f);
  const int hips = warped.joint("Hips");
  const std::array<int, 2> ankles{warped.joint("LeftFoot"), warped.joint("RightFoot")};
  const auto parents = warped.graph.runtime_skeleton().parents();
  double largest_change = 0;
  for (int i = 0; i < 40; ++i) {
    plain.tick(1 / 30.0f);
    warped.tick(1 / 30.0f);
    const std::vector<Transform> a = plain.model(), b = warped.model();
    for (const int ankle : ankles) {
      const size_t k = static_cast<size_t>(ankle);
      // Facing +Z: the ankle's z offset from the hips' vertical grows by the scale, x stays.
      const double along = a[k].translation.z - a[static_cast<size_t>(hips)].translation.z;
      EXPECT_NEAR(b[k].translation.z - a[k].translation.z, 0.25 * along, 2e-5) << i;
      EXPECT_NEAR(b[k].translation.x, a[k].translation.x, 2e-5) << i;
      largest_change = std::max(largest_change, std::abs(0.25 * along));
    }
    for (size_t j = 1; j < a.size(); ++j) {
      const size_t p = static_cast<size_t>(parents[j]);
      EXPECT_NEAR(length(b[j].translation - b[p].translation),
                  length(a[j].translation - a[p].translation), 2e-5)
          << j;
    }
  }
  EXPECT_GT(largest_change, 0.05);  // the walk's feet do reach out
}

TEST(GraphLocomotionWarp, LegsTurnTowardsTheMovementAndTheChestDoesNot) {
  Player plain(parse_graph(walk_graph(R"("walk")"), warp_walk_files()));
  Player warped(parse_graph(
      walk_graph(warp_node(R"(, "spine": ["LowerBack", "Spine", "Spine1"], "max_angle": 45)")),
      warp_walk_files()));
  warped.g.set_float("angle", 60);  // clamped to 45
  plain.tick(0.2f);
  warped.tick(0.2f);
  const std::vector<Transform> a = plain.model(), b = warped.model();
  const Quat turn = Quat::from_axis_angle({0, 1, 0}, radians(45.0));
  const size_t hips = static_cast<size_t>(warped.joint("Hips"));
  const size_t chest = static_cast<size_t>(warped.joint("Spine1"));
  const size_t head = static_cast<size_t>(warped.joint("Head"));
  EXPECT_NEAR(std::abs(dot(b[hips].rotation, turn * a[hips].rotation)), 1.0, 1e-6);
  EXPECT_NEAR(std::abs(dot(b[chest].rotation, a[chest].rotation)), 1.0, 1e-6);
  EXPECT_NEAR(std::abs(dot(b[head].rotation, a[head].rotation)), 1.0, 1e-6);
  const size_t ankle = static_cast<size_t>(warped.joint("LeftFoot"));
  const Vec3 pelvis = a[hips].translation;
  EXPECT_NEAR(length(b[ankle].translation - (pelvis + rotate(turn, a[ankle].translation - pelvis))),
              0.0, 1e-5);
  // Parameters are read every frame: back to 0 plays the clip again.
  warped.g.set_float("angle", 0);
  plain.tick(0.1f);
  warped.tick(0.1f);
  EXPECT_EQ(
      std::memcmp(plain.pose.data(), warped.pose.data(), plain.pose.size() * sizeof(SoaTransform)),
      0);
}

TEST(GraphLocomotionWarp, BadDefinitionsNameTheirPlace) {
  const auto message = [](const std::string& root) {
    return std::string(graph_error(walk_graph(root), warp_walk_files()).what());
  };
  EXPECT_NE(message(R"({"type": "locomotion_warp", "input": "walk", "pelvis": "Pelvis", "legs": )" +
                    std::string(kLegs) + "}")
                .find("no joint 'Pelvis'"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "locomotion_warp", "input": "walk", "pelvis": "Hips", "legs": [
                        {"hip": "LeftLeg", "knee": "LeftUpLeg", "ankle": "LeftFoot"}]})")
                .find("/root/legs/0"),
            std::string::npos);
  EXPECT_NE(message(warp_node(R"(, "spine": ["Spine", "LowerBack"])")).find("/root/spine/0"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "locomotion_warp", "input": "walk", "pelvis": "Hips", "legs": []})")
                .find("1 to 4 legs"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "locomotion_warp", "input": "walk", "pelvis": "Hips",
                        "stride_scale": 0, "legs": )" +
                    std::string(kLegs) + "}")
                .find("/root/stride_scale"),
            std::string::npos);
  EXPECT_NE(message(warp_node(R"(, "facing": [0, 1, 0])")).find("/root/facing"), std::string::npos);
  EXPECT_NE(message(warp_node(R"(, "max_extension": 1.5)")).find("/root/max_extension"),
            std::string::npos);
  EXPECT_NE(message(warp_node(R"(, "pole": 1)")).find("pole"), std::string::npos);
}

}  // namespace
}  // namespace kinema
