// Blend trees through the graph: the worked numbers of docs/worked_examples.md for 1D/2D blend
// spaces, phase synchronization, speed correction, root motion, additive and layered blends.
#include "graph_test_util.h"

namespace kinema {
namespace {

using namespace graph_test;

/// A graph whose root is `root` (JSON), with float parameters and the given clips of anim.glb.
std::string graph_with(const std::string& root, const std::vector<std::string>& clips,
                       const std::vector<std::string>& params, const std::string& extra = "") {
  std::string s = R"({"parameters": [)";
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? "," : "") + std::string(R"({"name": ")") + params[i] + R"(", "type": "float"})";
  s += R"(], "clips": [)";
  for (size_t i = 0; i < clips.size(); ++i)
    s += (i ? "," : "") + std::string(R"({"name": ")") + clips[i] +
         R"(", "file": "anim.glb", "clip": ")" + clips[i] + R"("})";
  return s + "]," + extra + R"("root": )" + root + "}";
}

// Hip 20° in the walk (1.5 m/s), 50° in the run (4.5 m/s); at 2.5 m/s the blend
// weight of the run is (2.5 − 1.5)/(4.5 − 1.5) = 1/3, so the hip is 20° + (50° − 20°)/3 = 30°.
TEST(GraphBlend, Blend1DHipAngleAtTrotSpeed) {
  const Skeleton s = make_skeleton();
  Player p(parse_graph(graph_with(R"({"type": "blend1d", "parameter": "speed", "samples": [
                                       {"clip": "walk", "position": 1.5},
                                       {"clip": "run", "position": 4.5}]})",
                                  {"walk", "run"}, {"speed"}),
                       {{"anim.glb", make_asset(s, {angle_clip(s, "walk", kLeftUpLeg, 20, 1.2),
                                                    angle_clip(s, "run", kLeftUpLeg, 50, 0.8)})}}));
  p.g.set_float("speed", 2.5f);
  p.tick(0.1f);
  // nlerp (a weighted sum normalized once, as most engines do) lands within 0.05° of it.
  EXPECT_NEAR(angle_x(p.pose, kLeftUpLeg), 30.0, 0.05);
  p.g.set_float("speed", 1.0f);  // outside the samples: the nearest one
  p.tick(0.1f);
  EXPECT_NEAR(angle_x(p.pose, kLeftUpLeg), 20.0, 1e-3);
}

// Walk 1.2 s cycle at 1.5 m/s, run 0.8 s at 4.5 m/s, 2.0 m/s between them:
// w_run = 1/6, the blended cycle lasts T = 1.1333 s and covers 2.1 m (1.853 m/s); the exact-speed
// weights (w_run = 0.2308) or a 1.079× playback make it 2.0 m/s.
TEST(GraphBlend, PhaseSyncStrideAndSpeedCorrection) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb", make_asset(s, {angle_clip(s, "walk", kSpine, 0, 1.2, 1.5),
                                  angle_clip(s, "run", kSpine, 30, 0.8, 4.5)})}};
  for (const char* correction : {"none", "weights", "playback"}) {
    SCOPED_TRACE(correction);
    const std::string root = std::string(R"({"type": "blend1d", "parameter": "speed",
      "speed_correction": ")") +
                             correction + R"(", "samples": [
        {"clip": "walk", "position": 1.5}, {"clip": "run", "position": 4.5}]})";
    Player p(parse_graph(
        graph_with(root, {"walk", "run"}, {"speed"}, R"("root_motion": {"joint": "Hips"},)"),
        files));
    EXPECT_NEAR(p.graph.clips()[0].root_speed, 1.5, 1e-6);
    EXPECT_NEAR(p.graph.clips()[1].root_speed, 4.5, 1e-6);
    p.g.set_float("speed", 2.0f);
    const int steps = 136;  // 136 / 120 = 1.1333 s, one blended cycle without correction
    for (int i = 0; i < steps; ++i) p.tick(1.0f / 120);
    const double seconds = steps / 120.0;
    const double distance = p.g.world().translation.z;
    EXPECT_NEAR(p.g.world().translation.x, 0, 1e-9);
    if (std::string(correction) == "none") {
      EXPECT_NEAR(p.g.normalized_time(p.graph.root()), 1.0, 1e-3) << "one synchronized cycle";
      EXPECT_NEAR(distance, 2.1, 2e-3);
      EXPECT_NEAR(distance / seconds, 1.853, 1e-3);
    } else {
      EXPECT_NEAR(distance / seconds, 2.0, 1e-3);
    }
  }
}

