// The offline bake of LBS weights from delta mush (kinema/skin/delta_mush.h): per vertex, the
// weights on nearby joints whose LBS best matches the delta-mushed mesh over sample poses, a
// least-squares fit on the simplex.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/skin/delta_mush.h"

namespace kinema {
namespace {

// Minimizes ½ wᵀG w − hᵀw over the simplex {w ≥ 0, Σw = 1}: an active-set method in the manner of
// Lawson–Hanson's NNLS, starting from the best single joint. G is symmetric positive semidefinite
// (a tiny ridge keeps the equality-constrained subproblems solvable when columns coincide).
Eigen::VectorXd simplex_least_squares(const Eigen::MatrixXd& g, const Eigen::VectorXd& h) {
  const Eigen::Index c = g.rows();
  Eigen::VectorXd w = Eigen::VectorXd::Zero(c);
  if (c == 0) return w;
  Eigen::Index best = 0;
  for (Eigen::Index j = 1; j < c; ++j)
    if (0.5 * g(j, j) - h(j) < 0.5 * g(best, best) - h(best)) best = j;
  w(best) = 1;
  std::vector<char> in(size_t(c), 0);
  in[size_t(best)] = 1;
  const double ridge = 1e-12 * std::max(1.0, g.diagonal().maxCoeff());
  const double tol = 1e-12 * std::max(1.0, h.cwiseAbs().maxCoeff() + g.cwiseAbs().maxCoeff());
  for (int iter = 0; iter < 4 * int(c) + 20; ++iter) {
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < c; ++j)
      if (in[size_t(j)]) free.push_back(j);
    const Eigen::Index f = Eigen::Index(free.size());
    Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(f + 1, f + 1);
    Eigen::VectorXd rhs(f + 1);
    for (Eigen::Index a = 0; a < f; ++a) {
      for (Eigen::Index b = 0; b < f; ++b) kkt(a, b) = g(free[size_t(a)], free[size_t(b)]);
      kkt(a, a) += ridge;
      kkt(a, f) = kkt(f, a) = 1;
      rhs(a) = h(free[size_t(a)]);
    }
    rhs(f) = 1;
    const Eigen::VectorXd sol = kkt.fullPivLu().solve(rhs);
    const Eigen::VectorXd z = sol.head(f);
    if (!z.allFinite()) break;
    if (z.minCoeff() > 0) {
      for (Eigen::Index a = 0; a < f; ++a) w(free[size_t(a)]) = z(a);
      // Optimal when no excluded joint has a gradient below the free joints' common one.
      const Eigen::VectorXd grad = g * w - h;
      const double level = -sol(f);  // grad_i = −μ on the free set
      Eigen::Index add = -1;
      double most = -tol;
      for (Eigen::Index j = 0; j < c; ++j)
        if (!in[size_t(j)] && grad(j) - level < most) {
          most = grad(j) - level;
          add = j;
        }
      if (add < 0) break;
      in[size_t(add)] = 1;
      continue;
    }
    // Step from w toward z until a free weight reaches 0, and drop it.
    double alpha = 1;
    for (Eigen::Index a = 0; a < f; ++a) {
      const double wi = w(free[size_t(a)]);
      if (z(a) <= 0) alpha = std::min(alpha, wi / (wi - z(a)));
    }
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = free[size_t(a)];
      w(j) += alpha * (z(a) - w(j));
      if (w(j) <= 1e-14) {
        w(j) = 0;
        in[size_t(j)] = 0;
      }
    }
  }
  w = w.cwiseMax(0.0);
  const double sum = w.sum();
  if (sum > 0) w /= sum;
  return w;
}

// The sample poses' joint count, after checking the poses, the settings and the mesh.
size_t check_bake_input(const SkinMeshView& mesh, std::span<const std::vector<Affine3x4f>> poses,
                        const WeightBakeSettings& settings) {
  const std::string place = "weight bake";
  if (poses.empty()) throw Error({}, place, "no sample poses");
  if (settings.max_influences < 1 || settings.max_influences > 8)
    throw Error({}, place, "max influences must be 1…8");
  if (settings.candidate_rings < 0) throw Error({}, place, "candidate rings must be ≥ 0");
  const size_t joints = poses[0].size();
  for (size_t p = 0; p < poses.size(); ++p) {
    if (poses[p].size() != joints)
      throw Error({}, "pose " + std::to_string(p),
                  std::to_string(poses[p].size()) + " palette entries, pose 0 has " +
                      std::to_string(joints));
    for (const Affine3x4f& s : poses[p])
      for (float x : s.m)
        if (!std::isfinite(x)) throw Error({}, "pose " + std::to_string(p), "palette is NaN");
  }
  if (auto issue = check_skin_mesh(mesh, joints))
    throw Error({}, "vertex " + std::to_string(issue->vertex), issue->reason);
  return joints;
}

