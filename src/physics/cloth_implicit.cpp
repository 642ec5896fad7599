// The implicit (Baraff–Witkin) cloth step, kinema/physics/cloth.h: the system's assembly and its
// two solves — block-Jacobi conjugate gradients in short vectors (cloth_jacobi.h) and conjugate
// gradients preconditioned by a multigrid V-cycle (cloth_multigrid.h).
#include <algorithm>
#include <cmath>

#include "cloth_internal.h"
#include "cloth_jacobi.h"
#include "cloth_multigrid.h"

namespace kinema {

namespace {

using cloth_detail::for_blocks;
using cloth_detail::kBlock;
using cloth_detail::kNone;
using Sym3 = detail::ClothSym3;

constexpr std::uint32_t kSecondVertex = 0x80000000u;  ///< an incidence's flag: the spring's b

/// A spring's block α·nnᵀ + β·I from (√α·n, β).
Sym3 block_of(const std::array<double, 4>& m) {
  return {m[0] * m[0] + m[3], m[1] * m[1] + m[3], m[2] * m[2] + m[3],
          m[0] * m[1],        m[0] * m[2],        m[1] * m[2]};
}

/// a·nnᵀ + b·I.
Sym3 outer_plus_identity(const Vec3& n, double a, double b) {
  return {a * n.x * n.x + b, a * n.y * n.y + b, a * n.z * n.z + b,
          a * n.x * n.y,     a * n.x * n.z,     a * n.y * n.z};
}

/// Σ f(i) over [0, n), summed per block then over the blocks in order: the same bits whatever
/// the thread count.
template <class F>
double deterministic_sum(tbb::task_arena& arena, int threads, size_t n, const F& f) {
  std::vector<double> partial((n + kBlock - 1) / kBlock, 0.0);
  for_blocks(arena, threads, n, [&](size_t begin, size_t end) {
    double s = 0;
    for (size_t i = begin; i < end; ++i) s += f(i);
    partial[begin / kBlock] = s;
  });
  double total = 0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace

bool Cloth::in_solve(size_t spring) const {
  return o_.implicit_bend || springs_[spring].kind != ClothSpringKind::Bend;
}

int Cloth::substep_implicit(double h, double& residual) {
  return o_.preconditioner == ClothPreconditioner::Multigrid
             ? substep_implicit_multigrid(h, residual)
             : substep_implicit_jacobi(h, residual);
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

int Cloth::substep_implicit_jacobi(double h, double& residual) {
  if (!jacobi_) {
    number_free_vertices();
    std::vector<detail::ClothJacobiSolver::Edge> edges;
    for (std::uint32_t s = 0; s < springs_.size(); ++s) {
      const ClothSpring& sp = springs_[s];
      if (inverse_mass_[sp.a] == 0 || inverse_mass_[sp.b] == 0 || !in_solve(s)) continue;
      edges.push_back({free_index_[sp.a], free_index_[sp.b], s});
    }
    jacobi_ = std::make_shared<detail::ClothJacobiSolver>(
        free_vertex_.size(), springs_.size(), std::move(edges),
        detail::cloth_jacobi_single(o_.cg_tolerance));
    jacobi_incidence_start_.assign(1, 0);
    jacobi_incidence_.clear();
    jacobi_kinematic_.clear();
    for (size_t fi = 0; fi < free_vertex_.size(); ++fi) {
      const std::uint32_t i = free_vertex_[fi];
      for (std::uint32_t e = spring_start_[i]; e < spring_start_[i + 1]; ++e) {
        const std::uint32_t s = spring_of_[e];
        const bool is_b = springs_[s].b == i;
        jacobi_incidence_.push_back(s | (is_b ? kSecondVertex : 0));
        if (inverse_mass_[is_b ? springs_[s].a : springs_[s].b] == 0)
          jacobi_kinematic_.push_back({std::uint32_t(fi), s});
      }
      jacobi_incidence_start_.push_back(std::uint32_t(jacobi_incidence_.size()));
    }
  } else if (jacobi_.use_count() > 1) {
    jacobi_ = std::make_shared<detail::ClothJacobiSolver>(*jacobi_);  // a copied cloth's own
  }
  detail::ClothJacobiSolver& solver = *jacobi_;
  const ClothMaterial& mat = o_.material;
  std::vector<Vec3>& f = force_;
  forces(f);
  // Per spring: what it adds to its first vertex's right side, g = f_s + h·K_s·(v_b − v_a), with
  // f_s its force and K_s = k·((1 − t)·nnᵀ + t·I) its stiffness (t = max(0, 1 − L0/l): the
  // compressive part left out so that the system stays positive definite); and its system block
  // S_s = α·nnᵀ + β·I with α = h·c + h²·k·(1 − t), β = h²·k·t, kept as (√α·n, β).
  std::vector<Vec3>& pull = on_a_;
  std::vector<std::array<double, 4>>& blocks = jacobi_block_;
  pull.resize(springs_.size());
  blocks.resize(springs_.size());
  const double c = mat.spring_damping;
  const bool bend_in_solve = o_.implicit_bend;
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
    const Vec3 m = n * std::sqrt(h * c + h * h * k_along);
    blocks[s] = {m.x, m.y, m.z, h * h * k_across};
  }
  solver.set_springs(blocks);
  // Per free vertex: the right side h·(f + Σ ±g), its own block (mass and drag, springs to
  // kinematic vertices, whose Δv is 0) and the diagonal block for Jacobi.
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
    for (std::uint32_t e = jacobi_incidence_start_[fi]; e < jacobi_incidence_start_[fi + 1]; ++e) {
      const std::uint32_t code = jacobi_incidence_[e], s = code & ~kSecondVertex;
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
  for (const auto& [fi, s] : jacobi_kinematic_) detail::add(own[fi], block_of(blocks[s]));
  solver.set_vertices(own, diagonal);
  const int iterations = solver.solve(b, o_.cg_max_iterations, o_.cg_tolerance, residual);
  for (size_t fi = 0; fi < free_count; ++fi) {
    const std::uint32_t i = free_vertex_[fi];
    v_[i] += solver.dv(fi);
    x_[i] += v_[i] * h;
  }
  return iterations;
}

// The multigrid's fine network: the free vertices (numbered in order) and the springs between
// two free vertices, in spring order. Built at the first implicit step; a copied cloth gets its
// own copy before it writes to a shared one.
detail::ClothMultigrid& Cloth::multigrid() {
  if (!multigrid_) {
    number_free_vertices();
    std::vector<std::array<std::uint32_t, 2>> edges;
    std::vector<double> weight;
    network_spring_.clear();
    for (std::uint32_t s = 0; s < springs_.size(); ++s) {
      const ClothSpring& sp = springs_[s];
      if (inverse_mass_[sp.a] == 0 || inverse_mass_[sp.b] == 0) continue;
      if (!in_solve(s)) continue;
      edges.push_back({free_index_[sp.a], free_index_[sp.b]});
      weight.push_back(stiffness_[s]);
      network_spring_.push_back(s);
    }
    multigrid_ = std::make_shared<detail::ClothMultigrid>(
        free_vertex_.size(), std::move(edges), weight,
        o_.preconditioner == ClothPreconditioner::Multigrid);
  } else if (multigrid_.use_count() > 1) {
    multigrid_ = std::make_shared<detail::ClothMultigrid>(*multigrid_);
  }
  return *multigrid_;
}

int Cloth::substep_implicit_multigrid(double h, double& residual) {
  const ClothMaterial& mat = o_.material;
  tbb::task_arena& arena = parallel_->arena;
  detail::ClothMultigrid& mg = multigrid();
  detail::BlockNetwork& network = mg.fine();
  const size_t free_count = free_vertex_.size();
  std::vector<Vec3>& f = force_;
  forces(f);
  // Per spring: the force on a, the stiffness block K_s = k·(nnᵀ + max(0, 1 − L0/l)·(I − nnᵀ))
  // (the compressive part left out so that the system stays positive definite) and the system
  // block S_s = h·c·nnᵀ + h²·K_s.
  std::vector<Vec3>& on_a = on_a_;
  std::vector<Sym3>& stiffness = stiffness_block_;
  std::vector<Sym3>& system = system_block_;
  on_a.assign(springs_.size(), Vec3{0, 0, 0});
  stiffness.assign(springs_.size(), Sym3{});
  system.assign(springs_.size(), Sym3{});
  for (size_t s = 0; s < springs_.size(); ++s) {
    const ClothSpring& sp = springs_[s];
    const Vec3 d = x_[sp.b] - x_[sp.a];
    const double len = length(d);
    if (!(len > 0)) continue;
    const Vec3 dir = d / len;
    const double k = stiffness_[s], c = mat.spring_damping;
    on_a[s] = dir * (k * (len - sp.rest_length) + c * dot(v_[sp.b] - v_[sp.a], dir));
    if (!in_solve(s)) continue;  // an explicit force only
    const double transverse = std::max(0.0, 1 - sp.rest_length / len);
    stiffness[s] = outer_plus_identity(dir, k * (1 - transverse), k * transverse);
    system[s] =
        outer_plus_identity(dir, h * c + h * h * k * (1 - transverse), h * h * k * transverse);
  }
  const double diagonal_scale = 1 + h * mat.air_drag;  // air drag taken implicitly too
  // The system over the free vertices (kinematic ones move at their prescribed velocity: their
  // Δv is 0, so a spring to one adds its block to the free vertex's own block only).
  std::vector<Vec3>& b = b_;
  b.assign(free_count, Vec3{0, 0, 0});
  for_blocks(arena, o_.threads, free_count, [&](size_t begin, size_t end) {
    for (size_t fi = begin; fi < end; ++fi) {
      const std::uint32_t i = free_vertex_[fi];
      Vec3 force = f[i], kv{0, 0, 0};
      const double own = mass_[i] * diagonal_scale;
      Sym3 block{own, own, own, 0, 0, 0};
      for (std::uint32_t e = spring_start_[i]; e < spring_start_[i + 1]; ++e) {
        const std::uint32_t s = spring_of_[e];
        const bool is_a = springs_[s].a == i;
        const std::uint32_t j = is_a ? springs_[s].b : springs_[s].a;
        force += is_a ? on_a[s] : -on_a[s];
        kv -= stiffness[s] * (v_[i] - v_[j]);  // (∂f/∂x·v)_i
        if (inverse_mass_[j] == 0) detail::add(block, system[s]);
      }
      b[fi] = (force + kv * h) * h;
      network.own[fi] = block;
    }
  });
  for (size_t e = 0; e < network_spring_.size(); ++e)
    network.edge_block[e] = system[network_spring_[e]];
  mg.update();
  auto dot_all = [&](const std::vector<Vec3>& a, const std::vector<Vec3>& c) {
    return deterministic_sum(arena, o_.threads, free_count,
                             [&](size_t i) { return dot(a[i], c[i]); });
  };
  std::vector<Vec3>& dv = dv_;
  dv.assign(free_count, Vec3{0, 0, 0});
  // Preconditioned conjugate gradients from Δv = 0 (block Jacobi, or one multigrid V-cycle).
  std::vector<Vec3>&r = r_, &z = z_, &p = p_, &q = q_;
  z.resize(free_count);
  q.resize(free_count);
  r = b;
  mg.precondition(r, z);
  p = z;
  double rz = dot_all(r, z);
  const double b_norm = std::sqrt(dot_all(b, b));
  int iterations = 0;
  residual = 0;
  if (b_norm > 0) {
    residual = std::sqrt(dot_all(r, r)) / b_norm;
    while (iterations < o_.cg_max_iterations && residual > o_.cg_tolerance) {
      mg.multiply(0, p, q);
      const double pq = dot_all(p, q);
      if (!(pq > 0)) break;
      const double alpha = rz / pq;
      for_blocks(arena, o_.threads, free_count, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          dv[i] += p[i] * alpha;
          r[i] -= q[i] * alpha;
        }
      });
      ++iterations;
      residual = std::sqrt(dot_all(r, r)) / b_norm;
      if (residual <= o_.cg_tolerance) break;
      mg.precondition(r, z);
      const double rz_next = dot_all(r, z), beta = rz_next / rz;
      rz = rz_next;
      for_blocks(arena, o_.threads, free_count, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) p[i] = z[i] + p[i] * beta;
      });
    }
  }
  for (size_t fi = 0; fi < free_count; ++fi) {
    const std::uint32_t i = free_vertex_[fi];
    v_[i] += dv[fi];
    x_[i] += v_[i] * h;
  }
  return iterations;
}

}  // namespace kinema
