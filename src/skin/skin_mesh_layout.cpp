// SkinMesh, the layout the fast skinning paths read: vertices grouped by influence count (pairs
// of weight 0 dropped) and sorted by joint set inside a group, DQS's hemisphere links, planar
// copies of the attributes, and the map from output vertex indices to stored ones.
#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/skin/skinning.h"

namespace kinema {

namespace {

// DQS's hemisphere links of a grouped mesh: the distinct (anchor, other) joint pairs, as a
// breadth-first spanning forest followed by the pairs that close cycles.
void build_dqs_links(SkinMesh& mesh) {
  std::vector<std::array<uint16_t, 2>> pairs;
  for (const SkinMesh::Group& g : mesh.groups)
    for (size_t v = 0; v < g.count; ++v) {
      const uint16_t* joints = &mesh.joints[g.pair_begin + v * size_t(g.influences)];
      for (int i = 1; i < g.influences; ++i)
        if (joints[i] != joints[0])
          pairs.push_back({std::min(joints[0], joints[i]), std::max(joints[0], joints[i])});
    }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  // Adjacency in compressed rows: the neighbours of joint j are next[first[j] .. first[j + 1]).
  const size_t n = mesh.palette_size;
  std::vector<size_t> first(n + 1, 0);
  for (const auto& p : pairs) ++first[p[0] + 1], ++first[p[1] + 1];
  for (size_t j = 0; j < n; ++j) first[j + 1] += first[j];
  std::vector<uint16_t> next(first[n]);
  std::vector<size_t> fill(first.begin(), first.end() - 1);
  for (const auto& p : pairs) next[fill[p[0]]++] = p[1], next[fill[p[1]]++] = p[0];
  std::vector<uint8_t> reached(n, 0);
  std::vector<std::array<uint16_t, 2>> tree;
  std::vector<uint16_t> queue;
  for (size_t root = 0; root < n; ++root) {
    if (reached[root] || first[root] == first[root + 1]) continue;
    reached[root] = 1;
    queue.assign(1, uint16_t(root));
    for (size_t q = 0; q < queue.size(); ++q)
      for (size_t e = first[queue[q]]; e < first[queue[q] + 1]; ++e)
        if (!reached[next[e]]) {
          reached[next[e]] = 1;
          tree.push_back({queue[q], next[e]});
          queue.push_back(next[e]);
        }
  }
  // The pairs not in the forest are the checks.
  std::vector<std::array<uint16_t, 2>> sorted_tree;
  for (const auto& t : tree) sorted_tree.push_back({std::min(t[0], t[1]), std::max(t[0], t[1])});
  std::sort(sorted_tree.begin(), sorted_tree.end());
  mesh.dqs_links = tree;
  mesh.dqs_tree_links = tree.size();
  for (const auto& p : pairs)
    if (!std::binary_search(sorted_tree.begin(), sorted_tree.end(), p)) mesh.dqs_links.push_back(p);
  mesh.dqs_links_built = true;
}

// The original indices of the vertices with c used influences, in the order they are stored:
// sorted by joint set (the sorted tuple of their joint indices, then the tuple in its order),
// the vertices of one joint sequence in their original order; each sequence's whole blocks of
// eight first, the rest of every sequence after them (still by joint set). The 8-wide kernels
// then see as many blocks of eight vertices sharing their joints as the mesh allows (the
// blocks start at the group's first vertex), which they blend without transposition, and
// neighbouring vertices read the same palette entries.
std::vector<uint32_t> group_order(const SkinMeshView& view, const std::vector<uint8_t>& used,
                                  int c) {
  struct Key {
    std::array<uint16_t, 8> set, sequence;  // padded with 0xFFFF
    uint32_t vertex;
  };
  const size_t k = size_t(view.influences);
  std::vector<Key> keys;
  for (size_t v = 0; v < used.size(); ++v) {
    if (used[v] != c) continue;
    Key key{{}, {}, uint32_t(v)};
    key.sequence.fill(0xFFFF);
    size_t u = 0;
    for (size_t i = v * k; i < v * k + k; ++i)
      if (view.weights[i] > 0.0f) key.sequence[u++] = view.joints[i];
    key.set = key.sequence;
    std::sort(key.set.begin(), key.set.begin() + c);
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.set, a.sequence, a.vertex) < std::tie(b.set, b.sequence, b.vertex);
  });
  std::vector<uint32_t> order, rest;
  order.reserve(keys.size());
  for (size_t r = 0; r < keys.size();) {
    size_t e = r + 1;
    while (e < keys.size() && keys[e].sequence == keys[r].sequence) ++e;
    const size_t whole = r + (e - r) / 8 * 8;
    for (size_t i = r; i < e; ++i) (i < whole ? order : rest).push_back(keys[i].vertex);
    r = e;
  }
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

}  // namespace

