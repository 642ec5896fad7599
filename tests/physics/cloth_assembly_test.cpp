// The implicit cloth step's assembly in short vectors (src/physics/cloth_assembly.h): both kernels
// of each pass, the baseline one and the one the CPU picks, give the bits of the scalar
// statements — the spring pass on random springs that include zero lengths, slack and stretched
// springs, springs outside the system and short last groups; the vertex pass on random
// incidences; the wind pass on random triangles, some of them of no area.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../../src/physics/cloth_assembly.h"

namespace kinema {
namespace {

using detail::ClothSpringPass;
using detail::ClothSym3;

double pass_uniform(std::mt19937_64& g, double lo, double hi) {
  return lo + (hi - lo) * double(g() >> 11) * 0x1p-53;
}

bool same_pass_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// The pass one spring at a time, as the cloth step computed it before the kernels: the reference.
void scalar_spring(const ClothSpringPass& in, std::size_t s, bool in_system) {
  const ClothSpring& sp = in.springs[s];
  const Vec3 d = in.x[sp.b] - in.x[sp.a];
  const double len = length(d);
  if (!(len > 0)) {
    in.pull[s] = {0, 0, 0};
    in.block[s] = {0, 0, 0, 0};
    return;
  }
  const double h = in.h, c = in.damping, inverse_len = 1 / len;
  const Vec3 n = d * inverse_len, closing = in.v[sp.b] - in.v[sp.a];
  const double k = in.stiffness[s], along = dot(closing, n);
  const Vec3 force = n * (k * (len - sp.rest_length) + c * along);
  if (!in_system) {
    in.pull[s] = force;
    in.block[s] = {0, 0, 0, 0};
    return;
  }
  const double t = std::max(0.0, 1 - sp.rest_length * inverse_len);
  const double k_along = k * (1 - t), k_across = k * t;
  in.pull[s] = force + (n * (k_along * along) + closing * k_across) * h;
  const double t_system = std::max(t, in.slack);
  const Vec3 m = n * std::sqrt(h * c + h * h * k * (1 - t_system));
  in.block[s] = {m.x, m.y, m.z, h * h * k * t_system};
}

TEST(ClothAssembly, BothSpringPassKernelsGiveTheScalarStatementsBitsSpringBySpring) {
  std::mt19937_64 g(20261206);
  const std::size_t vertices = 50, springs = 203;  // not a multiple of four
  std::vector<Vec3> x(vertices), v(vertices);
  for (std::size_t i = 0; i < vertices; ++i) {
    x[i] = {pass_uniform(g, -1, 1), pass_uniform(g, -1, 1), pass_uniform(g, -1, 1)};
    v[i] = {pass_uniform(g, -3, 3), pass_uniform(g, -3, 3), pass_uniform(g, -3, 3)};
  }
  x[7] = x[3];  // a spring between them has zero length
  std::vector<ClothSpring> spring(springs);
  std::vector<double> stiffness(springs);
  for (std::size_t s = 0; s < springs; ++s) {
    const auto a = std::uint32_t(g() % vertices), b = std::uint32_t(g() % vertices);
    const double len = length(x[b] - x[a]);
    // Rest lengths from well under to well over the current length: stretched and slack springs.
    spring[s] = {a, b, len * pass_uniform(g, 0.5, 1.5), ClothSpringKind::Structural};
    stiffness[s] = pass_uniform(g, 10, 1e5);
  }
  spring[11] = {3, 7, 0.1, ClothSpringKind::Structural};
  spring[12] = {5, 5, 0.1, ClothSpringKind::Shear};
  for (const double slack : {0.0, 1e-4, 0.3}) {
    std::vector<Vec3> pull(springs), pull_baseline(springs), pull_reference(springs);
    std::vector<std::array<double, 4>> block(springs), block_baseline(springs),
        block_reference(springs);
    ClothSpringPass pass{x.data(), v.data(), spring.data(), stiffness.data(), 1.0 / 240,
                         0.8,      slack,    pull.data(),   block.data()};
    ClothSpringPass baseline = pass, reference = pass;
    baseline.pull = pull_baseline.data(), baseline.block = block_baseline.data();
    reference.pull = pull_reference.data(), reference.block = block_reference.data();
    // Runs of springs in and out of the system, of lengths 1 to 97.
    const std::size_t cuts[] = {0, 97, 98, 101, 150, 203};
    for (std::size_t r = 0; r + 1 < std::size(cuts); ++r) {
      const bool in_system = r % 2 == 0;
      detail::cloth_spring_pass(pass, cuts[r], cuts[r + 1], in_system);
      detail::cloth_spring_pass_baseline(baseline, cuts[r], cuts[r + 1], in_system);
      for (std::size_t s = cuts[r]; s < cuts[r + 1]; ++s) scalar_spring(reference, s, in_system);
    }
    int zero_blocks = 0;
    for (std::size_t s = 0; s < springs; ++s) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(same_pass_bits(pull[s][c], pull_reference[s][c])) << s << ' ' << c;
        EXPECT_TRUE(same_pass_bits(pull_baseline[s][c], pull_reference[s][c])) << s << ' ' << c;
      }
      for (int c = 0; c < 4; ++c) {
        EXPECT_TRUE(same_pass_bits(block[s][c], block_reference[s][c])) << s << ' ' << c;
        EXPECT_TRUE(same_pass_bits(block_baseline[s][c], block_reference[s][c])) << s << ' ' << c;
      }
      zero_blocks += block_reference[s] == std::array<double, 4>{0, 0, 0, 0};
    }
    // The checks saw what they claim: the zero-length springs and the explicit runs (3 + 49
    // springs) have zero blocks, the rest do not.
    EXPECT_EQ(zero_blocks, 2 + 3 + 49);
    EXPECT_EQ(pull_reference[11], (Vec3{0, 0, 0}));
  }
}

