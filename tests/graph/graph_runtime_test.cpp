// Transitions through the graph (the inertialized elbow switch, continuity of crossfades
// and inertialized switches, interrupted transitions) and determinism.
#include <cstring>

#include "graph_test_util.h"

namespace kinema {
namespace {

using namespace graph_test;

std::string two_states(const std::string& blend, double duration, const std::string& extra = "") {
  return R"({
    "parameters": [{"name": "go", "type": "trigger"}, {"name": "again", "type": "trigger"}],
    "clips": [{"name": "old", "file": "anim.glb", "clip": "old"},
              {"name": "new", "file": "anim.glb", "clip": "new"},
              {"name": "third", "file": "anim.glb", "clip": "third"}],
    "root": {"type": "state_machine",
      "states": [{"name": "A", "node": "old"}, {"name": "B", "node": "new"},
                 {"name": "C", "node": "third"}],
      "transitions": [
        {"from": "A", "to": "B", "blend": ")" +
         blend + R"(", "duration": )" + std::to_string(duration) +
         R"(, "conditions": [{"parameter": "go"}]})" + extra + "]}}";
}

// At the switch the elbow is at 30° moving −45°/s in the old clip and at 10° moving +15°/s in the
// new one; inertialized over 0.3 s, at t = 0.15 s it is at 10 + 15·0.15 + 7.19 = 19.44°
// (docs/worked_examples.md, "Inertialization").
TEST(GraphRuntime, InertializedSwitchFollowsTheElbowQuintic) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb",
       make_asset(s, {moving_clip(s, "old", kSpine, 75, -45), moving_clip(s, "new", kSpine, 10, 15),
                      moving_clip(s, "third", kSpine, 0, 0)})}};
  const AnimGraph graph = parse_graph(two_states("inertialize", 0.3), files);
  GraphInstance g(graph);
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  const float dt = 1.0f / 600;
  for (int i = 0; i < 599; ++i) step(g, dt, pose);
  g.fire("go");
  step(g, dt, pose);  // the old clip reaches 1 s (30°) and the machine switches
  EXPECT_EQ(state_of(g), "B");
  EXPECT_NEAR(angle_x(pose, kSpine), 30.0, 1e-2) << "the switch shows the old pose";
  for (int i = 0; i < 90; ++i) step(g, dt, pose);  // 0.15 s later
  // One 1/600 s step of offset in the new clip's start moves it by 0.0125°.
  EXPECT_NEAR(angle_x(pose, kSpine), 19.44, 0.02);
  for (int i = 0; i < 90; ++i) step(g, dt, pose);
  EXPECT_NEAR(angle_x(pose, kSpine), 10 + 15 * (181.0 / 600), 1e-2) << "on the new clip after T";
  step(g, dt, pose);
  EXPECT_FALSE(g.machines()[0].blending);
}

struct Trace {
  std::vector<double> angle;
  int switch_frame = -1;
};

/// Plays A (turning +90°/s from 0°) and switches at 0.5 s to B (turning −90°/s from 120°), at
/// 60 fps; optionally interrupts with B → C after `interrupt` more frames.
Trace play(const std::string& blend, double duration, int interrupt = -1,
           const std::string& interrupt_blend = "inertialize") {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb",
       make_asset(s, {moving_clip(s, "old", kSpine, 0, 90), moving_clip(s, "new", kSpine, 120, -90),
                      moving_clip(s, "third", kSpine, 60, 90)})}};
  const std::string extra = R"(, {"from": "B", "to": "C", "blend": ")" + interrupt_blend +
                            R"(", "duration": 0.3, "conditions": [{"parameter": "again"}]})";
  const AnimGraph graph = parse_graph(two_states(blend, duration, extra), files);
  GraphInstance g(graph);
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  Trace t;
  for (int f = 0; f < 60; ++f) {
    if (f == 30) g.fire("go");
    if (interrupt >= 0 && f == 30 + interrupt) g.fire("again");
    step(g, 1.0f / 60, pose);
    if (f == 30) t.switch_frame = f;
    t.angle.push_back(angle_x(pose, kSpine));
  }
  return t;
}

double max_step(const Trace& t, int from = 1) {
  double m = 0;
  for (size_t i = static_cast<size_t>(from); i < t.angle.size(); ++i)
    m = std::max(m, std::abs(t.angle[i] - t.angle[i - 1]));
  return m;
}

TEST(GraphRuntime, TransitionsAreContinuous) {
  const double per_frame = 90.0 / 60;  // both clips turn 1.5° per frame
  const Trace cut = play("crossfade", 0);
  EXPECT_GT(max_step(cut), 60) << "a cut pops";
  for (const char* blend : {"crossfade", "inertialize"}) {
    SCOPED_TRACE(blend);
    const Trace t = play(blend, 0.3);
    // At the switch the joint keeps the speed it had; the frames after stay close to it (both
    // are C¹ at the start: the smoothstep weight and the inertializer's v0 continue the motion).
    const auto delta = [&](int f) {
      return t.angle[static_cast<size_t>(f)] - t.angle[static_cast<size_t>(f - 1)];
    };
    EXPECT_NEAR(delta(t.switch_frame), per_frame, 0.35);
    EXPECT_LT(std::abs(delta(t.switch_frame + 1)), 2 * per_frame + 0.5);
    EXPECT_LT(std::abs(delta(t.switch_frame + 2)), 2 * per_frame + 0.5);
    EXPECT_LT(max_step(t), 10.0);
    // And lands on the new clip (which an inertialized switch starts one step in, to measure
    // its velocity).
    const double b_time = (std::string(blend) == "inertialize" ? 30.0 : 29.0) / 60;
    EXPECT_NEAR(t.angle.back(), 120 - 90 * b_time, 0.05);
  }
}