// The candidate joints of vertex v (sorted, unique): the joints weighting the vertices of its
// node and of the nodes within `rings` rings of it. Keeps its scratch between vertices.
class CandidateJoints {
 public:
  CandidateJoints(const SkinMeshView& mesh, const DeltaMushBind& bind, int rings)
      : mesh_(mesh), bind_(bind), rings_(rings), seen_node_(bind.node_count, 0) {}

  const std::vector<int>& of(size_t v) {
    const DeltaMushBind& bind = bind_;
    const size_t k_in = size_t(mesh_.influences);
    ring_.assign(1, bind.node_of[v]);
    std::vector<uint32_t> visited = ring_;
    seen_node_[ring_[0]] = 1;
    for (int r = 0; r < rings_; ++r) {
      next_.clear();
      for (uint32_t node : ring_)
        for (uint32_t e = bind.neighbour_start[node]; e < bind.neighbour_start[node + 1]; ++e) {
          const uint32_t nb = bind.neighbours[e];
          if (!seen_node_[nb]) {
            seen_node_[nb] = 1;
            next_.push_back(nb);
            visited.push_back(nb);
          }
        }
      ring_.swap(next_);
    }
    cand_.clear();
    for (uint32_t node : visited) {
      seen_node_[node] = 0;
      for (uint32_t s = bind.node_vertex_start[node]; s < bind.node_vertex_start[node + 1]; ++s) {
        const size_t u = bind.node_vertices[s];
        for (size_t i = u * k_in; i < u * k_in + k_in; ++i)
          if (mesh_.weights[i] > 0) cand_.push_back(mesh_.joints[i]);
      }
    }
    std::sort(cand_.begin(), cand_.end());
    cand_.erase(std::unique(cand_.begin(), cand_.end()), cand_.end());
    return cand_;
  }

 private:
  const SkinMeshView& mesh_;
  const DeltaMushBind& bind_;
  int rings_;
  std::vector<uint32_t> ring_, next_;
  std::vector<char> seen_node_;
  std::vector<int> cand_;
};

// Vertex v's fit over the candidate joints `cand`: cols holds S_j^p v of candidate j in column j,
// three rows per pose p; y the delta-mushed targets (n vertices a pose in `target`); w0 the
// mesh's own weights on the candidates.
struct VertexFit {
  Eigen::MatrixXd cols;
  Eigen::VectorXd y;
  Eigen::VectorXd w0;
  int used0 = 0;  ///< non-zero entries of w0
};

VertexFit vertex_fit(const SkinMeshView& mesh, std::span<const std::vector<Affine3x4f>> poses,
                     const std::vector<Vec3f>& target, size_t v, const std::vector<int>& cand) {
  const size_t n = mesh.vertex_count(), np = poses.size();
  const size_t k_in = size_t(mesh.influences);
  const Eigen::Index c = Eigen::Index(cand.size());
  VertexFit fit;
  fit.cols.resize(3 * Eigen::Index(np), c);
  fit.y.resize(3 * Eigen::Index(np));
  for (size_t p = 0; p < np; ++p) {
    for (Eigen::Index j = 0; j < c; ++j) {
      const Vec3f q = poses[p][size_t(cand[size_t(j)])].transform_point(mesh.positions[v]);
      for (int a = 0; a < 3; ++a) fit.cols(3 * Eigen::Index(p) + a, j) = q[a];
    }
    for (int a = 0; a < 3; ++a) fit.y(3 * Eigen::Index(p) + a) = target[p * n + v][a];
  }
  fit.w0 = Eigen::VectorXd::Zero(c);
  for (size_t i = v * k_in; i < v * k_in + k_in; ++i)
    if (mesh.weights[i] > 0) {
      const auto it = std::lower_bound(cand.begin(), cand.end(), int(mesh.joints[i]));
      fit.w0(it - cand.begin()) += mesh.weights[i];
    }
  for (Eigen::Index j = 0; j < c; ++j) fit.used0 += fit.w0(j) > 0;
  return fit;
}

