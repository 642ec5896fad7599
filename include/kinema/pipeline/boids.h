// kinema/pipeline/boids.h — `kinema boids` as a library call: a flock scattered with random
// headings (kinema/procedural/boids.h) simulated for some seconds and written as a PC2 point cache
// with its particle sidecar, so that `kinema render OUT.pc2` draws the boids and Blender's Mesh
// Cache modifier plays them. A 2-D flock (the rules in the xy-plane) is written over the ground,
// its (x, y) as (x, 1 m, y) in kinema's +Y-up world.
#pragma once

#include <cstdint>
#include <string>

#include "kinema/pipeline/job.h"
#include "kinema/procedural/boids.h"

namespace kinema::pipeline {

struct BoidsRequest {
  std::string out;  ///< .pc2; the sidecar goes beside it (.kpa)
  std::size_t count = 48;
  double seconds = 16;  ///< simulated
  double step = 0.05;   ///< s per step; one cache frame per step (and the start)
  std::uint32_t seed = 1987;
  /// Metres across the square (cube) the boids start in; with `periodic` also the world's size.
  /// 0: chosen for the count — 7 m for 48 boids in 2-D and the same density for other counts; in
  /// 3-D 0.2 boids a cubic metre.
  double world = 0;
  bool periodic = true;
  BoidSettings settings = classic_boid_settings(2);  ///< the rules
  Progress progress;
};

struct BoidsReport {
  std::size_t boids = 0;
  int steps = 0, frames = 0;
  double world = 0;                               ///< m
  double alignment_start = 0, alignment_end = 0;  ///< |Σ v/|v|| / n
  std::size_t flocks_start = 0, flocks_end = 0;   ///< groups linked through mates
  double seconds_per_step = 0;                    ///< wall clock
  std::string cache_path, sidecar_path;
};

/// Scatters, simulates and writes (each file atomically, nothing written on failure). Throws
/// UsageError for an OUT that is not .pc2 or is a folder, and for settings the flock refuses (a
/// zero count, a world narrower than twice the neighbour radius, …).
BoidsReport run_boids(const BoidsRequest& request);

}  // namespace kinema::pipeline
