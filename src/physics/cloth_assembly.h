// Internal: the implicit cloth step's assembly (Cloth::substep_implicit), in two passes.
//
// The spring pass. For each spring s from x_a to x_b, with d = x_b − x_a, l = |d|, n = d/l,
// closing speed u = v_b − v_a, stiffness k, rest length L0 and the material's damping c:
//   force  f_s = n·(k·(l − L0) + c·(u·n))
//   pull   g_s = f_s + h·(k·(1 − t)·(u·n)·n + k·t·u),  t = max(0, 1 − L0/l)
//   block  (√α·n, β), α = h·c + h²·k·(1 − t'), β = h²·k·t',  t' = max(t, slack)
// — what the spring adds to its first vertex's right side (f_s plus h·K_s·u, K_s = k·((1 − t)·nnᵀ
// + t·I) its stiffness without the compressive part, which would make the system indefinite), and
// its system block S = α·nnᵀ + β·I (cloth_cg.h). A spring outside the system (an explicit bend)
// gets g_s = f_s and a zero block; a spring of zero length, zeros.
//
// The vertex pass. For each free vertex i, over the springs at it (g_s counted + at a spring's
// first vertex, − at its second): the right side b_i = h·(f_i + Σ ±g_s), its own block m_i·(1 +
// h·drag)·I and the diagonal block own_i + Σ S_s, the sums in the springs' incidence order.
//
// The wind pass (all three integrators' forces). For each triangle (x0, x1, x2), with N = ½·(x1 −
// x0) × (x2 − x0) its area-weighted normal (|N| = area) and w = (v0 + v1 + v2)·⅓ − wind its speed
// through the air: F = −(C/3)·(w·N)·|w·N|/|N|²·N, the drag on a plate, −C·A·(w·n)|w·n|·n, a third
// of it for each corner; a triangle of no area, none.
//
// Four springs, triangles or one vertex's four lanes at a time, with AVX2 where the CPU has it;
// every path gives the bits of the scalar statements above, evaluated left to right.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "kinema/physics/cloth.h"

namespace kinema::detail {

/// An incidence's flag: the vertex is its spring's second (b); the rest of the word is the spring.
constexpr std::uint32_t kSecondVertex = 0x80000000u;

struct ClothSpringPass {
  const Vec3* x = nullptr;  ///< positions, m
  const Vec3* v = nullptr;  ///< velocities, m/s
  const ClothSpring* springs = nullptr;
  const double* stiffness = nullptr;  ///< per spring, N/m
  double h = 0;                       ///< the substep, s
  double damping = 0;                 ///< c, N·s/m
  double slack = 0;      ///< the floor on t in the blocks (ClothOptions::slack_stiffness)
  Vec3* pull = nullptr;  ///< out, per spring
  std::array<double, 4>* block = nullptr;  ///< out, per spring: (√α·n, β)
};

struct ClothVertexPass {
  const std::uint32_t* free_vertex = nullptr;      ///< per free vertex, the cloth's vertex
  const std::uint32_t* incidence_start = nullptr;  ///< per free vertex + 1, into incidence
  const std::uint32_t* incidence = nullptr;        ///< spring | kSecondVertex
  const Vec3* force = nullptr;                     ///< per cloth vertex, N (no spring forces)
  const double* mass = nullptr;                    ///< per cloth vertex, kg
  const Vec3* pull = nullptr;                      ///< the spring pass's
  const std::array<double, 4>* block = nullptr;    ///< the spring pass's
  double h = 0;                                    ///< the substep, s
  double mass_scale = 1;                           ///< 1 + h·air drag
  Vec3* b = nullptr;                               ///< out, per free vertex
  ClothSym3* own = nullptr;                        ///< out, per free vertex
  ClothSym3* diagonal = nullptr;                   ///< out, per free vertex
};

struct ClothWindPass {
  const Vec3* x = nullptr;  ///< positions, m
  const Vec3* v = nullptr;  ///< velocities, m/s
  const std::array<std::uint32_t, 3>* triangles = nullptr;
  Vec3 wind;               ///< m/s
  double coefficient = 0;  ///< C, kg/m³ (ClothMaterial::aerodynamic_coefficient)
  Vec3* force = nullptr;   ///< out, per triangle: each corner's share, N
};

/// Springs [begin, end); `in_system` false: forces only (pull = force, zero blocks).
void cloth_spring_pass(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                       bool in_system);
/// Free vertices [0, free_count).
void cloth_vertex_pass(const ClothVertexPass& pass, std::size_t free_count);
/// Triangles [0, count).
void cloth_wind_pass(const ClothWindPass& pass, std::size_t count);

/// The same with the baseline kernels only (tests compare the two).
void cloth_spring_pass_baseline(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                                bool in_system);
void cloth_vertex_pass_baseline(const ClothVertexPass& pass, std::size_t free_count);
void cloth_wind_pass_baseline(const ClothWindPass& pass, std::size_t count);

}  // namespace kinema::detail