// With sync markers the clips start on different feet (the run's L is at 0.6 of its cycle), so
// the run wraps while the shared phase does not; the root motion still adds up to one stride of
// each clip per cycle: 2.1 m in 1.1333 s at 2.0 m/s.
TEST(GraphBlend, SyncMarkersKeepTheStride) {
  const Skeleton s = make_skeleton();
  Player p(
      parse_graph(graph_with(R"({"type": "blend1d", "parameter": "speed", "samples": [
                   {"clip": "walk", "position": 1.5,
                    "markers": [{"id": "L", "time": 0.0}, {"id": "R", "time": 0.5}]},
                   {"clip": "run", "position": 4.5,
                    "markers": [{"id": "R", "time": 0.1}, {"id": "L", "time": 0.6}]}]})",
                             {"walk", "run"}, {"speed"}, R"("root_motion": {"joint": "Hips"},)"),
                  {{"anim.glb", make_asset(s, {angle_clip(s, "walk", kSpine, 0, 1.2, 1.5),
                                               angle_clip(s, "run", kSpine, 30, 0.8, 4.5)})}}));
  p.g.set_float("speed", 2.0f);
  double last = 0;
  for (int i = 0; i < 136 * 3; ++i) {
    p.tick(1.0f / 120);
    const double z = p.g.world().translation.z;
    ASSERT_GT(z, last) << "the character never steps back (frame " << i << ")";
    last = z;
  }
  EXPECT_NEAR(last, 3 * 2.1, 6e-3);
  EXPECT_NEAR(p.g.normalized_time(p.graph.root()), 3.0, 3e-3);
}

// A walk moving 1.8 m per 1.2 s cycle moves 0.025 m per 60 fps frame along +Z; a
// character turned 30° about +Y moves by R_y(30°)·(0, 0, 0.025) = (0.0125, 0, 0.0217) m.
TEST(GraphBlend, RootMotionStepTurnsWithTheCharacter) {
  const Skeleton s = make_skeleton();
  for (const char* rotation : {"true", "false"}) {
    Player p(parse_graph(
        graph_with(
            R"("walk")", {"walk"}, {},
            std::string(R"("root_motion": {"joint": "Hips", "rotation": )") + rotation + "},"),
        {{"anim.glb", make_asset(s, {angle_clip(s, "walk", kSpine, 0, 1.2, 1.5)})}}));
    p.g.set_world(RootDelta{{0, 0, 0}, radians(30.0)});
    p.tick(1.0f / 60);
    EXPECT_NEAR(p.g.root_motion().translation.z, 0.025, 1e-6);
    EXPECT_NEAR(p.g.world().translation.x, 0.0125, 1e-5);
    EXPECT_NEAR(p.g.world().translation.z, 0.0217, 1e-4);
    EXPECT_NEAR(p.g.world().yaw, radians(30.0), 1e-9);
    // The pose is in place: the hips stay over the origin however far the clip walks.
    EXPECT_NEAR(get_joint(p.pose, kHips).translation.z, 0, 1e-5);
    EXPECT_NEAR(get_joint(p.pose, kHips).translation.y, 1, 1e-5);
  }
}

