// Skinning palettes, LBS and DQS: the scalar implementation (the reference the faster paths are
// tested against).
#include "kinema/skin/skinning.h"

#include <cmath>

#include "kinema/core/error.h"
#include "skinning_kernels.h"

namespace kinema {

namespace {

template <class M>
Affine3x4f top_rows(const M& m) {
  Affine3x4f a;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) a(r, c) = static_cast<float>(m(r, c));
  return a;
}

template <class MatT>
bool palette_impl(std::span<const MatT> model, std::span<const int> skin_joints,
                  std::span<const MatT> inverse_bind, std::span<Affine3x4f> out) {
  if (skin_joints.size() != inverse_bind.size() || out.size() != skin_joints.size()) return false;
  for (const int j : skin_joints)
    if (j < 0 || static_cast<size_t>(j) >= model.size()) return false;
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = top_rows(model[static_cast<size_t>(skin_joints[i])] * inverse_bind[i]);
  return true;
}

bool finite(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Cofactor matrix of the 3×3 part, scaled so that it equals the inverse transpose up to a
// positive factor (sign of the determinant folded in): transforms normals of a scaled surface.
Affine3x4f normal_matrix(const Affine3x4f& a) {
  const Vec3f c0{a(0, 0), a(1, 0), a(2, 0)}, c1{a(0, 1), a(1, 1), a(2, 1)},
      c2{a(0, 2), a(1, 2), a(2, 2)};
  const Vec3f n0 = cross(c1, c2), n1 = cross(c2, c0), n2 = cross(c0, c1);
  const float s = dot(c0, n0) < 0 ? -1.0f : 1.0f;
  Affine3x4f n;
  for (int r = 0; r < 3; ++r) {
    n(r, 0) = s * n0[r];
    n(r, 1) = s * n1[r];
    n(r, 2) = s * n2[r];
    n(r, 3) = 0;
  }
  return n;
}

Vec3f unit(const Vec3f& v, const Vec3f& fallback) {
  const float len = length(v);
  return len > 1e-30f ? v * (1.0f / len) : fallback;
}

// Blended 3×4 matrix of one vertex: Σ w_k S_{j_k}.
Affine3x4f blend_matrix(const SkinMeshView& mesh, std::span<const Affine3x4f> palette,
                        size_t vertex) {
  const size_t base = vertex * static_cast<size_t>(mesh.influences);
  Affine3x4f b;
  b.m.fill(0.0f);
  for (int k = 0; k < mesh.influences; ++k) {
    const float w = mesh.weights[base + static_cast<size_t>(k)];
    if (w == 0.0f) continue;
    const Affine3x4f& s = palette[mesh.joints[base + static_cast<size_t>(k)]];
    for (size_t e = 0; e < 12; ++e) b.m[e] += w * s.m[e];
  }
  return b;
}

struct Skinned {
  Vec3f position, normal, tangent;
};

Skinned lbs_vertex(const SkinMeshView& mesh, std::span<const Affine3x4f> palette, size_t v,
                   bool want_normal, bool want_tangent, LbsNormals normals) {
  const Affine3x4f b = blend_matrix(mesh, palette, v);
  Skinned s;
  s.position = b.transform_point(mesh.positions[v]);
  if (normals == LbsNormals::blended_matrix) {
    if (want_normal) s.normal = b.transform_vector(mesh.normals[v]);
    if (want_tangent) s.tangent = b.transform_vector(mesh.tangents[v]);
    return s;
  }
  if (want_normal)
    s.normal = unit(normal_matrix(b).transform_vector(mesh.normals[v]), mesh.normals[v]);
  if (want_tangent) s.tangent = unit(b.transform_vector(mesh.tangents[v]), mesh.tangents[v]);
  return s;
}

// Rotation matrix (row-major 3×3, double) → unit quaternion (Shepperd's method).
QuatT<double> quat_from_rows(const double r[3][3]) {
  const double tr = r[0][0] + r[1][1] + r[2][2];
  QuatT<double> q;
  if (tr > 0) {
    const double s = std::sqrt(tr + 1.0) * 2;
    q = {(r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s, 0.25 * s};
  } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
    const double s = std::sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2;
    q = {0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s, (r[2][1] - r[1][2]) / s};
  } else if (r[1][1] > r[2][2]) {
    const double s = std::sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2;
    q = {(r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s, (r[0][2] - r[2][0]) / s};
  } else {
    const double s = std::sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2;
    q = {(r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s, (r[1][0] - r[0][1]) / s};
  }
  return normalize(q);
}

double det3(const double a[3][3]) {
  return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
         a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

// Polar decomposition A = R·K (R rotation, K symmetric) by Higham's iteration
// X ← (X + X⁻ᵀ)/2, which converges quadratically to R for a non-singular A with det > 0.
void polar_rotation(const double a[3][3], double r[3][3]) {
  double x[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) x[i][j] = a[i][j];
  for (int iteration = 0; iteration < 30; ++iteration) {
    const double d = det3(x);
    if (!(std::abs(d) > 1e-300)) break;
    // X⁻ᵀ = cofactor(X) / det.
    double cof[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
        cof[i][j] = x[i1][j1] * x[i2][j2] - x[i1][j2] * x[i2][j1];
      }
    double change = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const double next = 0.5 * (x[i][j] + cof[i][j] / d);
        change += std::abs(next - x[i][j]);
        x[i][j] = next;
      }
    if (change < 1e-14) break;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = x[i][j];
}

}  // namespace

namespace skin_detail {

bool sizes_ok(const SkinMeshView& mesh, const SkinOutputs& out) {
  const size_t n = mesh.vertex_count();
  if (mesh.influences < 1 || mesh.influences > 8) return false;
  const size_t pairs = n * static_cast<size_t>(mesh.influences);
  if (mesh.joints.size() != pairs || mesh.weights.size() != pairs) return false;
  if (!mesh.normals.empty() && mesh.normals.size() != n) return false;
  if (!mesh.tangents.empty() && mesh.tangents.size() != n) return false;
  if (!out.positions.empty() && out.positions.size() != n) return false;
  if (!out.normals.empty() && (out.normals.size() != n || mesh.normals.empty())) return false;
  if (!out.tangents.empty() && (out.tangents.size() != n || mesh.tangents.empty())) return false;
  return true;
}

bool joints_in_range(const SkinMeshView& mesh, size_t palette_size) {
  for (const uint16_t j : mesh.joints)
    if (j >= palette_size) return false;
  return true;
}

}  // namespace skin_detail

using skin_detail::joints_in_range;
using skin_detail::sizes_ok;

Affine3x4f to_affine3x4(const Mat4& m) { return top_rows(m); }
Affine3x4f to_affine3x4(const Mat4f& m) { return top_rows(m); }

Mat4 to_mat4(const Affine3x4f& a) {
  Mat4 m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = a(r, c);
  return m;
}

bool skinning_palette(std::span<const Mat4f> model, std::span<const int> skin_joints,
                      std::span<const Mat4f> inverse_bind, std::span<Affine3x4f> out) {
  return palette_impl(model, skin_joints, inverse_bind, out);
}

bool skinning_palette(std::span<const Mat4> model, std::span<const int> skin_joints,
                      std::span<const Mat4> inverse_bind, std::span<Affine3x4f> out) {
  return palette_impl(model, skin_joints, inverse_bind, out);
}

std::optional<SkinMeshIssue> check_skin_mesh(const SkinMeshView& mesh, size_t palette_size) {
  const size_t n = mesh.vertex_count();
  if (mesh.influences < 1 || mesh.influences > 8)
    return SkinMeshIssue{
        0, std::to_string(mesh.influences) + " influences per vertex (kinema skins 1 to 8)"};
  const size_t k = static_cast<size_t>(mesh.influences);
  if (mesh.joints.size() != n * k || mesh.weights.size() != n * k)
    return SkinMeshIssue{0, std::to_string(mesh.joints.size()) + " joint indices and " +
                                std::to_string(mesh.weights.size()) + " weights for " +
                                std::to_string(n) + " vertices × " + std::to_string(k) +
                                " influences"};
  if (!mesh.normals.empty() && mesh.normals.size() != n)
    return SkinMeshIssue{
        0, std::to_string(mesh.normals.size()) + " normals for " + std::to_string(n) + " vertices"};
  if (!mesh.tangents.empty() && mesh.tangents.size() != n)
    return SkinMeshIssue{0, std::to_string(mesh.tangents.size()) + " tangents for " +
                                std::to_string(n) + " vertices"};
  if (palette_size == 0 && n > 0) return SkinMeshIssue{0, "the skin has no joints"};
  for (size_t v = 0; v < n; ++v) {
    if (!finite(mesh.positions[v])) return SkinMeshIssue{v, "position is NaN or infinite"};
    if (!mesh.normals.empty() && !finite(mesh.normals[v]))
      return SkinMeshIssue{v, "normal is NaN or infinite"};
    if (!mesh.tangents.empty() && !finite(mesh.tangents[v]))
      return SkinMeshIssue{v, "tangent is NaN or infinite"};
    double sum = 0;
    for (size_t i = v * k; i < v * k + k; ++i) {
      const float w = mesh.weights[i];
      if (!std::isfinite(w)) return SkinMeshIssue{v, "weight is NaN or infinite"};
      if (w < 0) return SkinMeshIssue{v, "negative weight " + std::to_string(w)};
      if (w > 0 && mesh.joints[i] >= palette_size)
        return SkinMeshIssue{v, "joint " + std::to_string(mesh.joints[i]) +
                                    " is outside the skin (" + std::to_string(palette_size) +
                                    " joints)"};
      if (mesh.joints[i] >= palette_size)
        return SkinMeshIssue{v, "joint " + std::to_string(mesh.joints[i]) +
                                    " (weight 0) is outside the skin (" +
                                    std::to_string(palette_size) + " joints)"};
      sum += w;
    }
    if (sum == 0) return SkinMeshIssue{v, "weights sum to 0"};
    if (std::abs(sum - 1.0) > 1e-3)
      return SkinMeshIssue{v, "weights sum to " + std::to_string(sum) + ", not 1"};
  }
  return std::nullopt;
}

void validate_skin_mesh(const SkinMeshView& mesh, size_t palette_size, const std::string& file,
                        const std::string& mesh_name) {
  if (auto issue = check_skin_mesh(mesh, palette_size))
    throw Error(file, "mesh \"" + mesh_name + "\", vertex " + std::to_string(issue->vertex),
                issue->reason);
}

bool skin_lbs(const SkinMeshView& mesh, std::span<const Affine3x4f> palette, const SkinOutputs& out,
              LbsNormals normals) {
  if (!sizes_ok(mesh, out) || !joints_in_range(mesh, palette.size())) return false;
  const bool want_p = !out.positions.empty(), want_n = !out.normals.empty(),
             want_t = !out.tangents.empty();
  for (size_t v = 0; v < mesh.vertex_count(); ++v) {
    const Skinned s = lbs_vertex(mesh, palette, v, want_n, want_t, normals);
    if (want_p) out.positions[v] = s.position;
    if (want_n) out.normals[v] = s.normal;
    if (want_t) out.tangents[v] = s.tangent;
  }
  return true;
}

bool dual_quat_palette(std::span<const Affine3x4f> palette, std::span<DualQuatf> dual_quats,
                       std::span<Affine3x4f> prescale, bool* any_scale) {
  if (dual_quats.size() != palette.size() ||
      (!prescale.empty() && prescale.size() != palette.size()))
    return false;
  bool scaled = false;
  for (size_t j = 0; j < palette.size(); ++j) {
    const Affine3x4f& s = palette[j];
    double a[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) a[r][c] = s(r, c);
    // A reflection: factor out a negative scale on x so the polar factor is a rotation.
    const bool reflect = det3(a) < 0;
    if (reflect)
      for (int r = 0; r < 3; ++r) a[r][0] = -a[r][0];
    double rot[3][3];
    polar_rotation(a, rot);
    // K = Rᵀ·A (symmetric), with the reflection put back on its first column.
    Affine3x4f k;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (int i = 0; i < 3; ++i) sum += rot[i][r] * a[i][c];
        if (reflect && c == 0) sum = -sum;
        k(r, c) = static_cast<float>(sum);
        if (std::abs(sum - (r == c ? 1.0 : 0.0)) > 1e-5) scaled = true;
      }
      k(r, 3) = 0;
    }
    const QuatT<double> q = quat_from_rows(rot);
    const Quatf qf{static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z),
                   static_cast<float>(q.w)};
    dual_quats[j] = DualQuatf::from_rigid(qf, {s(0, 3), s(1, 3), s(2, 3)});
    if (!prescale.empty()) prescale[j] = k;
  }
  if (any_scale) *any_scale = scaled;
  return true;
}

bool skin_dqs(const SkinMeshView& mesh, const DqsPaletteView& palette, const SkinOutputs& out,
              std::span<const float> dqs_amount, std::span<const Affine3x4f> lbs_palette) {
  const size_t n = mesh.vertex_count();
  const size_t joints = palette.dual_quats.size();
  if (!sizes_ok(mesh, out) || !joints_in_range(mesh, joints)) return false;
  if (!palette.prescale.empty() && palette.prescale.size() != joints) return false;
  if (!dqs_amount.empty() && (dqs_amount.size() != n || lbs_palette.size() != joints)) return false;
  const bool want_p = !out.positions.empty(), want_n = !out.normals.empty(),
             want_t = !out.tangents.empty();
  const size_t k = static_cast<size_t>(mesh.influences);
  for (size_t v = 0; v < n; ++v) {
    const size_t base = v * k;
    Vec3f p = mesh.positions[v];
    Vec3f nrm = want_n ? mesh.normals[v] : Vec3f{};
    Vec3f tan = want_t ? mesh.tangents[v] : Vec3f{};
    if (!palette.prescale.empty()) {
      // Pre-scale stage: the blended scale/shear (no translation) before the rigid blend.
      const Affine3x4f scale = blend_matrix(mesh, palette.prescale, v);
      p = scale.transform_vector(p);
      if (want_n) nrm = normal_matrix(scale).transform_vector(nrm);
      if (want_t) tan = scale.transform_vector(tan);
    }
    // Dual quaternion linear blending, each influence on the first influence's hemisphere.
    // The hemisphere anchor: the first pair with a non-zero weight (padding pairs have 0).
    size_t anchor = base;
    while (anchor + 1 < base + k && mesh.weights[anchor] == 0.0f) ++anchor;
    const Quatf first = palette.dual_quats[mesh.joints[anchor]].real;
    Quatf br{0, 0, 0, 0}, bd{0, 0, 0, 0};
    for (size_t i = base; i < base + k; ++i) {
      const float w = mesh.weights[i];
      if (w == 0.0f) continue;
      const DualQuatf& q = palette.dual_quats[mesh.joints[i]];
      const float signed_w = dot(q.real, first) < 0 ? -w : w;
      br = br + q.real * signed_w;
      bd = bd + q.dual * signed_w;
    }
    const float len = std::sqrt(dot(br, br));
    Skinned s;
    if (len > 1e-30f) {
      br = br * (1.0f / len);
      bd = bd * (1.0f / len);
      const Vec3f r{br.x, br.y, br.z}, d{bd.x, bd.y, bd.z};
      const Vec3f t = (d * br.w - r * bd.w + cross(r, d)) * 2.0f;
      s.position = rotate(br, p) + t;
      if (want_n) s.normal = unit(rotate(br, nrm), mesh.normals[v]);
      if (want_t) s.tangent = unit(rotate(br, tan), mesh.tangents[v]);
    } else {
      s = {p, unit(nrm, mesh.normals.empty() ? Vec3f{} : mesh.normals[v]),
           unit(tan, mesh.tangents.empty() ? Vec3f{} : mesh.tangents[v])};
    }
    if (!dqs_amount.empty() && dqs_amount[v] < 1.0f) {
      const float a = dqs_amount[v] < 0.0f ? 0.0f : dqs_amount[v];
      const Skinned l =
          lbs_vertex(mesh, lbs_palette, v, want_n, want_t, LbsNormals::inverse_transpose);
      s.position = l.position * (1 - a) + s.position * a;
      if (want_n) s.normal = unit(l.normal * (1 - a) + s.normal * a, s.normal);
      if (want_t) s.tangent = unit(l.tangent * (1 - a) + s.tangent * a, s.tangent);
    }
    if (want_p) out.positions[v] = s.position;
    if (want_n) out.normals[v] = s.normal;
    if (want_t) out.tangents[v] = s.tangent;
  }
  return true;
}

}  // namespace kinema