double SkinMesh::mean_influences() const {
  return positions.empty() ? 0.0 : double(joints.size()) / double(positions.size());
}

SkinMesh make_skin_mesh(const SkinMeshView& view, size_t palette_size, const std::string& file,
                        const std::string& mesh_name) {
  validate_skin_mesh(view, palette_size, file, mesh_name);
  const size_t n = view.vertex_count(), k = size_t(view.influences);
  if (n > 0xFFFFFFFFu) throw Error(file, "mesh \"" + mesh_name + "\"", "more than 2³² vertices");
  std::vector<uint8_t> used(n);
  std::array<size_t, 9> per_count{};
  for (size_t v = 0; v < n; ++v) {
    for (size_t i = v * k; i < v * k + k; ++i) used[v] += view.weights[i] > 0.0f ? 1 : 0;
    ++per_count[used[v]];
  }
  SkinMesh mesh;
  mesh.palette_size = palette_size;
  mesh.order.reserve(n);
  mesh.positions.reserve(n);
  if (!view.normals.empty()) mesh.normals.reserve(n);
  if (!view.tangents.empty()) mesh.tangents.reserve(n);
  for (int c = 1; c <= 8; ++c) {
    if (per_count[size_t(c)] == 0) continue;
    mesh.groups.push_back({c, mesh.positions.size(), per_count[size_t(c)], mesh.joints.size()});
    for (const uint32_t v : group_order(view, used, c)) {
      mesh.order.push_back(v);
      mesh.positions.push_back(view.positions[v]);
      if (!view.normals.empty()) mesh.normals.push_back(view.normals[v]);
      if (!view.tangents.empty()) mesh.tangents.push_back(view.tangents[v]);
      for (size_t i = v * k; i < v * k + k; ++i)
        if (view.weights[i] > 0.0f) {
          mesh.joints.push_back(view.joints[i]);
          mesh.weights.push_back(view.weights[i]);
        }
    }
  }
  build_dqs_links(mesh);
  const auto planes = [n](const std::vector<Vec3f>& packed, std::vector<float>& planar) {
    if (packed.empty()) return;
    planar.resize(3 * n);
    for (size_t v = 0; v < n; ++v) {
      planar[v] = packed[v].x;
      planar[n + v] = packed[v].y;
      planar[2 * n + v] = packed[v].z;
    }
  };
  planes(mesh.positions, mesh.planar_positions);
  planes(mesh.normals, mesh.planar_normals);
  planes(mesh.tangents, mesh.planar_tangents);
  return mesh;
}

std::vector<uint32_t> stored_indices(const SkinMesh& mesh, std::span<const uint32_t> indices) {
  std::vector<uint32_t> stored_of(mesh.order.size());
  for (size_t v = 0; v < mesh.order.size(); ++v) stored_of[mesh.order[v]] = uint32_t(v);
  std::vector<uint32_t> out;
  out.reserve(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= stored_of.size())
      throw Error("<memory>", "index " + std::to_string(i),
                  "vertex " + std::to_string(indices[i]) + " of a " +
                      std::to_string(stored_of.size()) + "-vertex mesh");
    out.push_back(stored_of[indices[i]]);
  }
  return out;
}

}  // namespace kinema