// The weights of one vertex: the least-squares fit on the simplex, refitted on its largest m
// joints when it uses more, or the mesh's own weights when settings.keep_if_worse and the fit is
// no better. `order` returns the candidates by decreasing weight; `kept` whether the mesh's own
// weights were kept.
Eigen::VectorXd fit_weights(const VertexFit& fit, const WeightBakeSettings& settings,
                            std::vector<Eigen::Index>& order, bool& kept) {
  const int m = settings.max_influences;
  const Eigen::Index c = fit.cols.cols();
  const Eigen::MatrixXd g = fit.cols.transpose() * fit.cols;
  const Eigen::VectorXd h = fit.cols.transpose() * fit.y;
  Eigen::VectorXd w = simplex_least_squares(g, h);
  order.resize(static_cast<size_t>(c));
  std::iota(order.begin(), order.end(), Eigen::Index(0));
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return w(a) > w(b); });
  if (c > m && w(order[size_t(m)]) > 0) {
    // Too many influences: keep the largest m and refit on them.
    Eigen::MatrixXd gs(m, m);
    Eigen::VectorXd hs(m);
    for (int a = 0; a < m; ++a) {
      hs(a) = h(order[size_t(a)]);
      for (int b = 0; b < m; ++b) gs(a, b) = g(order[size_t(a)], order[size_t(b)]);
    }
    const Eigen::VectorXd ws = simplex_least_squares(gs, hs);
    w.setZero();
    for (int a = 0; a < m; ++a) w(order[size_t(a)]) = ws(a);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return w(a) > w(b); });
  }
  const double err_fit = (fit.cols * w - fit.y).squaredNorm();
  const double err0 = (fit.cols * fit.w0 - fit.y).squaredNorm();
  kept = settings.keep_if_worse && fit.used0 <= m && err0 <= err_fit;
  if (kept) {
    w = fit.w0;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return w(a) > w(b); });
  }
  return w;
}

// The RMS and max distances from LBS with the mesh's weights (`lbs`) and with the baked ones to
// the targets, over all poses (n vertices a pose), measured with the float skinning path itself.
void measure_bake(const SkinMeshView& mesh, std::span<const std::vector<Affine3x4f>> poses,
                  const std::vector<Vec3f>& lbs, const std::vector<Vec3f>& target,
                  WeightBake& out) {
  const size_t n = mesh.vertex_count(), np = poses.size();
  const SkinMeshView baked{mesh.positions, {}, {}, out.influences, out.joints, out.weights};
  std::vector<Vec3f> after(n);
  double sum_before = 0, sum_after = 0;
  for (size_t p = 0; p < np; ++p) {
    if (!skin_lbs(baked, poses[p], {after, {}, {}}))
      throw Error({}, "weight bake", "skinning with the baked weights failed");
    for (size_t v = 0; v < n; ++v) {
      const double eb = distance(lbs[p * n + v], target[p * n + v]);
      const double ea = distance(after[v], target[p * n + v]);
      sum_before += eb * eb;
      sum_after += ea * ea;
      out.max_before = std::max(out.max_before, eb);
      out.max_after = std::max(out.max_after, ea);
    }
  }
  const double count = double(n * np);
  out.rms_before = count > 0 ? std::sqrt(sum_before / count) : 0;
  out.rms_after = count > 0 ? std::sqrt(sum_after / count) : 0;
}

}  // namespace

WeightBake bake_lbs_weights(const SkinMeshView& mesh, std::span<const uint32_t> indices,
                            std::span<const std::vector<Affine3x4f>> poses,
                            const DeltaMushSettings& mush, const WeightBakeSettings& settings) {
  check_bake_input(mesh, poses, settings);
  const size_t n = mesh.vertex_count(), np = poses.size();
  const DeltaMushBind bind = build_delta_mush(mesh.positions, indices, mush);

  // LBS with the mesh's own weights, and the delta-mushed targets, for every pose.
  std::vector<Vec3f> lbs(n * np), target(n * np), scratch(delta_mush_scratch_size(bind));
  const SkinMeshView positions_only{mesh.positions,  {},          {},
                                    mesh.influences, mesh.joints, mesh.weights};
  for (size_t p = 0; p < np; ++p) {
    const std::span<Vec3f> l(lbs.data() + p * n, n), t(target.data() + p * n, n);
    if (!skin_lbs(positions_only, poses[p], {l, {}, {}}) || !delta_mush_deform(bind, l, scratch, t))
      throw Error({}, "pose " + std::to_string(p), "skinning or delta mush failed");
  }

  WeightBake out;
  const int m = settings.max_influences;
  out.influences = m;
  out.joints.assign(n * size_t(m), 0);
  out.weights.assign(n * size_t(m), 0.0f);
  CandidateJoints candidates(mesh, bind, settings.candidate_rings);
  std::vector<Eigen::Index> order;
  for (size_t v = 0; v < n; ++v) {
    const std::vector<int>& cand = candidates.of(v);
    const Eigen::Index c = Eigen::Index(cand.size());
    bool kept = false;
    const Eigen::VectorXd w =
        fit_weights(vertex_fit(mesh, poses, target, v, cand), settings, order, kept);
    if (kept) ++out.vertices_kept;
    float sum = 0;
    for (int a = 0; a < m && a < c; ++a) sum += float(w(order[size_t(a)]));
    for (int a = 0; a < m && a < c; ++a) {
      const size_t slot = v * size_t(m) + size_t(a);
      out.joints[slot] = uint16_t(cand[size_t(order[size_t(a)])]);
      out.weights[slot] = float(w(order[size_t(a)])) / sum;
    }
  }
  measure_bake(mesh, poses, lbs, target, out);
  return out;
}

}  // namespace kinema
