// Blend shapes (morph targets): dense and sparse application in bind space.
#include "kinema/skin/blend_shapes.h"

#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

/// Renormalizes each normal; a vanishing sum keeps the base normal.
void renormalize(std::span<const Vec3f> base, std::span<Vec3f> normals) {
  for (size_t i = 0; i < normals.size(); ++i) {
    const Vec3f n = normals[i];
    const float len2 = n.x * n.x + n.y * n.y + n.z * n.z;
    normals[i] = len2 > 1e-24f ? n * (1.0f / std::sqrt(len2)) : base[i];
  }
}

bool finite(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

}  // namespace

bool apply_blend_shapes(std::span<const Vec3f> base_positions, std::span<const Vec3f> base_normals,
                        std::span<const MorphTargetView> targets, std::span<const float> weights,
                        std::span<Vec3f> out_positions, std::span<Vec3f> out_normals) {
  const size_t n = base_positions.size();
  if (weights.size() != targets.size() || out_positions.size() != n) return false;
  if (!base_normals.empty() && base_normals.size() != n) return false;
  if (!out_normals.empty() && out_normals.size() != base_normals.size()) return false;
  for (const MorphTargetView& t : targets) {
    if (!t.position_deltas.empty() && t.position_deltas.size() != n) return false;
    if (!t.normal_deltas.empty() && t.normal_deltas.size() != n) return false;
  }
  for (size_t i = 0; i < n; ++i) out_positions[i] = base_positions[i];
  const bool normals = !out_normals.empty();
  if (normals)
    for (size_t i = 0; i < n; ++i) out_normals[i] = base_normals[i];
  for (size_t k = 0; k < targets.size(); ++k) {
    const float w = weights[k];
    if (w == 0.0f) continue;
    const MorphTargetView& t = targets[k];
    for (size_t i = 0; i < t.position_deltas.size(); ++i)
      out_positions[i] += t.position_deltas[i] * w;
    if (normals)
      for (size_t i = 0; i < t.normal_deltas.size(); ++i) out_normals[i] += t.normal_deltas[i] * w;
  }
  if (normals) renormalize(base_normals, out_normals);
  return true;
}

int BlendShapeSet::find(const std::string& name) const {
  for (size_t k = 0; k < targets.size(); ++k)
    if (targets[k].name == name) return static_cast<int>(k);
  return -1;
}

size_t BlendShapeSet::nonzero_count() const {
  size_t total = 0;
  for (const SparseMorphTarget& t : targets) total += t.vertices.size();
  return total;
}

BlendShapeSet make_blend_shape_set(const Mesh& mesh, float epsilon, const std::string& file) {
  BlendShapeSet set;
  const size_t n = mesh.vertex_count();
  set.vertex_count = n;
  set.targets.reserve(mesh.morph_targets.size());
  auto big = [epsilon](const Vec3f& v) {
    return std::fabs(v.x) > epsilon || std::fabs(v.y) > epsilon || std::fabs(v.z) > epsilon;
  };
  for (size_t k = 0; k < mesh.morph_targets.size(); ++k) {
    const MorphTarget& src = mesh.morph_targets[k];
    const std::string place = "mesh " + mesh.name + ", morph target " + std::to_string(k) +
                              (src.name.empty() ? std::string() : " (" + src.name + ")");
    if (!src.position_deltas.empty() && src.position_deltas.size() != n)
      throw Error(file, place,
                  std::to_string(src.position_deltas.size()) + " position deltas for " +
                      std::to_string(n) + " vertices");
    if (!src.normal_deltas.empty() && src.normal_deltas.size() != n)
      throw Error(file, place,
                  std::to_string(src.normal_deltas.size()) + " normal deltas for " +
                      std::to_string(n) + " vertices");
    if (!src.normal_deltas.empty() && mesh.normals.size() != n)
      throw Error(file, place, "normal deltas on a mesh without normals");
    SparseMorphTarget t;
    t.name = src.name;
    const bool has_p = !src.position_deltas.empty(), has_n = !src.normal_deltas.empty();
    for (size_t i = 0; i < n; ++i) {
      const Vec3f dp = has_p ? src.position_deltas[i] : Vec3f{0, 0, 0};
      const Vec3f dn = has_n ? src.normal_deltas[i] : Vec3f{0, 0, 0};
      if (!finite(dp) || !finite(dn))
        throw Error(file, place + ", vertex " + std::to_string(i), "delta is not finite");
      if (!big(dp) && !big(dn)) continue;
      t.vertices.push_back(static_cast<uint32_t>(i));
      t.position_deltas.push_back(dp);
      if (has_n) t.normal_deltas.push_back(dn);
    }
    set.targets.push_back(std::move(t));
  }
  return set;
}

std::vector<MorphTargetView> morph_target_views(const Mesh& mesh) {
  std::vector<MorphTargetView> views;
  views.reserve(mesh.morph_targets.size());
  for (const MorphTarget& t : mesh.morph_targets)
    views.push_back({t.position_deltas, t.normal_deltas});
  return views;
}

bool apply_blend_shapes(const BlendShapeSet& set, std::span<const Vec3f> base_positions,
                        std::span<const Vec3f> base_normals, std::span<const float> weights,
                        std::span<Vec3f> out_positions, std::span<Vec3f> out_normals) {
  const size_t n = set.vertex_count;
  if (base_positions.size() != n || out_positions.size() != n) return false;
  if (weights.size() != set.targets.size()) return false;
  if (!base_normals.empty() && base_normals.size() != n) return false;
  if (!out_normals.empty() && out_normals.size() != base_normals.size()) return false;
  for (size_t i = 0; i < n; ++i) out_positions[i] = base_positions[i];
  const bool normals = !out_normals.empty();
  if (normals)
    for (size_t i = 0; i < n; ++i) out_normals[i] = base_normals[i];
  for (size_t k = 0; k < set.targets.size(); ++k) {
    const float w = weights[k];
    if (w == 0.0f) continue;
    const SparseMorphTarget& t = set.targets[k];
    const size_t m = t.vertices.size();
    const size_t mp = m < t.position_deltas.size() ? m : t.position_deltas.size();
    for (size_t j = 0; j < mp; ++j) {
      const uint32_t v = t.vertices[j];
      if (v >= n) continue;  // a hand-built set out of range: ignore rather than write past
      out_positions[v] += t.position_deltas[j] * w;
    }
    if (normals && t.normal_deltas.size() == m)
      for (size_t j = 0; j < m; ++j) {
        const uint32_t v = t.vertices[j];
        if (v < n) out_normals[v] += t.normal_deltas[j] * w;
      }
  }
  if (normals) renormalize(base_normals, out_normals);
  return true;
}

}  // namespace kinema
