// Offline play: parameter curves (--param specs) and baking a graph into a clip.
#include "kinema/graph/graph_play.h"
#include "graph_test_util.h"
#include "kinema/io/graph_file.h"
#include "test_paths.h"

namespace kinema {
namespace {

using namespace graph_test;

TEST(GraphPlay, ParamCurveSyntax) {
  const ParamCurve c = parse_param_curve("speed=0:0, 2:4.5,+3:-1e-1");
  EXPECT_EQ(c.name, "speed");
  ASSERT_EQ(c.items.size(), 3u);
  EXPECT_EQ(c.items[1].a, 2);
  EXPECT_EQ(*c.items[1].b, 4.5);
  EXPECT_EQ(*c.items[2].b, -0.1);
  const ParamCurve k = parse_param_curve("speed=2.5");
  ASSERT_EQ(k.items.size(), 1u);
  EXPECT_FALSE(k.items[0].b);
  struct Bad {
    const char* spec;
    const char* place;
    const char* words;
  };
  for (const Bad& b :
       {Bad{"speed", "", "has no '='"}, Bad{"=1", "", "no parameter name"},
        Bad{"speed=0:0,,1:1", "speed item 2", "empty item"},
        Bad{"speed=0:x", "speed item 1", "value 'x' is not a number"},
        Bad{"speed=a:1", "speed item 1", "time 'a' is not a number"},
        Bad{"speed=0:1:2", "speed item 1", "more than one ':'"},
        Bad{"speed=", "speed item 1", "empty item"}, Bad{"speed=1e999", "speed item 1", "not"}}) {
    try {
      parse_param_curve(b.spec);
      ADD_FAILURE() << b.spec;
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "--param") << b.spec;
      EXPECT_EQ(e.place(), b.place) << b.spec;
      EXPECT_NE(e.reason().find(b.words), std::string::npos) << e.what();
    }
  }
}

const char* kGraph = R"({
  "parameters": [{"name": "speed", "type": "float"}, {"name": "armed", "type": "bool"},
                 {"name": "hit", "type": "trigger"}],
  "clips": [{"name": "walk", "file": "anim.glb", "clip": "walk"},
            {"name": "run", "file": "anim.glb", "clip": "run"},
            {"name": "flinch", "file": "anim.glb", "clip": "flinch"}],
  "root_motion": {"joint": "Hips", "rotation": false},
  "root": {"type": "state_machine", "states": [
      {"name": "move", "node": {"type": "blend1d", "parameter": "speed", "samples": [
          {"clip": "walk", "position": 1}, {"clip": "run", "position": 3}]}},
      {"name": "flinch", "node": {"type": "clip", "clip": "flinch", "loop": false}},
      {"name": "guard", "node": "flinch"}],
    "transitions": [
      {"from": "move", "to": "flinch", "conditions": [{"parameter": "hit"}], "duration": 0.1},
      {"from": "flinch", "to": "move", "exit_time": 1, "duration": 0.1},
      {"from": "move", "to": "guard", "conditions": [{"parameter": "armed"}], "duration": 0.1}]}
})";

BuiltGraph play_graph_fixture() {
  const Skeleton s = make_skeleton();
  return build_test_graph(
      kGraph, {{"anim.glb", make_asset(s, {angle_clip(s, "walk", kSpine, 0, 1, 1),
                                           angle_clip(s, "run", kSpine, 20, 0.5, 3),
                                           angle_clip(s, "flinch", kSpine, 40, 0.5)})}});
}