// Idle at the centre, walks at 1.5 and runs at 4.5 m/s in four directions; the
// point (1.0, 2.5) lies in the triangle forward run, forward walk, right run with weights
// 0.444, 0.333, 0.222.
TEST(GraphBlend, Blend2DTriangleWeights) {
  const Skeleton s = make_skeleton();
  struct Sample {
    const char* name;
    double x, y;
  };
  const Sample samples[] = {{"idle", 0, 0},     {"walk_f", 0, 1.5},  {"walk_b", 0, -1.5},
                            {"walk_r", 1.5, 0}, {"walk_l", -1.5, 0}, {"run_f", 0, 4.5},
                            {"run_b", 0, -4.5}, {"run_r", 4.5, 0},   {"run_l", -4.5, 0}};
  // Clip i lifts one translation channel (joint i / 3 + 1, axis i % 3) by 1 m, so the blended
  // pose shows each clip's weight on its own channel.
  std::vector<Clip> clips;
  std::vector<std::string> names;
  std::string list;
  for (int i = 0; i < 9; ++i) {
    clips.push_back(make_clip(s, samples[i].name, 1, [i](double, std::vector<Transform>& pose) {
      pose[static_cast<size_t>(i / 3 + 1)].translation[i % 3] += 1;
    }));
    names.push_back(samples[i].name);
    list += std::string(i ? "," : "") + R"({"clip": ")" + samples[i].name + R"(", "position": [)" +
            std::to_string(samples[i].x) + "," + std::to_string(samples[i].y) + "]}";
  }
  Player p(parse_graph(
      graph_with(R"({"type": "blend2d", "parameters": ["vx", "vy"], "samples": [)" + list + "]}",
                 names, {"vx", "vy"}),
      {{"anim.glb", make_asset(s, clips)}}));
  p.g.set_float("vx", 1.0f);
  p.g.set_float("vy", 2.5f);
  p.tick(0.1f);
  const std::vector<Transform> rest = s.rest_pose();
  const auto weight = [&](int i) {
    const int j = i / 3 + 1;
    return get_joint(p.pose, j).translation[i % 3] -
           rest[static_cast<size_t>(j)].translation[i % 3];
  };
  EXPECT_NEAR(weight(5), 0.444, 1e-3);  // forward run
  EXPECT_NEAR(weight(1), 0.333, 1e-3);  // forward walk
  EXPECT_NEAR(weight(7), 0.222, 1e-3);  // right run
  for (int i : {0, 2, 3, 4, 6, 8}) EXPECT_NEAR(weight(i), 0, 1e-6) << samples[i].name;
}

// A flinch bends the spine 12° about x; added to a run at 20° with weight 0.5 the
// spine is at 20° + 0.5·12° = 26°.
TEST(GraphBlend, AdditiveFlinchOnARun) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb",
       make_asset(s, {angle_clip(s, "run", kSpine, 20), angle_clip(s, "flinch", kSpine, 12),
                      angle_clip(s, "flinch_ref", kSpine, 0)})}};
  Player p(parse_graph(graph_with(R"({"type": "additive", "base": "run", "additive": "flinch",
                                      "reference": {"clip": "flinch_ref", "time": 0},
                                      "weight": "amount"})",
                                  {"run", "flinch", "flinch_ref"}, {"amount"}),
                       files));
  p.g.set_float("amount", 0.5f);
  p.tick(0.1f);
  EXPECT_NEAR(angle_x(p.pose, kSpine), 26.0, 1e-3);
  p.g.set_float("amount", 0.0f);
  p.tick(0.1f);
  EXPECT_NEAR(angle_x(p.pose, kSpine), 20.0, 1e-3);
  // The same flinch as an additive layer over the rest pose reference.
  Player layer(parse_graph(graph_with(R"({"type": "layer", "base": "run", "layers": [
                                          {"node": "flinch", "mode": "additive", "reference": "rest",
                                           "weight": 0.5}]})",
                                      {"run", "flinch", "flinch_ref"}, {}),
                           files));
  layer.tick(0.1f);
  EXPECT_NEAR(angle_x(layer.pose, kSpine), 26.0, 1e-3);
}

