// The implicit cloth step's conjugate gradients, block Jacobi or multigrid (cloth_cg.h).
#include "cloth_cg.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "cloth_multigrid.h"

// The double lanes are 32 bytes: without AVX GCC warns that passing them changes the ABI. They
// never leave this file (every function that takes or returns one is internal to it).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace kinema::detail {

namespace {

constexpr std::size_t kWindow = 64;        ///< vertices whose edges are coloured together
constexpr double kSingleTolerance = 1e-3;  ///< below this residual, double precision

// Four lanes (x, y, z, 0) of each precision; GCC and Clang lower them to SSE, AVX or NEON.
typedef float Float4 __attribute__((vector_size(16)));
typedef double Double4 __attribute__((vector_size(32)));
template <class T>
struct Lanes;
template <>
struct Lanes<float> {
  using type = Float4;
};
template <>
struct Lanes<double> {
  using type = Double4;
};

}  // namespace

struct ClothCgSolver::Impl {
  virtual ~Impl() = default;
  virtual std::unique_ptr<Impl> clone() const = 0;
  virtual void set_springs(const std::vector<std::array<double, 4>>& blocks) = 0;
  virtual void set_vertices(const std::vector<ClothSym3>& own,
                            const std::vector<ClothSym3>& diagonal) = 0;
  virtual int solve(const std::vector<Vec3>& b, int max_iterations, double tolerance,
                    double& residual) = 0;
  virtual Vec3 dv(std::size_t i) const = 0;
};

/// The first coarsening of the free vertices' graph, for the V-cycle.
struct ClothCgSolver::Coarsening {
  /// A spring between two aggregates: its free vertices, its block, their aggregates, and the
  /// coarse edge it adds to.
  struct CrossEdge {
    std::uint32_t a, b, spring, aggregate_a, aggregate_b, coarse_edge;
  };
  std::size_t nodes = 0;  ///< aggregates
  std::vector<std::array<std::uint32_t, 2>> edges;
  std::vector<double> weight;            ///< per coarse edge, summed stiffness
  std::vector<std::uint32_t> aggregate;  ///< per free vertex
  /// The edges across aggregates, in their coloured order, with their ends' aggregates.
  std::vector<CrossEdge> cross_edges;
};

/// The solver in T (float or double): vectors of four T (x, y, z, 0).
template <class T>
struct ClothCgSolver::Typed final : ClothCgSolver::Impl {
  using V = typename Lanes<T>::type;
  /// A symmetric block as three columns (the fourth lane 0).
  struct Columns {
    V x, y, z;
    V operator*(const V& p) const { return x * p[0] + y * p[1] + z * p[2]; }
  };

  std::vector<Edge> edges;
  std::vector<V> block;  ///< per spring: (√α·n, β)
  std::vector<Columns> own, diagonal_inverse;
  std::vector<V> x, r, z, p, q;
  /// The V-cycle's coarser levels (none: block Jacobi), which aggregate each free vertex is in,
  /// the springs across aggregates, and the cycle's scratch.
  std::shared_ptr<const Coarsening> coarsening;
  std::unique_ptr<ClothMultigrid> coarse;
  std::vector<V> product;  ///< per vertex
  /// The coarser levels in T, one per level of `coarse`: the blocks as columns (but on the
  /// coarsest, which is solved directly), the right side, the solution and the residual.
  struct Level {
    std::vector<Columns> own, diagonal_inverse, edge;
    std::vector<V> rhs, x, residual;
  };
  std::vector<Level> levels;
  std::vector<Vec3> coarsest_r, coarsest_x;  ///< the coarsest level's, in double