TEST(GraphRuntime, InterruptedTransitionsAreContinuous) {
  for (const char* first : {"crossfade", "inertialize"})
    for (const char* second : {"crossfade", "inertialize"}) {
      SCOPED_TRACE(std::string(first) + " interrupted by " + second);
      const Trace t = play(first, 0.3, 6, second);
      EXPECT_LT(max_step(t), 10.0);
      const size_t f = static_cast<size_t>(t.switch_frame + 6);
      EXPECT_LT(std::abs(t.angle[f] - t.angle[f - 1]), 8.0) << "no pop at the interruption";
    }
}

// A blend space entered by an inertialized transition is sampled at once (its weights come from
// the parameters when it restarts, not from its first advance): no pop.
TEST(GraphRuntime, InertializeIntoABlendSpace) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb", make_asset(s, {moving_clip(s, "idle", kSpine, 30, 0, 1),
                                  moving_clip(s, "walk", kSpine, 40, 20, 1.2),
                                  moving_clip(s, "run", kSpine, 50, 20, 0.8)})}};
  const AnimGraph graph = parse_graph(R"({
    "parameters": [{"name": "speed", "type": "float", "default": 2}],
    "clips": [{"name": "idle", "file": "anim.glb", "clip": "idle"},
              {"name": "walk", "file": "anim.glb", "clip": "walk"},
              {"name": "run", "file": "anim.glb", "clip": "run"}],
    "root": {"type": "state_machine", "initial": "move", "states": [
        {"name": "still", "node": "idle"},
        {"name": "move", "node": {"type": "blend1d", "parameter": "speed", "samples": [
            {"clip": "walk", "position": 1.5}, {"clip": "run", "position": 4.5}]}}],
      "transitions": [
        {"from": "still", "to": "move", "blend": "inertialize", "duration": 0.3,
         "conditions": [{"parameter": "speed", "op": ">", "value": 1}]},
        {"from": "move", "to": "still", "blend": "inertialize", "duration": 0.3,
         "conditions": [{"parameter": "speed", "op": "<=", "value": 1}]}]}})",
                                      files);
  GraphInstance g(graph);
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  // Evaluated before any update: the blend at speed 2 (w_run = 1/6), not the rest pose.
  ASSERT_TRUE(g.evaluate(pose));
  EXPECT_NEAR(angle_x(pose, kSpine), 40 + 10.0 / 6, 0.05);
  std::vector<double> angles;
  for (int f = 0; f < 120; ++f) {
    g.set_float("speed", f < 40 || f >= 80 ? 2.0f : 0.5f);
    step(g, 1.0f / 60, pose);
    angles.push_back(angle_x(pose, kSpine));
  }
  EXPECT_EQ(g.machines()[0].transitions_taken, 2);
  for (size_t f = 1; f < angles.size(); ++f)
    EXPECT_LT(std::abs(angles[f] - angles[f - 1]), 3.0) << "frame " << f;  // a cut jumps 25°
}

TEST(GraphRuntime, Deterministic) {
  const Skeleton s = make_skeleton();
  const std::map<std::string, Asset> files = {
      {"anim.glb",
       make_asset(s, {moving_clip(s, "old", kSpine, 0, 90), moving_clip(s, "new", kSpine, 120, -90),
                      moving_clip(s, "third", kSpine, 60, 90)})}};
  const std::string extra =
      R"(, {"from": "B", "to": "C", "blend": "crossfade", "duration": 0.2,
            "conditions": [{"parameter": "again"}]},
          {"from": "C", "to": "A", "blend": "inertialize", "duration": 0.25, "exit_time": 0.4})";
  const AnimGraph g1 = parse_graph(two_states("inertialize", 0.3, extra), files);
  const AnimGraph g2 = parse_graph(two_states("inertialize", 0.3, extra), files);
  GraphInstance a(g1), b(g1), c(g2);
  std::vector<SoaTransform> pa(static_cast<size_t>(g1.soa_count())), pb(pa), pc(pa);
  for (int f = 0; f < 400; ++f) {
    const float dt = 1.0f / 60 + 0.001f * static_cast<float>(f % 7);
    for (GraphInstance* g : {&a, &b, &c}) {
      if (f % 50 == 10) g->fire("go");
      if (f % 50 == 25) g->fire("again");
    }
    step(a, dt, pa);
    step(b, dt, pb);
    step(c, dt, pc);
    ASSERT_EQ(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(SoaTransform)), 0) << f;
    ASSERT_EQ(std::memcmp(pa.data(), pc.data(), pa.size() * sizeof(SoaTransform)), 0) << f;
  }
  EXPECT_GT(a.machines()[0].transitions_taken, 10);
  // reset() returns to the start: the same run again is bit-identical too.
  std::vector<std::vector<SoaTransform>> first;
  for (int run = 0; run < 2; ++run) {
    a.reset();
    for (int f = 0; f < 100; ++f) {
      if (f == 10) a.fire("go");
      step(a, 1.0f / 30, pa);
      if (run == 0)
        first.push_back(pa);
      else
        ASSERT_EQ(std::memcmp(pa.data(), first[static_cast<size_t>(f)].data(),
                              pa.size() * sizeof(SoaTransform)),
                  0);
    }
  }
  // Bad input changes nothing.
  EXPECT_FALSE(a.update(-1));
  EXPECT_FALSE(a.update(std::nanf("")));
  std::vector<SoaTransform> wrong(pa.size() + 1);
  EXPECT_FALSE(a.evaluate(wrong));
}

}  // namespace
}  // namespace kinema
