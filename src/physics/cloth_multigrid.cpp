// The implicit cloth solver's multigrid preconditioner (cloth_multigrid.h).
#include "cloth_multigrid.h"

#include <algorithm>
#include <numeric>

namespace kinema::detail {

namespace {

constexpr std::size_t kCoarsest = 64;  ///< nodes solved directly

}  // namespace

std::size_t match_pairs(std::size_t nodes, const std::vector<std::array<std::uint32_t, 2>>& edges,
                        const std::vector<double>& weight, std::vector<std::uint32_t>& pair_of) {
  std::vector<std::uint32_t> start(nodes + 1, 0), other, edge_of;
  for (const auto& e : edges) ++start[e[0] + 1], ++start[e[1] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  other.resize(start[nodes]);
  edge_of.resize(start[nodes]);
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (std::uint32_t e = 0; e < edges.size(); ++e) {
    other[fill[edges[e][0]]] = edges[e][1], edge_of[fill[edges[e][0]]++] = e;
    other[fill[edges[e][1]]] = edges[e][0], edge_of[fill[edges[e][1]]++] = e;
  }
  pair_of.assign(nodes, kInside);
  std::size_t pairs = 0;
  std::vector<double> to(nodes, 0.0);  // weight from the current node to each neighbour
  for (std::uint32_t i = 0; i < nodes; ++i) {
    if (pair_of[i] != kInside) continue;
    for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) to[other[k]] += weight[edge_of[k]];
    std::uint32_t best = kInside;
    for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
      const std::uint32_t j = other[k];
      if (j != i && pair_of[j] == kInside && (best == kInside || to[j] > to[best])) best = j;
    }
    for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) to[other[k]] = 0;
    pair_of[i] = std::uint32_t(pairs);
    if (best != kInside) pair_of[best] = std::uint32_t(pairs);
    ++pairs;
  }
  return pairs;
}

void coarsen_graph(const std::vector<std::array<std::uint32_t, 2>>& edges,
                   const std::vector<double>& weight, const std::vector<std::uint32_t>& group_of,
                   std::vector<std::array<std::uint32_t, 2>>& coarse_edges,
                   std::vector<double>& coarse_weight, std::vector<std::uint32_t>& edge_map) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  keyed.reserve(edges.size());
  edge_map.assign(edges.size(), kInside);
  for (std::uint32_t e = 0; e < edges.size(); ++e) {
    std::uint32_t a = group_of[edges[e][0]], b = group_of[edges[e][1]];
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    keyed.push_back({(std::uint64_t(a) << 32) | b, e});
  }
  std::sort(keyed.begin(), keyed.end());
  coarse_edges.clear();
  coarse_weight.clear();
  for (std::size_t k = 0; k < keyed.size(); ++k) {
    if (k == 0 || keyed[k].first != keyed[k - 1].first) {
      coarse_edges.push_back(
          {std::uint32_t(keyed[k].first >> 32), std::uint32_t(keyed[k].first & 0xFFFFFFFFu)});
      coarse_weight.push_back(0);
    }
    edge_map[keyed[k].second] = std::uint32_t(coarse_edges.size() - 1);
    coarse_weight.back() += weight[keyed[k].second];
  }
}

std::size_t aggregate_in_fours(std::size_t nodes,
                               const std::vector<std::array<std::uint32_t, 2>>& edges,
                               const std::vector<double>& weight,
                               std::vector<std::uint32_t>& group_of) {
  // Two rounds of pairing: aggregates of up to four nodes.
  std::vector<std::uint32_t> first, second;
  const std::size_t pairs = match_pairs(nodes, edges, weight, first);
  std::vector<std::array<std::uint32_t, 2>> pair_edges;
  std::vector<double> pair_weight;
  std::vector<std::uint32_t> unused;
  coarsen_graph(edges, weight, first, pair_edges, pair_weight, unused);
  const std::size_t groups = match_pairs(pairs, pair_edges, pair_weight, second);
  group_of.resize(nodes);
  for (std::size_t i = 0; i < nodes; ++i) group_of[i] = second[first[i]];
  return groups;
}

ClothSym3 inverse(const ClothSym3& a) {
  const double c_xx = a.yy * a.zz - a.yz * a.yz, c_xy = a.xz * a.yz - a.xy * a.zz,
               c_xz = a.xy * a.yz - a.xz * a.yy;
  const double inverse_det = 1 / (a.xx * c_xx + a.xy * c_xy + a.xz * c_xz);
  return {c_xx * inverse_det,
          (a.xx * a.zz - a.xz * a.xz) * inverse_det,
          (a.xx * a.yy - a.xy * a.xy) * inverse_det,
          c_xy * inverse_det,
          c_xz * inverse_det,
          (a.xy * a.xz - a.xx * a.yz) * inverse_det};
}

