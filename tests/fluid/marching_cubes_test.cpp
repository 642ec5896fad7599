// Marching cubes and the Zhu–Bridson particle field: the generated case table on single cubes (all
// 256 cases, complements, rotations), a sphere and a torus (watertight, Euler characteristic,
// volume, distance, normals, winding), random padded fields that must close, determinism whatever
// the thread count, particle spheres and pools, bad input refused.
#include "kinema/fluid/marching_cubes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kPi = std::numbers::pi;

/// A grid of n³ samples over [-extent, extent]³ holding f(position).
ScalarGrid sample(int n, double extent, const std::function<double(const Vec3&)>& f) {
  ScalarGrid g;
  g.nx = g.ny = g.nz = n;
  g.origin = Vec3{-extent, -extent, -extent};
  g.spacing = 2 * extent / (n - 1);
  g.values.resize(std::size_t(n) * n * n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) g.values[g.index(i, j, k)] = float(f(g.position(i, j, k)));
  return g;
}

/// One cube (2×2×2 samples, spacing 1, origin 0) with corner c = value[c], c = x + 2y + 4z.
ScalarGrid one_cube(const std::array<float, 8>& value) {
  ScalarGrid g;
  g.nx = g.ny = g.nz = 2;
  g.values.assign(value.begin(), value.end());
  return g;
}

Vec3 at(const SurfaceMesh& m, std::uint32_t v) { return Vec3(m.positions[v]); }

Vec3 triangle_normal(const SurfaceMesh& m, std::size_t t) {  // area-weighted, ×2
  const Vec3 a = at(m, m.triangles[3 * t]), b = at(m, m.triangles[3 * t + 1]);
  const Vec3 c = at(m, m.triangles[3 * t + 2]);
  return cross(b - a, c - a);
}

/// Enclosed volume by the divergence theorem: Σ a·(b × c) / 6.
double volume(const SurfaceMesh& m) {
  double v = 0;
  for (std::size_t t = 0; t < m.triangle_count(); ++t) {
    const Vec3 a = at(m, m.triangles[3 * t]), b = at(m, m.triangles[3 * t + 1]);
    const Vec3 c = at(m, m.triangles[3 * t + 2]);
    v += dot(a, cross(b, c)) / 6;
  }
  return v;
}

long euler_characteristic(const SurfaceMesh& m) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::size_t t = 0; t < m.triangle_count(); ++t)
    for (int s = 0; s < 3; ++s) {
      const std::uint32_t a = m.triangles[3 * t + s], b = m.triangles[3 * t + (s + 1) % 3];
      edges.insert({std::min(a, b), std::max(a, b)});
    }
  return long(m.positions.size()) - long(edges.size()) + long(m.triangle_count());
}

/// The directed edges that have no reverse twin (a single cube's loops), as rounded positions.
using Key = std::array<long, 6>;
std::set<Key> boundary(const SurfaceMesh& m, const std::function<Vec3(const Vec3&)>& map) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> directed;
  for (std::size_t t = 0; t < m.triangle_count(); ++t)
    for (int s = 0; s < 3; ++s)
      directed.insert({m.triangles[3 * t + s], m.triangles[3 * t + (s + 1) % 3]});
  std::set<Key> out;
  for (const auto& [a, b] : directed) {
    if (directed.count({b, a})) continue;
    const Vec3 pa = map(at(m, a)), pb = map(at(m, b));
    Key k;
    for (int i = 0; i < 3; ++i) {
      k[i] = std::lround(pa[i] * 1e5);
      k[3 + i] = std::lround(pb[i] * 1e5);
    }
    out.insert(k);
  }
  return out;
}

/// The same edges, each coordinate within `tol` (1e-5 units): a vertex interpolated from either end
/// of its edge may differ in the last bit.
bool same_edges(const std::set<Key>& a, const std::set<Key>& b, long tol = 2) {
  if (a.size() != b.size()) return false;
  for (const Key& ka : a) {
    const bool found = std::any_of(b.begin(), b.end(), [&](const Key& kb) {
      for (int i = 0; i < 6; ++i)
        if (std::abs(ka[i] - kb[i]) > tol) return false;
      return true;
    });
    if (!found) return false;
  }
  return true;
}

std::set<Key> reversed(const std::set<Key>& edges) {
  std::set<Key> out;
  for (const Key& k : edges) out.insert({k[3], k[4], k[5], k[0], k[1], k[2]});
  return out;
}

