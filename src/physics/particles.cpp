// Particle systems (kinema/physics/particles.h).
#include "kinema/physics/particles.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "particle system";
constexpr size_t kBlock = 4096;  ///< particles per parallel task

// ---- counter-based randomness: the same numbers for a particle whatever the thread count ----

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1): draw k of particle `serial` of an emitter seeded `seed`.
double uniform(std::uint64_t seed, std::uint64_t serial, int k) {
  const std::uint64_t h = splitmix64(splitmix64(seed ^ (serial * 0xD1B54A32D192ED03ull)) + k);
  return double(h >> 11) * 0x1.0p-53;
}

// ---- validation ----

void check_finite(const Vec3& v, const std::string& what) {
  if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
    throw Error({}, kPlace, what + " is not finite");
}
void check_non_negative(double v, const std::string& what) {
  if (!(v >= 0) || !std::isfinite(v)) throw Error({}, kPlace, what + " must be ≥ 0 and finite");
}

void check_curve(const AgeCurve& c, const std::string& what) {
  if (c.u.size() != c.value.size())
    throw Error({}, kPlace,
                what + ": " + std::to_string(c.u.size()) + " ages for " +
                    std::to_string(c.value.size()) + " values");
  for (size_t i = 0; i < c.u.size(); ++i) {
    if (!std::isfinite(c.u[i]) || !std::isfinite(c.value[i]))
      throw Error({}, kPlace, what + ": key " + std::to_string(i) + " is not finite");
    if (i > 0 && !(c.u[i] > c.u[i - 1]))
      throw Error({}, kPlace, what + ": ages must ascend (key " + std::to_string(i) + ")");
  }
}

// ---- collisions ----

/// Puts a particle that is inside a solid back on its surface (outward normal n at the surface
/// point s) and responds: v_n → −restitution·v_n when moving in, v_t slowed by friction·|Δv_n|.
void respond(Vec3& x, Vec3& v, const Vec3& surface, const Vec3& n, const Collider& c) {
  x = surface;
  const double vn = dot(v, n);
  if (vn >= 0) return;  // already leaving
  const Vec3 normal_part = n * vn, tangential = v - normal_part;
  const double change = (1 + c.restitution) * -vn;  // |Δv_n|
  const double speed_t = length(tangential);
  const double keep = speed_t > 0 ? std::max(0.0, 1 - c.friction * change / speed_t) : 0;
  v = tangential * keep - normal_part * c.restitution;
}

void collide(Vec3& x, Vec3& v, const Collider& c) {
  Vec3 surface, normal;
  if (collider_contact(c, x, 0, surface, normal)) respond(x, v, surface, normal, c);
}

// ---- forces ----

Vec3 acceleration(const ForceField& f, const Vec3& x, const Vec3& v, double t) {
  switch (f.kind) {
    case ForceKind::Gravity:
      return f.vector;
    case ForceKind::Drag:
      return v * -f.strength;
    case ForceKind::Wind:
      return (f.vector - v) * f.strength;
    case ForceKind::Attractor: {
      const Vec3 d = f.position - x;
      const double len = length(d);
      if (len <= 1e-9 || (f.radius > 0 && len > f.radius)) return {0, 0, 0};
      return d * (f.strength / len);
    }
    case ForceKind::Vortex: {
      const Vec3 axis = f.vector;
      const Vec3 r = x - f.position;
      const Vec3 radial = r - axis * dot(r, axis);
      const double len = length(radial);
      if (len <= 1e-9 || (f.radius > 0 && len > f.radius)) return {0, 0, 0};
      return cross(axis, radial / len) * f.strength;
    }
    case ForceKind::CurlNoise:
      return curl_noise(x / f.scale + Vec3{1, 1, 1} * (t * f.speed)) * f.strength;
  }
  return {0, 0, 0};
}

// ---- Perlin's improved noise ----

