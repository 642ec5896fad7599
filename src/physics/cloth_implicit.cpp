// The implicit (Baraff–Witkin) cloth step, kinema/physics/cloth.h: the system's assembly; its
// solve, conjugate gradients in short vectors preconditioned by block Jacobi or a multigrid
// V-cycle, is cloth_cg.h's.
#include <memory>

#include "cloth_assembly.h"
#include "cloth_cg.h"
#include "cloth_internal.h"
#include "cloth_multigrid.h"  // detail::add, detail::spring_block

namespace kinema {

namespace {

using cloth_detail::kNone;
using Sym3 = detail::ClothSym3;
using detail::kSecondVertex;

}  // namespace

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
  // f_s its force and K_s = k·((1 − t)·nnᵀ + t·I) its stiffness (the compressive part left out so
  // that the system stays positive definite), and its system block S_s = α·nnᵀ + β·I kept as
  // (√α·n, β): cloth_assembly.h. Across a slack spring the blocks keep a floor of
  // slack_stiffness; the forces keep the true stiffness.
  std::vector<Vec3>& pull = on_a_;
  std::vector<std::array<double, 4>>& blocks = spring_block_;
  pull.resize(springs_.size());
  blocks.resize(springs_.size());
  const detail::ClothSpringPass pass{x_.data(),          v_.data(),   springs_.data(),
                                     stiffness_.data(),  h,           mat.spring_damping,
                                     o_.slack_stiffness, pull.data(), blocks.data()};
  for (size_t begin = 0, end = 0; begin < springs_.size(); begin = end) {
    const bool in_system = in_solve(begin);  // runs of springs in or out of the system
    for (end = begin + 1; end < springs_.size() && in_solve(end) == in_system;) ++end;
    detail::cloth_spring_pass(pass, begin, end, in_system);
  }
  solver.set_springs(blocks);
  // Per free vertex: the right side h·(f + Σ ±g), its own block (mass and drag, springs to
  // kinematic vertices, whose Δv is 0) and the diagonal block the smoother inverts.
  const size_t free_count = free_vertex_.size();
  std::vector<Vec3>& b = b_;
  std::vector<Sym3>&own = stiffness_block_, &diagonal = system_block_;
  b.resize(free_count);
  own.resize(free_count);
  diagonal.resize(free_count);
  detail::cloth_vertex_pass({free_vertex_.data(), incidence_start_.data(), incidence_.data(),
                             f.data(), mass_.data(), pull.data(), blocks.data(), h,
                             1 + h * mat.air_drag,  // air drag taken implicitly too
                             b.data(), own.data(), diagonal.data()},
                            free_count);
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
