// kinema/blend/foot_contact.h — when a foot is planted, and how much a planted foot skates.
//
// A foot is tracked by two points, its ankle and its toe (world or model space, metres, +Y up),
// sampled at a fixed step dt. A walking foot rolls: it lands on the heel (the ankle stops while
// the toe comes down), stands flat (both stop), then lifts the heel (the ankle rises and moves
// on while the toe stays put). The foot is planted through all three phases, so contact is judged
// on the *slower* point of the two at each frame — its horizontal speed and its height above its
// own floor. An ankle alone (no toe joint) counts the heel-roll frames as moving.
//
// Detection, per foot:
//   - speed of a point: horizontal (x, z) central difference, one-sided at the clip's ends, m/s;
//   - floor of a point: the `floor_percentile`-th percentile of its heights over the sequence
//     (ankles never touch y = 0: each point is measured against its own low level, and a
//     percentile is not fooled by a few glitch frames the way the minimum is);
//   - the slower point (the ankle on a tie) decides: the foot enters a plant when that point is
//     slower than enter_speed and within enter_height of its floor, and stays planted while it is
//     at most leave_speed and within leave_height (hysteresis: leave_* ≥ enter_*);
//   - plants shorter than min_duration are dropped.
//
// Skate: on each planted frame, the horizontal speed of the slower point, by central difference
// inside the plant (one-sided at its first and last frame; a plant of one frame has no speed and
// is not counted), in cm/s. The report gives median, 90th percentile and maximum; a sequence with
// no planted frame has no speeds at all ("no contacts"), never a 0 that would read as perfect.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// Thresholds of detect_foot_plants. Speeds in m/s (horizontal), heights in metres above the
/// point's own floor, durations in seconds. The defaults suit human walks and runs sampled at
/// 24–120 fps: a planted foot's slower point moves at a few cm/s, a swinging foot at 1–5 m/s.
struct FootPlantOptions {
  double enter_speed = 0.25;    ///< m/s: the slower point must be slower than this to plant
  double leave_speed = 0.45;    ///< m/s: a plant ends when the slower point is faster (≥ enter)
  double enter_height = 0.05;   ///< m above its floor for the slower point to plant
  double leave_height = 0.08;   ///< m above its floor where a plant ends (≥ enter_height)
  double floor_percentile = 5;  ///< percent, in [0, 100]: a point's floor over the sequence
  double min_duration = 0.1;    ///< s: plants shorter than this (in frames, rounded) are dropped
};

/// One plant of one foot: frames first..last, inclusive.
struct FootPlant {
  int foot = 0;
  int first = 0, last = 0;
  int frames() const { return last - first + 1; }
};

/// Result of detect_foot_plants.
struct FootPlants {
  int foot_count = 0, frame_count = 0;
  /// Frame-major flags: planted[frame·foot_count + foot] is 1 on a planted frame.
  std::vector<uint8_t> planted;
  /// Frame-major: 1 where the toe is the slower point (the heel is rolling), 0 for the ankle.
  std::vector<uint8_t> toe_support;
  std::vector<FootPlant> plants;  ///< every plant, by foot then by first frame
  /// Each foot's floor: the floor_percentile of its ankle's and its toe's heights, metres.
  std::vector<double> ankle_floor, toe_floor;

  bool is_planted(int frame, int foot) const {
    return planted[static_cast<size_t>(frame) * static_cast<size_t>(foot_count) +
                   static_cast<size_t>(foot)] != 0;
  }
};

/// Detects plants (see the top of this file). `ankles` and `toes` are frame-major
/// (`ankles[frame·foot_count + foot]`); `toes` may be empty (every foot judged on its ankle
/// alone), else the same size, and a foot without a toe joint may repeat its ankle there. Throws
/// kinema::Error when foot_count is not positive, a size does not fit, dt is not positive and
/// finite, a position is not finite, or an option is out of range (negative or non-finite,
/// leave below enter, a percentile outside [0, 100]).
FootPlants detect_foot_plants(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                              int foot_count, double dt, const FootPlantOptions& options = {});

/// Skate speeds on planted frames, cm/s.
struct SkateSpeeds {
  double median = 0, p90 = 0, max = 0;
};

/// Skate of one foot or all feet together.
struct FootSkate {
  int planted_frames = 0;  ///< planted frames that have a speed (in a plant of ≥ 2 frames)
  /// Unset when planted_frames is 0: no contacts, so nothing to say about skating.
  std::optional<SkateSpeeds> speed;
};

struct FootSkateReport {
  std::vector<FootSkate> feet;  ///< one per foot
  FootSkate total;              ///< every foot's planted frames together
};

/// Skate of the feet on the planted frames of `plants` (detected on these positions, or on a
/// reference motion of the same frame count to compare two versions of it on the same frames).
/// Positions as detect_foot_plants takes them. Percentiles interpolate linearly between order
/// statistics. Throws kinema::Error on sizes that do not match `plants`, a bad dt or a non-finite
/// position.
FootSkateReport measure_foot_skate(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                                   int foot_count, double dt, const FootPlants& plants);

/// detect_foot_plants, then measure_foot_skate on the same positions.
FootSkateReport measure_foot_skate(std::span<const Vec3> ankles, std::span<const Vec3> toes,
                                   int foot_count, double dt, const FootPlantOptions& options = {});

/// The p-th percentile (p in [0, 100]) of `values`, linear between order statistics (the
/// "linear" method of NumPy: rank p/100·(n − 1)). Reorders `values`. Throws kinema::Error on an
/// empty span or p outside [0, 100].
double percentile(std::span<double> values, double p);

}  // namespace kinema
