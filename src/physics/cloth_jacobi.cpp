// The implicit cloth step's block-Jacobi conjugate gradients (cloth_jacobi.h).
#include "cloth_jacobi.h"

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

struct ClothJacobiSolver::Impl {
  virtual ~Impl() = default;
  virtual std::unique_ptr<Impl> clone() const = 0;
  virtual void set_springs(const std::vector<std::array<double, 4>>& blocks) = 0;
  virtual void set_vertices(const std::vector<ClothSym3>& own,
                            const std::vector<ClothSym3>& diagonal) = 0;
  virtual int solve(const std::vector<Vec3>& b, int max_iterations, double tolerance,
                    double& residual) = 0;
  virtual Vec3 dv(std::size_t i) const = 0;
};

/// The solver in T (float or double): vectors of four T (x, y, z, 0).
template <class T>
struct ClothJacobiSolver::Typed final : ClothJacobiSolver::Impl {
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

  Typed(std::size_t free_count, std::size_t springs, std::vector<Edge> e)
      : edges(std::move(e)),
        block(springs, V{}),
        own(free_count),
        diagonal_inverse(free_count),
        x(free_count),
        r(free_count),
        z(free_count),
        p(free_count),
        q(free_count) {}

  std::unique_ptr<Impl> clone() const override { return std::make_unique<Typed>(*this); }

  static Columns columns(const ClothSym3& s) {
    return {V{T(s.xx), T(s.xy), T(s.xz), 0}, V{T(s.xy), T(s.yy), T(s.yz), 0},
            V{T(s.xz), T(s.yz), T(s.zz), 0}};
  }

  void set_springs(const std::vector<std::array<double, 4>>& blocks) override {
    for (std::size_t s = 0; s < blocks.size(); ++s)
      block[s] = V{T(blocks[s][0]), T(blocks[s][1]), T(blocks[s][2]), T(blocks[s][3])};
  }

  void set_vertices(const std::vector<ClothSym3>& own_blocks,
                    const std::vector<ClothSym3>& diagonal) override {
    for (std::size_t i = 0; i < own.size(); ++i) {
      own[i] = columns(own_blocks[i]);
      diagonal_inverse[i] = columns(inverse(diagonal[i]));
    }
  }

  static T dot3(const V& a, const V& b) {
    const V product = a * b;
    return product[0] + product[1] + product[2];
  }

  /// q += Σ_e ±S_e·(p_a − p_b) over the edges.
  void add_edges() {
    const V* pp = p.data();
    V* qq = q.data();
    const V* blocks = block.data();
    const V xyz{1, 1, 1, 0};
    for (const Edge& e : edges) {
      const V d = pp[e.a] - pp[e.b];
      const V m = blocks[e.spring];
      const V t = (m * xyz) * dot3(m, d) + d * m[3];
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
      z[i] = diagonal_inverse[i] * r[i];
      p[i] = z[i];
      rz_lanes += r[i] * z[i];
      bb_lanes += r[i] * r[i];
    }
    double rz = total(rz_lanes);
    const double bb = total(bb_lanes);
    residual = 0;
    if (!(bb > 0)) return 0;
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
      add_edges();
      V pq_lanes{};
      for (std::size_t i = 0; i < n; ++i) pq_lanes += p[i] * q[i];
      const double pq = total(pq_lanes);
      if (!(pq > 0)) break;
      const T alpha = T(rz / pq);
      V rr_lanes{}, rz_next_lanes{};
      for (std::size_t i = 0; i < n; ++i) {
        x[i] += p[i] * alpha;
        r[i] -= q[i] * alpha;
        z[i] = diagonal_inverse[i] * r[i];
        rr_lanes += r[i] * r[i];
        rz_next_lanes += r[i] * z[i];
      }
      ++iterations;
      residual = std::sqrt(total(rr_lanes)) / b_norm;
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

ClothJacobiSolver::ClothJacobiSolver(std::size_t free_count, std::size_t springs,
                                     std::vector<Edge> edges, bool single) {
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
  if (single)
    impl_ = std::make_unique<Typed<float>>(free_count, springs, std::move(sorted));
  else
    impl_ = std::make_unique<Typed<double>>(free_count, springs, std::move(sorted));
}

ClothJacobiSolver::~ClothJacobiSolver() = default;

ClothJacobiSolver::ClothJacobiSolver(const ClothJacobiSolver& other)
    : impl_(other.impl_->clone()) {}

void ClothJacobiSolver::set_springs(const std::vector<std::array<double, 4>>& blocks) {
  impl_->set_springs(blocks);
}

void ClothJacobiSolver::set_vertices(const std::vector<ClothSym3>& own,
                                     const std::vector<ClothSym3>& diagonal) {
  impl_->set_vertices(own, diagonal);
}

int ClothJacobiSolver::solve(const std::vector<Vec3>& b, int max_iterations, double tolerance,
                             double& residual) {
  return impl_->solve(b, max_iterations, tolerance, residual);
}

Vec3 ClothJacobiSolver::dv(std::size_t i) const { return impl_->dv(i); }

bool cloth_jacobi_single(double tolerance) { return tolerance >= kSingleTolerance; }

}  // namespace kinema::detail