const std::array<std::uint8_t, 256>& permutation() {
  static const std::array<std::uint8_t, 256> p = [] {
    std::array<std::uint8_t, 256> out{};
    for (int i = 0; i < 256; ++i) out[size_t(i)] = std::uint8_t(i);
    std::uint64_t state = 0x5EED;
    for (int i = 255; i > 0; --i) {  // Fisher–Yates with a fixed seed
      state = splitmix64(state);
      std::swap(out[size_t(i)], out[size_t(state % std::uint64_t(i + 1))]);
    }
    return out;
  }();
  return p;
}

double fade(double t) { return t * t * t * (t * (t * 6 - 15) + 10); }

double grad(int hash, double x, double y, double z) {
  const int h = hash & 15;
  const double u = h < 8 ? x : y, v = h < 4 ? y : (h == 12 || h == 14 ? x : z);
  return ((h & 1) ? -u : u) + ((h & 2) ? -v : v);
}

/// Checks emitter `e` and returns its triangles' running area sums (MeshSurface; else empty).
std::vector<double> checked_emitter(const Emitter& m, size_t e) {
  const std::string what = "emitter " + std::to_string(e);
  check_finite(m.position, what + " position");
  check_finite(m.line_end, what + " line end");
  check_finite(m.half_extents, what + " half extents");
  check_finite(m.velocity, what + " velocity");
  check_non_negative(m.rate, what + " rate");
  if (std::isnan(m.stop_time)) throw Error({}, kPlace, what + " stop time is not a number");
  check_non_negative(m.radius, what + " radius");
  check_non_negative(m.spread, what + " spread");
  check_non_negative(m.speed_jitter, what + " speed jitter");
  check_non_negative(m.lifetime_jitter, what + " lifetime jitter");
  if (!(m.lifetime > 0) || !std::isfinite(m.lifetime))
    throw Error({}, kPlace, what + " lifetime must be positive");
  if (m.lifetime_jitter >= 1) throw Error({}, kPlace, what + " lifetime jitter must be < 1");
  std::vector<double> sums;
  if (m.shape == EmitterShape::MeshSurface) {
    if (m.mesh_triangles.empty() || m.mesh_triangles.size() % 3 != 0)
      throw Error({}, kPlace, what + " mesh needs whole triangles");
    double total = 0;
    for (size_t t = 0; t < m.mesh_triangles.size(); t += 3) {
      for (int k = 0; k < 3; ++k)
        if (m.mesh_triangles[t + size_t(k)] >= m.mesh_vertices.size())
          throw Error({}, kPlace,
                      what + " triangle " + std::to_string(t / 3) + " indexes past the " +
                          std::to_string(m.mesh_vertices.size()) + " vertices");
      const Vec3& a = m.mesh_vertices[m.mesh_triangles[t]];
      const Vec3& b = m.mesh_vertices[m.mesh_triangles[t + 1]];
      const Vec3& c = m.mesh_vertices[m.mesh_triangles[t + 2]];
      check_finite(a, what + " vertex");
      check_finite(b, what + " vertex");
      check_finite(c, what + " vertex");
      total += 0.5 * length(cross(b - a, c - a));
      sums.push_back(total);
    }
    if (!(total > 0)) throw Error({}, kPlace, what + " mesh has no area");
  }
  return sums;
}

/// Checks force `f` and normalizes its vortex axis.
void check_force(ForceField& ff, size_t f) {
  const std::string what = "force " + std::to_string(f);
  check_finite(ff.vector, what + " vector");
  check_finite(ff.position, what + " position");
  if (!std::isfinite(ff.strength) || !std::isfinite(ff.radius) || !std::isfinite(ff.speed))
    throw Error({}, kPlace, what + " has a non-finite number");
  if (ff.kind == ForceKind::CurlNoise && !(ff.scale > 0))
    throw Error({}, kPlace, what + " noise scale must be positive");
  if (ff.kind == ForceKind::Vortex) {
    if (!(length(ff.vector) > 0)) throw Error({}, kPlace, what + " vortex axis is zero");
    ff.vector = normalize(ff.vector);
  }
}

}  // namespace

