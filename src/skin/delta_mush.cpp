// Delta mush (Mancewicz et al. 2014) and the offline LBS weight bake.
#include "kinema/skin/delta_mush.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// The node positions smoothed `iterations` times, ping-ponging between a and b. Returns the buffer
// holding the result.
std::span<Vec3f> smooth(const DeltaMushBind& bind, std::span<Vec3f> a, std::span<Vec3f> b) {
  const float lambda = bind.settings.lambda;
  for (int it = 0; it < bind.settings.iterations; ++it) {
    for (size_t i = 0; i < bind.node_count; ++i) {
      const uint32_t begin = bind.neighbour_start[i], end = bind.neighbour_start[i + 1];
      if (begin == end) {
        b[i] = a[i];
        continue;
      }
      Vec3f sum{};
      for (uint32_t k = begin; k < end; ++k) sum += a[bind.neighbours[k]];
      const Vec3f mean = sum * (1.0f / float(end - begin));
      b[i] = a[i] + (mean - a[i]) * lambda;
    }
    std::swap(a, b);
  }
  return a;
}

// Area-weighted (unnormalized) node normals of the smoothed mesh.
void node_normals(const DeltaMushBind& bind, std::span<const Vec3f> p, std::span<Vec3f> n) {
  std::fill(n.begin(), n.end(), Vec3f{});
  for (size_t t = 0; t + 2 < bind.triangles.size(); t += 3) {
    const uint32_t a = bind.triangles[t], b = bind.triangles[t + 1], c = bind.triangles[t + 2];
    const Vec3f fn = cross(p[b] - p[a], p[c] - p[a]);
    n[a] += fn;
    n[b] += fn;
    n[c] += fn;
  }
}

struct Frame {
  Vec3f t{1, 0, 0}, b{0, 1, 0}, n{0, 0, 1};
};

// The local frame at node i (identity where undefined; see the header).
Frame frame_at(const DeltaMushBind& bind, std::span<const Vec3f> p, std::span<const Vec3f> normals,
               size_t i) {
  Frame f;
  const uint32_t nb = bind.frame_neighbour[i];
  if (nb == kNone) return f;
  const float nlen = length(normals[i]);
  if (!(nlen > 1e-30f) || !std::isfinite(nlen)) return f;
  const Vec3f n = normals[i] * (1.0f / nlen);
  const Vec3f e = p[nb] - p[i];
  const Vec3f tp = e - n * dot(e, n);
  const float tlen = length(tp);
  if (!(tlen > 1e-30f) || !std::isfinite(tlen)) return f;
  f.n = n;
  f.t = tp * (1.0f / tlen);
  f.b = cross(n, f.t);
  return f;
}

// Node positions (each the mean of its vertices' positions) relative to the mean of all of them,
// which is returned: smoothing is translation-invariant, and working near the origin keeps the
// small differences of a strongly smoothed mesh precise in float wherever the mesh is.
Vec3f node_positions(const DeltaMushBind& bind, std::span<const Vec3f> src, std::span<Vec3f> a) {
  double ox = 0, oy = 0, oz = 0;
  for (const Vec3f& p : src) {
    ox += p.x;
    oy += p.y;
    oz += p.z;
  }
  const double inv = src.empty() ? 0.0 : 1.0 / double(src.size());
  const Vec3f origin{float(ox * inv), float(oy * inv), float(oz * inv)};
  for (size_t i = 0; i < bind.node_count; ++i) {
    const uint32_t begin = bind.node_vertex_start[i], end = bind.node_vertex_start[i + 1];
    Vec3f sum{};
    for (uint32_t s = begin; s < end; ++s) sum += src[bind.node_vertices[s]] - origin;
    a[i] = end - begin == 1 ? sum : sum * (1.0f / float(end - begin));
  }
  return origin;
}

}  // namespace

Vec3f delta_mush_frame_point(const Vec3f& smoothed, const Vec3f& tangent, const Vec3f& normal,
                             const Vec3f& local_delta) {
  const Vec3f bitangent = cross(normal, tangent);
  return smoothed + tangent * local_delta.x + bitangent * local_delta.y + normal * local_delta.z;
}

