#include "kinema/skeleton/skeleton.h"

#include <algorithm>
#include <unordered_map>

#include "kinema/core/error.h"

namespace kinema {

namespace {
std::string joint_place(const std::vector<Joint>& joints, size_t i) {
  return "joint " + std::to_string(i) + (joints[i].name.empty() ? "" : " '" + joints[i].name + "'");
}
}  // namespace

Skeleton Skeleton::build(std::vector<Joint> joints, bool require_single_root,
                         const std::string& source) {
  const size_t n = joints.size();
  // Parent indices must exist before we can order anything.
  for (size_t i = 0; i < n; ++i) {
    const int p = joints[i].parent;
    if (p != kNoParent && (p < 0 || static_cast<size_t>(p) >= n))
      throw Error(source, joint_place(joints, i),
                  "unknown parent index " + std::to_string(p) + " (there are " + std::to_string(n) +
                      " joints)");
    if (p == static_cast<int>(i))
      throw Error(source, joint_place(joints, i), "joint is its own parent (cycle)");
  }
  // Stable topological order: a depth-first walk from each root in input order would reorder
  // siblings' subtrees; instead repeatedly emit joints whose parent is already placed, scanning
  // in input order. An already sorted list comes out unchanged. O(n·depth) in the worst case.
  std::vector<int> old_to_new(n, -1);
  std::vector<int> order;
  order.reserve(n);
  bool progress = true;
  while (order.size() < n && progress) {
    progress = false;
    for (size_t i = 0; i < n; ++i) {
      if (old_to_new[i] >= 0) continue;
      const int p = joints[i].parent;
      if (p == kNoParent || old_to_new[static_cast<size_t>(p)] >= 0) {
        old_to_new[i] = static_cast<int>(order.size());
        order.push_back(static_cast<int>(i));
        progress = true;
      }
    }
  }
  if (order.size() < n) {
    for (size_t i = 0; i < n; ++i)
      if (old_to_new[i] < 0)
        throw Error(source, joint_place(joints, i),
                    "joint hierarchy has a cycle through this joint");
  }
  Skeleton s;
  s.joints_.reserve(n);
  for (int old : order) {
    Joint j = std::move(joints[static_cast<size_t>(old)]);
    if (j.parent != kNoParent) j.parent = old_to_new[static_cast<size_t>(j.parent)];
    s.joints_.push_back(std::move(j));
  }
  s.old_to_new_ = std::move(old_to_new);
  s.parents_.resize(n);
  for (size_t i = 0; i < n; ++i) s.parents_[i] = s.joints_[i].parent;
  s.index_names();
  s.validate(require_single_root, source);
  return s;
}

void Skeleton::index_names() {
  sorted_names_.clear();
  sorted_names_.reserve(joints_.size());
  for (size_t i = 0; i < joints_.size(); ++i)
    sorted_names_.emplace_back(joints_[i].name, static_cast<int>(i));
  std::sort(sorted_names_.begin(), sorted_names_.end());
}

void Skeleton::validate(bool require_single_root, const std::string& source) const {
  const size_t n = joints_.size();
  int root_count = 0;
  for (size_t i = 0; i < n; ++i) {
    const Joint& j = joints_[i];
    if (j.name.empty()) throw Error(source, joint_place(joints_, i), "joint has no name");
    if (j.parent == kNoParent) {
      ++root_count;
    } else if (j.parent < 0 || j.parent >= static_cast<int>(i)) {
      throw Error(source, joint_place(joints_, i),
                  "parent index " + std::to_string(j.parent) +
                      " is not an earlier joint (joints must be stored parents-first)");
    }
    if (!is_finite(j.rest))
      throw Error(source, joint_place(joints_, i), "rest transform is not finite");
    if (length(j.rest.rotation) < 1e-6)
      throw Error(source, joint_place(joints_, i), "rest rotation is a zero quaternion");
    if (j.inverse_bind && !is_finite(*j.inverse_bind))
      throw Error(source, joint_place(joints_, i), "inverse bind matrix is not finite");
  }
  for (size_t i = 1; i < sorted_names_.size(); ++i)
    if (sorted_names_[i].first == sorted_names_[i - 1].first)
      throw Error(
          source, joint_place(joints_, static_cast<size_t>(sorted_names_[i].second)),
          "duplicate joint name (also joint " + std::to_string(sorted_names_[i - 1].second) + ")");
  if (require_single_root && n > 0 && root_count != 1)
    throw Error(source, "",
                "skeleton has " + std::to_string(root_count) +
                    " root joints where exactly one is required");
  if (require_single_root && n == 0) throw Error(source, "", "skeleton has no joints");
}

int Skeleton::find(std::string_view name) const {
  auto it = std::lower_bound(
      sorted_names_.begin(), sorted_names_.end(), name,
      [](const std::pair<std::string, int>& a, std::string_view b) { return a.first < b; });
  if (it != sorted_names_.end() && it->first == name) return it->second;
  return -1;
}

std::vector<int> Skeleton::roots() const {
  std::vector<int> r;
  for (int i = 0; i < joint_count(); ++i)
    if (parents_[static_cast<size_t>(i)] == kNoParent) r.push_back(i);
  return r;
}

std::vector<int> Skeleton::children(int index) const {
  std::vector<int> r;
  for (int i = index + 1; i < joint_count(); ++i)
    if (parents_[static_cast<size_t>(i)] == index) r.push_back(i);
  return r;
}

int Skeleton::depth(int index) const {
  int d = 0;
  for (int p = parent(index); p != kNoParent; p = parent(p)) ++d;
  return d;
}

std::vector<Transform> Skeleton::rest_pose() const {
  std::vector<Transform> pose;
  pose.reserve(joints_.size());
  for (const Joint& j : joints_) pose.push_back(j.rest);
  return pose;
}

void Skeleton::rename(int index, std::string name) {
  const int existing = find(name);
  if (existing >= 0 && existing != index)
    throw Error("", "joint " + std::to_string(index), "name '" + name + "' is already used");
  if (name.empty())
    throw Error("", "joint " + std::to_string(index), "joint names cannot be empty");
  joints_[static_cast<size_t>(index)].name = std::move(name);
  index_names();
}

namespace {
bool parents_first(std::span<const int> parents) {
  for (size_t i = 0; i < parents.size(); ++i)
    if (parents[i] != kNoParent && (parents[i] < 0 || static_cast<size_t>(parents[i]) >= i))
      return false;
  return true;
}
}  // namespace

bool local_to_model(std::span<const int> parents, std::span<const Mat4> local,
                    std::span<Mat4> model, const Mat4& root_transform) {
  if (local.size() != parents.size() || model.size() != parents.size() || !parents_first(parents))
    return false;
  for (size_t i = 0; i < parents.size(); ++i) {
    const int p = parents[i];
    model[i] = (p == kNoParent ? root_transform : model[static_cast<size_t>(p)]) * local[i];
  }
  return true;
}

bool local_to_model(std::span<const int> parents, std::span<const Transform> local,
                    std::span<Mat4> model, const Mat4& root_transform) {
  if (local.size() != parents.size() || model.size() != parents.size() || !parents_first(parents))
    return false;
  for (size_t i = 0; i < parents.size(); ++i) {
    const int p = parents[i];
    model[i] =
        (p == kNoParent ? root_transform : model[static_cast<size_t>(p)]) * local[i].to_matrix();
  }
  return true;
}

bool model_to_local(std::span<const int> parents, std::span<const Mat4> model,
                    std::span<Mat4> local, const Mat4& root_transform) {
  if (local.size() != parents.size() || model.size() != parents.size() || !parents_first(parents))
    return false;
  Mat4 root_inv;
  if (!inverse(root_transform, root_inv)) return false;
  for (size_t i = 0; i < parents.size(); ++i) {
    const int p = parents[i];
    if (p == kNoParent) {
      local[i] = root_inv * model[i];
      continue;
    }
    Mat4 parent_inv;
    if (!inverse(model[static_cast<size_t>(p)], parent_inv)) return false;
    local[i] = parent_inv * model[i];
  }
  return true;
}

std::vector<Mat4> rest_model_matrices(const Skeleton& skeleton) {
  std::vector<Mat4> model(static_cast<size_t>(skeleton.joint_count()));
  const std::vector<Transform> rest = skeleton.rest_pose();
  local_to_model(skeleton.parents(), rest, model);
  return model;
}

std::vector<Mat4> inverse_bind_from_rest(const Skeleton& skeleton) {
  std::vector<Mat4> model = rest_model_matrices(skeleton);
  for (Mat4& m : model) {
    Mat4 inv;
    m = inverse(m, inv) ? inv : Mat4::identity();
  }
  return model;
}

bool skinning_matrices(std::span<const Mat4> model, std::span<const Mat4> inverse_bind,
                       std::span<Mat4> out) {
  if (model.size() != inverse_bind.size() || out.size() != model.size()) return false;
  for (size_t i = 0; i < model.size(); ++i) out[i] = model[i] * inverse_bind[i];
  return true;
}

}  // namespace kinema
