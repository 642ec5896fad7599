// Crowd LOD tiers, hysteresis, cross-fades and the joint-update accounting (crowd_lod.h).
#include "kinema/crowd/crowd_lod.h"

#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/lod/update_lod.h"

namespace kinema {

const char* crowd_tier_name(CrowdTier tier) noexcept {
  switch (tier) {
    case CrowdTier::Near:
      return "near";
    case CrowdTier::Mid:
      return "mid";
    case CrowdTier::Far:
      return "far";
    case CrowdTier::Farthest:
      return "farthest";
  }
  return "?";
}

CrowdLod::CrowdLod(const CrowdLodSettings& settings, std::size_t agents)
    : settings_(settings),
      tier_(agents, CrowdTier::Near),
      from_(agents, CrowdTier::Near),
      fade_(agents, 1.0f),
      updates_(agents, 0) {
  for (int t = 0; t < kCrowdTierCount; ++t) {
    const CrowdTierSettings& s = settings.tiers[t];
    const std::string place = std::string("crowd LOD tier ") + crowd_tier_name(CrowdTier(t));
    if (!(s.min_distance >= 0) || !std::isfinite(s.min_distance) ||
        (t > 0 && s.min_distance < settings.tiers[t - 1].min_distance)) {
      throw Error("", place, "min_distance must be finite, ≥ 0 and not below the tier before");
    }
    if (t < 2 && (!(s.update_hz > 0) || !std::isfinite(s.update_hz) || s.joints < 1)) {
      throw Error("", place, "a skeleton tier needs update_hz > 0 and at least one joint");
    }
  }
  if (settings.tiers[0].min_distance != 0) {
    throw Error("", "crowd LOD tier near", "the near tier must start at 0 m");
  }
  if (!(settings.hysteresis >= 0) || !(settings.fade_seconds >= 0) ||
      !std::isfinite(settings.fade_seconds) || !(settings.frame_hz > 0) ||
      !std::isfinite(settings.frame_hz)) {
    throw Error("", "crowd LOD settings",
                "hysteresis and fade_seconds must be ≥ 0 and frame_hz finite and > 0");
  }
}

CrowdTier CrowdLod::tier_at(float distance) const noexcept {
  if (std::isnan(distance)) return CrowdTier::Near;
  int t = 0;
  while (t + 1 < kCrowdTierCount && distance >= settings_.tiers[t + 1].min_distance) ++t;
  return CrowdTier(t);
}

CrowdTier CrowdLod::classify(float distance, CrowdTier current) const noexcept {
  const int t = static_cast<int>(tier_at(distance));
  // Hysteresis: stay in the current tier until the distance is `hysteresis` past its bounds.
  const int c = static_cast<int>(current);
  const float lo = settings_.tiers[c].min_distance - settings_.hysteresis;
  const float hi = c + 1 < kCrowdTierCount
                       ? settings_.tiers[c + 1].min_distance + settings_.hysteresis
                       : INFINITY;
  if (t != c && distance >= lo && distance < hi) return current;
  return CrowdTier(t);
}

int CrowdLod::period(CrowdTier tier) const noexcept {
  return lod_period(settings_.tiers[static_cast<int>(tier)].update_hz, settings_.frame_hz);
}

float CrowdLod::skeleton_step_seconds(std::size_t agent) const noexcept {
  return lod_step_seconds(period(skeletal(tier_[agent]) ? tier_[agent] : from_[agent]),
                          settings_.frame_hz);
}

void CrowdLod::update(std::span<const float> distances) {
  const bool first = frame_ < 0;
  ++frame_;
  const float fade_step =
      settings_.fade_seconds > 0 ? 1.0f / (settings_.fade_seconds * settings_.frame_hz) : 1.0f;
  frame_joint_updates_ = 0;
  const std::size_t n = std::min(distances.size(), tier_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const CrowdTier next = first ? tier_at(distances[i]) : classify(distances[i], tier_[i]);
    if (first) {
      tier_[i] = from_[i] = next;
      fade_[i] = 1;
    } else if (next != tier_[i]) {
      from_[i] = tier_[i];
      tier_[i] = next;
      fade_[i] = std::min(1.0f, fade_step);
    } else if (fade_[i] < 1) {
      fade_[i] = std::min(1.0f, fade_[i] + fade_step);
    }
    if (fade_[i] >= 1) from_[i] = tier_[i];
    // Skeletons evaluated this frame: the current tier's, and the faded-out tier's while it fades.
    std::uint64_t joints = 0;
    const int agent = static_cast<int>(i);
    if (skeletal(tier_[i]) && lod_updates_on(frame_, agent, period(tier_[i]))) {
      joints += static_cast<std::uint64_t>(settings_.tiers[static_cast<int>(tier_[i])].joints);
    }
    if (from_[i] != tier_[i] && skeletal(from_[i]) &&
        lod_updates_on(frame_, agent, period(from_[i]))) {
      joints += static_cast<std::uint64_t>(settings_.tiers[static_cast<int>(from_[i])].joints);
    }
    updates_[i] = joints > 0;
    frame_joint_updates_ += joints;
  }
  total_joint_updates_ += frame_joint_updates_;
}

std::array<std::size_t, kCrowdTierCount> CrowdLod::counts() const noexcept {
  std::array<std::size_t, kCrowdTierCount> result{};
  for (CrowdTier t : tier_) ++result[static_cast<int>(t)];
  return result;
}

}  // namespace kinema
