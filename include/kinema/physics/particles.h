// kinema/physics/particles.h — particle systems: emitters, force fields, colliders, attributes that
// change with age.
//
// Each step of h seconds runs the classic loop:
//   1. emit: every emitter makes rate·h new particles (the fraction carried to the next step) in
//      its region (a point, a line, a sphere's volume, a box's volume, a mesh's surface), with
//      its mean velocity turned by up to `spread` and scaled by up to ±speed_jitter;
//   2. forces: gravity, drag, wind, point attractors, vortices, curl noise;
//   3. integrate (semi-implicit Euler: v += h·a, then x += h·v) and collide with planes, spheres,
//      boxes and capsules (the normal velocity reflected by the restitution, the tangential one
//      slowed by Coulomb friction);
//   4. age: colour, size and opacity follow curves over the normalized age (age / lifetime);
//      particles whose age passed their lifetime are removed and the rest compacted, in order.
//      A particle is still there at age = lifetime (within a billionth of a second, so that
//      sums of h do not decide): 200 a second living 1.5 s keep 300 alive.
// Particles are stored structure-of-arrays: positions, velocities and ages in double precision
// (a spark integrated over 15,000 steps lands where the algebra says), attributes in single. Steps
// 2–4 run in parallel over blocks of particles (oneTBB); every particle's randomness comes from its
// emitter's seed and its serial number, so a run is bit-identical whatever the thread count. Units:
// metres, seconds, kilograms (each particle has unit mass: forces are accelerations).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kinema/math/age_curve.h"
#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"
#include "kinema/physics/collider.h"

namespace kinema {

/// The particles alive, structure-of-arrays: entry i of every array is particle i.
struct Particles {
  std::vector<double> px, py, pz;       ///< position, m
  std::vector<double> vx, vy, vz;       ///< velocity, m/s
  std::vector<double> age, lifetime;    ///< s; a particle lives while age ≤ lifetime
  std::vector<float> size;              ///< from the size curve
  std::vector<float> r, g, b, opacity;  ///< from the colour and opacity curves
  std::vector<std::uint64_t> serial;    ///< (emitter index << 48) | number emitted so far
  size_t count() const { return px.size(); }
  Vec3 position(size_t i) const { return {px[i], py[i], pz[i]}; }
  Vec3 velocity(size_t i) const { return {vx[i], vy[i], vz[i]}; }
};

enum class EmitterShape { Point, Line, Sphere, Box, MeshSurface };

struct Emitter {
  EmitterShape shape = EmitterShape::Point;
  Vec3 position{0, 0, 0};      ///< the point, the line's start, the sphere's or box's centre
  Vec3 line_end{0, 0, 0};      ///< Line: the other end
  double radius = 0;           ///< Sphere: particles fill its volume
  Vec3 half_extents{0, 0, 0};  ///< Box (axis-aligned): particles fill its volume
  /// MeshSurface: triangles (three vertex indices each) over vertices; particles are spread
  /// uniformly by area.
  std::vector<Vec3> mesh_vertices;
  std::vector<std::uint32_t> mesh_triangles;
  double rate = 100;  ///< particles per second, from t = 0 until stop_time
  double stop_time = std::numeric_limits<double>::infinity();  ///< s
  std::uint64_t burst = 0;     ///< particles emitted at once in the first step
  Vec3 velocity{0, 0, 0};      ///< mean initial velocity, m/s
  double spread = 0;           ///< half-angle of the cone the velocity is turned within, radians
  double speed_jitter = 0;     ///< speed scaled by 1 ± up to this
  double lifetime = 1;         ///< s
  double lifetime_jitter = 0;  ///< lifetime scaled by 1 ± up to this
  std::uint64_t seed = 1;
};

enum class ForceKind { Gravity, Drag, Wind, Attractor, Vortex, CurlNoise };

/// One force field. Gravity: a = vector. Drag: a = −strength·v. Wind: a = strength·(vector − v)
/// (drag towards the wind's velocity). Attractor: a = strength·(position − x)/|position − x|,
/// inside `radius` only (radius ≤ 0: everywhere; negative strength repels). Vortex: a swirl about
/// the axis through `position` along `vector` (unit): a = strength·(axis × r̂) for particles
/// within `radius` of the axis (≤ 0: all). CurlNoise: a = strength·curl(noise)(x / scale +
/// t·speed), divergence-free, the swirl of smoke.
struct ForceField {
  ForceKind kind = ForceKind::Gravity;
  Vec3 vector{0, -9.8, 0};
  Vec3 position{0, 0, 0};
  double strength = 1;
  double radius = 0;
  double scale = 1;  ///< CurlNoise: the noise's feature size, m
  double speed = 0;  ///< CurlNoise: how fast the field drifts, per s
};

struct ParticleAttributes {
  AgeCurve size;                   ///< default 1
  std::array<AgeCurve, 3> colour;  ///< r, g, b; default 1
  AgeCurve opacity;                ///< default 1
};

struct ParticleSystemOptions {
  std::vector<Emitter> emitters;
  std::vector<ForceField> forces;
  std::vector<Collider> colliders;
  ParticleAttributes attributes;
  size_t max_particles = 1'000'000;  ///< emission stops at this many alive
  int threads = 0;                   ///< 0: all cores; the result does not depend on it
};

class ParticleSystem {
 public:
  /// Throws kinema::Error naming the emitter, force or collider (by index) for non-finite
  /// numbers, negative rates, radii, lifetimes or jitters, a lifetime of 0, a zero plane normal or
  /// capsule axis direction, mesh triangles that index past the vertices, an empty or all-
  /// degenerate mesh, curves whose keys are not ascending or whose lengths differ.
  explicit ParticleSystem(ParticleSystemOptions options);

  /// One step of h seconds (> 0, finite; else kinema::Error): emit, apply forces, integrate,
  /// collide, age, remove the dead.
  void step(double h);

  /// Replaces the colliders (moving ones: a character's capsules posed for the next step), each
  /// checked as the constructor checks them; throws kinema::Error and keeps the old ones on a bad
  /// one.
  void set_colliders(std::vector<Collider> colliders);

  /// Adds an emitter from now on: its burst comes out in the next step, its rate from then until
  /// its stop_time (debris where something breaks). Checked as the constructor checks emitters
  /// (kinema::Error naming it by its index). Returns its index (the top bits of its serials).
  size_t add_emitter(Emitter emitter);

  const Particles& particles() const { return particles_; }
  double time() const { return time_; }
  long steps() const { return steps_; }
  /// Particles emitted so far by each emitter.
  const std::vector<std::uint64_t>& emitted() const { return emitted_; }

 private:
  void emit(double h);
  ParticleSystemOptions o_;
  Particles particles_;
  Particles scratch_;          ///< the living are compacted into it, then the two swap
  std::vector<double> carry_;  ///< per emitter, the fraction of a particle owed
  std::vector<std::uint64_t> emitted_;
  std::vector<long> first_step_;  ///< per emitter, the step its burst comes out in
  std::vector<std::vector<double>> mesh_area_sums_;  ///< per MeshSurface emitter
  double time_ = 0;
  long steps_ = 0;
};

/// Smooth 3-D gradient noise in about [−1, 1] (Perlin's improved noise on a hashed lattice).
double gradient_noise(const Vec3& p);

/// The curl of the vector potential (noise(p), noise(p + o₁), noise(p + o₂)): a divergence-free
/// field (central differences, step 1e-4).
Vec3 curl_noise(const Vec3& p);

}  // namespace kinema