// The vertex pass one vertex at a time, as the cloth step computed it before the kernels.
void scalar_vertex(const detail::ClothVertexPass& in, std::size_t fi) {
  const std::uint32_t i = in.free_vertex[fi];
  Vec3 force = in.force[i];
  double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0, beta = 0;
  for (std::uint32_t e = in.incidence_start[fi]; e < in.incidence_start[fi + 1]; ++e) {
    const std::uint32_t code = in.incidence[e], s = code & ~detail::kSecondVertex;
    force += in.pull[s] * (code & detail::kSecondVertex ? -1.0 : 1.0);
    const auto& m = in.block[s];
    xx += m[0] * m[0], yy += m[1] * m[1], zz += m[2] * m[2];
    xy += m[0] * m[1], xz += m[0] * m[2], yz += m[1] * m[2], beta += m[3];
  }
  const double own_mass = in.mass[i] * in.mass_scale;
  in.b[fi] = force * in.h;
  in.own[fi] = {own_mass, own_mass, own_mass, 0, 0, 0};
  in.diagonal[fi] = {own_mass + xx + beta, own_mass + yy + beta, own_mass + zz + beta, xy, xz, yz};
}

bool same_block_bits(const ClothSym3& a, const ClothSym3& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(ClothAssembly, BothVertexPassKernelsGiveTheScalarStatementsBitsVertexByVertex) {
  std::mt19937_64 g(61206);
  const std::size_t vertices = 40, springs = 90;
  std::vector<Vec3> force(vertices), pull(springs);
  std::vector<double> mass(vertices);
  std::vector<std::array<double, 4>> block(springs);
  for (std::size_t i = 0; i < vertices; ++i) {
    force[i] = {pass_uniform(g, -5, 5), pass_uniform(g, -5, 5), pass_uniform(g, -5, 5)};
    mass[i] = pass_uniform(g, 1e-3, 1e-2);
  }
  for (std::size_t s = 0; s < springs; ++s) {
    pull[s] = {pass_uniform(g, -50, 50), pass_uniform(g, -50, 50), pass_uniform(g, -50, 50)};
    block[s] = {pass_uniform(g, -1, 1), pass_uniform(g, -1, 1), pass_uniform(g, -1, 1),
                pass_uniform(g, 0, 1)};
  }
  // Every other vertex free (in a shuffled order), each with 0 to 12 springs, either end.
  std::vector<std::uint32_t> free_vertex, start{0}, incidence;
  for (std::uint32_t i = 0; i < vertices; i += 2) free_vertex.push_back(i);
  std::shuffle(free_vertex.begin(), free_vertex.end(), g);
  for (std::size_t fi = 0; fi < free_vertex.size(); ++fi) {
    const std::size_t count = g() % 13;
    for (std::size_t k = 0; k < count; ++k)
      incidence.push_back(std::uint32_t(g() % springs) | (g() % 2 ? detail::kSecondVertex : 0));
    start.push_back(std::uint32_t(incidence.size()));
  }
  const std::size_t n = free_vertex.size();
  std::vector<Vec3> b(n), b_baseline(n), b_reference(n);
  std::vector<ClothSym3> own(n), own_baseline(n), own_reference(n), diagonal(n),
      diagonal_baseline(n), diagonal_reference(n);
  detail::ClothVertexPass pass{free_vertex.data(), start.data(), incidence.data(),
                               force.data(),       mass.data(),  pull.data(),
                               block.data(),       1.0 / 240,    1.0125,
                               b.data(),           own.data(),   diagonal.data()};
  detail::ClothVertexPass baseline = pass, reference = pass;
  baseline.b = b_baseline.data(), baseline.own = own_baseline.data();
  baseline.diagonal = diagonal_baseline.data();
  reference.b = b_reference.data(), reference.own = own_reference.data();
  reference.diagonal = diagonal_reference.data();
  detail::cloth_vertex_pass(pass, n);
  detail::cloth_vertex_pass_baseline(baseline, n);
  for (std::size_t fi = 0; fi < n; ++fi) scalar_vertex(reference, fi);
  for (std::size_t fi = 0; fi < n; ++fi) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(same_pass_bits(b[fi][c], b_reference[fi][c])) << fi;
      EXPECT_TRUE(same_pass_bits(b_baseline[fi][c], b_reference[fi][c])) << fi;
    }
    EXPECT_TRUE(same_block_bits(own[fi], own_reference[fi])) << fi;
    EXPECT_TRUE(same_block_bits(own_baseline[fi], own_reference[fi])) << fi;
    EXPECT_TRUE(same_block_bits(diagonal[fi], diagonal_reference[fi])) << fi;
    EXPECT_TRUE(same_block_bits(diagonal_baseline[fi], diagonal_reference[fi])) << fi;
    EXPECT_NE(diagonal_reference[fi].xx, own_reference[fi].xx * (start[fi] != start[fi + 1]));
  }
}

