// kinema/pipeline/crowd_draw.h — a crowd's characters drawn at their LOD tiers: the glue between
// the crowd's animation (kinema/crowd/crowd_animation.h) and the renderer's crowd drawing
// (kinema/render/renderer.h, "Crowds").
//
// Every frame each agent is drawn in its tier's form:
//   near, mid  its own skeleton pose (a mid pose on the full skeleton: fingers and toes follow
//              their hands and feet), skinned on the GPU, all agents in one instanced draw;
//   far        a vertex-animation texture of the in-place walk (or run, when it runs faster than
//              halfway between the two), played at the agent's own phase;
//   farthest   an impostor flipbook of the same cycle (views around the character × frames).
// An agent changing tier is drawn in both for the LOD's fade time, the new tier on a growing
// share of its pixels and the old one on the rest (screen-door dither): nothing pops. With
// `lod_colours` every tier has its colour — near green, mid yellow, far orange, farthest red.
//
// The bakes are made once, at construction, from the animator's in-place cycle.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "kinema/crowd/crowd_animation.h"
#include "kinema/render/renderer.h"

namespace kinema {
struct Asset;
}

namespace kinema::pipeline {

struct CrowdDrawSettings {
  bool lod_colours = false;  ///< draw each tier in its debug colour
  /// Without lod_colours: dress each agent in one of eight muted colours (by its index), as a
  /// real crowd varies; false: the character's own colours.
  bool variety = true;
  float vat_fps = 30;        ///< VAT frames a second of cycle
  int impostor_frames = 16;  ///< flipbook frames over a cycle
  ImpostorOptions impostor;  ///< views around the character, pixels a cell
  /// A character without a skinned mesh is drawn as capsules: coarse ones by default.
  CapsuleDetail capsules = crowd_capsules();
};

/// What the last draw() drew: instances per tier (an agent cross-fading counts in both).
struct CrowdDrawCounts {
  std::array<std::size_t, kCrowdTierCount> instances{};
  std::size_t cross_fading = 0;  ///< agents drawn in two tiers
};

class CrowdDrawer {
 public:
  /// Uploads `character` (whose skeleton is the animator's: its meshes, or its bones as capsules)
  /// to `renderer` and bakes the walk's (and the run's) VAT and impostor. `animator` must outlive
  /// the drawer. Throws kinema::Error when the skeletons differ or a bake fails.
  CrowdDrawer(Renderer& renderer, const Asset& character, const CrowdAnimator& animator,
              const CrowdDrawSettings& settings = {});

  /// Draws the frame the animator last updated, agents at `positions` (ground plane, Vec2 (x, y)
  /// = world (x, z)) at `heights` (may be empty: 0), moving at `velocities` (to pick walk or run
  /// for the baked tiers), seen from `camera` — which should be where the animator's camera was.
  Image draw(std::span<const Vec2f> positions, std::span<const Vec2f> velocities,
             std::span<const float> heights, const Camera& camera, const DrawOptions& options = {});

  const CrowdDrawCounts& counts() const noexcept { return counts_; }
  /// The bakes: [0] walk, [1] run (absent without a run).
  std::span<const CrowdBakeInfo> vats() const noexcept { return vats_; }
  std::span<const CrowdBakeInfo> impostors() const noexcept { return impostors_; }
  double bake_seconds() const noexcept { return bake_seconds_; }

  /// The tier's debug colour (linear RGB).
  static Vec3f tier_colour(CrowdTier tier) noexcept;
  /// Agent i's colour with `variety` (linear RGB).
  static Vec3f agent_colour(std::size_t agent) noexcept;
  /// The muted stone colours (linear RGB) `kinema crowd` draws a scene's still props in
  /// (DrawOptions::props): its obstacles, a warm sandstone, and its ground mesh, a grey slate.
  /// LOD colours leave them as they are.
  static Vec3f obstacle_colour() noexcept { return {0.50f, 0.37f, 0.24f}; }
  static Vec3f ground_colour() noexcept { return {0.27f, 0.28f, 0.27f}; }

 private:
  Renderer& renderer_;
  const CrowdAnimator& animator_;
  CrowdDrawSettings settings_;
  std::vector<CrowdBakeInfo> vats_, impostors_;
  double bake_seconds_ = 0;
  CrowdDrawCounts counts_;
  // Per-frame scratch.
  std::vector<Mat4f> poses_;
  std::vector<CrowdSkeletonInstance> skeletons_;
  std::vector<CrowdBakedInstance> baked_vats_, baked_impostors_;
};

}  // namespace kinema::pipeline
