// Loading animation graphs: a valid graph, and every kind of error with its JSON pointer.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graph_test_util.h"
#include "kinema/io/graph_file.h"

namespace kinema {
namespace {

using namespace graph_test;
using nlohmann::json;

const char* kBase = R"({
  "version": 1,
  "parameters": [
    {"name": "speed", "type": "float", "default": 0},
    {"name": "grounded", "type": "bool", "default": true},
    {"name": "jump", "type": "trigger"}
  ],
  "clips": [
    {"name": "idle", "file": "anim.glb", "clip": "idle"},
    {"name": "walk", "file": "anim.glb", "clip": "walk"}
  ],
  "nodes": [
    {"name": "moving", "type": "clip", "clip": "walk", "rate": 1.0, "loop": true}
  ],
  "root": {
    "type": "state_machine",
    "states": [
      {"name": "idle", "node": "idle"},
      {"name": "walk", "node": "moving"}
    ],
    "transitions": [
      {"from": "idle", "to": "walk", "duration": 0.2,
       "conditions": [{"parameter": "speed", "op": ">", "value": 0.1}]},
      {"from": "walk", "to": "idle", "duration": 0.2,
       "conditions": [{"parameter": "speed", "op": "<=", "value": 0.1}]}
    ]
  }
})";

std::map<std::string, Asset> files() {
  const Skeleton s = make_skeleton();
  return {{"anim.glb",
           make_asset(s, {angle_clip(s, "idle", kSpine, 0), angle_clip(s, "walk", kSpine, 30)})}};
}

/// kBase with `edit` applied.
std::string edited(const std::function<void(json&)>& edit) {
  json j = json::parse(kBase);
  edit(j);
  return j.dump(2);
}

json& at(json& j, const char* pointer) { return j[json::json_pointer(pointer)]; }

/// Expects loading to fail at `pointer` with a reason containing `words`.
void expect_error(const std::string& text, const std::string& pointer, const std::string& words,
                  std::map<std::string, Asset> f = files()) {
  const Error e = graph_error(text, std::move(f));
  EXPECT_EQ(e.file(), kGraphFile);
  EXPECT_EQ(e.place(), pointer) << e.what();
  EXPECT_NE(e.reason().find(words), std::string::npos) << e.what();
}

TEST(GraphLoad, ValidGraph) {
  const BuiltGraph built = build_test_graph(kBase, files());
  const AnimGraph& g = built.graph;
  EXPECT_EQ(g.file(), kGraphFile);
  EXPECT_EQ(g.joint_count(), kJointCount);
  ASSERT_EQ(g.parameters().size(), 3u);
  EXPECT_EQ(g.parameters()[1].type, ParamType::Bool);
  EXPECT_EQ(g.parameters()[1].default_value, 1.0f);
  ASSERT_EQ(g.clips().size(), 2u);
  EXPECT_EQ(g.clips()[1].name, "walk");
  // The offline record: where each clip came from, and the character they play on.
  ASSERT_EQ(built.clips.size(), 2u);
  EXPECT_EQ(built.clips[1].name, "walk");
  EXPECT_EQ(built.clips[1].file, "anim.glb");
  EXPECT_EQ(built.clips[1].path, "/virtual/anim.glb");
  EXPECT_EQ(built.clips[1].clip_name, "walk");
  EXPECT_EQ(built.character.skeleton.joint_count(), kJointCount);
  EXPECT_TRUE(built.character.clips.empty());
  EXPECT_FALSE(built.compression.enabled);
  ASSERT_EQ(g.machines().size(), 1u);
  EXPECT_EQ(g.root(), g.machines()[0]);
  const auto& m = std::get<StateMachineNode>(g.nodes()[static_cast<size_t>(g.root())].data);
  ASSERT_EQ(m.states.size(), 2u);
  EXPECT_EQ(m.transitions[0].pointer, "/root/transitions/0");
  EXPECT_EQ(g.find_parameter("jump"), 2);
  EXPECT_EQ(g.find_parameter("nope"), -1);
}

TEST(GraphLoad, UnknownStateParameterNodeClip) {
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/to") = "run"; }),
               "/root/transitions/0/to", "unknown state 'run'");
  expect_error(edited([](json& j) { at(j, "/root/transitions/1/from") = "fly"; }),
               "/root/transitions/1/from", "unknown state 'fly'");
  expect_error(edited([](json& j) { at(j, "/root/initial") = "fly"; }), "/root/initial",
               "unknown state 'fly'");
  expect_error(
      edited([](json& j) { at(j, "/root/transitions/0/conditions/0/parameter") = "velocity"; }),
      "/root/transitions/0/conditions/0/parameter", "unknown parameter 'velocity'");
  expect_error(edited([](json& j) { at(j, "/root/states/1/node") = "jogging"; }),
               "/root/states/1/node", "unknown node 'jogging'");
  expect_error(edited([](json& j) { at(j, "/nodes/0/clip") = "sprint"; }), "/nodes/0/clip",
               "unknown clip 'sprint'");
  expect_error(edited([](json& j) { at(j, "/nodes/0/type") = "blend3d"; }), "/nodes/0/type",
               "unknown node type");
}

