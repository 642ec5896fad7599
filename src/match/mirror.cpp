// Left ↔ right mirroring of skeletons and poses; see kinema/match/mirror.h.
#include "kinema/match/mirror.h"

#include <cctype>
#include <string>
#include <string_view>

#include "kinema/math/mat4.h"

namespace kinema::match {

namespace {

Quat reflect(const Quat& q) { return {q.x, -q.y, -q.z, q.w}; }
Vec3 reflect(const Vec3& v) { return {-v.x, v.y, v.z}; }

/// Candidate counterpart names of `name`, most specific first.
std::vector<std::string> counterpart_names(const std::string& name) {
  std::vector<std::string> out;
  const auto swap_all = [&](std::string_view a, std::string_view b) {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      const size_t at = name.find(from);
      if (at == std::string::npos) continue;
      std::string s = name;
      s.replace(at, from.size(), to);
      out.push_back(s);
    }
  };
  const auto swap_prefix = [&](std::string_view a, std::string_view b) {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}})
      if (name.starts_with(from)) out.push_back(std::string(to) + name.substr(from.size()));
  };
  const auto swap_suffix = [&](std::string_view a, std::string_view b) {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}})
      if (name.ends_with(from))
        out.push_back(name.substr(0, name.size() - from.size()) + std::string(to));
  };
  swap_all("Left", "Right");
  swap_all("left", "right");
  swap_all("LEFT", "RIGHT");
  swap_all("_L_", "_R_");
  swap_prefix("L_", "R_");
  swap_suffix("_L", "_R");
  swap_suffix(".L", ".R");
  swap_suffix("_l", "_r");
  swap_suffix(".l", ".r");
  if (name.size() > 1 && std::isupper(static_cast<unsigned char>(name[1]))) {
    if (name[0] == 'l' || name[0] == 'r')
      out.push_back((name[0] == 'l' ? "r" : "l") + name.substr(1));
    if (name[0] == 'L' || name[0] == 'R')
      out.push_back((name[0] == 'L' ? "R" : "L") + name.substr(1));
  }
  return out;
}

}  // namespace

std::vector<int> mirror_joints(const Skeleton& skeleton) {
  const int n = skeleton.joint_count();
  std::vector<int> mirror(size_t(n), -1);
  for (int j = 0; j < n; ++j) {
    if (mirror[size_t(j)] >= 0) continue;
    mirror[size_t(j)] = j;
    for (const std::string& candidate : counterpart_names(skeleton.joint(j).name)) {
      const int m = skeleton.find(candidate);
      if (m >= 0 && m != j && mirror[size_t(m)] < 0) {
        mirror[size_t(j)] = m;
        mirror[size_t(m)] = j;
        break;
      }
    }
  }
  return mirror;
}

bool mirror_pose(const Skeleton& skeleton, std::span<const int> mirror,
                 std::span<const Transform> local, std::span<Transform> out) {
  const size_t n = size_t(skeleton.joint_count());
  if (mirror.size() != n || local.size() != n || out.size() != n) return false;
  for (const int m : mirror)
    if (m < 0 || size_t(m) >= n) return false;
  std::vector<Mat4> model(n), rest_model(n);
  const std::vector<Transform> rest = skeleton.rest_pose();
  local_to_model(skeleton.parents(), rest, rest_model);
  local_to_model(skeleton.parents(), local, model);
  std::vector<Quat> rotation(n);
  std::vector<Vec3> position(n);
  for (size_t j = 0; j < n; ++j) {
    const size_t m = size_t(mirror[j]);
    const Quat rest_m = reflect(rotation_of(rest_model[m]));
    rotation[j] =
        normalize(reflect(rotation_of(model[m])) * conjugate(rest_m) * rotation_of(rest_model[j]));
    position[j] = reflect(model[m].translation_part());
  }
  std::vector<Transform> result(n);
  for (size_t j = 0; j < n; ++j) {
    const int p = skeleton.parent(int(j));
    Transform t;
    t.scale = local[size_t(mirror[j])].scale;
    if (p < 0) {
      t.translation = position[j];
      t.rotation = rotation[j];
    } else {
      const Quat inv = conjugate(rotation[size_t(p)]);
      t.translation = rotate(inv, position[j] - position[size_t(p)]);
      t.rotation = normalize(inv * rotation[j]);
    }
    result[j] = t;
  }
  std::copy(result.begin(), result.end(), out.begin());
  return true;
}

}  // namespace kinema::match
