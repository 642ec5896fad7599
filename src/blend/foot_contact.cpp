// Foot plants and foot skate from ankle and toe tracks (kinema/blend/foot_contact.h).
#include "kinema/blend/foot_contact.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

const std::string kPlace = "foot contact";

void check_tracks(std::span<const Vec3> ankles, std::span<const Vec3> toes, int foot_count,
                  double dt) {
  if (foot_count <= 0) throw Error({}, kPlace, "foot count must be positive");
  if (ankles.empty() || ankles.size() % static_cast<size_t>(foot_count) != 0)
    throw Error({}, kPlace,
                std::to_string(ankles.size()) +
                    " ankle positions are not a whole number (≥ 1) of "
                    "frames of " +
                    std::to_string(foot_count) + " feet");
  if (!toes.empty() && toes.size() != ankles.size())
    throw Error({}, kPlace,
                std::to_string(toes.size()) + " toe positions for " +
                    std::to_string(ankles.size()) + " ankle positions");
  if (!std::isfinite(dt) || dt <= 0) throw Error({}, kPlace, "dt must be finite and positive");
  for (size_t i = 0; i < ankles.size(); ++i)
    if (!is_finite(ankles[i]))
      throw Error({}, kPlace, "ankle position " + std::to_string(i) + " is not finite");
  for (size_t i = 0; i < toes.size(); ++i)
    if (!is_finite(toes[i]))
      throw Error({}, kPlace, "toe position " + std::to_string(i) + " is not finite");
}

void check_options(const FootPlantOptions& o) {
  const auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!non_negative(o.enter_speed) || !non_negative(o.leave_speed) ||
      !non_negative(o.enter_height) || !non_negative(o.leave_height) ||
      !non_negative(o.min_duration))
    throw Error({}, kPlace, "speeds, heights and the minimum duration must be finite and ≥ 0");
  if (o.leave_speed < o.enter_speed || o.leave_height < o.enter_height)
    throw Error({}, kPlace, "the leave thresholds must be at least the enter thresholds");
  if (!(o.floor_percentile >= 0 && o.floor_percentile <= 100))
    throw Error({}, kPlace, "the floor percentile must be in [0, 100]");
}

double horizontal_distance(const Vec3& a, const Vec3& b) {
  return std::hypot(b.x - a.x, b.z - a.z);
}

/// One foot's two tracks, strided out of the frame-major arrays.
struct FootTrack {
  std::span<const Vec3> ankles, toes;
  size_t foot, feet, frames;

  Vec3 ankle(size_t f) const { return ankles[f * feet + foot]; }
  Vec3 toe(size_t f) const { return toes.empty() ? ankle(f) : toes[f * feet + foot]; }
  /// Horizontal speeds of ankle and toe at f, by central difference over frames a..b.
  std::pair<double, double> speeds(size_t a, size_t b, double dt) const {
    if (b == a) return {0.0, 0.0};
    const double span = static_cast<double>(b - a) * dt;
    return {horizontal_distance(ankle(a), ankle(b)) / span,
            horizontal_distance(toe(a), toe(b)) / span};
  }
};

double floor_of(const FootTrack& t, bool toe, double p) {
  std::vector<double> heights(t.frames);
  for (size_t f = 0; f < t.frames; ++f) heights[f] = (toe ? t.toe(f) : t.ankle(f)).y;
  return percentile(heights, p);
}

/// Drops the runs of 1s in `flags` (stride `stride` from `start`) shorter than `min_frames`.
void drop_short_runs(std::vector<uint8_t>& flags, size_t start, size_t stride, size_t frames,
                     size_t min_frames) {
  size_t f = 0;
  while (f < frames) {
    if (!flags[start + f * stride]) {
      ++f;
      continue;
    }
    size_t end = f;
    while (end < frames && flags[start + end * stride]) ++end;
    if (end - f < min_frames)
      for (size_t g = f; g < end; ++g) flags[start + g * stride] = 0;
    f = end;
  }
}

}  // namespace

double percentile(std::span<double> values, double p) {
  if (values.empty()) throw Error({}, kPlace, "percentile of no values");
  if (!(p >= 0 && p <= 100)) throw Error({}, kPlace, "percentile must be in [0, 100]");
  const double rank = p / 100 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double a = values[lo];
  if (lo + 1 >= values.size()) return a;
  const double b =
      *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return a + (rank - static_cast<double>(lo)) * (b - a);
}

