// `kinema ik feet` as a library call (kinema/pipeline/feet.h).
#include "kinema/pipeline/feet.h"

#include <cmath>
#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/metrics.h"
#include "kinema/retarget/rig.h"

namespace kinema::pipeline {

namespace fs = std::filesystem;

FeetResult place_feet(const FeetRequest& request, const Progress& progress) {
  if (request.ground.empty()) throw UsageError("ik feet needs --ground TERRAIN.png|.obj");
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "vrm", "bvh"};
  const NamedInput inputs[] = {{"IN", request.in}, {"the ground file", request.ground}};
  check_output_file(request.out, inputs, kWritable, "ik feet");
  const std::string ground_ext = extension_of(request.ground);
  if (ground_ext != "png" && ground_ext != "obj")
    throw UsageError("--ground " + request.ground + ": give a .png height map or an .obj mesh");
  std::error_code ec;
  if (fs::is_directory(request.ground, ec))
    throw Error(request.ground, "", "is a folder; give a .png height map or an .obj mesh");

  // The ground first: it is the new input here, and the cheaper one to get wrong.
  const GroundFile ground = load_ground(request.ground, request.ground_options);
  Asset asset = load_asset(request.in, request.load);
  if (asset.clips.empty()) throw Error(request.in, "", "has no animation to place on the ground");
  const int clip_index = request.clip.empty() ? 0 : find_clip(asset, request.clip, request.in);
  const HumanoidLegs legs = humanoid_legs(asset, request.in);

  const Clip& clip = asset.clips[static_cast<size_t>(clip_index)];
  ClipFootPlacementOptions options = request.options;
  if (!(options.fps > 0)) {
    const double rate = infer_frame_rate(clip);
    options.fps = rate > 0 ? rate : kDefaultSampleRate;
  }
  if (options.ankle_heights.size() == 1)
    options.ankle_heights.assign(legs.rig.legs.size(), options.ankle_heights[0]);
  const std::string stage = "placing feet on " + fs::path(request.ground).filename().string();
  options.progress = [&](int done, int total) { report(progress, stage, done, total); };
  FeetResult result;
  Clip placed =
      place_feet_on_ground(clip, asset.skeleton, legs.rig, *ground.ground, options, &result.report);
  placed.sample_rate = options.fps;
  result.clip = placed.name;
  result.ground = ground.description;
  result.ground_lo = ground.lo;
  result.ground_hi = ground.hi;
  result.legs = legs.names;
  result.skate_before = humanoid_foot_skate(asset, clip, options.fps);
  result.skate_after = humanoid_foot_skate(asset, placed, options.fps);

  Asset out = std::move(asset);
  out.clips.clear();
  out.clips.push_back(std::move(placed));
  if (extension_of(request.out) == "vrm" && !out.humanoid) out.humanoid = humanoid_of(out);
  save_asset(out, request.out);
  return result;
}

}  // namespace kinema::pipeline