double gradient_noise(const Vec3& p) {
  const auto& perm = permutation();
  auto at = [&](int i) { return int(perm[size_t(i & 255)]); };
  const double fx = std::floor(p.x), fy = std::floor(p.y), fz = std::floor(p.z);
  const int X = int(fx), Y = int(fy), Z = int(fz);
  const double x = p.x - fx, y = p.y - fy, z = p.z - fz;
  const double u = fade(x), v = fade(y), w = fade(z);
  const int A = at(X) + Y, AA = at(A) + Z, AB = at(A + 1) + Z;
  const int B = at(X + 1) + Y, BA = at(B) + Z, BB = at(B + 1) + Z;
  auto lerp = [](double t, double a, double b) { return a + t * (b - a); };
  return lerp(
      w,
      lerp(v, lerp(u, grad(at(AA), x, y, z), grad(at(BA), x - 1, y, z)),
           lerp(u, grad(at(AB), x, y - 1, z), grad(at(BB), x - 1, y - 1, z))),
      lerp(v, lerp(u, grad(at(AA + 1), x, y, z - 1), grad(at(BA + 1), x - 1, y, z - 1)),
           lerp(u, grad(at(AB + 1), x, y - 1, z - 1), grad(at(BB + 1), x - 1, y - 1, z - 1))));
}

Vec3 curl_noise(const Vec3& p) {
  // ψ = (n(p), n(p + o1), n(p + o2)); curl ψ = (∂ψz/∂y − ∂ψy/∂z, ∂ψx/∂z − ∂ψz/∂x,
  // ∂ψy/∂x − ∂ψx/∂y), by central differences.
  constexpr double e = 1e-4;
  const Vec3 o1{31.416, 47.853, 12.793}, o2{-23.541, 71.135, -5.372};
  auto psi = [&](const Vec3& q, int c) {
    return gradient_noise(c == 0 ? q : (c == 1 ? q + o1 : q + o2));
  };
  auto d = [&](int c, const Vec3& axis) {
    return (psi(p + axis * e, c) - psi(p - axis * e, c)) / (2 * e);
  };
  const Vec3 X{1, 0, 0}, Y{0, 1, 0}, Z{0, 0, 1};
  return {d(2, Y) - d(1, Z), d(0, Z) - d(2, X), d(1, X) - d(0, Y)};
}

ParticleSystem::ParticleSystem(ParticleSystemOptions options) : o_(std::move(options)) {
  for (size_t e = 0; e < o_.emitters.size(); ++e)
    mesh_area_sums_.push_back(checked_emitter(o_.emitters[e], e));
  for (size_t f = 0; f < o_.forces.size(); ++f) check_force(o_.forces[f], f);
  for (size_t c = 0; c < o_.colliders.size(); ++c)
    validate_collider(o_.colliders[c], kPlace, "collider " + std::to_string(c));
  check_curve(o_.attributes.size, "size curve");
  for (int c = 0; c < 3; ++c) check_curve(o_.attributes.colour[size_t(c)], "colour curve");
  check_curve(o_.attributes.opacity, "opacity curve");
  carry_.assign(o_.emitters.size(), 0.0);
  emitted_.assign(o_.emitters.size(), 0);
  first_step_.assign(o_.emitters.size(), 0);
}

size_t ParticleSystem::add_emitter(Emitter emitter) {
  const size_t e = o_.emitters.size();
  std::vector<double> areas = checked_emitter(emitter, e);
  o_.emitters.push_back(std::move(emitter));
  mesh_area_sums_.push_back(std::move(areas));
  carry_.push_back(0.0);
  emitted_.push_back(0);
  first_step_.push_back(steps_);
  return e;
}

