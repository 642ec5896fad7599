// Particle steps against the machine's memory bandwidth. A steady fountain of N particles
// (gravity, drag, a floor plane, colour and size curves; as many emitted as die each step) is
// stepped at 60 Hz; BM_CopyBandwidth copies 512 MB of doubles to measure what this machine's
// memory moves. Counters: particles per second, and the bytes a particle-step reads and writes
// over the time it took, in GB/s: the update reads 8 doubles (position, velocity, age, lifetime)
// and writes 7, 5 floats of attributes and the alive flag; the compaction (some die every step)
// reads the flag and copies the 92 bytes of each living particle (8 doubles, 5 floats, the
// serial) into the second buffer.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "kinema/physics/particles.h"

namespace kinema {
namespace {

constexpr double kBytesPerParticleStep = (8 * 8 + 7 * 8 + 5 * 4 + 1) + (1 + 2 * 92);

ParticleSystem fountain(double alive, int threads) {
  ParticleSystemOptions o;
  Emitter e;
  e.shape = EmitterShape::Sphere;
  e.radius = 0.2;
  e.velocity = {0, 6, 0};
  e.spread = 0.4;
  e.speed_jitter = 0.2;
  e.lifetime = 2;
  e.rate = alive / 2;
  o.emitters = {e};
  ForceField drag{ForceKind::Drag, {}, {}, 0.1};
  o.forces = {ForceField{}, drag};
  o.colliders = {Collider{}};
  o.attributes.size = {{0, 1}, {1, 0.2f}};
  o.attributes.opacity = {{0.7f, 1}, {1, 0}};
  o.max_particles = size_t(alive * 1.1);
  o.threads = threads;
  ParticleSystem system(o);
  for (int s = 0; s < 130; ++s) system.step(1 / 60.0);  // past one lifetime: steady
  return system;
}

void BM_ParticleStep_Fountain(benchmark::State& state) {
  ParticleSystem system = fountain(double(state.range(0)), int(state.range(1)));
  size_t particles = 0;
  for (auto _ : state) {
    system.step(1 / 60.0);
    particles += system.particles().count();
  }
  state.counters["alive"] = double(system.particles().count());
  state.counters["particles_per_s"] =
      benchmark::Counter(double(particles), benchmark::Counter::kIsRate);
  state.counters["GB_per_s"] = benchmark::Counter(double(particles) * kBytesPerParticleStep / 1e9,
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParticleStep_Fountain)
    ->Args({1'000'000, 1})
    ->Args({1'000'000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_CopyBandwidth(benchmark::State& state) {
  const size_t n = size_t(64) << 20;  // 64 Mi doubles = 512 MB each way
  std::vector<double> from(n, 1.0), to(n, 0.0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), n * sizeof(double));
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  // Bytes read plus bytes written.
  state.counters["GB_per_s"] = benchmark::Counter(double(2 * n * sizeof(double)) / 1e9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CopyBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kinema

BENCHMARK_MAIN();