size_t delta_mush_scratch_size(const DeltaMushBind& bind) { return 3 * bind.node_count; }

DeltaMushBind build_delta_mush(std::span<const Vec3f> positions, std::span<const uint32_t> indices,
                               const DeltaMushSettings& settings) {
  const std::string place = "delta mush";
  if (settings.iterations < 0)
    throw Error({}, place, "iterations must be ≥ 0 (" + std::to_string(settings.iterations) + ")");
  if (!(settings.lambda > 0 && settings.lambda <= 1))
    throw Error({}, place, "λ must be in (0, 1] (" + std::to_string(settings.lambda) + ")");
  if (std::isnan(settings.weld_distance)) throw Error({}, place, "weld distance is NaN");
  if (indices.size() % 3 != 0)
    throw Error({}, place,
                std::to_string(indices.size()) + " indices is not a whole number of triangles");
  const size_t n = positions.size();
  if (n >= kNone) throw Error({}, place, "too many vertices");
  for (size_t v = 0; v < n; ++v)
    if (!finite3(positions[v]))
      throw Error({}, "vertex " + std::to_string(v), "position is NaN or infinite");
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] >= n)
      throw Error({}, "index " + std::to_string(i),
                  "vertex " + std::to_string(indices[i]) + " is outside the mesh (" +
                      std::to_string(n) + " vertices)");

  DeltaMushBind bind;
  bind.settings = settings;
  bind.vertex_count = n;

  // Weld: sweep the vertices sorted by x, joining each to an earlier node within weld_distance.
  bind.node_of.assign(n, kNone);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Vec3f &p = positions[a], &q = positions[b];
    if (p.x != q.x) return p.x < q.x;
    if (p.y != q.y) return p.y < q.y;
    if (p.z != q.z) return p.z < q.z;
    return a < b;
  });
  std::vector<Vec3f> node_pos;
  const float weld = settings.weld_distance;
  for (size_t s = 0; s < n; ++s) {
    const uint32_t v = order[s];
    uint32_t node = kNone;
    if (weld >= 0)
      for (size_t r = s; r-- > 0;) {
        const uint32_t u = order[r];
        if (positions[v].x - positions[u].x > weld) break;
        if (distance(positions[v], positions[u]) <= weld) {
          node = bind.node_of[u];
          break;
        }
      }
    if (node == kNone) {
      node = static_cast<uint32_t>(node_pos.size());
      node_pos.push_back(positions[v]);
    }
    bind.node_of[v] = node;
  }
  const size_t k = node_pos.size();
  bind.node_count = k;
  bind.node_vertex_start.assign(k + 1, 0);
  for (uint32_t node : bind.node_of) ++bind.node_vertex_start[node + 1];
  for (size_t i = 0; i < k; ++i) bind.node_vertex_start[i + 1] += bind.node_vertex_start[i];
  bind.node_vertices.resize(n);
  {
    std::vector<uint32_t> fill(bind.node_vertex_start.begin(), bind.node_vertex_start.end() - 1);
    for (uint32_t v = 0; v < n; ++v) bind.node_vertices[fill[bind.node_of[v]]++] = v;
  }

  // Triangles over nodes (dropping ones that weld collapsed) and unique neighbour lists.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (size_t t = 0; t < indices.size(); t += 3) {
    const uint32_t a = bind.node_of[indices[t]], b = bind.node_of[indices[t + 1]],
                   c = bind.node_of[indices[t + 2]];
    if (a == b || b == c || a == c) continue;
    bind.triangles.insert(bind.triangles.end(), {a, b, c});
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, c}, std::pair{c, a}}) {
      edges.emplace_back(x, y);
      edges.emplace_back(y, x);
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  bind.neighbour_start.assign(k + 1, 0);
  for (const auto& e : edges) ++bind.neighbour_start[e.first + 1];
  for (size_t i = 0; i < k; ++i) bind.neighbour_start[i + 1] += bind.neighbour_start[i];
  bind.neighbours.reserve(edges.size());
  for (const auto& e : edges) bind.neighbours.push_back(e.second);

  // Smooth the bind mesh, pick each node's frame edge, store the deltas.
  std::vector<Vec3f> scratch(3 * k);
  const std::span<Vec3f> all(scratch);
  const Vec3f origin = node_positions(bind, positions, all.subspan(0, k));
  const std::span<Vec3f> smoothed = smooth(bind, all.subspan(0, k), all.subspan(k, k));
  const std::span<Vec3f> normals = all.subspan(2 * k, k);
  node_normals(bind, smoothed, normals);
  bind.frame_neighbour.assign(k, kNone);
  for (size_t i = 0; i < k; ++i) {
    const float nlen = length(normals[i]);
    if (!(nlen > 1e-30f)) continue;
    const Vec3f nn = normals[i] * (1.0f / nlen);
    float best = 1e-4f;  // |sin| of the edge's angle to n: reject edges (nearly) along n
    for (uint32_t e = bind.neighbour_start[i]; e < bind.neighbour_start[i + 1]; ++e) {
      const Vec3f edge = smoothed[bind.neighbours[e]] - smoothed[i];
      const float elen = length(edge);
      if (!(elen > 1e-30f)) continue;
      const float s = length(cross(edge, nn)) / elen;
      if (s > best) {
        best = s;
        bind.frame_neighbour[i] = bind.neighbours[e];
      }
    }
  }
  bind.deltas.resize(n);
  for (size_t i = 0; i < k; ++i) {
    const Frame f = frame_at(bind, smoothed, normals, i);
    for (uint32_t s = bind.node_vertex_start[i]; s < bind.node_vertex_start[i + 1]; ++s) {
      const uint32_t v = bind.node_vertices[s];
      const Vec3f d = (positions[v] - origin) - smoothed[i];
      bind.deltas[v] = {dot(d, f.t), dot(d, f.b), dot(d, f.n)};
    }
  }
  return bind;
}