void ParticleSystem::emit(double h) {
  Particles& p = particles_;
  for (size_t e = 0; e < o_.emitters.size(); ++e) {
    const Emitter& m = o_.emitters[e];
    if (time_ < m.stop_time) carry_[e] += m.rate * h;
    // A hair of tolerance: 200/s at 1/100 s must make 2 a step, not 1.9999999 → 1.
    const double whole = std::floor(carry_[e] + 1e-9);
    carry_[e] = std::max(0.0, carry_[e] - whole);
    const std::uint64_t count = std::uint64_t(whole) + (steps_ == first_step_[e] ? m.burst : 0);
    for (std::uint64_t k = 0; k < count; ++k) {
      if (p.count() >= o_.max_particles) break;
      const std::uint64_t serial = (std::uint64_t(e) << 48) | emitted_[e]++;
      auto u = [&](int draw) { return uniform(m.seed, serial, draw); };
      Vec3 x = m.position;
      switch (m.shape) {
        case EmitterShape::Point:
          break;
        case EmitterShape::Line:
          x = m.position + (m.line_end - m.position) * u(0);
          break;
        case EmitterShape::Sphere: {
          const double z = 2 * u(0) - 1, phi = 2 * std::numbers::pi * u(1);
          const double s = std::sqrt(std::max(0.0, 1 - z * z)), r = m.radius * std::cbrt(u(2));
          x = m.position + Vec3{s * std::cos(phi), z, s * std::sin(phi)} * r;
          break;
        }
        case EmitterShape::Box:
          x = m.position + Vec3{m.half_extents.x * (2 * u(0) - 1),
                                m.half_extents.y * (2 * u(1) - 1),
                                m.half_extents.z * (2 * u(2) - 1)};
          break;
        case EmitterShape::MeshSurface: {
          const std::vector<double>& sums = mesh_area_sums_[e];
          const double pick = u(0) * sums.back();
          const size_t t =
              std::min(sums.size() - 1,
                       size_t(std::upper_bound(sums.begin(), sums.end(), pick) - sums.begin()));
          const Vec3& a = m.mesh_vertices[m.mesh_triangles[3 * t]];
          const Vec3& b = m.mesh_vertices[m.mesh_triangles[3 * t + 1]];
          const Vec3& c = m.mesh_vertices[m.mesh_triangles[3 * t + 2]];
          const double s = std::sqrt(u(1)), w = u(2);  // uniform over the triangle
          x = a * (1 - s) + b * (s * (1 - w)) + c * (s * w);
          break;
        }
      }
      Vec3 v = m.velocity;
      if (m.spread > 0 && length(v) > 0) {  // turned within a cone about the mean direction
        const double speed = length(v);
        const Vec3 axis = v / speed, side = any_perpendicular(axis), up = cross(axis, side);
        const double cos_t = 1 - u(3) * (1 - std::cos(m.spread)), phi = 2 * std::numbers::pi * u(4);
        const double sin_t = std::sqrt(std::max(0.0, 1 - cos_t * cos_t));
        v = (axis * cos_t + side * (sin_t * std::cos(phi)) + up * (sin_t * std::sin(phi))) * speed;
      }
      v = v * (1 + m.speed_jitter * (2 * u(5) - 1));
      p.px.push_back(x.x);
      p.py.push_back(x.y);
      p.pz.push_back(x.z);
      p.vx.push_back(v.x);
      p.vy.push_back(v.y);
      p.vz.push_back(v.z);
      p.age.push_back(0);
      p.lifetime.push_back(m.lifetime * (1 + m.lifetime_jitter * (2 * u(6) - 1)));
      p.serial.push_back(serial);
      p.size.push_back(o_.attributes.size.at(0, 1));
      p.r.push_back(o_.attributes.colour[0].at(0, 1));
      p.g.push_back(o_.attributes.colour[1].at(0, 1));
      p.b.push_back(o_.attributes.colour[2].at(0, 1));
      p.opacity.push_back(o_.attributes.opacity.at(0, 1));
    }
  }
}

