// State-machine logic: conditions, priorities, exit times, triggers, any-state transitions and
// nested machines.
#include "graph_test_util.h"

namespace kinema {
namespace {

using namespace graph_test;

// Each state plays a clip holding the spine at its own angle: a = 0°, b = 10°, c = 20°, d = 30°.
std::map<std::string, Asset> files() {
  const Skeleton s = make_skeleton();
  return {{"anim.glb",
           make_asset(s, {angle_clip(s, "a", kSpine, 0), angle_clip(s, "b", kSpine, 10),
                          angle_clip(s, "c", kSpine, 20), angle_clip(s, "d", kSpine, 30)})}};
}

std::string make_graph(const std::string& transitions, const std::string& extra_params = "") {
  return R"({
    "parameters": [
      {"name": "x", "type": "float", "default": 0},
      {"name": "flag", "type": "bool"},
      {"name": "go", "type": "trigger"},
      {"name": "hit", "type": "trigger"})" +
         extra_params + R"(
    ],
    "clips": [
      {"name": "a", "file": "anim.glb", "clip": "a"}, {"name": "b", "file": "anim.glb", "clip": "b"},
      {"name": "c", "file": "anim.glb", "clip": "c"}, {"name": "d", "file": "anim.glb", "clip": "d"}
    ],
    "root": {"type": "state_machine", "states": [
      {"name": "A", "node": "a"}, {"name": "B", "node": "b"}, {"name": "C", "node": "c"},
      {"name": "D", "node": "d"}],
      "transitions": [)" +
         transitions + "]}}";
}

struct Machine {
  AnimGraph graph;
  GraphInstance g{graph};
  std::vector<SoaTransform> pose =
      std::vector<SoaTransform>(static_cast<size_t>(graph.soa_count()));
  explicit Machine(const std::string& transitions)
      : graph(parse_graph(make_graph(transitions), files())) {}
  std::string tick(float dt = 1.0f / 30) {
    step(g, dt, pose);
    return state_of(g);
  }
};

TEST(GraphMachine, FloatComparisons) {
  struct Case {
    const char* op;
    float value, below, at, above;  // x values and whether each fires
    bool fires_below, fires_at, fires_above;
  };
  const Case cases[] = {
      {">", 1, 0.5f, 1, 1.5f, false, false, true},  {"<", 1, 0.5f, 1, 1.5f, true, false, false},
      {">=", 1, 0.5f, 1, 1.5f, false, true, true},  {"<=", 1, 0.5f, 1, 1.5f, true, true, false},
      {"==", 1, 0.5f, 1, 1.5f, false, true, false}, {"!=", 1, 0.5f, 1, 1.5f, true, false, true}};
  for (const Case& c : cases) {
    const std::string t = std::string(R"({"from": "A", "to": "B", "duration": 0,
      "conditions": [{"parameter": "x", "op": ")") +
                          c.op + R"(", "value": 1}]})";
    for (const auto& [x, fires] : {std::pair{c.below, c.fires_below}, std::pair{c.at, c.fires_at},
                                   std::pair{c.above, c.fires_above}}) {
      Machine m(t);
      m.g.set_float("x", x);
      EXPECT_EQ(m.tick(), fires ? "B" : "A") << "x " << x << " " << c.op << " 1";
    }
  }
}

TEST(GraphMachine, BoolTestsAndCut) {
  Machine m(R"({"from": "A", "to": "B", "duration": 0, "conditions": [{"parameter": "flag"}]},
               {"from": "B", "to": "A", "duration": 0,
                "conditions": [{"parameter": "flag", "op": "!=", "value": true}]})");
  EXPECT_EQ(m.tick(), "A");
  m.g.set_bool("flag", true);
  EXPECT_EQ(m.tick(), "B");
  EXPECT_NEAR(angle_x(m.pose, kSpine), 10, 1e-3) << "a zero-duration transition is a cut";
  EXPECT_EQ(m.g.machines()[0].previous_state, 0);
  EXPECT_EQ(m.g.machines()[0].last_transition, 0);
  EXPECT_EQ(m.tick(), "B");
  EXPECT_EQ(m.g.machines()[0].last_transition, -1);
  m.g.set_bool("flag", false);
  EXPECT_EQ(m.tick(), "A");
  EXPECT_EQ(m.g.machines()[0].transitions_taken, 2);
}