  Typed(std::size_t free_count, std::size_t springs, std::vector<Edge> e,
        std::shared_ptr<const Coarsening> c)
      : edges(std::move(e)),
        block(springs, V{}),
        own(free_count),
        diagonal_inverse(free_count),
        x(free_count),
        r(free_count),
        z(free_count),
        p(free_count),
        q(free_count),
        coarsening(std::move(c)) {
    if (!coarsening) return;
    coarse =
        std::make_unique<ClothMultigrid>(coarsening->nodes, coarsening->edges, coarsening->weight);
    product.resize(free_count);
    levels.resize(coarse->levels());
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const BlockNetwork& net = coarse->level(l);
      Level& level = levels[l];
      level.rhs.resize(net.nodes);
      level.x.resize(net.nodes);
      if (l + 1 == levels.size()) continue;
      level.own.resize(net.nodes);
      level.diagonal_inverse.resize(net.nodes);
      level.edge.resize(net.edges.size());
      level.residual.resize(net.nodes);
    }
    coarsest_r.resize(coarse->level(levels.size() - 1).nodes);
    coarsest_x.resize(coarsest_r.size());
  }

  Typed(const Typed& other)
      : edges(other.edges),
        block(other.block),
        own(other.own),
        diagonal_inverse(other.diagonal_inverse),
        x(other.x),
        r(other.r),
        z(other.z),
        p(other.p),
        q(other.q),
        coarsening(other.coarsening),
        coarse(other.coarse ? std::make_unique<ClothMultigrid>(*other.coarse) : nullptr),
        product(other.product),
        levels(other.levels),
        coarsest_r(other.coarsest_r),
        coarsest_x(other.coarsest_x) {}

  std::unique_ptr<Impl> clone() const override { return std::make_unique<Typed>(*this); }

  static Columns columns(const ClothSym3& s) {
    return {V{T(s.xx), T(s.xy), T(s.xz), 0}, V{T(s.xy), T(s.yy), T(s.yz), 0},
            V{T(s.xz), T(s.yz), T(s.zz), 0}};
  }

  void set_springs(const std::vector<std::array<double, 4>>& blocks) override {
    for (const Edge& e : edges) {  // the springs between free vertices: the rest are not read
      const std::array<double, 4>& m = blocks[e.spring];
      block[e.spring] = V{T(m[0]), T(m[1]), T(m[2]), T(m[3])};
    }
    if (!coarse) return;
    // The coarse level's springs (Galerkin, piecewise-constant interpolation): the sum of the
    // fine blocks across each pair of aggregates; those inside an aggregate drop out.
    BlockNetwork& level = coarse->fine();
    std::fill(level.edge_block.begin(), level.edge_block.end(), ClothSym3{});
    for (const Coarsening::CrossEdge& e : coarsening->cross_edges)
      add(level.edge_block[e.coarse_edge], spring_block(blocks[e.spring]));
  }

  void set_vertices(const std::vector<ClothSym3>& own_blocks,
                    const std::vector<ClothSym3>& diagonal) override {
    for (std::size_t i = 0; i < own.size(); ++i) {
      own[i] = columns(own_blocks[i]);
      diagonal_inverse[i] = columns(inverse(diagonal[i]));
    }
    if (!coarse) return;
    BlockNetwork& level = coarse->fine();
    std::fill(level.own.begin(), level.own.end(), ClothSym3{});
    for (std::size_t i = 0; i < own.size(); ++i)
      add(level.own[coarsening->aggregate[i]], own_blocks[i]);
    coarse->update();
    for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
      const BlockNetwork& net = coarse->level(l);
      Level& typed = levels[l];
      for (std::size_t i = 0; i < net.nodes; ++i) {
        typed.own[i] = columns(net.own[i]);
        typed.diagonal_inverse[i] = columns(net.diagonal_inverse[i]);
      }
      for (std::size_t e = 0; e < net.edges.size(); ++e) typed.edge[e] = columns(net.edge_block[e]);
    }
  }

  static T dot3(const V& a, const V& b) {
    const V product = a * b;
    return product[0] + product[1] + product[2];
  }

  /// S·d for a spring's block kept as m = (√α·n, β): m·(m·d) + β·d.
  static V spring_times(const V& m, const V& d) {
    const V xyz{1, 1, 1, 0};
    return (m * xyz) * dot3(m, d) + d * m[3];
  }

  /// y += Σ_e ±S_e·(x_a − x_b) over the edges.
  void add_edges(const std::vector<V>& from, std::vector<V>& to) const {
    const V* pp = from.data();
    V* qq = to.data();
    const V* blocks = block.data();
    for (const Edge& e : edges) {
      const V t = spring_times(blocks[e.spring], pp[e.a] - pp[e.b]);
      qq[e.a] += t;
      qq[e.b] -= t;
    }
  }

  /// z = M⁻¹·r (block Jacobi, or one V-cycle), and r·z lane by lane into rz_lanes.
  void precondition(V& rz_lanes) {
    const std::size_t n = r.size();
    if (coarse) {
      cycle(r, z);
      for (std::size_t i = 0; i < n; ++i) rz_lanes += r[i] * z[i];
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      z[i] = diagonal_inverse[i] * r[i];
      rz_lanes += r[i] * z[i];
    }
  }

  /// out ≈ A⁻¹·rhs by one V-cycle: a damped Jacobi step from zero, the coarser levels' correction
  /// of the residual it leaves (summed over each aggregate, the answer copied back to its
  /// vertices), and the same Jacobi step again, so that the cycle is symmetric.
  void cycle(const std::vector<V>& rhs, std::vector<V>& out) {
    const std::size_t n = out.size();
    const T omega = T(kSmootherDamping);
    const std::vector<std::uint32_t>& aggregate = coarsening->aggregate;
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = (diagonal_inverse[i] * rhs[i]) * omega;
      product[i] = own[i] * out[i];
    }
    add_edges(out, product);
    std::vector<V>& coarse_rhs = levels[0].rhs;
    std::fill(coarse_rhs.begin(), coarse_rhs.end(), V{});
    for (std::size_t i = 0; i < n; ++i) coarse_rhs[aggregate[i]] += rhs[i] - product[i];
    coarse_cycle(0);
    const std::vector<V>& correction = levels[0].x;
    // A·out after the correction is A·out before it plus A·(the correction): the correction is
    // the same at every vertex of an aggregate, so only the springs across aggregates see it.
    for (std::size_t i = 0; i < n; ++i) {
      const V c = correction[aggregate[i]];
      out[i] += c;
      product[i] += own[i] * c;
    }
    add_cross_edges(correction, product);
    for (std::size_t i = 0; i < n; ++i)
      out[i] += (diagonal_inverse[i] * (rhs[i] - product[i])) * omega;
  }

  /// levels[l].x ≈ A_l⁻¹·levels[l].rhs by the same V-cycle on the coarser levels (their blocks
  /// full symmetric 3 × 3), the coarsest solved exactly.
  void coarse_cycle(std::size_t l) {
    Level& level = levels[l];
    if (l + 1 == levels.size()) {
      for (std::size_t i = 0; i < coarsest_r.size(); ++i)
        coarsest_r[i] = {double(level.rhs[i][0]), double(level.rhs[i][1]), double(level.rhs[i][2])};
      coarse->solve_coarsest(coarsest_r, coarsest_x);
      for (std::size_t i = 0; i < coarsest_x.size(); ++i)
        level.x[i] = V{T(coarsest_x[i].x), T(coarsest_x[i].y), T(coarsest_x[i].z), 0};
      return;
    }
    const T omega = T(kSmootherDamping);
    const BlockNetwork& net = coarse->level(l);
    const std::vector<std::uint32_t>& aggregate = coarse->aggregate(l);
    const std::vector<V>& rhs = level.rhs;
    std::vector<V>&x = level.x, &residual = level.residual;
    // Pre-smoothing from zero and the residual it leaves, summed over each aggregate.
    for (std::size_t i = 0; i < net.nodes; ++i) {
      x[i] = (level.diagonal_inverse[i] * rhs[i]) * omega;
      residual[i] = level.own[i] * x[i];
    }
    for (std::size_t e = 0; e < net.edges.size(); ++e) {
      const auto [a, b] = net.edges[e];
      const V t = level.edge[e] * (x[a] - x[b]);
      residual[a] += t;
      residual[b] -= t;
    }
    Level& next = levels[l + 1];
    std::fill(next.rhs.begin(), next.rhs.end(), V{});
    for (std::size_t i = 0; i < net.nodes; ++i) next.rhs[aggregate[i]] += rhs[i] - residual[i];
    coarse_cycle(l + 1);
    // The correction, and A times it: only the edges across aggregates see it.
    const std::vector<V>& correction = next.x;
    for (std::size_t i = 0; i < net.nodes; ++i) {
      const V c = correction[aggregate[i]];
      x[i] += c;
      residual[i] += level.own[i] * c;
    }
    for (const std::uint32_t e : coarse->cross_edges(l)) {
      const auto [a, b] = net.edges[e];
      const V t = level.edge[e] * (correction[aggregate[a]] - correction[aggregate[b]]);
      residual[a] += t;
      residual[b] -= t;
    }
    // Post-smoothing, the same Jacobi step: the cycle stays symmetric.
    for (std::size_t i = 0; i < net.nodes; ++i)
      x[i] += (level.diagonal_inverse[i] * (rhs[i] - residual[i])) * omega;
  }

  /// y += Σ ±S_e·(c_A − c_B) over the edges across aggregates, c given per aggregate.
  void add_cross_edges(const std::vector<V>& per_aggregate, std::vector<V>& to) const {
    const V* cc = per_aggregate.data();
    V* qq = to.data();
    const V* blocks = block.data();
    for (const Coarsening::CrossEdge& e : coarsening->cross_edges) {
      const V t = spring_times(blocks[e.spring], cc[e.aggregate_a] - cc[e.aggregate_b]);
      qq[e.a] += t;
      qq[e.b] -= t;
    }
  }

  /// The three lanes of a sum summed, in double.
  static double total(const V& lanes) {
    return double(lanes[0]) + double(lanes[1]) + double(lanes[2]);
  }

  int solve(const std::vector<Vec3>& b, int max_iterations, double tolerance,
            double& residual) override {
    const std::size_t n = x.size();
    // Dot products are summed lane by lane (x, y and z apart) and the lanes added at the end:
    // no shuffle per vertex, and a fixed order.
    V rz_lanes{}, bb_lanes{};
    for (std::size_t i = 0; i < n; ++i) {
      r[i] = V{T(b[i].x), T(b[i].y), T(b[i].z), 0};
      x[i] = V{};
      bb_lanes += r[i] * r[i];
    }
    const double bb = total(bb_lanes);
    residual = 0;
    if (!(bb > 0)) return 0;  // Δv = 0, before any preconditioning
    precondition(rz_lanes);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i];
    double rz = total(rz_lanes);
    const double b_norm = std::sqrt(bb);
    residual = 1;
    int iterations = 0;
    double beta = 0;
    while (iterations < max_iterations && residual > tolerance) {
      // q = A·p, with p = z + β·p folded into the own-block pass after the first iteration.
      if (iterations > 0) {
        const T bt = T(beta);
        for (std::size_t i = 0; i < n; ++i) {
          p[i] = z[i] + p[i] * bt;
          q[i] = own[i] * p[i];
        }
      } else {
        for (std::size_t i = 0; i < n; ++i) q[i] = own[i] * p[i];
      }
      add_edges(p, q);
      V pq_lanes{};
      for (std::size_t i = 0; i < n; ++i) pq_lanes += p[i] * q[i];
      const double pq = total(pq_lanes);
      if (!(pq > 0)) break;
      const T alpha = T(rz / pq);
      V rr_lanes{}, rz_next_lanes{};
      if (coarse) {
        for (std::size_t i = 0; i < n; ++i) {
          x[i] += p[i] * alpha;
          r[i] -= q[i] * alpha;
          rr_lanes += r[i] * r[i];
        }
      } else {  // Jacobi fused into the update: one pass over the vertices
        for (std::size_t i = 0; i < n; ++i) {
          x[i] += p[i] * alpha;
          r[i] -= q[i] * alpha;
          z[i] = diagonal_inverse[i] * r[i];
          rr_lanes += r[i] * r[i];
          rz_next_lanes += r[i] * z[i];
        }
      }
      ++iterations;
      residual = std::sqrt(total(rr_lanes)) / b_norm;
      if (iterations == max_iterations || residual <= tolerance) break;
      if (coarse) precondition(rz_next_lanes);  // a V-cycle only when another iteration follows
      const double rz_next = total(rz_next_lanes);
      beta = rz_next / rz;
      rz = rz_next;
    }
    return iterations;
  }

  Vec3 dv(std::size_t i) const override {
    return {double(x[i][0]), double(x[i][1]), double(x[i][2])};
  }
};