TEST(GraphLoad, MissingFilesAndClips) {
  expect_error(edited([](json& j) { at(j, "/clips/1/file") = "missing.glb"; }), "/clips/1/file",
               "cannot load 'missing.glb'");
  expect_error(edited([](json& j) { at(j, "/clips/1/clip") = "sprint"; }), "/clips/1/clip",
               "no clip 'sprint' in anim.glb (clips: 'idle', 'walk')");
  expect_error(edited([](json& j) { j.erase("clips"); }), "/clips", "missing required member");
}

TEST(GraphLoad, MissingFileOnDisk) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kinema_graph_load_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "g.json").string();
  std::ofstream(path) << edited([](json& j) { at(j, "/clips/0/file") = "nowhere/walk.glb"; });
  try {
    load_anim_graph(path);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.place(), "/clips/0/file");
    EXPECT_NE(e.reason().find("not found"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_anim_graph((dir / "absent.json").string()), Error);
  std::filesystem::remove_all(dir);
}

TEST(GraphLoad, WrongTypesAndBadNumbers) {
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/duration") = "fast"; }),
               "/root/transitions/0/duration", "expected a number, got a string");
  expect_error(edited([](json& j) { at(j, "/parameters/0/default") = "zero"; }),
               "/parameters/0/default", "expected a number");
  expect_error(edited([](json& j) { at(j, "/parameters/1/default") = 1; }), "/parameters/1/default",
               "expected true or false");
  expect_error(edited([](json& j) { at(j, "/nodes/0/loop") = 1; }), "/nodes/0/loop",
               "expected true or false");
  expect_error(edited([](json& j) { at(j, "/root/states") = json::object(); }), "/root/states",
               "expected an array");
  expect_error(edited([](json& j) { at(j, "/parameters/0/type") = "int"; }), "/parameters/0/type",
               "unknown parameter type 'int'");
  expect_error(edited([](json& j) { at(j, "/root/transitions/1/duration") = -0.1; }),
               "/root/transitions/1/duration", "must not be negative");
  expect_error(edited([](json& j) { at(j, "/root/transitions/1/exit_time") = -1; }),
               "/root/transitions/1/exit_time", "must not be negative");
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/blend") = "morph"; }),
               "/root/transitions/0/blend", "unknown blend 'morph'");
  // JSON has no NaN or infinity; an overflowing literal is refused where it stands, and a
  // number beyond float range where it is used.
  std::string text = edited([](json& j) { at(j, "/root/transitions/0/duration") = 12345; });
  text.replace(text.find("12345"), 5, "1e999");
  const Error overflow = graph_error(text, files());
  EXPECT_EQ(overflow.place().rfind("line ", 0), 0u) << overflow.what();
  EXPECT_NE(overflow.reason().find("1e999"), std::string::npos) << overflow.what();
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/duration") = 1e39; }),
               "/root/transitions/0/duration", "out of range");
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/duraton") = 1; }),
               "/root/transitions/0/duraton", "unknown member 'duraton'");
  expect_error(edited([](json& j) { at(j, "/version") = 2; }), "/version", "unsupported");
}

TEST(GraphLoad, ConditionForms) {
  expect_error(edited([](json& j) {
                 at(j, "/root/transitions/0/conditions/0") = {{"parameter", "jump"}, {"op", "=="}};
               }),
               "/root/transitions/0/conditions/0/op", "a trigger is tested by name alone");
  expect_error(edited([](json& j) {
                 at(j, "/root/transitions/0/conditions/0") = {
                     {"parameter", "grounded"}, {"op", ">"}, {"value", true}};
               }),
               "/root/transitions/0/conditions/0/op", "== or != only");
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/conditions/0").erase("op"); }),
               "/root/transitions/0/conditions/0/op", "missing required member 'op'");
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/conditions/0/op") = "=>"; }),
               "/root/transitions/0/conditions/0/op", "unknown comparison '=>'");
  expect_error(edited([](json& j) { at(j, "/root/transitions/0/conditions/0/value") = "x"; }),
               "/root/transitions/0/conditions/0/value", "expected a number");
  // Bool and trigger forms load.
  parse_graph(edited([](json& j) {
                at(j, "/root/transitions/0/conditions") =
                    json::parse(R"([{"parameter": "grounded"}, {"parameter": "jump"},
                                    {"parameter": "grounded", "op": "!=", "value": false}])");
              }),
              files());
}

