// kinema/skeleton/runtime_skeleton.h — the skeleton as the per-frame runtime needs it.
//
// An immutable, compact copy of a Skeleton: parent indices (parents first), the rest pose in
// SoA form, and joint names for lookups at setup time. Built once offline; shared read-only by
// every character that uses it, from any number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/soa_transform.h"

namespace kinema {

class Skeleton;

class RuntimeSkeleton {
 public:
  RuntimeSkeleton() = default;
  /// Copies what the runtime needs from a validated skeleton (at most 32,767 joints).
  /// Throws kinema::Error when the skeleton is too large.
  static RuntimeSkeleton build(const Skeleton& skeleton);

  int joint_count() const { return static_cast<int>(parents_.size()); }
  int soa_count() const { return kinema::soa_count(joint_count()); }
  /// Parent of each joint, -1 for roots; parent < child.
  std::span<const int16_t> parents() const { return parents_; }
  /// Rest (bind) pose, local, soa_count() elements.
  std::span<const SoaTransform> rest_pose() const { return rest_; }
  const std::string& name(int joint) const { return names_[static_cast<size_t>(joint)]; }
  /// Index of the joint with this exact name, or -1 (linear search: setup time only).
  int find(std::string_view name) const;
  /// Heap bytes held by this skeleton.
  size_t memory_bytes() const;

 private:
  std::vector<int16_t> parents_;
  std::vector<SoaTransform> rest_;
  std::vector<std::string> names_;
};

/// Local → model space: model[j] = model[parent[j]] · matrix(local[j]); roots use `root`
/// (the character's world transform; identity by default). `local` must hold
/// skeleton.soa_count() elements and `model` skeleton.joint_count() matrices (column-major).
/// Never allocates; safe to call concurrently with distinct outputs. Returns false (writing
/// nothing) on a size mismatch. Vectorized with SSE when the build has it, and on x86-64 CPUs
/// with AVX2 + FMA or AVX-512F (chosen at run time, local_to_model_kernel() says which). The
/// kernels round differently (fused multiply-adds, summed in different orders), all within 2e-6
/// relative of the double-precision FK, and a process gets the same bits from every call with
/// the same kernel.
bool local_to_model(const RuntimeSkeleton& skeleton, std::span<const SoaTransform> local,
                    std::span<Mat4f> model, const Mat4f& root = Mat4f::identity());

/// Allows (true, the default) or forbids local_to_model's AVX2 + FMA and AVX-512 kernels — for
/// tests and side-by-side benchmarks. Returns whether one of them is now in use (false on CPUs
/// without AVX2 and FMA whatever is asked). Not to be called while another thread runs
/// local_to_model.
bool set_local_to_model_avx2(bool allowed);
/// Allows (true, the default) or forbids the AVX-512 kernel (the AVX2 one runs instead where
/// allowed). Returns whether it is now in use. Not to be called while another thread runs
/// local_to_model.
bool set_local_to_model_avx512(bool allowed);
/// The kernel local_to_model runs now: "avx512f", "avx2+fma", "sse" or "portable".
const char* local_to_model_kernel();

/// Per-joint weights for a bone mask: the subtree under `joint` gets `weight`, except its first
/// ramp.size() levels, which get ramp[depth below joint] (e.g. {0.25, 0.5, 0.75} along a spine
/// so the twist spreads over it); every other joint gets 0. Returns joint_count() weights.
std::vector<float> subtree_mask(const RuntimeSkeleton& skeleton, int joint,
                                std::span<const float> ramp = {}, float weight = 1.0f);

}  // namespace kinema