ClothCgSolver::ClothCgSolver(std::size_t free_count, std::size_t springs, std::vector<Edge> edges,
                             bool single, const std::vector<double>* multigrid_weight) {
  // Colour the edges inside windows of kWindow vertices (by their lower vertex), then order them
  // window by window, colour by colour.
  std::vector<std::uint64_t> used(free_count, 0);
  std::vector<std::uint8_t> colour(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const std::uint64_t taken = used[edges[e].a] | used[edges[e].b];
    const int c = taken == ~std::uint64_t(0) ? 63 : std::countr_one(taken);
    colour[e] = std::uint8_t(c);
    used[edges[e].a] |= std::uint64_t(1) << c;
    used[edges[e].b] |= std::uint64_t(1) << c;
  }
  std::vector<std::uint32_t> order(edges.size());
  std::iota(order.begin(), order.end(), 0u);
  auto window = [&](std::uint32_t e) { return std::min(edges[e].a, edges[e].b) / kWindow; };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t l, std::uint32_t r) {
    const std::size_t wl = window(l), wr = window(r);
    return wl != wr ? wl < wr : colour[l] < colour[r];
  });
  std::vector<Edge> sorted(edges.size());
  for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = edges[order[k]];
  std::shared_ptr<Coarsening> coarsening;
  if (multigrid_weight) {
    // Aggregates of up to four vertices joined by their stiffest springs, and the coarse graph.
    coarsening = std::make_shared<Coarsening>();
    std::vector<std::array<std::uint32_t, 2>> pairs(sorted.size());
    std::vector<double> weight(sorted.size());
    for (std::size_t e = 0; e < sorted.size(); ++e) {
      pairs[e] = {sorted[e].a, sorted[e].b};
      weight[e] = (*multigrid_weight)[sorted[e].spring];
    }
    coarsening->nodes = aggregate_in_fours(free_count, pairs, weight, coarsening->aggregate);
    std::vector<std::uint32_t> edge_of;  // per (ordered) edge: its coarse edge, or kInside
    coarsen_graph(pairs, weight, coarsening->aggregate, coarsening->edges, coarsening->weight,
                  edge_of);
    for (std::size_t e = 0; e < sorted.size(); ++e)
      if (edge_of[e] != kInside)
        coarsening->cross_edges.push_back({sorted[e].a, sorted[e].b, sorted[e].spring,
                                           coarsening->aggregate[sorted[e].a],
                                           coarsening->aggregate[sorted[e].b], edge_of[e]});
  }
  if (single)
    impl_ = std::make_unique<Typed<float>>(free_count, springs, std::move(sorted), coarsening);
  else
    impl_ = std::make_unique<Typed<double>>(free_count, springs, std::move(sorted), coarsening);
}

ClothCgSolver::~ClothCgSolver() = default;

ClothCgSolver::ClothCgSolver(const ClothCgSolver& other) : impl_(other.impl_->clone()) {}

void ClothCgSolver::set_springs(const std::vector<std::array<double, 4>>& blocks) {
  impl_->set_springs(blocks);
}

void ClothCgSolver::set_vertices(const std::vector<ClothSym3>& own,
                                 const std::vector<ClothSym3>& diagonal) {
  impl_->set_vertices(own, diagonal);
}

int ClothCgSolver::solve(const std::vector<Vec3>& b, int max_iterations, double tolerance,
                         double& residual) {
  return impl_->solve(b, max_iterations, tolerance, residual);
}

Vec3 ClothCgSolver::dv(std::size_t i) const { return impl_->dv(i); }

bool cloth_cg_single(double tolerance) { return tolerance >= kSingleTolerance; }

}  // namespace kinema::detail
