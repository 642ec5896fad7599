// `kinema convert` as a library call (kinema/pipeline/convert.h).
#include "kinema/pipeline/convert.h"

#include <cmath>

#include "kinema/core/error.h"
#include "kinema/io/bvh.h"
#include "kinema/io/fbx.h"
#include "kinema/io/gltf.h"
#include "kinema/io/vrma.h"
#include "kinema/retarget/retarget.h"

namespace kinema::pipeline {

ConvertResult convert_file(const ConvertRequest& request) {
  static constexpr std::string_view kWritable[] = {"bvh", "gltf", "glb", "vrm", "vrma", "fbx"};
  const NamedInput inputs[] = {{"IN", request.in}, {"the --onto avatar", request.onto}};
  check_output_file(request.out, inputs, kWritable, "kinema");
  const std::string out_ext = extension_of(request.out);

  Asset asset = load_asset(request.in, request.load);
  const bool clip_given = !request.clip.empty();
  int clip = clip_given ? find_clip(asset, request.clip, request.in) : 0;

  ConvertResult result;
  if (!request.onto.empty()) {
    if (asset.clips.empty()) throw Error(request.in, "", "has no animation to retarget");
    Asset avatar = load_asset(request.onto, request.load);
    Clip moved = retarget_humanoid(asset, clip, avatar);
    if (moved.name.empty()) moved.name = asset.clips[static_cast<size_t>(clip)].name;
    result.written = std::move(avatar);
    result.written.clips.clear();
    result.written.clips.push_back(std::move(moved));
    result.retargeted = true;
    clip = 0;
  } else {
    result.written = std::move(asset);
  }
  Asset& out = result.written;
  const bool has_clip = clip < static_cast<int>(out.clips.size());
  if (request.fps > 0 && has_clip && out_ext != "bvh") {
    Clip& c = out.clips[static_cast<size_t>(clip)];
    c = resample(c, out.skeleton, request.fps);
    c.sample_rate = request.fps;
  }

  if (out_ext == "bvh") {
    // Without a clip the skeleton goes out in its rest pose as a single frame (a BVH needs a
    // MOTION section); that is how a rigged avatar's skeleton reaches BVH-only tools.
    BvhWriteOptions options;
    options.clip = clip;
    options.unit_in_meters = request.bvh_unit;
    if (has_clip)
      options.frame_rate =
          request.fps > 0 ? request.fps : infer_frame_rate(out.clips[static_cast<size_t>(clip)]);
    result.rest_pose_only = !has_clip;
    write_bvh(out, request.out, options);
  } else if (out_ext == "fbx") {
    FbxWriteOptions options;
    if (has_clip && (clip_given || !request.onto.empty())) options.clips = {clip};
    write_fbx(out, request.out, options);
  } else if (out_ext == "vrma") {
    // One humanoid clip: the source's own humanoid (a VRM, a .vrma) or the --onto avatar's.
    if (!has_clip) throw Error(request.in, "", "has no animation to write as a .vrma");
    if (!out.humanoid)
      throw Error(request.in, "humanoid",
                  "has no VRM humanoid map for a .vrma (convert --onto a VRM avatar)");
    const Clip& c = out.clips[static_cast<size_t>(clip)];
    VrmaWriteOptions options;
    options.expressions = vrma_expressions(out, c);
    write_vrma(out.skeleton, *out.humanoid, c, request.out, options);
  } else {
    GltfWriteOptions options;
    options.binary = out_ext != "gltf";
    options.vrm = out_ext == "vrm";
    if (has_clip && (clip_given || !request.onto.empty())) options.clips = {clip};
    write_gltf(out, request.out, options);
  }

  if (has_clip) {
    const Clip& c = out.clips[static_cast<size_t>(clip)];
    result.clip = clip;
    result.rate = request.fps > 0 ? request.fps : infer_frame_rate(c);
    result.frames = result.rate > 0 ? std::lround(c.duration * result.rate) + 1 : c.frame_count();
  }
  return result;
}

}  // namespace kinema::pipeline