FootPlants detect_foot_plants(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                              int foot_count, double dt, const FootPlantOptions& options) {
  check_tracks(ankles, toes, foot_count, dt);
  check_options(options);
  const size_t feet = static_cast<size_t>(foot_count), frames = ankles.size() / feet;
  FootPlants r;
  r.foot_count = foot_count;
  r.frame_count = static_cast<int>(frames);
  r.planted.assign(ankles.size(), 0);
  r.toe_support.assign(ankles.size(), 0);
  const size_t min_frames =
      std::max<size_t>(1, static_cast<size_t>(std::llround(options.min_duration / dt)));
  for (size_t k = 0; k < feet; ++k) {
    const FootTrack t{ankles, toes, k, feet, frames};
    const double ankle_floor = floor_of(t, false, options.floor_percentile);
    const double toe_floor = floor_of(t, true, options.floor_percentile);
    r.ankle_floor.push_back(ankle_floor);
    r.toe_floor.push_back(toe_floor);
    bool planted = false;
    for (size_t f = 0; f < frames; ++f) {
      const auto [ankle_speed, toe_speed] =
          t.speeds(f > 0 ? f - 1 : f, f + 1 < frames ? f + 1 : f, dt);
      const bool on_toe = toe_speed < ankle_speed;
      const double speed = on_toe ? toe_speed : ankle_speed;
      const double height = on_toe ? t.toe(f).y - toe_floor : t.ankle(f).y - ankle_floor;
      planted = planted ? speed <= options.leave_speed && height <= options.leave_height
                        : speed < options.enter_speed && height <= options.enter_height;
      r.planted[f * feet + k] = planted;
      r.toe_support[f * feet + k] = on_toe;
    }
    drop_short_runs(r.planted, k, feet, frames, min_frames);
    for (size_t f = 0; f < frames; ++f) {
      if (!r.planted[f * feet + k] || (f > 0 && r.planted[(f - 1) * feet + k])) continue;
      size_t last = f;
      while (last + 1 < frames && r.planted[(last + 1) * feet + k]) ++last;
      r.plants.push_back({static_cast<int>(k), static_cast<int>(f), static_cast<int>(last)});
    }
  }
  return r;
}

FootSkateReport measure_foot_skate(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                                   int foot_count, double dt, const FootPlants& plants) {
  check_tracks(ankles, toes, foot_count, dt);
  if (plants.foot_count != foot_count || plants.planted.size() != ankles.size())
    throw Error({}, kPlace,
                "the plants were detected on " + std::to_string(plants.frame_count) +
                    " frames of " + std::to_string(plants.foot_count) + " feet, not on these " +
                    std::to_string(ankles.size() / static_cast<size_t>(foot_count)) + " frames");
  const size_t feet = static_cast<size_t>(foot_count), frames = ankles.size() / feet;
  const auto summarize = [](std::vector<double>& cm_per_s) {
    FootSkate s;
    s.planted_frames = static_cast<int>(cm_per_s.size());
    if (cm_per_s.empty()) return s;
    SkateSpeeds v;
    v.max = *std::max_element(cm_per_s.begin(), cm_per_s.end());
    v.p90 = percentile(cm_per_s, 90);
    v.median = percentile(cm_per_s, 50);
    s.speed = v;
    return s;
  };
  FootSkateReport r;
  std::vector<double> all;
  for (size_t k = 0; k < feet; ++k) {
    const FootTrack t{ankles, toes, k, feet, frames};
    const auto planted = [&](size_t f) { return plants.planted[f * feet + k] != 0; };
    std::vector<double> speeds;
    for (size_t f = 0; f < frames; ++f) {
      if (!planted(f)) continue;
      // Central difference inside the plant, one-sided at its ends.
      const size_t a = f > 0 && planted(f - 1) ? f - 1 : f;
      const size_t b = f + 1 < frames && planted(f + 1) ? f + 1 : f;
      if (a == b) continue;
      const auto [ankle_speed, toe_speed] = t.speeds(a, b, dt);
      speeds.push_back(100 * std::min(ankle_speed, toe_speed));
    }
    all.insert(all.end(), speeds.begin(), speeds.end());
    r.feet.push_back(summarize(speeds));
  }
  r.total = summarize(all);
  return r;
}

FootSkateReport measure_foot_skate(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                                   int foot_count, double dt, const FootPlantOptions& options) {
  const FootPlants plants = detect_foot_plants(ankles, toes, foot_count, dt, options);
  return measure_foot_skate(ankles, toes, foot_count, dt, plants);
}

}  // namespace kinema