TEST(GraphLoad, InstantTransitionCycles) {
  // Both directions instant and both conditions true together (grounded) → reported.
  const auto instant_pair = [](json& j) {
    for (const char* p : {"/root/transitions/0", "/root/transitions/1"}) {
      at(j, (std::string(p) + "/duration").c_str()) = 0;
      at(j, (std::string(p) + "/conditions").c_str()) =
          json::parse(R"([{"parameter": "grounded"}])");
    }
  };
  expect_error(edited(instant_pair), "/root/transitions/0", "cycle idle → walk → idle");
  // The original conditions (speed > 0.1 / speed <= 0.1) exclude each other: no cycle.
  parse_graph(edited([](json& j) {
                at(j, "/root/transitions/0/duration") = 0;
                at(j, "/root/transitions/1/duration") = 0;
              }),
              files());
  // speed > 0.1 and speed < 0.5 can both hold: a cycle.
  expect_error(edited([](json& j) {
                 at(j, "/root/transitions/0/duration") = 0;
                 at(j, "/root/transitions/1/duration") = 0;
                 at(j, "/root/transitions/1/conditions/0/op") = "<";
                 at(j, "/root/transitions/1/conditions/0/value") = 0.5;
               }),
               "/root/transitions/0", "cycle");
  // A trigger or an exit time breaks the cycle.
  parse_graph(edited([&](json& j) {
                instant_pair(j);
                at(j, "/root/transitions/1/conditions/0/parameter") = "jump";
              }),
              files());
  parse_graph(edited([&](json& j) {
                instant_pair(j);
                at(j, "/root/transitions/1/exit_time") = 0.5;
              }),
              files());
  // A zero-duration self transition restarts its state every update.
  expect_error(edited([](json& j) {
                 at(j, "/root/transitions/1/to") = "walk";
                 at(j, "/root/transitions/1/duration") = 0;
                 at(j, "/root/transitions/1/conditions") = json::array();
               }),
               "/root/transitions/1", "cycle walk → walk");
  // An instant "any state" transition into idle plus an instant way out of idle.
  expect_error(edited([](json& j) {
                 at(j, "/root/transitions/0/duration") = 0;
                 at(j, "/root/transitions/0/conditions") = json::array();
                 at(j, "/root/transitions/1/from") = "*";
                 at(j, "/root/transitions/1/duration") = 0;
                 at(j, "/root/transitions/1/conditions") = json::array();
               }),
               "/root/transitions/0", "cycle idle → walk → idle");
}

TEST(GraphLoad, DuplicateNames) {
  expect_error(edited([](json& j) { at(j, "/parameters/1/name") = "speed"; }), "/parameters/1/name",
               "duplicate parameter 'speed' (first defined at /parameters/0)");
  expect_error(edited([](json& j) { at(j, "/clips/1/name") = "idle"; }), "/clips/1/name",
               "duplicate clip 'idle'");
  expect_error(edited([](json& j) { at(j, "/root/states/1/name") = "idle"; }),
               "/root/states/1/name", "duplicate state 'idle'");
  expect_error(edited([](json& j) { j["nodes"].push_back(j["nodes"][0]); }), "/nodes/1/name",
               "duplicate node 'moving'");
  expect_error(edited([](json& j) { at(j, "/nodes/0/name") = "walk"; }), "/nodes/0/name",
               "already a clip's");
  expect_error(edited([](json& j) { at(j, "/root/states/1/name") = "*"; }), "/root/states/1/name",
               "reserved");
}

TEST(GraphLoad, SkeletonsMustMatchByName) {
  const Skeleton s = make_skeleton();
  const Skeleton other = make_skeleton("Jaw");
  std::map<std::string, Asset> f = {
      {"anim.glb", make_asset(s, {angle_clip(s, "idle", kSpine, 0)})},
      {"other.glb", make_asset(other, {angle_clip(other, "walk", kSpine, 30)})}};
  const std::string text = edited([](json& j) { at(j, "/clips/1/file") = "other.glb"; });
  expect_error(text, "/clips/1/file", "differs from that of /virtual/anim.glb", f);
  expect_error(text, "/clips/1/file", "joint 'Jaw' is not in the graph's skeleton", f);
  // Same joints in another order load, with the tracks moved to the graph's order.
  std::vector<kinema::Joint> joints = s.joints();
  std::swap(joints[kSpine], joints[kLeftUpLeg]);  // build() sorts parents first again
  for (kinema::Joint& j : joints)
    if (j.parent == kSpine)
      j.parent = kLeftUpLeg;
    else if (j.parent == kLeftUpLeg)
      j.parent = kSpine;
  const Skeleton shuffled = Skeleton::build(joints);
  ASSERT_NE(shuffled.find("Spine"), kSpine);
  f["other.glb"] = make_asset(shuffled, {angle_clip(shuffled, "walk", shuffled.find("Spine"), 30)});
  const AnimGraph g = parse_graph(text, f);
  std::vector<SoaTransform> pose(static_cast<size_t>(g.soa_count()));
  ASSERT_TRUE(sample(g.clips()[1].runtime, 0.5f, pose));
  EXPECT_NEAR(angle_x(pose, kSpine), 30, 1e-3);
}