// A spine joint with mask 0.5, at 0° in the run and 40° in the aim, ends at 20°;
// a ramp 0.25, 0.5, 0.75 along the spine spreads the twist.
TEST(GraphBlend, LayerMaskAndSpineRamp) {
  const Skeleton s = make_skeleton();
  const Clip aim = make_clip(s, "aim", 1, [](double, std::vector<Transform>& p) {
    for (int j : {kSpine, kChest, kHead, kLeftUpLeg})
      p[static_cast<size_t>(j)].rotation = rot_x(40);
  });
  const std::map<std::string, Asset> files = {
      {"anim.glb", make_asset(s, {angle_clip(s, "run", kSpine, 0), aim})}};
  Player half(parse_graph(graph_with(R"({"type": "layer", "base": "run", "layers": [
                                         {"node": "aim", "mask": {"joint": "Spine", "weight": 0.5}}]})",
                                     {"run", "aim"}, {}),
                          files));
  half.tick(0.1f);
  EXPECT_NEAR(angle_x(half.pose, kSpine), 20.0, 1e-3);
  EXPECT_NEAR(angle_x(half.pose, kLeftUpLeg), 0.0, 1e-6) << "outside the mask";
  Player ramp(parse_graph(graph_with(R"({"type": "layer", "base": "run", "layers": [
                                         {"node": "aim", "weight": "w",
                                          "mask": {"joint": "Spine", "ramp": [0.25, 0.5, 0.75]}}]})",
                                     {"run", "aim"}, {"w"}),
                          files));
  ramp.g.set_float("w", 1);
  ramp.tick(0.1f);
  // apply_layers moves override layers by nlerp: exact at 0.5, within 0.1° at 0.25 and 0.75.
  EXPECT_NEAR(angle_x(ramp.pose, kSpine), 10.0, 0.1);
  EXPECT_NEAR(angle_x(ramp.pose, kChest), 20.0, 1e-3);
  EXPECT_NEAR(angle_x(ramp.pose, kHead), 30.0, 0.1);
  EXPECT_NEAR(angle_x(ramp.pose, kLeftUpLeg), 0.0, 1e-6);
  ramp.g.set_float("w", 5);  // a layer weight is clamped to [0, 1]
  ramp.tick(0.1f);
  EXPECT_NEAR(angle_x(ramp.pose, kHead), 30.0, 0.1);
}

TEST(GraphBlend, UnsyncedBlendAndClipRateAndLoop) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb", make_asset(s, {moving_clip(s, "turn", kSpine, 0, 10, 2),
                                  moving_clip(s, "turn2", kSpine, 0, 10, 1)})}};
  // A clip node at rate 2 without looping stops at its end.
  Player clamp(
      parse_graph(graph_with(R"({"type": "clip", "clip": "turn", "rate": 2, "loop": false})",
                             {"turn", "turn2"}, {}),
                  files));
  clamp.tick(0.5f);
  EXPECT_NEAR(angle_x(clamp.pose, kSpine), 10.0, 1e-2);  // clip time 1 s
  clamp.tick(5.0f);
  EXPECT_NEAR(angle_x(clamp.pose, kSpine), 20.0, 1e-2);
  EXPECT_NEAR(clamp.g.normalized_time(clamp.graph.root()), 1.0, 1e-6);
  // Backwards from the end.
  Player back(parse_graph(
      graph_with(R"({"type": "clip", "clip": "turn", "rate": -1})", {"turn", "turn2"}, {}), files));
  back.tick(0.5f);
  EXPECT_NEAR(angle_x(back.pose, kSpine), 15.0, 1e-2);
  // sync: false plays each sample at its own rate.
  Player free_(parse_graph(graph_with(R"({"type": "blend1d", "parameter": "x", "sync": false,
                                          "samples": [{"clip": "turn", "position": 0},
                                                      {"clip": "turn2", "position": 1}]})",
                                      {"turn", "turn2"}, {"x"}),
                           files));
  free_.g.set_float("x", 0.0f);
  free_.tick(1.5f);
  EXPECT_NEAR(angle_x(free_.pose, kSpine), 15.0, 1e-2);
  free_.g.set_float("x", 1.0f);
  free_.tick(0.0f);
  EXPECT_NEAR(angle_x(free_.pose, kSpine), 5.0, 1e-2) << "turn2 wrapped at 1 s";
}

}  // namespace
}  // namespace kinema