int crossed_edges(int c) {
  int n = 0;
  for (int a = 0; a < 3; ++a)
    for (int corner = 0; corner < 8; ++corner)
      if (((corner >> a) & 1) == 0 && ((c >> corner) & 1) != ((c >> (corner | 1 << a)) & 1)) ++n;
  return n;
}

TEST(MarchingCubesTable, AllCornerCasesOnOneCubeCrossEachEdgeOnceAndCloseOnTheFaces) {
  for (int c = 0; c < 256; ++c) {
    std::array<float, 8> v{};
    for (int k = 0; k < 8; ++k) v[k] = ((c >> k) & 1) ? -1.f : 1.f;
    const SurfaceMesh m = marching_cubes(one_cube(v), 0);
    if (c == 0 || c == 255) {
      EXPECT_TRUE(m.positions.empty() && m.triangles.empty()) << c;
      continue;
    }
    // One vertex per crossed edge (no centre vertex with ±1 corners: ties keep faces separated),
    // each at the edge's midpoint.
    ASSERT_EQ(int(m.positions.size()), crossed_edges(c)) << "case " << c;
    for (const Vec3f& p : m.positions) {
      int halves = 0;
      for (int a = 0; a < 3; ++a) halves += p[a] == 0.5f ? 1 : 0;
      EXPECT_EQ(halves, 1) << "case " << c;
    }
    if (__builtin_popcount(c) == 1 || __builtin_popcount(c) == 7) {
      EXPECT_EQ(m.triangle_count(), 1u) << "case " << c;
    }
    // Every loop edge lies on a cube face, and every triangle faces away from the inside.
    for (const Key& k : boundary(m, [](const Vec3& p) { return p; })) {
      bool on_face = false;
      for (int a = 0; a < 3; ++a) on_face |= k[a] == k[3 + a] && (k[a] == 0 || k[a] == 100000);
      EXPECT_TRUE(on_face) << "case " << c;
    }
    for (std::size_t t = 0; t < m.triangle_count(); ++t) {
      Vec3 n{0, 0, 0};
      for (int s = 0; s < 3; ++s) n += Vec3(m.normals[m.triangles[3 * t + s]]);
      EXPECT_GT(dot(triangle_normal(m, t), n), 0) << "case " << c << " triangle " << t;
    }
  }
}

TEST(MarchingCubesTable, ComplementCrossesTheSameEdgesWithLoopsReversed) {
  // Random magnitudes decide the ambiguous faces both ways; negating the values complements the
  // case and must flip every decision with it.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.f);
  const auto id = [](const Vec3& p) { return p; };
  for (int c = 0; c < 256; ++c) {
    for (int trial = 0; trial < 8; ++trial) {
      std::array<float, 8> v{}, neg{};
      for (int k = 0; k < 8; ++k) {
        v[k] = (((c >> k) & 1) ? -1.f : 1.f) * magnitude(rng);
        neg[k] = -v[k];
      }
      const SurfaceMesh a = marching_cubes(one_cube(v), 0), b = marching_cubes(one_cube(neg), 0);
      ASSERT_EQ(a.positions, b.positions) << "case " << c;
      for (std::size_t i = 0; i < a.normals.size(); ++i)
        EXPECT_EQ(a.normals[i], -b.normals[i]) << "case " << c;
      EXPECT_EQ(boundary(a, id), reversed(boundary(b, id))) << "case " << c;
      // inside_is_below = false on the same values is the same complement, bit for bit.
      const SurfaceMesh above = marching_cubes(one_cube(v), 0, false);
      EXPECT_EQ(above.positions, b.positions);
      EXPECT_EQ(above.triangles, b.triangles);
    }
  }
}

TEST(MarchingCubesTable, QuarterTurnsOfTheCubeGiveTheTurnedLoops) {
  // Turning the values a quarter about each axis turns the surface: the same loops, mapped.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.f);
  for (int axis = 0; axis < 3; ++axis) {
    const int u = (axis + 1) % 3, w = (axis + 2) % 3;
    const auto turn = [&](const Vec3& p) {  // (u, w) → (1 − w, u), a right-handed quarter turn
      Vec3 q = p;
      q[u] = 1 - p[w];
      q[w] = p[u];
      return q;
    };
    for (int c = 0; c < 256; ++c) {
      std::array<float, 8> v{}, turned{};
      for (int k = 0; k < 8; ++k) v[k] = (((c >> k) & 1) ? -1.f : 1.f) * magnitude(rng);
      for (int k = 0; k < 8; ++k) {
        const Vec3 q = turn(Vec3{double(k & 1), double((k >> 1) & 1), double((k >> 2) & 1)});
        turned[int(q.x) + 2 * int(q.y) + 4 * int(q.z)] = v[k];
      }
      const SurfaceMesh a = marching_cubes(one_cube(v), 0);
      const SurfaceMesh b = marching_cubes(one_cube(turned), 0);
      EXPECT_TRUE(same_edges(boundary(a, turn), boundary(b, [](const Vec3& p) { return p; })))
          << "axis " << axis << " case " << c;
      EXPECT_EQ(a.positions.size(), b.positions.size());
      EXPECT_EQ(a.triangle_count(), b.triangle_count());
    }
  }
}

