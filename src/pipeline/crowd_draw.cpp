// A crowd's characters drawn at their LOD tiers (kinema/pipeline/crowd_draw.h).
#include "kinema/pipeline/crowd_draw.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"

namespace kinema::pipeline {
namespace {

// `frames` poses of the in-place cycle at phases i / frames, for a bake.
std::vector<std::vector<Mat4>> cycle_poses(const CrowdAnimator& animator, int frames,
                                           float run_weight) {
  const std::size_t joints = std::size_t(animator.full_skeleton().joint_count());
  std::vector<Mat4f> pose(joints);
  std::vector<std::vector<Mat4>> poses(std::size_t(frames), std::vector<Mat4>(joints, Mat4{}));
  for (int f = 0; f < frames; ++f) {
    animator.sample_in_place(float(f) / float(frames), run_weight, pose);
    for (std::size_t j = 0; j < joints; ++j)
      poses[std::size_t(f)][j] = Mat4::from_column_major(pose[j].m.data());
  }
  return poses;
}

}  // namespace

Vec3f CrowdDrawer::tier_colour(CrowdTier tier) noexcept {
  switch (tier) {
    case CrowdTier::Near:
      return {0.15f, 0.60f, 0.20f};
    case CrowdTier::Mid:
      return {0.90f, 0.75f, 0.10f};
    case CrowdTier::Far:
      return {0.90f, 0.38f, 0.08f};
    case CrowdTier::Farthest:
      break;
  }
  return {0.70f, 0.10f, 0.12f};
}

Vec3f CrowdDrawer::agent_colour(std::size_t agent) noexcept {
  static constexpr Vec3f kClothes[8] = {
      {0.55f, 0.20f, 0.16f}, {0.18f, 0.30f, 0.55f}, {0.62f, 0.55f, 0.38f}, {0.22f, 0.42f, 0.28f},
      {0.45f, 0.45f, 0.48f}, {0.60f, 0.38f, 0.18f}, {0.38f, 0.22f, 0.45f}, {0.75f, 0.72f, 0.66f}};
  // A multiplicative hash, so that neighbours in a block differ.
  return kClothes[(std::uint64_t(agent) * 0x9E3779B97F4A7C15ull) >> 61];
}

CrowdDrawer::CrowdDrawer(Renderer& renderer, const Asset& character, const CrowdAnimator& animator,
                         const CrowdDrawSettings& settings)
    : renderer_(renderer), animator_(animator), settings_(settings) {
  if (character.skeleton.joint_count() != animator.full_skeleton().joint_count())
    throw Error("", "crowd characters",
                "the character has " + std::to_string(character.skeleton.joint_count()) +
                    " joints, the crowd's gait " +
                    std::to_string(animator.full_skeleton().joint_count()));
  if (!(settings.vat_fps > 0) || !std::isfinite(settings.vat_fps) || settings.impostor_frames < 1)
    throw Error("", "crowd drawing", "the VAT rate and the impostor frames must be positive");
  const auto t0 = std::chrono::steady_clock::now();
  renderer.set_asset(character, {}, settings.capsules);
  const int clips = animator.run_duration() > 0 ? 2 : 1;
  for (int c = 0; c < clips; ++c) {
    const float duration = c == 0 ? animator.walk_duration() : animator.run_duration();
    const int vat_frames = std::max(2, int(std::lround(duration * settings.vat_fps)));
    vats_.push_back(renderer.add_crowd_vat(cycle_poses(animator, vat_frames, float(c)),
                                           float(vat_frames) / duration));
    impostors_.push_back(
        renderer.add_crowd_impostor(cycle_poses(animator, settings.impostor_frames, float(c)),
                                    float(settings.impostor_frames) / duration, settings.impostor));
  }
  bake_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Image CrowdDrawer::draw(std::span<const Vec2f> positions, std::span<const Vec2f> velocities,
                        std::span<const float> heights, const Camera& camera,
                        const DrawOptions& options) {
  const CrowdAnimator& a = animator_;
  const CrowdLod& lod = a.lod();
  const std::size_t n = std::min({a.size(), positions.size(), velocities.size()});
  const std::size_t joints = std::size_t(a.full_skeleton().joint_count());
  const float walk = a.walk_speed(), run = a.run_speed();
  counts_ = {};
  // Room for two reduced poses carried to the full skeleton an agent (both tiers of a near ↔ mid
  // fade, at most): the spans handed to the renderer point into poses_, which must not move once
  // filled.
  std::size_t skeletal = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (const CrowdTier t : {lod.tier(i), lod.fading_from(i)})
      skeletal += t == CrowdTier::Near || t == CrowdTier::Mid;
  }
  poses_.resize(skeletal * joints);
  skeletons_.clear();
  baked_vats_.clear();
  baked_impostors_.clear();
  std::size_t used = 0;
  const auto add = [&](std::size_t i, CrowdTier tier, CrowdFade fade) {
    const Vec3f tint = settings_.lod_colours ? tier_colour(tier)
                       : settings_.variety   ? agent_colour(i)
                                             : Vec3f{-1, -1, -1};
    if (tier == CrowdTier::Near || tier == CrowdTier::Mid) {
      // A full pose is drawn where the animator holds it; a reduced one is carried to the full
      // skeleton in poses_.
      std::span<const Mat4f> pose = a.pose(i);
      if (!pose.empty() && pose.size() != joints) {
        const std::span<Mat4f> full(poses_.data() + used * joints, joints);
        pose = a.full_pose(i, full) ? std::span<const Mat4f>(full) : std::span<const Mat4f>();
        if (!pose.empty()) ++used;
      }
      if (pose.size() == joints) {
        CrowdSkeletonInstance k;
        k.pose = pose;
        k.tint = tint;
        k.fade = fade;
        skeletons_.push_back(k);
        ++counts_.instances[std::size_t(tier)];
        return;
      }
      tier = CrowdTier::Far;  // no skeleton update yet (a staggered mid agent): its VAT
    }
    const float speed = length(velocities[i]);
    const bool running = run > walk && speed > 0.5f * (walk + run);
    const float duration = running ? a.run_duration() : a.walk_duration();
    CrowdBakedInstance b;
    b.position = {positions[i].x, i < heights.size() ? heights[i] : 0.0f, positions[i].y};
    b.yaw = a.heading(i);
    b.time = a.phase(i) * duration;
    b.bake = running ? 1 : 0;
    b.tint = tint;
    b.fade = fade;
    (tier == CrowdTier::Far ? baked_vats_ : baked_impostors_).push_back(b);
    ++counts_.instances[std::size_t(tier)];
  };
  for (std::size_t i = 0; i < n; ++i) {
    const CrowdTier tier = lod.tier(i), from = lod.fading_from(i);
    const float fade = std::clamp(lod.fade(i), 0.0f, 1.0f);
    add(i, tier, {fade, false});
    if (from != tier && fade < 1) {
      add(i, from, {1 - fade, true});
      ++counts_.cross_fading;
    }
  }
  CrowdFrame frame;
  frame.skeletons = skeletons_;
  frame.vats = baked_vats_;
  frame.impostors = baked_impostors_;
  return renderer_.render_crowd(frame, camera, options);
}

}  // namespace kinema::pipeline
