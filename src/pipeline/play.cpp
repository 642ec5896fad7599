// `kinema play` as a library call (kinema/pipeline/play.h).
#include "kinema/pipeline/play.h"

#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/io/graph_file.h"
#include "kinema/procedural/graph_drivers.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/metrics.h"

namespace kinema::pipeline {

PlayResult play_graph_file(const PlayRequest& request, const Progress& progress) {
  namespace fs = std::filesystem;
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "vrm", "bvh"};
  const NamedInput graph_file[] = {{"the graph file", request.graph}};
  check_output_file(request.out, graph_file, kWritable, "play");

  PlayOptions options;
  options.seconds = request.seconds;
  options.fps = request.fps;
  options.root_motion = request.root_motion;
  for (const std::string& spec : request.params) options.params.push_back(parse_param_curve(spec));

  std::error_code ec;
  if (fs::is_directory(request.graph, ec))
    throw Error(request.graph, "", "is a folder; give a graph .json file");
  const BuiltGraph built = load_anim_graph(request.graph, request.load);
  for (const GraphClipSource& clip : built.clips)
    if (same_file(clip.path, request.out))
      throw UsageError("OUT is a clip file of the graph (" + request.out + "); choose another OUT");

  // The graph's drivers set their parameters every frame, after the curves: a curve on a driven
  // parameter would be overwritten, so it is refused.
  GraphDrivers drivers(built.graph);
  for (const GraphDriver& d : built.graph.drivers())
    for (const ParamCurve& curve : options.params)
      if (built.graph.find_parameter(curve.name) == d.parameter)
        throw UsageError("--param " + curve.spec + ": the graph drives '" + curve.name + "' (" +
                         d.pointer + ": " + d.expression + "); drop the --param");
  if (!drivers.empty())
    options.before_update = [&drivers](double t, GraphInstance& instance) {
      drivers.apply(instance, t);
    };
  const std::string stage = "playing " + fs::path(request.graph).filename().string();
  options.progress = [&](int done, int total) { report(progress, stage, done, total); };
  PlayResult result;
  Asset played = play_graph(built, options, &result.report);
  // A VRM needs a humanoid map: guess it from joint names when the clips' file has none.
  if (extension_of(request.out) == "vrm" && !played.humanoid) played.humanoid = humanoid_of(played);
  save_asset(played, request.out);
  result.duration = played.clips[0].duration;
  result.root_motion = built.graph.root_motion().enabled;
  result.foot_skate = humanoid_foot_skate(played, played.clips[0], request.fps);
  return result;
}

}  // namespace kinema::pipeline
