// Internal: the bodies of the implicit cloth step's assembly passes (cloth_assembly.h), compiled
// once per instruction set — cloth_assembly.cpp (the build's baseline) and cloth_assembly_avx2.cpp
// (-mavx2). GCC/Clang vectors of four doubles, which the compiler maps onto the widest registers
// it may use. No fused multiply-adds (-ffp-contract=off on both files): each lane computes exactly
// the scalar statement cloth_assembly.h gives, so both builds give the same bits.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "cloth_assembly.h"

namespace kinema::detail {
namespace cloth_lanes {
namespace {

using Lanes = double __attribute__((vector_size(32)));
using Mask = long long __attribute__((vector_size(32)));

[[gnu::always_inline]] inline Lanes square_root(Lanes v) {
#if defined(__AVX__)
  __m256d r;
  std::memcpy(&r, &v, sizeof r);
  r = _mm256_sqrt_pd(r);
  std::memcpy(&v, &r, sizeof v);
#else
  __m128d half[2];
  std::memcpy(half, &v, sizeof half);
  half[0] = _mm_sqrt_pd(half[0]);
  half[1] = _mm_sqrt_pd(half[1]);
  std::memcpy(&v, half, sizeof v);
#endif
  return v;
}

[[gnu::always_inline]] inline Lanes select(Mask m, Lanes yes, Lanes no) { return m ? yes : no; }

/// Springs [begin, end), four at a time: each one's pull and (with `blocks`) its system block.
[[gnu::always_inline]] inline void spring_pass_kernel(const ClothSpringPass& in, std::size_t begin,
                                                      std::size_t end, bool blocks) {
  const Lanes zero{}, one{1, 1, 1, 1};
  const double h = in.h, hh = h * h, hc = h * in.damping;
  const Lanes slack{in.slack, in.slack, in.slack, in.slack};
  // Four springs from s, the first `count` of them stored (a short last group repeats its last
  // spring in the spare lanes).
  auto group = [&](std::size_t s, std::size_t count) __attribute__((always_inline)) {
    // Gather the four springs' d = x_b − x_a and closing speed v_b − v_a.
    double d[3][4], closing[3][4], k[4], rest[4];
    for (std::size_t l = 0; l < 4; ++l) {
      const std::size_t spring = s + std::min(l, count - 1);
      const ClothSpring& sp = in.springs[spring];
      const Vec3 &xa = in.x[sp.a], &xb = in.x[sp.b], &va = in.v[sp.a], &vb = in.v[sp.b];
      d[0][l] = xb.x - xa.x, d[1][l] = xb.y - xa.y, d[2][l] = xb.z - xa.z;
      closing[0][l] = vb.x - va.x, closing[1][l] = vb.y - va.y, closing[2][l] = vb.z - va.z;
      k[l] = in.stiffness[spring], rest[l] = sp.rest_length;
    }
    auto lanes = [](const double(&v)[4]) { return Lanes{v[0], v[1], v[2], v[3]}; };
    const Lanes dx = lanes(d[0]), dy = lanes(d[1]), dz = lanes(d[2]);
    const Lanes cx = lanes(closing[0]), cy = lanes(closing[1]), cz = lanes(closing[2]);
    const Lanes stiffness = lanes(k), rest_length = lanes(rest);
    const Lanes len = square_root(dx * dx + dy * dy + dz * dz);
    const Mask valid = len > zero;
    const Lanes inverse_len = one / len;
    const Lanes nx = dx * inverse_len, ny = dy * inverse_len, nz = dz * inverse_len;
    const Lanes along = cx * nx + cy * ny + cz * nz;
    const Lanes magnitude = stiffness * (len - rest_length) + in.damping * along;
    Lanes px = nx * magnitude, py = ny * magnitude, pz = nz * magnitude;
    Lanes mx = zero, my = zero, mz = zero, beta = zero;
    if (blocks) {
      Lanes t = one - rest_length * inverse_len;
      t = select(zero < t, t, zero);  // std::max(0.0, t)
      const Lanes k_along = stiffness * (one - t), k_across = stiffness * t;
      const Lanes pull_along = k_along * along;
      px = px + (nx * pull_along + cx * k_across) * h;
      py = py + (ny * pull_along + cy * k_across) * h;
      pz = pz + (nz * pull_along + cz * k_across) * h;
      const Lanes t_system = select(t < slack, slack, t);  // std::max(t, slack)
      const Lanes hhk = hh * stiffness;
      const Lanes root_alpha = square_root(hc + hhk * (one - t_system));
      mx = nx * root_alpha, my = ny * root_alpha, mz = nz * root_alpha;
      beta = hhk * t_system;
    }
    px = select(valid, px, zero), py = select(valid, py, zero), pz = select(valid, pz, zero);
    mx = select(valid, mx, zero), my = select(valid, my, zero), mz = select(valid, mz, zero);
    beta = select(valid, beta, zero);
    for (std::size_t l = 0; l < count; ++l) {
      in.pull[s + l] = {px[l], py[l], pz[l]};
      in.block[s + l] = {mx[l], my[l], mz[l], beta[l]};
    }
  };
  std::size_t s = begin;
  for (; s + 4 <= end; s += 4) group(s, 4);  // the count a constant: no lane clamps
  if (s < end) group(s, end - s);
}

/// Free vertices [0, free_count): the right side, the own and the diagonal blocks, a vertex's
/// x, y, z (and a spare) in four lanes.
[[gnu::always_inline]] inline void vertex_pass_kernel(const ClothVertexPass& in,
                                                      std::size_t free_count) {
  for (std::size_t fi = 0; fi < free_count; ++fi) {
    const std::uint32_t i = in.free_vertex[fi];
    const Vec3& f = in.force[i];
    Lanes force{f.x, f.y, f.z, 0};
    // Over the springs at the vertex: Σ m (its fourth lane Σ β), Σ m·m lane by lane (the blocks'
    // xx, yy, zz) and Σ m·(m_y, m_z, m_x) (their xy, yz, xz).
    Lanes sum{}, squares{}, products{};
    for (std::uint32_t e = in.incidence_start[fi]; e < in.incidence_start[fi + 1]; ++e) {
      const std::uint32_t code = in.incidence[e], s = code & ~kSecondVertex;
      const Vec3& pull = in.pull[s];
      force += Lanes{pull.x, pull.y, pull.z, 0} * (code & kSecondVertex ? -1.0 : 1.0);
      Lanes m;
      std::memcpy(&m, in.block[s].data(), sizeof m);
      sum += m;
      squares += m * m;
      products += m * __builtin_shufflevector(m, m, 1, 2, 0, 3);
    }
    const double own_mass = in.mass[i] * in.mass_scale;
    const Lanes b = force * in.h, diagonal = (own_mass + squares) + sum[3];
    in.b[fi] = {b[0], b[1], b[2]};
    in.own[fi] = {own_mass, own_mass, own_mass, 0, 0, 0};
    in.diagonal[fi] = {diagonal[0], diagonal[1], diagonal[2],
                       products[0], products[2], products[1]};
  }
}

/// Triangles [0, count), four at a time: each corner's share of the wind's drag.
[[gnu::always_inline]] inline void wind_pass_kernel(const ClothWindPass& in, std::size_t count) {
  const Lanes zero{};
  const Mask sign_bit = Mask(Lanes{-0.0, -0.0, -0.0, -0.0});  // only the sign bits set
  const double third = 1.0 / 3, scale = -in.coefficient / 3;
  auto group = [&](std::size_t t, std::size_t lanes_used) __attribute__((always_inline)) {
    // Gather e1 = x1 − x0, e2 = x2 − x0 and the corners' summed velocity.
    double e1[3][4], e2[3][4], speed[3][4];
    for (std::size_t l = 0; l < 4; ++l) {
      const auto& tri = in.triangles[t + std::min(l, lanes_used - 1)];
      const Vec3 &x0 = in.x[tri[0]], &x1 = in.x[tri[1]], &x2 = in.x[tri[2]];
      const Vec3 sum = in.v[tri[0]] + in.v[tri[1]] + in.v[tri[2]];
      e1[0][l] = x1.x - x0.x, e1[1][l] = x1.y - x0.y, e1[2][l] = x1.z - x0.z;
      e2[0][l] = x2.x - x0.x, e2[1][l] = x2.y - x0.y, e2[2][l] = x2.z - x0.z;
      speed[0][l] = sum.x, speed[1][l] = sum.y, speed[2][l] = sum.z;
    }
    auto lanes = [](const double(&v)[4]) { return Lanes{v[0], v[1], v[2], v[3]}; };
    const Lanes ax = lanes(e1[0]), ay = lanes(e1[1]), az = lanes(e1[2]);
    const Lanes bx = lanes(e2[0]), by = lanes(e2[1]), bz = lanes(e2[2]);
    const Lanes nx = (ay * bz - az * by) * 0.5, ny = (az * bx - ax * bz) * 0.5,
                nz = (ax * by - ay * bx) * 0.5;
    const Lanes area2 = nx * nx + ny * ny + nz * nz;
    const Lanes wx = lanes(speed[0]) * third - in.wind.x, wy = lanes(speed[1]) * third - in.wind.y,
                wz = lanes(speed[2]) * third - in.wind.z;
    const Lanes vn = wx * nx + wy * ny + wz * nz;
    const Lanes abs_vn = Lanes(Mask(vn) & ~sign_bit);  // std::abs: the sign bit cleared
    const Lanes magnitude = scale * vn * abs_vn / area2;
    const Mask has_area = area2 > zero;
    const Lanes fx = select(has_area, nx * magnitude, zero),
                fy = select(has_area, ny * magnitude, zero),
                fz = select(has_area, nz * magnitude, zero);
    for (std::size_t l = 0; l < lanes_used; ++l) in.force[t + l] = {fx[l], fy[l], fz[l]};
  };
  std::size_t t = 0;
  for (; t + 4 <= count; t += 4) group(t, 4);
  if (t < count) group(t, count - t);
}

}  // namespace
}  // namespace cloth_lanes
}  // namespace kinema::detail