ClothMultigrid::ClothMultigrid(std::size_t nodes, std::vector<std::array<std::uint32_t, 2>> edges,
                               const std::vector<double>& weight) {
  levels_.emplace_back();
  levels_[0].nodes = nodes;
  levels_[0].edges = std::move(edges);
  std::vector<double> level_weight = weight;
  // Coarsen while it pays: down to kCoarsest nodes, or until matching stops shrinking the graph.
  while (levels_.back().nodes > kCoarsest) {
    const BlockNetwork& fine = levels_.back();
    std::vector<std::uint32_t> group_of;
    const std::size_t groups = aggregate_in_fours(fine.nodes, fine.edges, level_weight, group_of);
    if (groups * 5 > fine.nodes * 4) break;  // under 20 % fewer nodes: not worth a level
    BlockNetwork coarse;
    coarse.nodes = groups;
    std::vector<double> coarse_weight;
    std::vector<std::uint32_t> edge_map;
    coarsen_graph(fine.edges, level_weight, group_of, coarse.edges, coarse_weight, edge_map);
    std::vector<std::uint32_t> cross;
    for (std::size_t e = 0; e < edge_map.size(); ++e)
      if (edge_map[e] != kInside) cross.push_back(std::uint32_t(e));
    cross_edges_.push_back(std::move(cross));
    aggregate_.push_back(std::move(group_of));
    coarse_edge_.push_back(std::move(edge_map));
    level_weight = std::move(coarse_weight);
    levels_.push_back(std::move(coarse));
  }
  for (BlockNetwork& level : levels_) {
    level.own.assign(level.nodes, ClothSym3{});
    level.edge_block.assign(level.edges.size(), ClothSym3{});
    level.diagonal_inverse.assign(level.nodes, ClothSym3{});
  }
}

void ClothMultigrid::update() {
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    const BlockNetwork& fine = levels_[l];
    BlockNetwork& coarse = levels_[l + 1];
    std::fill(coarse.own.begin(), coarse.own.end(), ClothSym3{});
    std::fill(coarse.edge_block.begin(), coarse.edge_block.end(), ClothSym3{});
    for (std::size_t i = 0; i < fine.nodes; ++i) add(coarse.own[aggregate_[l][i]], fine.own[i]);
    for (std::size_t e = 0; e < fine.edges.size(); ++e)
      if (coarse_edge_[l][e] != kInside)
        add(coarse.edge_block[coarse_edge_[l][e]], fine.edge_block[e]);
  }
  for (BlockNetwork& level : levels_) {
    std::vector<ClothSym3>& diagonal = diagonal_;
    diagonal.assign(level.own.begin(), level.own.end());
    for (std::size_t e = 0; e < level.edges.size(); ++e) {
      add(diagonal[level.edges[e][0]], level.edge_block[e]);
      add(diagonal[level.edges[e][1]], level.edge_block[e]);
    }
    for (std::size_t i = 0; i < level.nodes; ++i) level.diagonal_inverse[i] = inverse(diagonal[i]);
  }
  // The coarsest level as a dense matrix, factored.
  const BlockNetwork& last = levels_.back();
  const Eigen::Index size = Eigen::Index(3 * last.nodes);
  Eigen::MatrixXd& dense = coarsest_matrix_;
  dense.setZero(size, size);
  auto put = [&](std::size_t row, std::size_t column, const ClothSym3& s, double sign) {
    const Eigen::Index r = Eigen::Index(3 * row), c = Eigen::Index(3 * column);
    const double m[3][3] = {{s.xx, s.xy, s.xz}, {s.xy, s.yy, s.yz}, {s.xz, s.yz, s.zz}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) dense(r + i, c + j) += sign * m[i][j];
  };
  for (std::size_t i = 0; i < last.nodes; ++i) put(i, i, last.own[i], 1);
  for (std::size_t e = 0; e < last.edges.size(); ++e) {
    const auto [a, b] = last.edges[e];
    put(a, a, last.edge_block[e], 1);
    put(b, b, last.edge_block[e], 1);
    put(a, b, last.edge_block[e], -1);
    put(b, a, last.edge_block[e], -1);
  }
  coarsest_.compute(dense);
  coarsest_rhs_.resize(size);
}

void ClothMultigrid::solve_coarsest(const std::vector<Vec3>& r, std::vector<Vec3>& x) {
  const BlockNetwork& last = levels_.back();
  for (std::size_t i = 0; i < last.nodes; ++i)
    coarsest_rhs_.segment<3>(Eigen::Index(3 * i)) << r[i].x, r[i].y, r[i].z;
  coarsest_.solveInPlace(coarsest_rhs_);
  for (std::size_t i = 0; i < last.nodes; ++i)
    x[i] = {coarsest_rhs_[Eigen::Index(3 * i)], coarsest_rhs_[Eigen::Index(3 * i + 1)],
            coarsest_rhs_[Eigen::Index(3 * i + 2)]};
}

}  // namespace kinema::detail
