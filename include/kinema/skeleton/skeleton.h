// kinema/skeleton/skeleton.h — joint hierarchy, rest pose and forward kinematics.
//
// Joints are stored parents-first (parent index < child index), so forward kinematics is one
// forward loop: model[i] = model[parent[i]] · local[i]  (column vectors; in row-vector form the
// same thing reads global = local × parent_global). A skeleton may be a forest (several
// roots, e.g. a BVH with two performers or a glTF scene); `validate(require_single_root)` checks.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/transform.h"

namespace kinema {

/// Parent index of a root joint.
inline constexpr int kNoParent = -1;

struct Joint {
  std::string name;
  int parent = kNoParent;            ///< index of the parent joint, or kNoParent for a root
  Transform rest;                    ///< rest (bind) pose, local to the parent, metres/radians
  std::optional<Mat4> inverse_bind;  ///< inverse of the joint's model-space bind matrix, if known
};

class Skeleton {
 public:
  Skeleton() = default;

  /// Builds from joints in any order: reorders them parents-first (stable, so an already sorted
  /// list keeps its order) and validates. Throws kinema::Error naming the joint on unknown
  /// parents, cycles, duplicate or empty names, non-finite rest transforms, or — when
  /// `require_single_root` — zero or several roots. `source` names the file for errors.
  static Skeleton build(std::vector<Joint> joints, bool require_single_root = false,
                        const std::string& source = {});

  /// Validates an existing skeleton; throws kinema::Error as build() does.
  void validate(bool require_single_root = false, const std::string& source = {}) const;

  int joint_count() const { return static_cast<int>(joints_.size()); }
  bool empty() const { return joints_.empty(); }
  const std::vector<Joint>& joints() const { return joints_; }
  const Joint& joint(int index) const { return joints_[static_cast<size_t>(index)]; }
  int parent(int index) const { return joints_[static_cast<size_t>(index)].parent; }
  std::span<const int> parents() const { return parents_; }

  /// Index of the joint with this exact name, or -1.
  int find(std::string_view name) const;
  /// Indices of the root joints, in order.
  std::vector<int> roots() const;
  /// Indices of the direct children of `index`.
  std::vector<int> children(int index) const;
  /// Number of joints between `index` and its root (a root has depth 0).
  int depth(int index) const;

  /// The rest pose as local transforms, one per joint.
  std::vector<Transform> rest_pose() const;

  /// Rename a joint (keeps the name index coherent). Throws on a duplicate name.
  void rename(int index, std::string name);
  /// Mutable access to a joint's rest transform and inverse bind (the hierarchy is fixed).
  Transform& rest(int index) { return joints_[static_cast<size_t>(index)].rest; }
  std::optional<Mat4>& inverse_bind(int index) {
    return joints_[static_cast<size_t>(index)].inverse_bind;
  }

  /// `old_to_new[i]` of the last build(): where input joint i ended up.
  const std::vector<int>& build_order() const { return old_to_new_; }

 private:
  std::vector<Joint> joints_;
  std::vector<int> parents_;
  std::vector<int> old_to_new_;
  std::vector<std::pair<std::string, int>> sorted_names_;  // for find(): binary search
  void index_names();
};

/// Forward kinematics: model[i] = model[parent[i]] · local[i] (roots: root_transform · local).
/// `parents` must be parents-first; spans must have equal sizes. Never allocates.
/// Returns false (writing nothing) when the sizes differ or a parent index is out of order.
bool local_to_model(std::span<const int> parents, std::span<const Mat4> local,
                    std::span<Mat4> model, const Mat4& root_transform = Mat4::identity());

/// FK over TRS transforms: builds each local matrix as T·R·S and composes as above.
bool local_to_model(std::span<const int> parents, std::span<const Transform> local,
                    std::span<Mat4> model, const Mat4& root_transform = Mat4::identity());

/// Model → local (L = G·P⁻¹ in row-vector form; here local = parent_model⁻¹ · model).
/// Returns false when a parent's model matrix is singular.
bool model_to_local(std::span<const int> parents, std::span<const Mat4> model,
                    std::span<Mat4> local, const Mat4& root_transform = Mat4::identity());

/// Model-space bind matrices of the rest pose, and their inverses (inverse bind matrices)
/// computed from the rest pose. Used when a file does not carry inverse bind matrices.
std::vector<Mat4> rest_model_matrices(const Skeleton& skeleton);
std::vector<Mat4> inverse_bind_from_rest(const Skeleton& skeleton);

/// Skinning matrices S_j = W_j · B_j⁻¹ (identity in the bind pose; glTF 2.0's joint matrices).
bool skinning_matrices(std::span<const Mat4> model, std::span<const Mat4> inverse_bind,
                       std::span<Mat4> out);

}  // namespace kinema
