// No allocation per frame: a graph with every node type (clip, blend1d, blend2d, additive,
// layer with a mask and an additive layer, a nested state machine, crossfades, inertialized and
// any-state transitions, triggers, root motion) runs thousands of frames while a replaced global
// operator new counts every allocation of this test program.
#include "common/alloc_counter.h"
#include "common/replace_global_new.h"
#include "graph_test_util.h"

namespace kinema {
namespace {

using namespace graph_test;

const char* kEveryNode = R"({
  "parameters": [
    {"name": "speed", "type": "float", "default": 1},
    {"name": "vx", "type": "float"}, {"name": "vy", "type": "float"},
    {"name": "lean", "type": "float"}, {"name": "aim", "type": "float"},
    {"name": "armed", "type": "bool"}, {"name": "hit", "type": "trigger"},
    {"name": "jump", "type": "trigger"}
  ],
  "clips": [
    {"name": "walk", "file": "anim.glb", "clip": "walk"},
    {"name": "run", "file": "anim.glb", "clip": "run"},
    {"name": "strafe", "file": "anim.glb", "clip": "strafe"},
    {"name": "lean", "file": "anim.glb", "clip": "lean"},
    {"name": "aim", "file": "anim.glb", "clip": "aim"}
  ],
  "root_motion": {"joint": "Hips"},
  "nodes": [
    {"name": "move1d", "type": "blend1d", "parameter": "speed", "speed_correction": "playback",
     "samples": [{"clip": "walk", "position": 1.5}, {"clip": "run", "position": 4.5}]},
    {"name": "move2d", "type": "blend2d", "parameters": ["vx", "vy"],
     "samples": [{"clip": "walk", "position": [0, 1]}, {"clip": "run", "position": [0, 4]},
                 {"clip": "strafe", "position": [2, 0]}]},
    {"name": "leaning", "type": "additive", "base": "move1d", "additive": "lean",
     "reference": {"clip": "lean", "time": 0}, "weight": "lean"},
    {"name": "upper", "type": "layer", "base": "leaning", "layers": [
      {"node": "aim", "weight": "aim", "mask": {"joint": "Spine", "ramp": [0.25, 0.5, 0.75]}},
      {"node": "lean", "mode": "additive", "reference": "rest", "weight": 0.3}]},
    {"name": "combat", "type": "state_machine", "states": [
        {"name": "relaxed", "node": "upper"}, {"name": "strafing", "node": "move2d"}],
      "transitions": [
        {"from": "relaxed", "to": "strafing", "blend": "inertialize", "duration": 0.2,
         "conditions": [{"parameter": "armed"}]},
        {"from": "strafing", "to": "relaxed", "blend": "crossfade", "duration": 0.25,
         "conditions": [{"parameter": "armed", "value": false}]}]}
  ],
  "root": {"type": "state_machine", "initial": "locomotion", "states": [
      {"name": "locomotion", "node": "combat"},
      {"name": "flinch", "node": {"type": "clip", "clip": "lean", "loop": false}},
      {"name": "jumping", "node": {"type": "clip", "clip": "aim", "rate": 1.5}}],
    "transitions": [
      {"from": "*", "to": "flinch", "blend": "inertialize", "duration": 0.15, "priority": 2,
       "conditions": [{"parameter": "hit"}]},
      {"from": "locomotion", "to": "jumping", "blend": "crossfade", "duration": 0.1,
       "conditions": [{"parameter": "jump"}, {"parameter": "speed", "op": ">", "value": 2}]},
      {"from": "flinch", "to": "locomotion", "blend": "inertialize", "duration": 0.3,
       "exit_time": 1.0},
      {"from": "jumping", "to": "locomotion", "blend": "crossfade", "duration": 0.2,
       "exit_time": 0.8}]}
})";

/// The graph above, optionally with every clip compressed (the "compression" member).
AnimGraph every_node_graph(bool compressed = false) {
  const Skeleton s = make_skeleton();
  std::string text = kEveryNode;
  if (compressed) text.insert(text.find("\"clips\""), R"("compression": {"max_error_cm": 0.01}, )");
  return parse_graph(text,
                     {{"anim.glb", make_asset(s, {angle_clip(s, "walk", kLeftUpLeg, 20, 1.2, 1.5),
                                                  angle_clip(s, "run", kLeftUpLeg, 50, 0.8, 4.5),
                                                  moving_clip(s, "strafe", kLeftLeg, 0, 30, 1.0),
                                                  moving_clip(s, "lean", kSpine, 0, 20, 0.6),
                                                  moving_clip(s, "aim", kChest, 10, 40, 0.9)})}});
}

class GraphAlloc : public ::testing::TestWithParam<bool> {};

// Runtime clips, and compressed clips (their per-instance caches are sized at construction).
TEST_P(GraphAlloc, NoAllocationPerFrame) {
  const AnimGraph graph = every_node_graph(GetParam());
  for (const GraphClip& c : graph.clips()) ASSERT_EQ(c.compressed.has_value(), GetParam());
  test::start_counting_allocations();
  GraphInstance g(graph);
  EXPECT_GT(test::stop_counting_allocations(), 0)
      << "the counter sees the instance's own allocations";

  const ParamHandle speed = g.parameter("speed"), vx = g.parameter("vx"), vy = g.parameter("vy"),
                    lean = g.parameter("lean"), aim = g.parameter("aim"),
                    armed = g.parameter("armed"), hit = g.parameter("hit"),
                    jump = g.parameter("jump");
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  bool ok = true;
  test::start_counting_allocations();
  for (int f = 0; f < 6000; ++f) {
    const float t = static_cast<float>(f) / 60;
    ok &= g.set_float(speed, 1.0f + 3.0f * (0.5f + 0.5f * std::sin(t * 0.7f)));
    ok &= g.set_float(vx, 2.0f * std::cos(t));
    ok &= g.set_float(vy, 2.0f + 2.0f * std::sin(t * 1.3f));
    ok &= g.set_float(lean, 0.5f + 0.5f * std::sin(t * 2.0f));
    ok &= g.set_float(aim, f % 300 < 150 ? 1.0f : 0.0f);
    ok &= g.set_bool(armed, f % 240 < 120);
    if (f % 400 == 200) ok &= g.fire(hit);
    if (f % 170 == 50) ok &= g.fire(jump);
    ok &= g.update(1.0f / 60);
    ok &= g.evaluate(pose);
  }
  const long allocations = test::stop_counting_allocations();
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0) << "allocations during 6000 frames";
  // Every kind of transition happened.
  const auto machines = g.machines();
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_GT(machines[0].transitions_taken, 20);  // combat: inertialize and crossfade
  EXPECT_GT(machines[1].transitions_taken, 20);  // root: any-state, exit times, triggers
  EXPECT_GT(length(g.world().translation), 10.0) << "root motion moved the character";
  for (const SoaTransform& s : pose)
    for (int l = 0; l < 4; ++l) ASSERT_TRUE(std::isfinite(s.qw[l]) && std::isfinite(s.tx[l]));
}

INSTANTIATE_TEST_SUITE_P(Clips, GraphAlloc, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Compressed" : "Runtime"; });

}  // namespace
}  // namespace kinema