bool delta_mush_deform(const DeltaMushBind& bind, std::span<const Vec3f> deformed,
                       std::span<Vec3f> scratch, std::span<Vec3f> out) {
  const size_t n = bind.vertex_count, k = bind.node_count;
  if (deformed.size() != n || out.size() != n || scratch.size() < 3 * k) return false;
  if (bind.deltas.size() != n || bind.frame_neighbour.size() != k ||
      bind.node_vertex_start.size() != k + 1 || bind.neighbour_start.size() != k + 1)
    return false;
  const auto overlaps = [](const Vec3f* a, size_t na, const Vec3f* b, size_t nb) {
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
  };
  if (overlaps(out.data(), n, deformed.data(), n) ||
      overlaps(out.data(), n, scratch.data(), scratch.size()))
    return false;
  const std::span<Vec3f> a = scratch.subspan(0, k), b = scratch.subspan(k, k),
                         normals = scratch.subspan(2 * k, k);
  const Vec3f origin = node_positions(bind, deformed, a);
  const std::span<Vec3f> smoothed = smooth(bind, a, b);
  node_normals(bind, smoothed, normals);
  for (size_t i = 0; i < k; ++i) {
    const Frame f = frame_at(bind, smoothed, normals, i);
    for (uint32_t s = bind.node_vertex_start[i]; s < bind.node_vertex_start[i + 1]; ++s) {
      const uint32_t v = bind.node_vertices[s];
      const Vec3f d = bind.deltas[v];
      out[v] = (smoothed[i] + f.t * d.x + f.b * d.y + f.n * d.z) + origin;
    }
  }
  return true;
}

// ---- offline weight bake --------------------------------------------------------------------

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

}  // namespace

