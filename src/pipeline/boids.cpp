// `kinema boids` (kinema/pipeline/boids.h).
#include "kinema/pipeline/boids.h"

#include <chrono>
#include <cmath>
#include <numbers>
#include <random>
#include <string_view>

#include "kinema/core/error.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"

namespace kinema::pipeline {

BoidsReport run_boids(const BoidsRequest& request) {
  static constexpr std::string_view kExtensions[] = {"pc2"};
  check_output_file(request.out, {}, kExtensions, "boids writes .pc2");
  if (request.count == 0) throw UsageError("boids: the flock needs at least one boid");
  if (!(request.seconds > 0) || !(request.step > 0) ||
      !std::isfinite(request.seconds / request.step))
    throw UsageError("boids: seconds and step must be positive");
  const int steps = int(std::ceil(request.seconds / request.step - 1e-9));
  if (steps > 1000000) throw UsageError("boids: more than a million steps");
  const int dimensions = request.settings.dimensions;
  // The classic demo's density: 48 boids on 7 m × 7 m, about 28 mates within 3 m; in space
  // 0.2 boids a cubic metre, about 23 mates (a periodic world at least twice the radius wide).
  double world = request.world;
  if (world == 0)
    world = dimensions == 2 ? 7 * std::sqrt(double(request.count) / 48)
                            : std::max(2 * request.settings.neighbour_radius,
                                       std::cbrt(double(request.count) / 0.2));
  if (!(world > 0) || !std::isfinite(world)) throw UsageError("boids: the world must be positive");

  std::mt19937 rng(request.seed);
  auto uniform = [&rng] { return double(rng()) / 4294967296.0; };
  std::vector<Vec3> positions(request.count), velocities(request.count);
  for (std::size_t i = 0; i < request.count; ++i) {
    positions[i] = {world * uniform(), world * uniform(), dimensions == 3 ? world * uniform() : 0};
    const double heading = 2 * std::numbers::pi * uniform();
    const double climb = dimensions == 3 ? 0.5 * (uniform() - 0.5) : 0;
    const double speed =
        0.5 * (request.settings.min_speed + std::min(request.settings.max_speed, 4.0));
    velocities[i] = Vec3{std::cos(heading), std::sin(heading), climb} * speed;
  }
  BoidSettings settings = request.settings;
  settings.wrap_size = request.periodic ? world : 0;
  std::unique_ptr<Flock> flock;
  try {
    flock = std::make_unique<Flock>(std::move(positions), std::move(velocities), settings);
  } catch (const Error& e) {
    throw UsageError("boids: " + e.reason());
  }

  BoidsReport report;
  report.boids = request.count;
  report.world = world;
  report.steps = steps;
  report.frames = steps + 1;
  report.alignment_start = flock->alignment_order();
  report.flocks_start = flock->flock_count();
  PointCache cache;
  cache.points = int(request.count);
  cache.sample_rate = 1;
  cache.positions.reserve(std::size_t(report.frames) * request.count);
  // A 2-D flock flies over the ground: its plane's (x, y) is written as (x, 1 m up, y), in
  // kinema's +Y-up world.
  auto record = [&] {
    for (const Vec3& p : flock->positions())
      cache.positions.push_back(dimensions == 2 ? Vec3f(float(p.x), 1.0f, float(p.y)) : Vec3f(p));
  };
  record();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    flock->step(request.step);
    record();
    if (s % 16 == 0 || s + 1 == steps) pipeline::report(request.progress, "flying", s + 1, steps);
  }
  report.seconds_per_step =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / steps;
  report.alignment_end = flock->alignment_order();
  report.flocks_end = flock->flock_count();

  // Every boid alive on every frame, drawn at its size (the sidecar's default curves).
  report.cache_path = request.out;
  report.sidecar_path = particle_sidecar_path(request.out);
  write_particle_sidecar(report.sidecar_path,
                         everlasting_particle_sidecar(request.count, report.frames, request.step));
  write_pc2(report.cache_path, cache);
  return report;
}

}  // namespace kinema::pipeline