TEST(GraphPlay, CurvesMustFitTheGraph) {
  const AnimGraph g = play_graph_fixture().graph;
  struct Bad {
    const char* spec;
    const char* place;
    const char* words;
  };
  for (const Bad& b :
       {Bad{"pace=0:1", "pace", "no parameter 'pace' (parameters: speed, armed, hit)"},
        Bad{"speed=0:1,2", "speed item 2", "TIME:VALUE"},
        Bad{"speed=2:1,1:2", "speed item 2", "must not decrease"},
        Bad{"speed=-1:1", "speed item 1", "must not be negative"},
        Bad{"armed=0:0.5", "armed item 1", "values are 0 or 1"},
        Bad{"armed=2", "armed item 1", "values are 0 or 1"},
        Bad{"hit=1:1", "hit item 1", "is a trigger"}}) {
    try {
      check_param_curves(g, std::vector<ParamCurve>{parse_param_curve(b.spec)});
      ADD_FAILURE() << b.spec;
    } catch (const Error& e) {
      EXPECT_EQ(e.place(), b.place) << e.what();
      EXPECT_NE(e.reason().find(b.words), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(check_param_curves(g, std::vector<ParamCurve>{parse_param_curve("speed=1"),
                                                             parse_param_curve("speed=2")}),
               Error);
  check_param_curves(
      g, std::vector<ParamCurve>{parse_param_curve("speed=0:1,4:3"), parse_param_curve("armed=1"),
                                 parse_param_curve("hit=0.5,2")});
}

TEST(GraphPlay, BakesFramesStatesAndRootMotion) {
  const BuiltGraph g = play_graph_fixture();
  PlayOptions options;
  options.seconds = 4;
  options.fps = 30;
  options.params = {parse_param_curve("speed=0:1,2:3"), parse_param_curve("hit=3")};
  int progress = 0;
  options.progress = [&](int done, int total) {
    EXPECT_EQ(total, 121);
    progress = done;
  };
  PlayReport report;
  const Asset baked = play_graph(g, options, &report);
  EXPECT_EQ(progress, 121);
  EXPECT_EQ(report.frames, 121);
  ASSERT_EQ(baked.clips.size(), 1u);
  const Clip& clip = baked.clips[0];
  EXPECT_EQ(clip.name, "test");
  EXPECT_DOUBLE_EQ(clip.duration, 4);
  EXPECT_EQ(clip.sample_rate, 30);
  EXPECT_EQ(clip.tracks[kSpine].rotation.key_count(), 121u);
  EXPECT_TRUE(clip.tracks[kSpine].scale.empty()) << "no scale keys for joints that never scale";
  EXPECT_EQ(report.states_visited, (std::vector<std::string>{"move", "flinch"}));
  EXPECT_EQ(report.transitions_taken, 2);  // move → flinch at 3 s, back after its 0.5 s
  // speed ramps 1 → 3 m/s over 2 s (4 m) and holds 3 m/s (3 m by the flinch at 3 s); the
  // flinch does not move; about 0.4 s more at 3 m/s after it, less the crossfades.
  EXPECT_GT(report.final_placement.translation.z, 7.5);
  EXPECT_LT(report.final_placement.translation.z, 8.4);
  EXPECT_NEAR(report.final_placement.translation.x, 0, 1e-9);
  const std::vector<Mat4> last = sample_model_pose(clip, baked.skeleton, clip.duration);
  EXPECT_NEAR(last[kHips].translation_part().z, report.final_placement.translation.z, 1e-4);
  // In place: the hips stay over the origin.
  options.root_motion = RootMotionOutput::InPlace;
  const Asset still = play_graph(g, options, &report);
  EXPECT_NEAR(sample_model_pose(still.clips[0], still.skeleton, 4.0)[kHips].translation_part().z, 0,
              1e-4);
  EXPECT_EQ(report.final_placement.translation.z, 0);
  // A constant bool takes the machine to "guard".
  options.params = {parse_param_curve("armed=1")};
  play_graph(g, options, &report);
  EXPECT_EQ(report.states_visited, (std::vector<std::string>{"move", "guard"}));
  // Bad lengths.
  options.seconds = 0;
  EXPECT_THROW(play_graph(g, options), Error);
}

TEST(GraphPlay, TheCharacterMustHaveTheGraphsSkeleton) {
  BuiltGraph g = play_graph_fixture();
  g.character.skeleton = make_skeleton("Jaw");
  try {
    play_graph(g, PlayOptions{});
    ADD_FAILURE() << "played onto another skeleton";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), kGraphFile);
    EXPECT_NE(e.reason().find("not the graph's"), std::string::npos) << e.what();
  }
}

// The frame loop of docs/graph.md on the demo's graph: the hips follow the world placement.
TEST(GraphPlay, DocsFrameLoopOnTheDemoGraph) {
  const BuiltGraph built =
      load_anim_graph(test_paths::source_dir() + "/data/demo/locomotion.graph.json");
  const AnimGraph& graph = built.graph;
  GraphInstance character(graph);
  const ParamHandle speed = character.parameter("speed");
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  std::vector<Mat4f> model(static_cast<size_t>(graph.joint_count()));
  const int hips = graph.runtime_skeleton().find("Hips");
  ASSERT_EQ(graph.root_motion().joint, hips);
  for (int f = 0; f < 90; ++f) {
    ASSERT_TRUE(character.set_float(speed, 3.0f));
    ASSERT_TRUE(character.update(1.0f / 30));
    ASSERT_TRUE(character.evaluate(pose));
    ASSERT_TRUE(local_to_model(graph.runtime_skeleton(), pose, model,
                               Transformf(character.world_transform()).to_matrix()));
  }
  EXPECT_NEAR(character.world().translation.z, 9.0, 0.05);  // 3 m/s for 3 s, speed-matched
  const Vec3f h = model[static_cast<size_t>(hips)].translation_part();
  EXPECT_NEAR(h.z, character.world().translation.z, 0.1);
  EXPECT_NEAR(h.x, character.world().translation.x, 0.1);
}

}  // namespace
}  // namespace kinema