void ParticleSystem::set_colliders(std::vector<Collider> colliders) {
  for (size_t c = 0; c < colliders.size(); ++c)
    validate_collider(colliders[c], kPlace, "collider " + std::to_string(c));
  o_.colliders = std::move(colliders);
}

void ParticleSystem::step(double h) {
  if (!(h > 0) || !std::isfinite(h)) throw Error({}, kPlace, "the step must be positive");
  emit(h);
  Particles& p = particles_;
  const size_t n = p.count();
  const double t = time_;
  std::vector<char> alive(n, 1);
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<size_t> alive_in_block(blocks + 1, 0);
  auto update = [&](size_t block) {
    const size_t begin = block * kBlock, end = std::min(n, begin + kBlock);
    size_t living = 0;
    for (size_t i = begin; i < end; ++i) {
      Vec3 x = p.position(i), v = p.velocity(i), a{0, 0, 0};
      for (const ForceField& f : o_.forces) a = a + acceleration(f, x, v, t);
      v = v + a * h;  // semi-implicit Euler: velocity first
      x = x + v * h;
      for (const Collider& c : o_.colliders) collide(x, v, c);
      p.px[i] = x.x, p.py[i] = x.y, p.pz[i] = x.z;
      p.vx[i] = v.x, p.vy[i] = v.y, p.vz[i] = v.z;
      p.age[i] += h;
      alive[i] = p.age[i] <= p.lifetime[i] + 1e-9;
      living += alive[i];
      const float u = float(std::min(1.0, p.age[i] / p.lifetime[i]));
      p.size[i] = o_.attributes.size.at(u, 1);
      p.r[i] = o_.attributes.colour[0].at(u, 1);
      p.g[i] = o_.attributes.colour[1].at(u, 1);
      p.b[i] = o_.attributes.colour[2].at(u, 1);
      p.opacity[i] = o_.attributes.opacity.at(u, 1);
    }
    alive_in_block[block + 1] = living;
  };
  tbb::task_arena arena(o_.threads > 0 ? o_.threads : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(size_t(0), blocks, update); });

  // Remove the dead, keeping the order: each block copies its living into a second buffer at the
  // offset the blocks before it leave (in parallel), and the buffers swap.
  for (size_t b = 0; b < blocks; ++b) alive_in_block[b + 1] += alive_in_block[b];
  const size_t kept = alive_in_block[blocks];
  if (kept < n) {
    Particles& q = scratch_;
    auto doubles = [](Particles& x) {
      return std::array<std::vector<double>*, 8>{&x.px, &x.py, &x.pz,  &x.vx,
                                                 &x.vy, &x.vz, &x.age, &x.lifetime};
    };
    auto floats = [](Particles& x) {
      return std::array<std::vector<float>*, 5>{&x.size, &x.r, &x.g, &x.b, &x.opacity};
    };
    for (std::vector<double>* v : doubles(q)) v->resize(kept);
    for (std::vector<float>* v : floats(q)) v->resize(kept);
    q.serial.resize(kept);
    const auto from_d = doubles(p), to_d = doubles(q);
    const auto from_f = floats(p), to_f = floats(q);
    arena.execute([&] {
      tbb::parallel_for(size_t(0), blocks, [&](size_t block) {
        size_t out = alive_in_block[block];
        for (size_t i = block * kBlock, end = std::min(n, i + kBlock); i < end; ++i) {
          if (!alive[i]) continue;
          for (size_t k = 0; k < from_d.size(); ++k) (*to_d[k])[out] = (*from_d[k])[i];
          for (size_t k = 0; k < from_f.size(); ++k) (*to_f[k])[out] = (*from_f[k])[i];
          q.serial[out] = p.serial[i];
          ++out;
        }
      });
    });
    std::swap(particles_, scratch_);
  }
  time_ += h;
  ++steps_;
}

}  // namespace kinema
