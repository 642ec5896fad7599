// kinema/crowd/crowd_lod.h — animation level of detail for crowds: which agents get a full
// skeleton, a reduced one, a vertex-animation texture or an impostor, and which update this frame.
//
// The four tiers of a stadium or battle crowd, by distance from the camera:
//   near      full skeleton, blending, IK, every frame;
//   mid       fewer bones, 15–30 Hz, no IK;
//   far       no skeleton: the skinned vertices baked into a vertex-animation texture (VAT),
//             played by the vertex shader from the vertex index and time;
//   farthest  an impostor: a billboard flipbook of the animation's frames.
// Work is counted in joint updates: 200 characters × 60 bones at 60 Hz is 720,000 a second; with
// 150 of them at 15 Hz it is 50·60·60 + 150·60·15 = 315,000. Agents on a reduced rate are
// staggered (kinema/lod/update_lod.h) so every frame costs about the same.
//
// A tier is left only `hysteresis` metres past its boundary, so an agent walking along it does not
// flicker between two; and a change cross-fades over `fade_seconds` (both tiers drawn, the new one
// weighted by fade()), so it does not pop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kinema {

enum class CrowdTier : std::uint8_t { Near = 0, Mid = 1, Far = 2, Farthest = 3 };
inline constexpr int kCrowdTierCount = 4;
const char* crowd_tier_name(CrowdTier tier) noexcept;

struct CrowdTierSettings {
  float min_distance = 0;  ///< m: the tier starts here (tiers in order, nondecreasing)
  float update_hz = 60;    ///< skeleton updates a second (near, mid); ignored for far, farthest
  int joints = 0;          ///< joints evaluated an update (near, mid); 0 for far and farthest
};

struct CrowdLodSettings {
  std::array<CrowdTierSettings, kCrowdTierCount> tiers{{
      {0.0f, 60.0f, 60},   // near
      {15.0f, 30.0f, 20},  // mid
      {40.0f, 0.0f, 0},    // far (VAT)
      {80.0f, 0.0f, 0},    // farthest (impostor)
  }};
  float hysteresis = 1.0f;     ///< m
  float fade_seconds = 0.25f;  ///< s; 0 switches at once
  float frame_hz = 60.0f;      ///< display frames a second
};

class CrowdLod {
 public:
  /// Throws kinema::Error for tiers out of order, negative or non-finite distances, a skeleton
  /// tier (near, mid) without joints or with a rate ≤ 0, a negative hysteresis or fade, a
  /// frame rate ≤ 0.
  CrowdLod(const CrowdLodSettings& settings, std::size_t agents);

  /// One display frame: tiers from the agents' distances to the camera (m, one per agent; NaN
  /// counts as near), fades advanced by 1/frame_hz, and the skeleton updates due this frame
  /// counted. Frames must come in order; the first call places every agent without a fade.
  void update(std::span<const float> distances);

  CrowdTier tier(std::size_t agent) const noexcept { return tier_[agent]; }
  /// The tier being faded out (equal to tier() when settled).
  CrowdTier fading_from(std::size_t agent) const noexcept { return from_[agent]; }
  /// The current tier's weight in the cross-fade, 0 → 1 (1 when settled).
  float fade(std::size_t agent) const noexcept { return fade_[agent]; }
  /// Whether agent i's skeleton is evaluated this frame (a skeleton tier, current or fading out,
  /// whose staggered turn it is).
  bool updates_skeleton(std::size_t agent) const noexcept { return updates_[agent] != 0; }
  /// Seconds of animation agent i's skeleton advances when it updates this frame.
  float skeleton_step_seconds(std::size_t agent) const noexcept;

  /// Agents in each tier now.
  std::array<std::size_t, kCrowdTierCount> counts() const noexcept;
  std::uint64_t joint_updates_this_frame() const noexcept { return frame_joint_updates_; }
  std::uint64_t joint_updates_total() const noexcept { return total_joint_updates_; }
  std::int64_t frame() const noexcept { return frame_; }
  const CrowdLodSettings& settings() const noexcept { return settings_; }

 private:
  CrowdTier tier_at(float distance) const noexcept;                      // by distance alone
  CrowdTier classify(float distance, CrowdTier current) const noexcept;  // with hysteresis
  int period(CrowdTier tier) const noexcept;
  bool skeletal(CrowdTier tier) const noexcept {
    return tier == CrowdTier::Near || tier == CrowdTier::Mid;
  }

  CrowdLodSettings settings_;
  std::vector<CrowdTier> tier_, from_;
  std::vector<float> fade_;
  std::vector<std::uint8_t> updates_;
  std::int64_t frame_ = -1;
  std::uint64_t frame_joint_updates_ = 0, total_joint_updates_ = 0;
};

}  // namespace kinema