TEST(MarchingCubes, SphereOf32CubedIsClosedGenusZeroWithin1PercentOfItsVolume) {
  const double r = 0.8;
  const ScalarGrid g = sample(32, 1, [&](const Vec3& p) { return length(p) - r; });
  const SurfaceMesh m = marching_cubes(g, 0);
  EXPECT_TRUE(is_watertight(m));
  EXPECT_EQ(euler_characteristic(m), 2);
  const double exact = 4.0 / 3.0 * kPi * r * r * r;
  EXPECT_NEAR(volume(m) / exact, 1, 0.01);
  double worst_distance = 0, worst_cos = 1;
  for (std::size_t v = 0; v < m.positions.size(); ++v) {
    const Vec3 p = at(m, std::uint32_t(v));
    worst_distance = std::max(worst_distance, std::abs(length(p) - r));
    worst_cos = std::min(worst_cos, dot(Vec3(m.normals[v]), normalize(p)));
  }
  EXPECT_LT(worst_distance, 0.1 * g.spacing);     // measured: 0.01 of a cell
  EXPECT_GT(worst_cos, std::cos(1 * kPi / 180));  // within 1° (measured: 0.08°)
  for (std::size_t t = 0; t < m.triangle_count(); ++t)
    ASSERT_GT(dot(triangle_normal(m, t), at(m, m.triangles[3 * t])), 0) << "winds inwards: " << t;
  RecordProperty("volume_ratio", std::to_string(volume(m) / exact));
  RecordProperty("worst_distance_cells", std::to_string(worst_distance / g.spacing));
  RecordProperty("worst_normal_degrees", std::to_string(std::acos(worst_cos) * 180 / kPi));
}

TEST(MarchingCubes, DensityAboveIsoGivesTheSameSphereFacingOut) {
  // inside_is_below = false: a density 1 − |x|² with iso 1 − r² is the same sphere.
  const double r = 0.7;
  const ScalarGrid g = sample(24, 1, [](const Vec3& p) { return 1 - dot(p, p); });
  const SurfaceMesh m = marching_cubes(g, float(1 - r * r), false);
  EXPECT_TRUE(is_watertight(m));
  EXPECT_EQ(euler_characteristic(m), 2);
  EXPECT_NEAR(volume(m) / (4.0 / 3.0 * kPi * r * r * r), 1, 0.02);
  for (std::size_t v = 0; v < m.positions.size(); ++v)
    ASSERT_GT(dot(Vec3(m.normals[v]), at(m, std::uint32_t(v))), 0);
}

TEST(MarchingCubes, TorusIsClosedWithEulerCharacteristicZero) {
  const double big = 0.6, small = 0.25;
  const ScalarGrid g = sample(40, 1, [&](const Vec3& p) {
    const double q = std::hypot(p.x, p.z) - big;
    return std::hypot(q, p.y) - small;
  });
  const SurfaceMesh m = marching_cubes(g, 0);
  EXPECT_TRUE(is_watertight(m));
  EXPECT_EQ(euler_characteristic(m), 0);
  EXPECT_NEAR(volume(m) / (2 * kPi * kPi * big * small * small), 1, 0.02);
  RecordProperty("volume_ratio", std::to_string(volume(m) / (2 * kPi * kPi * big * small * small)));
}

/// An n³ grid of random values with an outside border (+1), so every surface is closed.
ScalarGrid padded_random(int n, std::uint32_t seed, bool integers) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int> whole(-2, 2);
  ScalarGrid g;
  g.nx = g.ny = g.nz = n;
  g.spacing = 0.5;
  g.values.resize(std::size_t(n) * n * n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool border = i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1;
        g.values[g.index(i, j, k)] = border ? 1.f : (integers ? float(whole(rng)) : real(rng));
      }
  return g;
}