TEST(ClothAssembly, BothWindPassKernelsGiveTheScalarStatementsBitsTriangleByTriangle) {
  std::mt19937_64 g(1206);
  const std::size_t vertices = 30, triangles = 47;
  std::vector<Vec3> x(vertices), v(vertices);
  for (std::size_t i = 0; i < vertices; ++i) {
    x[i] = {pass_uniform(g, -1, 1), pass_uniform(g, -1, 1), pass_uniform(g, -1, 1)};
    v[i] = {pass_uniform(g, -3, 3), pass_uniform(g, -3, 3), pass_uniform(g, -3, 3)};
  }
  std::vector<std::array<std::uint32_t, 3>> triangle(triangles);
  for (auto& t : triangle)
    t = {std::uint32_t(g() % vertices), std::uint32_t(g() % vertices),
         std::uint32_t(g() % vertices)};
  triangle[5] = {4, 4, 9};   // no area
  triangle[46] = {1, 2, 2};  // no area, in the short last group
  const detail::ClothWindPass scene{x.data(), v.data(), triangle.data(), {2, -1, 0.5}, 1.2};
  std::vector<Vec3> force(triangles), force_baseline(triangles);
  detail::ClothWindPass pass = scene, baseline = scene;
  pass.force = force.data(), baseline.force = force_baseline.data();
  detail::cloth_wind_pass(pass, triangles);
  detail::cloth_wind_pass_baseline(baseline, triangles);
  for (std::size_t t = 0; t < triangles; ++t) {
    // The drag as the cloth computed it triangle by triangle before the kernels.
    const auto& tri = triangle[t];
    const Vec3 area_normal = cross(x[tri[1]] - x[tri[0]], x[tri[2]] - x[tri[0]]) * 0.5;
    const double area2 = length_squared(area_normal);
    Vec3 expected{0, 0, 0};
    if (area2 > 0) {
      const Vec3 relative = (v[tri[0]] + v[tri[1]] + v[tri[2]]) * (1.0 / 3) - scene.wind;
      const double vn = dot(relative, area_normal);
      expected = area_normal * (-scene.coefficient / 3 * vn * std::abs(vn) / area2);
    }
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(same_pass_bits(force[t][c], expected[c])) << t << ' ' << c;
      EXPECT_TRUE(same_pass_bits(force_baseline[t][c], expected[c])) << t << ' ' << c;
    }
  }
  EXPECT_EQ(force[5], (Vec3{0, 0, 0}));
  EXPECT_EQ(force[46], (Vec3{0, 0, 0}));
  EXPECT_NE(force[6], (Vec3{0, 0, 0}));
}

}  // namespace
}  // namespace kinema