TEST(GraphLoad, NodeReferencesMustNotLoop) {
  expect_error(edited([](json& j) {
                 j["nodes"] = json::parse(R"([
                   {"name": "a", "type": "additive", "base": "b", "additive": "walk",
                    "reference": "rest"},
                   {"name": "b", "type": "layer", "base": "a", "layers": []}])");
                 at(j, "/root/states/1/node") = "a";
               }),
               "/nodes/1/base", "node 'a' uses itself (a → b → a)");
}

TEST(GraphLoad, NotJson) {
  const Error e = graph_error("{\n  \"clips\": [\n    {\"name\": }\n", files());
  EXPECT_EQ(e.file(), kGraphFile);
  EXPECT_EQ(e.place().rfind("line 3", 0), 0u) << e.what();
  EXPECT_NE(e.reason().find("not valid JSON"), std::string::npos) << e.what();
  // Comments are allowed.
  parse_graph(std::string("// locomotion\n") + kBase, files());
}

TEST(GraphLoad, BlendSpacesMasksAndReferences) {
  const auto with_root = [](const char* node) {
    return edited([&](json& j) { at(j, "/root/states/1/node") = json::parse(node); });
  };
  expect_error(with_root(R"({"type": "blend1d", "parameter": "speed",
                             "samples": [{"clip": "walk", "position": 1}]})"),
               "/root/states/1/node/samples", "at least 2 samples");
  expect_error(with_root(R"({"type": "blend1d", "parameter": "speed",
                             "samples": [{"clip": "walk", "position": 1},
                                         {"clip": "idle", "position": 1}]})"),
               "/root/states/1/node/samples", "duplicate position");
  expect_error(with_root(R"({"type": "blend1d", "parameter": "grounded",
                             "samples": [{"clip": "walk", "position": 1},
                                         {"clip": "idle", "position": 2}]})"),
               "/root/states/1/node/parameter", "is a bool, expected a float");
  expect_error(with_root(R"({"type": "blend1d", "parameter": "speed", "speed_correction": "weights",
                             "samples": [{"clip": "walk", "position": 1},
                                         {"clip": "idle", "position": 2}]})"),
               "/root/states/1/node/samples/0", "root speed");
  expect_error(with_root(R"({"type": "blend2d", "parameters": ["speed", "speed"],
                             "samples": [{"clip": "walk", "position": [0, 0]},
                                         {"clip": "idle", "position": [1, 1]},
                                         {"clip": "walk", "position": [2, 2]}]})"),
               "/root/states/1/node/samples", "collinear");
  expect_error(with_root(R"({"type": "layer", "base": "idle", "layers": [
                             {"node": "walk", "mask": {"joint": "Tail"}}]})"),
               "/root/states/1/node/layers/0/mask/joint", "no joint 'Tail'");
  expect_error(with_root(R"({"type": "layer", "base": "idle", "layers": [
                             {"node": "walk", "mask": {"joint": "Spine", "ramp": [0.5, 2]}}]})"),
               "/root/states/1/node/layers/0/mask/ramp/1", "in [0, 1]");
  expect_error(with_root(R"({"type": "layer", "base": "idle", "layers": [
                             {"node": "walk", "mode": "additive"}]})"),
               "/root/states/1/node/layers/0/reference", "missing required member");
  expect_error(with_root(R"({"type": "additive", "base": "idle", "additive": "walk",
                             "reference": {"clip": "walk", "time": 5}})"),
               "/root/states/1/node/reference/time", "outside the clip");
  expect_error(with_root(R"({"type": "additive", "base": "idle", "additive": "walk",
                             "reference": "rest", "weight": "grounded"})"),
               "/root/states/1/node/weight", "is a bool, expected a float");
  expect_error(edited([](json& j) {
                 j["root_motion"] = {{"joint", "Tail"}};
               }),
               "/root_motion/joint", "no joint 'Tail'");
}

}  // namespace
}  // namespace kinema