/// The grid edges whose ends lie on either side of 0 (inside below).
std::size_t crossed_grid_edges(const ScalarGrid& g) {
  std::size_t n = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const bool in = g.values[g.index(i, j, k)] < 0;
        if (i + 1 < g.nx && (g.values[g.index(i + 1, j, k)] < 0) != in) ++n;
        if (j + 1 < g.ny && (g.values[g.index(i, j + 1, k)] < 0) != in) ++n;
        if (k + 1 < g.nz && (g.values[g.index(i, j, k + 1)] < 0) != in) ++n;
      }
  return n;
}

TEST(MarchingCubes, RandomPaddedFieldsAreAlwaysWatertight) {
  // Noise makes every ambiguous face and cube; real values exercise the asymptotic decider both
  // ways, small integers make samples equal to the iso value and exact ties in the decider. Long
  // loops on such cubes need their centre vertex: count those beyond one per crossed edge.
  std::size_t centres = 0;
  for (std::uint32_t seed = 0; seed < 200; ++seed) {
    for (const bool integers : {false, true}) {
      const ScalarGrid g = padded_random(8, seed, integers);
      const SurfaceMesh m = marching_cubes(g, 0);
      centres += m.positions.size() - crossed_grid_edges(g);
      ASSERT_TRUE(is_watertight(m)) << "seed " << seed << (integers ? " integers" : " reals");
      EXPECT_EQ(euler_characteristic(m) % 2, 0) << "seed " << seed;
      for (std::size_t t = 0; t < m.triangle_count(); ++t)
        ASSERT_GT(length(triangle_normal(m, t)), 0) << "seed " << seed << " triangle " << t;
    }
  }
  EXPECT_GT(centres, 100u);
  RecordProperty("centre_vertices", std::to_string(centres));
}

TEST(MarchingCubes, SameBitsWithOneTwoAndAllThreads) {
  ScalarGrid g = sample(48, 1, [](const Vec3& p) {
    return length(p) - 0.7 + 0.1 * std::sin(9 * p.x) * std::sin(7 * p.y + 1) * std::sin(8 * p.z);
  });
  const SurfaceMesh one = marching_cubes(g, 0, true, 1);
  ASSERT_GT(one.triangle_count(), 1000u);
  for (const int threads : {2, 0}) {
    const SurfaceMesh m = marching_cubes(g, 0, true, threads);
    ASSERT_EQ(m.positions.size(), one.positions.size());
    ASSERT_EQ(m.triangles, one.triangles);
    EXPECT_EQ(0, std::memcmp(m.positions.data(), one.positions.data(),
                             m.positions.size() * sizeof(Vec3f)));
    EXPECT_EQ(0,
              std::memcmp(m.normals.data(), one.normals.data(), m.normals.size() * sizeof(Vec3f)));
  }
  const std::vector<Vec3> particles = {{0, 0, 0}, {0.05, 0.01, 0}, {0.1, 0.03, 0.02}};
  ParticleFieldOptions o1, o2;
  o1.threads = 1;
  o2.threads = 2;
  EXPECT_EQ(particle_field(particles, 0.03, 0.01, o1).values,
            particle_field(particles, 0.03, 0.01, o2).values);
}

/// Particles on a lattice of step h at the points where inside(p) holds, within [-extent, extent]³.
std::vector<Vec3> lattice(double h, double extent, const std::function<bool(const Vec3&)>& inside) {
  std::vector<Vec3> out;
  const int n = int(std::floor(extent / h));
  for (int k = -n; k <= n; ++k)
    for (int j = -n; j <= n; ++j)
      for (int i = -n; i <= n; ++i)
        if (const Vec3 p = Vec3{double(i), double(j), double(k)} * h; inside(p)) out.push_back(p);
  return out;
}

TEST(ParticleField, LatticeBallReconstructsAClosedSphereWithin10PercentOfItsVolume) {
  // Touching particles (radius h/2) fill a ball of radius 0.5; each stands for h³ of liquid.
  const double h = 0.05, r = 0.5;
  const std::vector<Vec3> particles = lattice(h, r, [&](const Vec3& p) { return length(p) <= r; });
  const ScalarGrid g = particle_field(particles, h / 2, h / 2);
  const SurfaceMesh m = marching_cubes(g, 0);
  EXPECT_TRUE(is_watertight(m));
  EXPECT_EQ(euler_characteristic(m), 2);
  const double liquid = double(particles.size()) * h * h * h;
  EXPECT_NEAR(volume(m) / liquid, 1, 0.10);
  RecordProperty("volume_ratio", std::to_string(volume(m) / liquid));
}

