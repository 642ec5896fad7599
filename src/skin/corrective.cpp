// Pose-driven corrective shapes and the inversion of posed sculpts (Lewis et al. 2000).
#include "kinema/skin/corrective.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr float kPif = 3.14159265358979323846f;

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

std::string shape_place(const CorrectiveShape& s, size_t index) {
  return "corrective " + std::to_string(index) + (s.name.empty() ? "" : " \"" + s.name + "\"");
}

// Wraps an angle to (−π, π].
float wrap_pi(float a) {
  while (a > kPif) a -= 2 * kPif;
  while (a <= -kPif) a += 2 * kPif;
  return a;
}

}  // namespace

float driver_angle(const Quatf& q_in, DriverAngle kind, const Vec3f& axis) {
  const float len = std::sqrt(dot(q_in, q_in));
  if (!(len > 0) || !std::isfinite(len)) return 0;
  const Quatf q = q_in * (1.0f / len);
  switch (kind) {
    case DriverAngle::Hinge:
      return wrap_pi(2.0f * std::atan2(dot(q.vec(), axis), q.w));
    case DriverAngle::Swing: {
      // swing = q · twist⁻¹; its angle is 2·acos(|w|). |swing.w| = sqrt(q.w² + (q.vec·a)²).
      const float along = dot(q.vec(), axis);
      const float c = std::min(1.0f, std::sqrt(q.w * q.w + along * along));
      return 2.0f * std::acos(c);
    }
    case DriverAngle::Total:
      return 2.0f * std::acos(std::min(1.0f, std::abs(q.w)));
  }
  return 0;
}

float driver_ramp(float theta, float theta0, float theta1) {
  const float span = theta1 - theta0;
  if (!(span != 0) || !std::isfinite(span) || !std::isfinite(theta)) return 0;
  return std::clamp((theta - theta0) / span, 0.0f, 1.0f);
}

void validate_correctives(std::span<const CorrectiveShape> shapes, size_t vertex_count,
                          size_t joint_count, const std::string& file) {
  for (size_t i = 0; i < shapes.size(); ++i) {
    const CorrectiveShape& s = shapes[i];
    const std::string place = shape_place(s, i);
    if (s.joint < 0 || static_cast<size_t>(s.joint) >= joint_count)
      throw Error(file, place,
                  "driver joint " + std::to_string(s.joint) + " is outside the skeleton (" +
                      std::to_string(joint_count) + " joints)");
    if (s.angle != DriverAngle::Total &&
        (!finite3(s.axis) || std::abs(length(s.axis) - 1.0f) > 1e-3f))
      throw Error(file, place, "driver axis is not a unit vector");
    if (!std::isfinite(s.theta0) || !std::isfinite(s.theta1))
      throw Error(file, place, "driver angles are NaN or infinite");
    if (s.theta0 == s.theta1)
      throw Error(file, place, "driver θ0 equals θ1 (" + std::to_string(s.theta0) + " rad)");
    if (s.vertices.empty()) {
      if (s.deltas.size() != vertex_count)
        throw Error(file, place,
                    std::to_string(s.deltas.size()) + " dense deltas for " +
                        std::to_string(vertex_count) + " vertices");
    } else {
      if (s.deltas.size() != s.vertices.size())
        throw Error(file, place,
                    std::to_string(s.deltas.size()) + " deltas for " +
                        std::to_string(s.vertices.size()) + " sparse vertices");
      for (uint32_t v : s.vertices)
        if (v >= vertex_count)
          throw Error(file, place,
                      "sparse vertex " + std::to_string(v) + " is outside the mesh (" +
                          std::to_string(vertex_count) + " vertices)");
    }
    for (size_t k = 0; k < s.deltas.size(); ++k)
      if (!finite3(s.deltas[k]))
        throw Error(file, place, "delta " + std::to_string(k) + " is NaN or infinite");
  }
}

bool corrective_weights(std::span<const CorrectiveShape> shapes,
                        std::span<const Quatf> local_rotations, std::span<float> weights) {
  if (weights.size() != shapes.size()) return false;
  for (const CorrectiveShape& s : shapes)
    if (s.joint < 0 || static_cast<size_t>(s.joint) >= local_rotations.size()) return false;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const CorrectiveShape& s = shapes[k];
    const float theta =
        driver_angle(local_rotations[static_cast<size_t>(s.joint)], s.angle, s.axis);
    weights[k] = driver_ramp(theta, s.theta0, s.theta1);
  }
  return true;
}

