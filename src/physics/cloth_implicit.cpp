// The implicit (Baraff–Witkin) cloth step, kinema/physics/cloth.h: the system's assembly; its
// solve, conjugate gradients in short vectors preconditioned by block Jacobi or a multigrid
// V-cycle, is cloth_cg.h's.
#include <algorithm>
#include <cmath>

#include "cloth_cg.h"
#include "cloth_internal.h"
#include "cloth_multigrid.h"  // detail::add, detail::spring_block

namespace kinema {

namespace {

using cloth_detail::kNone;
using Sym3 = detail::ClothSym3;

constexpr std::uint32_t kSecondVertex = 0x80000000u;  ///< an incidence's flag: the spring's b

}  // namespace

bool Cloth::in_solve(size_t spring) const {
  return o_.implicit_bend || springs_[spring].kind != ClothSpringKind::Bend;
}

// The free vertices in order, and each vertex's index among them (kNone: kinematic).
void Cloth::number_free_vertices() {
  const size_t n = x_.size();
  free_index_.assign(n, kNone);
  free_vertex_.clear();
  for (size_t i = 0; i < n; ++i)
    if (inverse_mass_[i] != 0) {
      free_index_[i] = std::uint32_t(free_vertex_.size());
      free_vertex_.push_back(std::uint32_t(i));
    }
}

int Cloth::substep_implicit(double h, double& residual) {
  if (!cg_) {
    number_free_vertices();
    std::vector<detail::ClothCgSolver::Edge> edges;
    for (std::uint32_t s = 0; s < springs_.size(); ++s) {
      const ClothSpring& sp = springs_[s];
      if (inverse_mass_[sp.a] == 0 || inverse_mass_[sp.b] == 0 || !in_solve(s)) continue;
      edges.push_back({free_index_[sp.a], free_index_[sp.b], s});
    }
    cg_ = std::make_shared<detail::ClothCgSolver>(
        free_vertex_.size(), springs_.size(), std::move(edges),
        detail::cloth_cg_single(o_.cg_tolerance),
        o_.preconditioner == ClothPreconditioner::Multigrid ? &stiffness_ : nullptr);
    incidence_start_.assign(1, 0);
    incidence_.clear();
    kinematic_springs_.clear();
    for (size_t fi = 0; fi < free_vertex_.size(); ++fi) {
      const std::uint32_t i = free_vertex_[fi];
      for (std::uint32_t e = spring_start_[i]; e < spring_start_[i + 1]; ++e) {
        const std::uint32_t s = spring_of_[e];
        const bool is_b = springs_[s].b == i;
        incidence_.push_back(s | (is_b ? kSecondVertex : 0));
        if (inverse_mass_[is_b ? springs_[s].a : springs_[s].b] == 0)
          kinematic_springs_.push_back({std::uint32_t(fi), s});
      }
      incidence_start_.push_back(std::uint32_t(incidence_.size()));
    }
  } else if (cg_.use_count() > 1) {
    cg_ = std::make_shared<detail::ClothCgSolver>(*cg_);  // a copied cloth's own
  }
  detail::ClothCgSolver& solver = *cg_;
  const ClothMaterial& mat = o_.material;
  std::vector<Vec3>& f = force_;
  forces(f);
  // Per spring: what it adds to its first vertex's right side, g = f_s + h·K_s·(v_b − v_a), with
  // f_s its force and K_s = k·((1 − t)·nnᵀ + t·I) its stiffness (t = max(0, 1 − L0/l): the
  // compressive part left out so that the system stays positive definite); and its system block
  // S_s = α·nnᵀ + β·I with α = h·c + h²·k·(1 − t), β = h²·k·t, kept as (√α·n, β).
  std::vector<Vec3>& pull = on_a_;
  std::vector<std::array<double, 4>>& blocks = spring_block_;
  pull.resize(springs_.size());
  blocks.resize(springs_.size());
  const double c = mat.spring_damping;
  const bool bend_in_solve = o_.implicit_bend;
  const double slack = o_.slack_stiffness;
  for (size_t s = 0; s < springs_.size(); ++s) {
    const ClothSpring& sp = springs_[s];
    const Vec3 d = x_[sp.b] - x_[sp.a];
    const double len = length(d);
    if (!(len > 0)) {
      pull[s] = {0, 0, 0};
      blocks[s] = {0, 0, 0, 0};
      continue;
    }
    const double inverse_len = 1 / len;
    const Vec3 n = d * inverse_len, closing = v_[sp.b] - v_[sp.a];
    const double k = stiffness_[s], along = dot(closing, n);
    const Vec3 force = n * (k * (len - sp.rest_length) + c * along);
    if (!bend_in_solve && sp.kind == ClothSpringKind::Bend) {  // an explicit force only
      pull[s] = force;
      blocks[s] = {0, 0, 0, 0};
      continue;
    }
    const double t = std::max(0.0, 1 - sp.rest_length * inverse_len);
    const double k_along = k * (1 - t), k_across = k * t;
    pull[s] = force + (n * (k_along * along) + closing * k_across) * h;
    // The system's block: across a slack spring, a floor of slack_stiffness (the forces above
    // keep the true stiffness).
    const double t_system = std::max(t, slack);
    const Vec3 m = n * std::sqrt(h * c + h * h * k * (1 - t_system));
    blocks[s] = {m.x, m.y, m.z, h * h * k * t_system};
  }
  solver.set_springs(blocks);
  // Per free vertex: the right side h·(f + Σ ±g), its own block (mass and drag, springs to
  // kinematic vertices, whose Δv is 0) and the diagonal block the smoother inverts.
  const double diagonal_scale = 1 + h * mat.air_drag;  // air drag taken implicitly too
  const size_t free_count = free_vertex_.size();
  std::vector<Vec3>& b = b_;
  std::vector<Sym3>&own = stiffness_block_, &diagonal = system_block_;
  b.resize(free_count);
  own.resize(free_count);
  diagonal.resize(free_count);
  for (size_t fi = 0; fi < free_count; ++fi) {
    const std::uint32_t i = free_vertex_[fi];
    Vec3 force = f[i];
    // Σ S over the springs: Σ m·mᵀ + (Σ β)·I.
    double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0, beta = 0;
    for (std::uint32_t e = incidence_start_[fi]; e < incidence_start_[fi + 1]; ++e) {
      const std::uint32_t code = incidence_[e], s = code & ~kSecondVertex;
      force += pull[s] * (code & kSecondVertex ? -1.0 : 1.0);
      const auto& m = blocks[s];
      xx += m[0] * m[0], yy += m[1] * m[1], zz += m[2] * m[2];
      xy += m[0] * m[1], xz += m[0] * m[2], yz += m[1] * m[2], beta += m[3];
    }
    const double own_mass = mass_[i] * diagonal_scale;
    b[fi] = force * h;
    own[fi] = {own_mass, own_mass, own_mass, 0, 0, 0};
    diagonal[fi] = {own_mass + xx + beta, own_mass + yy + beta, own_mass + zz + beta, xy, xz, yz};
  }
  for (const auto& [fi, s] : kinematic_springs_)
    detail::add(own[fi], detail::spring_block(blocks[s]));
  solver.set_vertices(own, diagonal);
  const int iterations = solver.solve(b, o_.cg_max_iterations, o_.cg_tolerance, residual);
  for (size_t fi = 0; fi < free_count; ++fi) {
    const std::uint32_t i = free_vertex_[fi];
    v_[i] += solver.dv(fi);
    x_[i] += v_[i] * h;
  }
  return iterations;
}

}  // namespace kinema
