// tools/kinema/skate_report.h — the foot-skate figure as `kinema play`, `match run` and `ik feet`
// print it (kinema/retarget/metrics.h: humanoid_foot_skate; kinema/blend/foot_contact.h).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/retarget/metrics.h"

namespace kinema::cli {

/// "foot skate while planted: median 1.2 cm/s, p90 3.4 cm/s over 120 planted frames", or
/// "foot skate: no contacts" when no frame is planted; "(ankles only: no toe joints)" follows
/// when the humanoid has no toes mapped.
inline std::string skate_text(const FootSkate& skate, bool with_toes) {
  std::string s;
  if (skate.speed)
    s = "foot skate while planted: median " + format_number(skate.speed->median, 2) +
        " cm/s, p90 " + format_number(skate.speed->p90, 2) + " cm/s over " +
        std::to_string(skate.planted_frames) + " planted frames";
  else
    s = "foot skate: no contacts";
  if (!with_toes) s += " (ankles only: no toe joints)";
  return s;
}

inline std::string skate_text(const HumanoidFootSkate& skate) {
  return skate_text(skate.skate, skate.with_toes);
}

/// {"planted_frames", "median_cm_per_s", "p90_cm_per_s", "max_cm_per_s", "with_toes"}; the speeds
/// are null when there are no contacts.
inline nlohmann::ordered_json skate_json(const FootSkate& skate, bool with_toes) {
  nlohmann::ordered_json j;
  j["planted_frames"] = skate.planted_frames;
  const auto speed = [&](double SkateSpeeds::*field) -> nlohmann::ordered_json {
    if (!skate.speed) return nullptr;
    return (*skate.speed).*field;
  };
  j["median_cm_per_s"] = speed(&SkateSpeeds::median);
  j["p90_cm_per_s"] = speed(&SkateSpeeds::p90);
  j["max_cm_per_s"] = speed(&SkateSpeeds::max);
  j["with_toes"] = with_toes;
  return j;
}

inline nlohmann::ordered_json skate_json(const std::optional<HumanoidFootSkate>& skate) {
  if (!skate) return nullptr;
  return skate_json(skate->skate, skate->with_toes);
}

}  // namespace kinema::cli