TEST(ParticleField, FlatPoolHasAFlatTop) {
  const double h = 0.05;
  const std::vector<Vec3> particles =
      lattice(h, 0.6, [](const Vec3& p) { return p.y >= -0.2 && p.y <= 0.1; });
  const SurfaceMesh m = marching_cubes(particle_field(particles, h / 2, h / 2), 0);
  EXPECT_TRUE(is_watertight(m));
  double lo = 1e9, hi = -1e9;
  int n = 0;
  for (std::size_t v = 0; v < m.positions.size(); ++v) {
    const Vec3 p = at(m, std::uint32_t(v));
    if (std::abs(p.x) > 0.4 || std::abs(p.z) > 0.4 || p.y < 0.05) continue;
    ++n;
    lo = std::min(lo, p.y);
    hi = std::max(hi, p.y);
    EXPECT_GT(m.normals[v].y, 0.999f);
  }
  ASSERT_GT(n, 100);
  EXPECT_LT(hi - lo, 0.02 * h);  // flat to a fiftieth of the particle spacing
  EXPECT_GT(lo, 0.1);            // above the top layer of particles
  RecordProperty("top_height", std::to_string(lo));
  RecordProperty("top_spread", std::to_string(hi - lo));
}

template <class F>
void expect_error(const F& f, const std::string& place, const std::string& file) {
  try {
    f();
    ADD_FAILURE() << "no error for " << place;
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.place().substr(0, place.size()), place) << e.what();
  }
}

TEST(MarchingCubes, BadGridsAreRefusedNamingThePlace) {
  const ScalarGrid good = sample(3, 1, [](const Vec3& p) { return p.x; });
  const std::string mc = "marching cubes";
  ScalarGrid g = good;
  g.nx = 1;
  g.values.resize(9);
  expect_error([&] { marching_cubes(g, 0); }, "grid", mc);
  g = good;
  g.values.pop_back();
  expect_error([&] { marching_cubes(g, 0); }, "grid.values", mc);
  g = good;
  g.spacing = std::nan("");
  expect_error([&] { marching_cubes(g, 0); }, "grid.spacing", mc);
  g.spacing = 0;
  expect_error([&] { marching_cubes(g, 0); }, "grid.spacing", mc);
  expect_error([&] { marching_cubes(good, std::numeric_limits<float>::infinity()); }, "iso", mc);
  g = good;
  g.values[g.index(1, 2, 0)] = std::nanf("");
  expect_error([&] { marching_cubes(g, 0); }, "grid.values[7] (i 1, j 2, k 0)", mc);
}

TEST(ParticleField, BadParticlesAndSizesAreRefused) {
  const std::string pf = "particle field";
  const std::vector<Vec3> ok = {{0, 0, 0}};
  expect_error([&] { particle_field({}, 0.1, 0.1); }, "particles", pf);
  const std::vector<Vec3> bad = {{0, 0, 0}, {0, std::nan(""), 0}};
  expect_error([&] { particle_field(bad, 0.1, 0.1); }, "particles[1]", pf);
  expect_error([&] { particle_field(ok, 0, 0.1); }, "radius", pf);
  expect_error([&] { particle_field(ok, 0.1, -1); }, "spacing", pf);
  ParticleFieldOptions o;
  o.kernel_radius = 0.05;
  expect_error([&] { particle_field(ok, 0.1, 0.1, o); }, "kernel_radius", pf);
  const std::vector<Vec3> far = {{0, 0, 0}, {1e4, 1e4, 1e4}};
  expect_error([&] { particle_field(far, 0.1, 0.1); }, "spacing", pf);
}

TEST(MarchingCubes, WatertightCheckerAcceptsATetrahedronAndRejectsOpenOrFlippedMeshes) {
  SurfaceMesh m;
  m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.normals.resize(4);
  m.triangles = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  EXPECT_TRUE(is_watertight(m));
  EXPECT_EQ(euler_characteristic(m), 2);
  EXPECT_GT(volume(m), 0);
  SurfaceMesh flipped = m;
  std::swap(flipped.triangles[10], flipped.triangles[11]);
  EXPECT_FALSE(is_watertight(flipped));
  SurfaceMesh open = m;
  open.triangles.resize(9);
  EXPECT_FALSE(is_watertight(open));
  EXPECT_TRUE(is_watertight(SurfaceMesh{}));
}

}  // namespace
}  // namespace kinema
