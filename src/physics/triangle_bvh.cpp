// The triangle hierarchy of kinema/physics/triangle_bvh.h.
#include "kinema/physics/triangle_bvh.h"

#include <algorithm>

namespace kinema {

namespace {

constexpr std::uint32_t kLeafSize = 4;

Vec3 min3(const Vec3& a, const Vec3& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
}
Vec3 max3(const Vec3& a, const Vec3& b) {
  return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
}

}  // namespace

TriangleBvh::TriangleBvh(const RigidShape& mesh) {
  if (mesh.kind != ShapeKind::TriangleMesh || mesh.triangles.empty()) return;
  const std::size_t n = mesh.triangles.size();
  std::vector<Vec3> lo(n), hi(n), centre(n);
  for (std::size_t t = 0; t < n; ++t) {
    const Triangle& tri = mesh.triangles[t];
    for (const std::uint32_t v : tri)
      if (v >= mesh.points.size()) return;
    const Vec3 &a = mesh.points[tri[0]], &b = mesh.points[tri[1]], &c = mesh.points[tri[2]];
    lo[t] = min3(a, min3(b, c));
    hi[t] = max3(a, max3(b, c));
    centre[t] = (lo[t] + hi[t]) * 0.5;
  }
  order_.resize(n);
  for (std::size_t t = 0; t < n; ++t) order_[t] = static_cast<std::uint32_t>(t);
  nodes_.reserve(2 * n / kLeafSize + 2);
  nodes_.push_back({});
  // Ranges of order_ still to split, with the node each becomes.
  struct Task {
    std::uint32_t node, first, count;
  };
  std::vector<Task> tasks{{0, 0, static_cast<std::uint32_t>(n)}};
  while (!tasks.empty()) {
    const Task task = tasks.back();
    tasks.pop_back();
    Vec3 box_lo = lo[order_[task.first]], box_hi = hi[order_[task.first]];
    Vec3 c_lo = centre[order_[task.first]], c_hi = c_lo;
    for (std::uint32_t k = task.first; k < task.first + task.count; ++k) {
      box_lo = min3(box_lo, lo[order_[k]]);
      box_hi = max3(box_hi, hi[order_[k]]);
      c_lo = min3(c_lo, centre[order_[k]]);
      c_hi = max3(c_hi, centre[order_[k]]);
    }
    nodes_[task.node].lo = box_lo;
    nodes_[task.node].hi = box_hi;
    const Vec3 spread = c_hi - c_lo;
    if (task.count <= kLeafSize || std::max({spread.x, spread.y, spread.z}) <= 0) {
      nodes_[task.node].first = task.first;
      nodes_[task.node].count = task.count;
      continue;
    }
    const int axis =
        spread.x >= spread.y && spread.x >= spread.z ? 0 : (spread.y >= spread.z ? 1 : 2);
    const auto begin = order_.begin() + task.first;
    const std::uint32_t half = task.count / 2;
    std::nth_element(
        begin, begin + half, begin + task.count, [&](std::uint32_t a, std::uint32_t b) {
          return centre[a][axis] < centre[b][axis] || (centre[a][axis] == centre[b][axis] && a < b);
        });
    const auto left = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({});
    nodes_.push_back({});
    nodes_[task.node].first = left;
    nodes_[task.node].count = 0;
    tasks.push_back({left, task.first, half});
    tasks.push_back({left + 1, task.first + half, task.count - half});
  }
  tri_lo_.resize(n);
  tri_hi_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    tri_lo_[k] = lo[order_[k]];
    tri_hi_[k] = hi[order_[k]];
  }
}

void TriangleBvh::query(const Vec3& lo, const Vec3& hi, std::vector<std::uint32_t>& out) const {
  out.clear();
  if (nodes_.empty()) return;
  auto meets = [&](const Vec3& a_lo, const Vec3& a_hi) {
    return a_lo.x <= hi.x && lo.x <= a_hi.x && a_lo.y <= hi.y && lo.y <= a_hi.y && a_lo.z <= hi.z &&
           lo.z <= a_hi.z;
  };
  std::uint32_t stack[64];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& node = nodes_[stack[--top]];
    if (!meets(node.lo, node.hi)) continue;
    if (node.count > 0) {
      for (std::uint32_t k = node.first; k < node.first + node.count; ++k)
        if (meets(tri_lo_[k], tri_hi_[k])) out.push_back(order_[k]);
    } else if (top + 2 <= 64) {  // median splits keep the depth near log2(n/4): far below 64
      stack[top++] = node.first;
      stack[top++] = node.first + 1;
    }
  }
}

}  // namespace kinema
