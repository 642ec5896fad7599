// Real data: the ProAnimationBank walk and run (tests/data/fbx/ozz_pab, MIT) blended with phase
// synchronization keep their feet in step — foot-down frames within one frame of each other —
// while playing each clip on its own clock lets them drift apart.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kinema/blend/blend_space.h"
#include "kinema/blend/pose_ops.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/runtime_skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

struct Locomotion {
  Asset walk, run;
  RuntimeSkeleton skeleton;
  RuntimeClip walk_clip, run_clip;
  int left = -1, right = -1;
};

const Locomotion& data() {
  static const Locomotion* d = [] {
    auto* l = new Locomotion;
    l->walk = load_asset(test_paths::data_dir() + "/fbx/ozz_pab/walk.fbx");
    l->run = load_asset(test_paths::data_dir() + "/fbx/ozz_pab/run.fbx");
    l->skeleton = RuntimeSkeleton::build(l->walk.skeleton);
    l->walk_clip = RuntimeClip::build(l->walk.clips[0], l->walk.skeleton, {.sample_rate = 60});
    l->run_clip = RuntimeClip::build(l->run.clips[0], l->walk.skeleton, {.sample_rate = 60});
    l->left = l->skeleton.find("LeftFoot");
    l->right = l->skeleton.find("RightFoot");
    return l;
  }();
  return *d;
}

// Model-space height (Y) of a joint in a local pose.
float height(const Locomotion& d, std::span<const SoaTransform> pose, int joint) {
  std::vector<Mat4f> model(static_cast<size_t>(d.skeleton.joint_count()));
  local_to_model(d.skeleton, pose, model);
  return model[static_cast<size_t>(joint)](1, 3);
}

// Frames where the foot comes down: the height series (cyclic) crosses below
// min + 25% of its range. Returned as frame indices in [0, heights.size()).
std::vector<int> foot_downs(const std::vector<float>& heights) {
  float lo = heights[0], hi = heights[0];
  for (float h : heights) lo = std::min(lo, h), hi = std::max(hi, h);
  const float threshold = lo + 0.25f * (hi - lo);
  std::vector<int> downs;
  const int n = static_cast<int>(heights.size());
  for (int i = 0; i < n; ++i)
    if (heights[size_t((i + n - 1) % n)] > threshold && heights[size_t(i)] <= threshold)
      downs.push_back(i);
  return downs;
}

// Normalized foot-down times of a clip (its own cycle), found the same way.
float foot_down_time(const Locomotion& d, const RuntimeClip& clip, int foot) {
  std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
  std::vector<float> heights;
  for (int f = 0; f + 1 < clip.frame_count(); ++f) {  // the last frame repeats the first
    sample(clip, f / clip.sample_rate(), pose);
    heights.push_back(height(d, pose, foot));
  }
  const std::vector<int> downs = foot_downs(heights);
  EXPECT_EQ(downs.size(), 1u) << clip.name();
  return downs.empty() ? 0.0f : float(downs[0]) / float(heights.size());
}

// Plays both clips for `frames` frames at 60 Hz and returns the per-clip foot-down frames of
// `foot` in that timeline. `local_times(frame, walk_t, run_t)` gives each clip's time in seconds.
template <class Clock>
void timeline_downs(const Locomotion& d, int frames, int foot, Clock local_times,
                    std::vector<int>& walk_downs, std::vector<int>& run_downs) {
  std::vector<SoaTransform> pose(static_cast<size_t>(d.skeleton.soa_count()));
  std::vector<float> hw, hr;
  for (int f = 0; f < frames; ++f) {
    float tw, tr;
    local_times(f, tw, tr);
    sample(d.walk_clip, tw, pose);
    hw.push_back(height(d, pose, foot));
    sample(d.run_clip, tr, pose);
    hr.push_back(height(d, pose, foot));
  }
  walk_downs = foot_downs(hw);
  run_downs = foot_downs(hr);
}

TEST(LocomotionSync, WalkAndRunFeetStayInStepWithSyncMarkers) {
  const Locomotion& d = data();
  ASSERT_GE(d.left, 0);
  ASSERT_GE(d.right, 0);
  const ClipCycle walk{d.walk_clip.duration(),
                       {{"L", foot_down_time(d, d.walk_clip, d.left)},
                        {"R", foot_down_time(d, d.walk_clip, d.right)}}};
  const ClipCycle run{d.run_clip.duration(),
                      {{"L", foot_down_time(d, d.run_clip, d.left)},
                       {"R", foot_down_time(d, d.run_clip, d.right)}}};
  const ClipCycle cycles[] = {walk, run};
  const PhaseSync sync(cycles);
  for (float w_run : {0.25f, 0.5f, 0.8f}) {
    const float weights[] = {1 - w_run, w_run};
    const float cycle = *sync.cycle_duration(weights);
    const int frames = static_cast<int>(std::lround(cycle * 60.0f));  // one blended cycle
    float phase = 0;
    std::vector<int> walk_downs, run_downs;
    for (int foot : {d.left, d.right}) {
      phase = 0;
      timeline_downs(
          d, frames, foot,
          [&](int, float& tw, float& tr) {
            float local[2];
            sync.local_times(phase, local);
            tw = local[0] * d.walk_clip.duration(), tr = local[1] * d.run_clip.duration();
            sync.advance(weights, 1.0f / 60.0f, phase);
          },
          walk_downs, run_downs);
      ASSERT_EQ(walk_downs.size(), 1u);
      ASSERT_EQ(run_downs.size(), 1u);
      const int gap = std::abs(walk_downs[0] - run_downs[0]);
      EXPECT_LE(std::min(gap, frames - gap), 1) << "w_run " << w_run << " foot " << foot;
    }
  }
}

TEST(LocomotionSync, WithoutSyncTheFeetDrift) {
  // Control: each clip on its own clock (rate 1) for three seconds. Walk and run cycles differ
  // in length, so the foot-downs drift apart by far more than a frame.
  const Locomotion& d = data();
  std::vector<int> walk_downs, run_downs;
  timeline_downs(
      d, 180, d.left,
      [&](int f, float& tw, float& tr) {
        tw = std::fmod(f / 60.0f, d.walk_clip.duration());
        tr = std::fmod(f / 60.0f, d.run_clip.duration());
      },
      walk_downs, run_downs);
  ASSERT_FALSE(walk_downs.empty());
  ASSERT_FALSE(run_downs.empty());
  int worst = 0;
  for (int w : walk_downs) {
    int nearest = 1 << 20;
    for (int r : run_downs) nearest = std::min(nearest, std::abs(w - r));
    worst = std::max(worst, nearest);
  }
  EXPECT_GT(worst, 3);
}

}  // namespace
}  // namespace kinema