TEST(GraphMachine, PriorityThenFileOrder) {
  // Three transitions out of A all hold; the highest priority wins, ties go to the first.
  Machine m(R"({"from": "A", "to": "B", "duration": 0, "priority": 1},
               {"from": "A", "to": "C", "duration": 0, "priority": 5},
               {"from": "A", "to": "D", "duration": 0, "priority": 5})");
  EXPECT_EQ(m.tick(), "C");
  Machine tie(
      R"({"from": "A", "to": "B", "duration": 0}, {"from": "A", "to": "C", "duration": 0})");
  EXPECT_EQ(tie.tick(), "B");
}

TEST(GraphMachine, ExitTime) {
  // Clips last 1 s; A → B may fire once A has played 0.5 of its cycle. Transitions are tested
  // before the update's time step, so it fires on the update after the crossing.
  Machine m(R"({"from": "A", "to": "B", "duration": 0, "exit_time": 0.5})");
  const float dt = 0.125f;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m.tick(dt), "A") << i;
  EXPECT_EQ(m.g.normalized_time(m.graph.machines()[0]), 0.5f);
  EXPECT_EQ(m.tick(dt), "B");
  // Exit times past 1 count whole loops.
  Machine loops(R"({"from": "A", "to": "B", "duration": 0, "exit_time": 2.0})");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(loops.tick(dt), "A") << i;
  EXPECT_EQ(loops.tick(dt), "B");
  // Conditions and the exit time must both hold.
  Machine both(R"({"from": "A", "to": "B", "duration": 0, "exit_time": 0.2,
                   "conditions": [{"parameter": "flag"}]})");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(both.tick(dt), "A");
  both.g.set_bool("flag", true);
  EXPECT_EQ(both.tick(dt), "B");
}

TEST(GraphMachine, TriggersAreConsumed) {
  Machine m(R"({"from": "A", "to": "B", "duration": 0, "conditions": [{"parameter": "go"}]},
               {"from": "B", "to": "C", "duration": 0, "conditions": [{"parameter": "go"}]})");
  const ParamHandle go = m.g.parameter("go");
  const ParamHandle hit = m.g.parameter("hit");
  EXPECT_EQ(m.tick(), "A");
  m.g.fire(go);
  m.g.fire(hit);
  EXPECT_EQ(m.tick(), "B");
  EXPECT_EQ(m.g.value(go), 0.0f) << "the transition consumed it";
  EXPECT_EQ(m.g.value(hit), 1.0f) << "nothing tested it: it stays set";
  EXPECT_EQ(m.tick(), "B") << "one firing, one transition";
  m.g.fire(go);
  EXPECT_EQ(m.tick(), "C");
  EXPECT_TRUE(m.g.reset_trigger(hit));
  EXPECT_EQ(m.g.value(hit), 0.0f);
  // Handles of the wrong type are refused.
  EXPECT_FALSE(m.g.fire(m.g.parameter("x")));
  EXPECT_FALSE(m.g.set_float(go, 1));
  EXPECT_FALSE(m.g.set_float(m.g.parameter("x"), std::nanf("")));
  EXPECT_FALSE(m.g.set_bool(ParamHandle{}, true));
  EXPECT_THROW(m.g.set_float("nope", 1), Error);
  EXPECT_THROW(m.g.set_bool("x", true), Error);
}

TEST(GraphMachine, AnyStateTransitions) {
  Machine m(R"({"from": "A", "to": "B", "duration": 0, "conditions": [{"parameter": "go"}]},
               {"from": "*", "to": "D", "duration": 0, "conditions": [{"parameter": "hit"}]},
               {"from": "D", "to": "A", "duration": 0, "exit_time": 1.0})");
  const float dt = 0.125f;
  m.g.fire("go");
  EXPECT_EQ(m.tick(dt), "B");
  m.g.fire("hit");
  EXPECT_EQ(m.tick(dt), "D");
  EXPECT_EQ(m.g.machines()[0].last_transition, 1);
  // Never from D into D: the trigger is not consumed then.
  m.g.fire("hit");
  EXPECT_EQ(m.tick(dt), "D");
  EXPECT_EQ(m.g.value(m.g.parameter("hit")), 1.0f);
  // After a full cycle (8 steps of 1/8 s) D → A; the pending trigger then takes A → D again.
  for (int i = 0; i < 7; ++i) EXPECT_EQ(m.tick(dt), "D") << i;
  EXPECT_EQ(m.tick(dt), "A");
  EXPECT_EQ(m.tick(dt), "D");
  EXPECT_EQ(m.g.value(m.g.parameter("hit")), 0.0f);
}