bool apply_correctives(std::span<const Vec3f> bind, std::span<const CorrectiveShape> shapes,
                       std::span<const float> weights, std::span<Vec3f> out) {
  const size_t n = bind.size();
  if (out.size() != n || weights.size() != shapes.size()) return false;
  const bool in_place = out.data() == bind.data();
  if (!in_place && out.data() < bind.data() + n && bind.data() < out.data() + n) return false;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const CorrectiveShape& s = shapes[k];
    if (!std::isfinite(weights[k])) return false;
    if (s.vertices.empty()) {
      if (s.deltas.size() != n) return false;
    } else {
      if (s.deltas.size() != s.vertices.size()) return false;
      for (uint32_t v : s.vertices)
        if (v >= n) return false;
    }
  }
  if (!in_place) std::copy(bind.begin(), bind.end(), out.begin());
  for (size_t k = 0; k < shapes.size(); ++k) {
    const float w = weights[k];
    if (w == 0) continue;
    const CorrectiveShape& s = shapes[k];
    if (s.vertices.empty()) {
      for (size_t v = 0; v < n; ++v) out[v] += s.deltas[v] * w;
    } else {
      for (size_t i = 0; i < s.vertices.size(); ++i) out[s.vertices[i]] += s.deltas[i] * w;
    }
  }
  return true;
}

CorrectiveInversion invert_posed_sculpt(const SkinMeshView& mesh,
                                        std::span<const Affine3x4f> palette,
                                        std::span<const Vec3f> sculpted_posed,
                                        const CorrectiveInversionOptions& options) {
  const size_t n = mesh.vertex_count();
  if (sculpted_posed.size() != n)
    throw Error({}, "sculpt",
                std::to_string(sculpted_posed.size()) + " sculpted positions for " +
                    std::to_string(n) + " vertices");
  if (auto issue = check_skin_mesh(mesh, palette.size()))
    throw Error({}, "vertex " + std::to_string(issue->vertex), issue->reason);
  for (size_t j = 0; j < palette.size(); ++j)
    for (float x : palette[j].m)
      if (!std::isfinite(x))
        throw Error({}, "palette entry " + std::to_string(j), "matrix is NaN or infinite");
  for (size_t v = 0; v < n; ++v)
    if (!finite3(sculpted_posed[v]))
      throw Error({}, "sculpt, vertex " + std::to_string(v), "position is NaN or infinite");

  CorrectiveInversion result;
  result.deltas.assign(n, Vec3f{});
  const size_t k = static_cast<size_t>(mesh.influences);
  for (size_t v = 0; v < n; ++v) {
    // Blended affine matrix M = Σ w_j S_j (double, so the residual reflects the inversion only).
    Eigen::Matrix<double, 3, 4> m = Eigen::Matrix<double, 3, 4>::Zero();
    for (size_t i = v * k; i < v * k + k; ++i) {
      const double w = mesh.weights[i];
      if (w == 0) continue;
      const Affine3x4f& s = palette[mesh.joints[i]];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) m(r, c) += w * double(s(r, c));
    }
    const Eigen::Vector3d p(mesh.positions[v].x, mesh.positions[v].y, mesh.positions[v].z);
    const Eigen::Vector3d skinned = m.leftCols<3>() * p + m.col(3);
    const Eigen::Vector3d target(sculpted_posed[v].x, sculpted_posed[v].y, sculpted_posed[v].z);
    const Eigen::Vector3d want = target - skinned;
    if (want.norm() < options.ignore_below) continue;
    const Eigen::Matrix3d a = m.leftCols<3>();
    Eigen::JacobiSVD<Eigen::Matrix3d> svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const auto sv = svd.singularValues();
    if (!(sv(2) >= options.min_singular_value * std::max(1.0, sv(0)))) {
      if (options.throw_on_singular)
        throw Error({}, "vertex " + std::to_string(v),
                    "the blended skinning matrix is singular (smallest singular value " +
                        std::to_string(sv(2)) +
                        "): no bind-space delta moves this vertex in every direction");
      result.singular_vertices.push_back(static_cast<uint32_t>(v));
      continue;
    }
    const Eigen::Vector3d d = svd.solve(want);
    result.max_residual = std::max(result.max_residual, (a * d - want).norm());
    const Vec3f df{float(d.x()), float(d.y()), float(d.z())};
    result.deltas[v] = df;
    result.sparse_vertices.push_back(static_cast<uint32_t>(v));
    result.sparse_deltas.push_back(df);
  }
  return result;
}

}  // namespace kinema
