// `kinema retarget` as a library call (kinema/pipeline/retarget.h).
#include "kinema/pipeline/retarget.h"

#include <cmath>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/render/clip_render.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/retarget/metrics.h"
#include "kinema/retarget/rig.h"
#include "motion_out.h"

namespace kinema::pipeline {
namespace {

/// True when the two skeletons are the same: joint names, parents and rest translations.
bool same_skeleton(const Skeleton& a, const Skeleton& b) {
  if (a.joint_count() != b.joint_count()) return false;
  for (int j = 0; j < a.joint_count(); ++j)
    if (a.joint(j).name != b.joint(j).name || a.parent(j) != b.parent(j) ||
        distance(a.joint(j).rest.translation, b.joint(j).rest.translation) > 1e-9)
      return false;
  return true;
}

/// Source (top row) and result (bottom row) at `frames` evenly spaced times, as one PNG.
std::string render_preview(const Asset& source, int source_clip, const Asset& result, int frames,
                           const std::string& path) {
  ClipRenderOptions options;
  options.target.width = 320;
  options.target.height = 360;
  options.camera = CameraMode::Front;
  ClipRenderer top(source, source_clip, options, source.source.path);
  ClipRenderer bottom(result, 0, options, result.source.path);
  std::vector<Image> tiles;
  const int n = std::max(frames, 1);
  for (ClipRenderer* r : {&top, &bottom})
    for (int i = 0; i < n; ++i)
      tiles.push_back(r->frame(n > 1 ? r->duration() * i / (n - 1) : 0.0));
  write_png(contact_sheet(tiles, n), path);
  return top.renderer().gl_renderer();
}

}  // namespace

RetargetResult retarget_file(const RetargetRequest& rq, const Progress& progress) {
  static constexpr std::string_view kWritable[] = {"vrma", "vrm", "glb", "gltf", "bvh", "fbx"};
  const NamedInput inputs[] = {{"IN", rq.in}, {"the --onto avatar", rq.onto}};
  check_output_file(rq.out, inputs, kWritable, "retarget");
  if (!rq.preview.empty()) {
    static constexpr std::string_view kPng[] = {"png"};
    check_output_file(rq.preview, inputs, kPng, "retarget --preview");
  }

  report(progress, "reading", 0, 2);
  const Asset motion = load_asset(rq.in, rq.load);
  report(progress, "reading", 1, 2);
  Asset avatar = load_asset(rq.onto, rq.load);
  report(progress, "reading", 2, 2);
  if (motion.clips.empty()) throw Error(rq.in, "", "has no animation to retarget");
  if (extension_of(rq.out) == "vrma" && avatar.source.format != "vrm1")
    throw Error(rq.onto, "",
                std::string("is ") + (avatar.source.format == "vrm0" ? "VRM 0.x" : "not a VRM") +
                    ", and a VRM Animation (.vrma) plays on VRM 1.0 avatars; convert it first "
                    "(kinema convert " +
                    rq.onto + " avatar1.vrm) or write .vrm or .glb");
  const int clip = rq.clip.empty() ? 0 : find_clip(motion, rq.clip, rq.in);
  const Humanoid source_map = require_humanoid(motion, rq.in, rq.map);
  avatar.humanoid = require_humanoid(avatar, rq.onto, rq.onto_map);

  RetargetOptions options = rq.options;
  options.progress = [&](long done, long frames) { report(progress, "retargeting", done, frames); };
  Clip moved = retarget_clip(motion.skeleton, source_map, motion.clips[size_t(clip)],
                             avatar.skeleton, *avatar.humanoid, options, rq.in, rq.onto);
  if (moved.name.empty()) moved.name = motion.clips[size_t(clip)].name;

  RetargetResult result;
  result.rate = moved.sample_rate > 0 ? moved.sample_rate : kDefaultSampleRate;
  result.frames = std::lround(moved.duration * result.rate) + 1;
  const HumanoidLegs legs = humanoid_legs(avatar, rq.onto);
  const bool same = same_skeleton(motion.skeleton, avatar.skeleton);
  const Clip* reference = same ? &motion.clips[size_t(clip)] : nullptr;
  MotionMetricsOptions metric_options;
  metric_options.contacts = rq.grounding.contacts;
  // Grounding measures the clip before and after itself; with a reference the pose error is
  // measured here too.
  if (!rq.ground || reference)
    result.before =
        measure_motion(avatar.skeleton, legs, moved, result.rate, metric_options, reference);
  if (rq.ground) {
    GroundingOptions g = rq.grounding;
    g.progress = [&](int done, int frames) { report(progress, "grounding", done, frames); };
    moved = ground_feet(avatar.skeleton, legs, std::move(moved), result.rate, g, &result.grounding);
    if (!reference) result.before = result.grounding.before;
    result.after = result.grounding.after;
    if (reference)
      result.after->pose_error =
          measure_motion(avatar.skeleton, legs, moved, result.rate, metric_options, reference)
              .pose_error;
    result.grounded = true;
  }
  result.pose_error = (result.after ? *result.after : result.before).pose_error;

  result.written = std::move(avatar);
  result.written.clips.clear();
  result.written.clips.push_back(std::move(moved));
  write_motion(result.written, rq.out, result.rate);
  if (!rq.preview.empty()) {
    report(progress, "rendering the preview", 0, 1);
    result.renderer = render_preview(motion, clip, result.written, rq.preview_frames, rq.preview);
    report(progress, "rendering the preview", 1, 1);
  }
  return result;
}

}  // namespace kinema::pipeline