TEST(GraphMachine, CrossfadeStateReportsBlending) {
  Machine m(R"({"from": "A", "to": "C", "duration": 0.5, "conditions": [{"parameter": "go"}]})");
  m.g.fire("go");
  EXPECT_EQ(m.tick(0.1f), "C");
  EXPECT_TRUE(m.g.machines()[0].blending);
  EXPECT_NEAR(angle_x(m.pose, kSpine), 0, 1e-3) << "weight 0 at the switch";
  m.tick(0.25f);  // halfway: smoothstep(0.5) = 0.5
  EXPECT_NEAR(angle_x(m.pose, kSpine), 10, 0.1);
  m.tick(0.25f);
  EXPECT_FALSE(m.g.machines()[0].blending);
  EXPECT_NEAR(angle_x(m.pose, kSpine), 20, 1e-3);
}

TEST(GraphMachine, NestedMachines) {
  const std::string text = R"({
    "parameters": [{"name": "x", "type": "float"}, {"name": "air", "type": "bool"}],
    "clips": [
      {"name": "a", "file": "anim.glb", "clip": "a"}, {"name": "b", "file": "anim.glb", "clip": "b"},
      {"name": "c", "file": "anim.glb", "clip": "c"}],
    "nodes": [{"name": "ground", "type": "state_machine",
               "states": [{"name": "idle", "node": "a"}, {"name": "walk", "node": "b"}],
               "transitions": [
                 {"from": "idle", "to": "walk", "duration": 0,
                  "conditions": [{"parameter": "x", "op": ">", "value": 0.5}]},
                 {"from": "walk", "to": "idle", "duration": 0,
                  "conditions": [{"parameter": "x", "op": "<=", "value": 0.5}]}]}],
    "root": {"type": "state_machine", "states": [
        {"name": "on_ground", "node": "ground"}, {"name": "jumping", "node": "c"}],
      "transitions": [
        {"from": "on_ground", "to": "jumping", "duration": 0, "conditions": [{"parameter": "air"}]},
        {"from": "jumping", "to": "on_ground", "duration": 0,
         "conditions": [{"parameter": "air", "value": false}]}]}})";
  const AnimGraph graph = parse_graph(text, files());
  ASSERT_EQ(graph.machines().size(), 2u);  // children first: ground, then the root
  GraphInstance g(graph);
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  step(g, 0.1f, pose);
  EXPECT_EQ(state_of(g, 1), "on_ground");
  EXPECT_EQ(state_of(g, 0), "idle");
  g.set_float("x", 1);
  step(g, 0.1f, pose);
  EXPECT_EQ(state_of(g, 0), "walk");
  EXPECT_NEAR(angle_x(pose, kSpine), 10, 1e-3);
  g.set_bool("air", true);
  step(g, 0.1f, pose);
  EXPECT_EQ(state_of(g, 1), "jumping");
  EXPECT_NEAR(angle_x(pose, kSpine), 20, 1e-3);
  EXPECT_TRUE(g.machines()[1].active);
  // The inner machine does not run while its state is not on screen…
  g.set_float("x", 0);
  step(g, 0.1f, pose);
  EXPECT_FALSE(g.machines()[0].active);
  EXPECT_EQ(state_of(g, 0), "walk");
  // …and restarts at its initial state when entered again.
  g.set_float("x", 1);
  g.set_bool("air", false);
  step(g, 0.1f, pose);
  EXPECT_EQ(state_of(g, 1), "on_ground");
  EXPECT_EQ(state_of(g, 0), "idle");
  step(g, 0.1f, pose);
  EXPECT_EQ(state_of(g, 0), "walk");
}

}  // namespace
}  // namespace kinema
