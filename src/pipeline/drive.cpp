// `kinema drive` as a library call (kinema/pipeline/drive.h).
#include "kinema/pipeline/drive.h"

#include "kinema/core/error.h"

namespace kinema::pipeline {

DriveResult run_drive_file(const DriveRequest& request) {
  static constexpr std::string_view kWritable[] = {"glb", "gltf", "vrm", "bvh"};
  const NamedInput inputs[] = {{"IN", request.in}};
  check_output_file(request.out, inputs, kWritable, "drive");
  Asset asset = load_asset(request.in, request.load);
  if (asset.clips.empty()) throw Error(request.in, "", "no animation clip to drive");
  const int clip = request.clip.empty() ? 0 : find_clip(asset, request.clip, request.in);
  Clip& target = asset.clips[std::size_t(clip)];
  try {
    target = drive_clip(target, asset.skeleton, request.joint, request.channel, request.expression,
                        request.fps);
  } catch (const Error& e) {
    throw Error(request.in, e.place(), e.reason());
  }
  DriveResult result;
  result.clip = target.name;
  const JointTrack& track = target.tracks[std::size_t(asset.skeleton.find(request.joint))];
  result.keys = int(track.rotation.key_count());
  save_asset(asset, request.out);
  return result;
}

}  // namespace kinema::pipeline
