// kinema/io/particle_sidecar.h — what a particle point cache cannot say: which points are alive at
// each frame, how old they are, and how their size, colour and opacity change with age. `kinema
// sim` writes it beside the PC2 of a scene's particles (sparks.pc2 → sparks.kpa); `kinema render
// sparks.pc2` reads it to draw the living particles as billboards. docs/formats.md has the layout.
//
// A point is alive at frames first_frame…last_frame (inclusive); at frame f its normalized age is
// u = clamp((frame_times[f] − birth) / lifetime, 0, 1), and its size, colour (r, g, b) and opacity
// are the curves at u (piecewise linear through the keys, constant beyond the ends; a curve
// without keys: 1), exactly as the particle system evaluates them (kinema/physics/particles.h).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kinema/math/age_curve.h"

namespace kinema {

/// The particle system's curve over age (kinema/math/age_curve.h): the sidecar stores the scene's.
using ParticleCurve = AgeCurve;

/// One point of the cache: the frames it is alive at and its clock.
struct ParticleLife {
  int first_frame = 0, last_frame = 0;  ///< alive at first…last, inclusive
  double birth = 0;                     ///< s, on the clock of frame_times
  double lifetime = 1;                  ///< s (> 0)
};

struct ParticleSidecar {
  double frames_per_second = 30;        ///< of the cache's samples
  std::vector<double> frame_times;      ///< s, one per sample: the instant each frame shows
  ParticleCurve size;                   ///< multiplies the drawn size (default 1)
  std::array<ParticleCurve, 3> colour;  ///< linear r, g, b (default 1)
  ParticleCurve opacity;                ///< 0…1 (default 1)
  std::vector<ParticleLife> points;     ///< one per cache point, in its order

  int frames() const { return int(frame_times.size()); }
  bool alive(size_t point, int frame) const {
    return frame >= points[point].first_frame && frame <= points[point].last_frame;
  }
  /// u = clamp((frame_times[frame] − birth) / lifetime, 0, 1).
  float age_fraction(size_t point, int frame) const;
};

/// The sidecar of a cache whose `points` all live through all `frames` samples, `step` seconds
/// apart from time 0 (agents, boids: nothing born or dying), drawn at their size.
ParticleSidecar everlasting_particle_sidecar(std::size_t points, int frames, double step);

/// The sidecar's path for a point cache: its extension replaced by ".kpa".
std::string particle_sidecar_path(const std::string& cache_path);

/// Writes the sidecar atomically. Throws kinema::Error (file, "sidecar", reason) for data that
/// read_particle_sidecar would refuse, or a write failure.
void write_particle_sidecar(const std::string& path, const ParticleSidecar& sidecar);

/// Reads a sidecar. Throws kinema::Error naming the file, the byte offset and the reason for a
/// wrong magic or version, a size or checksum that does not match (truncated or damaged), counts
/// that do not fit the file, a non-finite or non-positive frame rate, frame times that are not
/// finite or go back, curve keys that are not finite or do not ascend, a point whose frames lie
/// outside the cache or are reversed, a non-finite birth, a lifetime that is not positive.
ParticleSidecar read_particle_sidecar(const std::string& path);

}  // namespace kinema
