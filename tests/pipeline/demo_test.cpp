// The demo as a library call (kinema/pipeline/demo.h): on a caller's motion only, the steps that
// need no bundled data, reported in order as they start and end.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/pipeline/convert.h"
#include "kinema/pipeline/demo.h"
#include "pipeline_test_util.h"

namespace kinema::test {
namespace {

class Demo : public PipelineTest {};

/// "Started RoundTrip", "Done Load"…: the order of the reports.
std::string describe(const pipeline::DemoEvent& e) {
  static const char* const kNames[] = {"BundledData", "Load",      "RoundTrip",  "Retarget",
                                       "Clean",       "Graph",     "MatchBuild", "MatchRun",
                                       "MatchLearn",  "Feet",      "Cloth",      "SpringBones",
                                       "Ragdoll",     "Crowd",     "Gait",       "Compression",
                                       "Sheet",       "Composite", "Produced"};
  static_assert(std::size(kNames) == std::variant_size_v<decltype(e.step)>,
                "a name for every kind of demo step");
  return std::string(e.phase == pipeline::DemoEvent::Phase::Started ? "Started " : "Done ") +
         kNames[e.step.index()];
}

TEST_F(Demo, OnAMotionAloneItConvertsMeasuresAndCompresses) {
  pipeline::DemoRequest request;
  request.motion = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
  request.out_dir = path("out");
  std::vector<std::string> order;
  double glb_error = -1;
  const std::vector<std::string> produced =
      pipeline::run_demo(request, [&](const pipeline::DemoEvent& e) {
        order.push_back(describe(e));
        if (const auto* trip = std::get_if<pipeline::DemoRoundTrip>(&e.step);
            trip && e.phase == pipeline::DemoEvent::Phase::Done)
          glb_error = trip->glb_error.max;
      });
  EXPECT_EQ(order,
            (std::vector<std::string>{"Started Load", "Done Load", "Started RoundTrip",
                                      "Done RoundTrip", "Started Retarget", "Done Retarget",
                                      "Started Compression", "Done Compression", "Done Produced"}));
  EXPECT_GE(glb_error, 0);
  EXPECT_LT(glb_error, 1e-5);
  EXPECT_EQ(produced,
            (std::vector<std::string>{path("out/02_01.glb"), path("out/02_01_roundtrip.bvh"),
                                      path("out/02_01.kmc")}));
}

TEST_F(Demo, NeverWritesOverAnInput) {
  // The motion lies in the output folder under the name the round trip would write.
  pipeline::DemoRequest request;
  request.out_dir = dir_.string();
  request.motion = path("walk.glb");
  pipeline::ConvertRequest copy;
  copy.in = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
  copy.out = request.motion;
  pipeline::convert_file(copy);
  EXPECT_THROW(pipeline::run_demo(request, {}), UsageError);
  EXPECT_THROW(pipeline::demo_on_bundled_data(dir_.string()), Error) << "no walk.bvh there";
}

}  // namespace
}  // namespace kinema::test