WeightBake bake_lbs_weights(const SkinMeshView& mesh, std::span<const uint32_t> indices,
                            std::span<const std::vector<Affine3x4f>> poses,
                            const DeltaMushSettings& mush, const WeightBakeSettings& settings) {
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
  const size_t n = mesh.vertex_count(), np = poses.size();
  const size_t k_in = size_t(mesh.influences);
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
  std::vector<uint32_t> ring, next;
  std::vector<char> seen_node(bind.node_count, 0);
  std::vector<int> cand;
  for (size_t v = 0; v < n; ++v) {
    // Candidates: the joints weighting this vertex and the nodes within candidate_rings.
    ring.assign(1, bind.node_of[v]);
    std::vector<uint32_t> visited = ring;
    seen_node[ring[0]] = 1;
    for (int r = 0; r < settings.candidate_rings; ++r) {
      next.clear();
      for (uint32_t node : ring)
        for (uint32_t e = bind.neighbour_start[node]; e < bind.neighbour_start[node + 1]; ++e) {
          const uint32_t nb = bind.neighbours[e];
          if (!seen_node[nb]) {
            seen_node[nb] = 1;
            next.push_back(nb);
            visited.push_back(nb);
          }
        }
      ring.swap(next);
    }
    cand.clear();
    for (uint32_t node : visited) {
      seen_node[node] = 0;
      for (uint32_t s = bind.node_vertex_start[node]; s < bind.node_vertex_start[node + 1]; ++s) {
        const size_t u = bind.node_vertices[s];
        for (size_t i = u * k_in; i < u * k_in + k_in; ++i)
          if (mesh.weights[i] > 0) cand.push_back(mesh.joints[i]);
      }
    }
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    const Eigen::Index c = Eigen::Index(cand.size());

    // Columns S_j^p v over all poses, the targets, and the original weights on the candidates.
    Eigen::MatrixXd cols(3 * Eigen::Index(np), c);
    Eigen::VectorXd y(3 * Eigen::Index(np));
    for (size_t p = 0; p < np; ++p) {
      for (Eigen::Index j = 0; j < c; ++j) {
        const Vec3f q = poses[p][size_t(cand[size_t(j)])].transform_point(mesh.positions[v]);
        for (int a = 0; a < 3; ++a) cols(3 * Eigen::Index(p) + a, j) = q[a];
      }
      for (int a = 0; a < 3; ++a) y(3 * Eigen::Index(p) + a) = target[p * n + v][a];
    }
    Eigen::VectorXd w0 = Eigen::VectorXd::Zero(c);
    int used0 = 0;
    for (size_t i = v * k_in; i < v * k_in + k_in; ++i)
      if (mesh.weights[i] > 0) {
        const auto it = std::lower_bound(cand.begin(), cand.end(), int(mesh.joints[i]));
        w0(it - cand.begin()) += mesh.weights[i];
      }
    for (Eigen::Index j = 0; j < c; ++j) used0 += w0(j) > 0;
    const Eigen::MatrixXd g = cols.transpose() * cols;
    const Eigen::VectorXd h = cols.transpose() * y;
    Eigen::VectorXd w = simplex_least_squares(g, h);
    std::vector<Eigen::Index> order(static_cast<size_t>(c));
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
    const double err_fit = (cols * w - y).squaredNorm(), err0 = (cols * w0 - y).squaredNorm();
    if (settings.keep_if_worse && used0 <= m && err0 <= err_fit) {
      w = w0;
      std::sort(order.begin(), order.end(), [&](auto a, auto b) { return w(a) > w(b); });
      ++out.vertices_kept;
    }
    float sum = 0;
    for (int a = 0; a < m && a < c; ++a) sum += float(w(order[size_t(a)]));
    for (int a = 0; a < m && a < c; ++a) {
      const size_t slot = v * size_t(m) + size_t(a);
      out.joints[slot] = uint16_t(cand[size_t(order[size_t(a)])]);
      out.weights[slot] = float(w(order[size_t(a)])) / sum;
    }
  }

  // Errors before and after, measured with the float skinning path itself.
  const SkinMeshView baked{mesh.positions, {}, {}, m, out.joints, out.weights};
  std::vector<Vec3f> after(n);
  double sum_before = 0, sum_after = 0;
  for (size_t p = 0; p < np; ++p) {
    if (!skin_lbs(baked, poses[p], {after, {}, {}}))
      throw Error({}, place, "skinning with the baked weights failed");
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
  return out;
}

}  // namespace kinema
