// kinema/lod/update_lod.h — animation level of detail: update far characters less often.
//
// For scale: 200 characters × 60 bones at 60 Hz is 720,000 joint updates per second; if 150
// of them are far away and update at 15 Hz, it is 50·60·60 + 150·60·15 = 315,000. A character on
// a reduced rate updates every `period` frames, and characters on the same rate are staggered
// (character i updates on frames where (frame + i) % period == 0) so the work per frame stays
// even instead of spiking every period-th frame. Between updates a character holds (or
// extrapolates) its last pose; its clips must then advance by the time since its last update.
#pragma once

#include <cstdint>
#include <span>

namespace kinema {

/// Characters at `min_distance` metres or farther update at `update_hz` (the highest
/// min_distance not above the character's distance wins).
struct LodLevel {
  float min_distance = 0;  ///< metres
  float update_hz = 60;    ///< updates per second, > 0
};

/// Update rate for a character at `distance` metres: the matching level's rate, capped at
/// `frame_hz` (a character cannot update more than once per frame). Levels may come in any
/// order; with no matching level (or none at all) the rate is frame_hz. NaN distance counts as
/// near (full rate), so a bad camera never freezes a character.
float lod_update_hz(std::span<const LodLevel> levels, float distance, float frame_hz);

/// Frames between updates at this rate: round(frame_hz / update_hz), at least 1.
int lod_period(float update_hz, float frame_hz);

/// Whether character `character` updates on frame `frame` with this period (staggered).
constexpr bool lod_updates_on(int64_t frame, int character, int period) {
  return period <= 1 || (frame + character) % period == 0;
}

/// Seconds of animation the character must advance when it updates on this frame: period
/// frames' worth (the frames it skipped plus this one).
constexpr float lod_step_seconds(int period, float frame_hz) {
  return static_cast<float>(period < 1 ? 1 : period) / frame_hz;
}

}  // namespace kinema
