// kinema/blend/pose_ops.h — per-frame pose operations on local SoA poses.
//
// Poses are spans of SoaTransform (kinema/math/soa_transform.h), one element per four joints,
// local to each joint's parent. Blending happens in local space: translations and scales are
// lerped, rotations nlerped (a weighted sum with each input put in the hemisphere of the first
// one, normalized once at the end), so the forward kinematics that follows keeps every bone's
// length. All functions are jobs over spans: they validate their inputs, never allocate, and are
// safe to run on many threads at once with distinct outputs. Output may alias no input unless
// stated.
#pragma once

#include <span>

#include "kinema/math/soa_transform.h"

namespace kinema {

/// One input of a blend. `weight` ≥ 0 and finite. `joint_weights`, when not empty, holds one
/// weight in [0, 1] per joint (a bone mask) that multiplies `weight` for that joint.
struct BlendLayer {
  std::span<const SoaTransform> pose;
  float weight = 1.0f;
  std::span<const float> joint_weights = {};
};

/// N-way blend. For each joint the effective weights wᵢ = weight·joint_weight are normalized
/// (Σwᵢ = 1). Where the total is below `rest_threshold`, the rest pose fills the gap with weight
/// (rest_threshold − Σwᵢ), so a zero total gives exactly the rest pose and the result stays
/// continuous as weights fade out. Returns false (writing nothing) when a size differs (every
/// pose and `out` must have rest.size() elements, masks at least joint_count entries), a weight
/// is negative or not finite, or rest_threshold is not positive.
bool blend(std::span<const BlendLayer> layers, std::span<const SoaTransform> rest, int joint_count,
           std::span<SoaTransform> out, float rest_threshold = 1e-4f);

/// The unmasked blend's kernels (up to 8 layers, no bone masks): "avx512vl" or "avx2+fma" on
/// x86-64 CPUs that have them (chosen at run time), else "sse4.1" (or "portable"). The AVX2 and
/// AVX-512VL kernels give the same bits (both 256-bit, the same operations in the same order);
/// they round differently from the SSE one (fused multiply-adds; within 1e-6 of each other on
/// unit rotations). A process gets the same bits from every call with the same kernel.
const char* blend_simd_kernels();
/// Allows (true, the default) or forbids blend's AVX2 / AVX-512VL kernels — for tests and
/// side-by-side benchmarks. Returns whether one is now in use (false on CPUs without AVX2 and
/// FMA whatever is asked). Not to be called while another thread blends.
bool set_blend_avx2(bool allowed);
/// Allows (true, the default) or forbids the AVX-512VL kernel (the AVX2 one runs instead where
/// allowed). Returns whether it is now in use. Not to be called while another thread blends.
bool set_blend_avx512(bool allowed);

/// How an additive rotation is scaled by its weight.
enum class AdditiveRotation {
  Slerp,  ///< exact: slerp(identity, q_add, w) — e.g. a 12° flinch at w = 0.5 on 20°: 26°
  Nlerp,  ///< normalize((1−w)·identity + w·q_add): cheaper, angle slightly off for 0 < w < 1
};

/// Makes an additive pose: q_add = q_ref⁻¹·q_pose, t_add = t − t_ref, s_add = s / s_ref.
/// Sizes must match (false otherwise). A zero reference scale gives s_add = 1.
bool make_additive(std::span<const SoaTransform> pose, std::span<const SoaTransform> reference,
                   std::span<SoaTransform> out);

/// Applies an additive pose: q = q_base·slerp(identity, q_add, w), t = t_base + w·t_add,
/// s = s_base·lerp(1, s_add, w), with w = weight·joint_weights[j]. `out` may alias `base`.
/// Returns false on size mismatches or a negative / non-finite weight.
bool apply_additive(std::span<const SoaTransform> base, std::span<const SoaTransform> additive,
                    float weight, std::span<const float> joint_weights, int joint_count,
                    std::span<SoaTransform> out, AdditiveRotation mode = AdditiveRotation::Slerp);

/// One layer of a layer stack, applied in order on top of the base pose.
struct PoseLayer {
  enum class Mode { Override, Additive };
  Mode mode = Mode::Override;
  std::span<const SoaTransform> pose;
  float weight = 1.0f;                        ///< in [0, 1]
  std::span<const float> joint_weights = {};  ///< optional bone mask, one per joint
};

/// Applies layers in order: an Override layer moves each joint toward its pose by w (rotation
/// by nlerp, which equals slerp at w = 0.5: a 0.5 mask between 0° and 40° gives 20°); an Additive
/// layer adds its pose as apply_additive does. Order matters (rotations do not commute). `out` may
/// alias `base`. Returns false on size mismatches or bad weights (nothing written).
bool apply_layers(std::span<const SoaTransform> base, std::span<const PoseLayer> layers,
                  int joint_count, std::span<SoaTransform> out,
                  AdditiveRotation mode = AdditiveRotation::Slerp);

}  // namespace kinema
