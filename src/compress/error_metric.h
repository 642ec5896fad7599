// Internal: the object-space error metric shared by compress.cpp and error_metric.cpp.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "kinema/compress/compress.h"
#include "kinema/math/transform.h"

namespace kinema::compress_detail {

/// The three virtual vertices of a joint with model transform `model`: d along its local axes.
void vertices(const Transform& model, double d, Vec3 out[3]);
/// Largest distance between corresponding vertices.
double vertex_error(const Vec3 a[3], const Vec3 b[3]);
/// FK over TRS transforms (parents-first).
void model_pose(std::span<const int> parents, std::span<const Transform> local,
                std::span<Transform> model);
/// lerp translation and scale, nlerp rotation (hemisphere checked).
Transform blend(const Transform& a, const Transform& b, double t);
/// The 99th percentile (reorders v).
double percentile99(std::vector<float>& v);

/// Decodes `c` with the real decoder at every frame and midpoint, compares with the reference
/// frames `ref` (frames × joints; midpoints blended), and calls `over` for every joint sample
/// whose error exceeds `bound`.
ErrorStats verify_clip(std::span<const int> parents, std::span<const Transform> ref,
                       const CompressedClip& c, double d,
                       const std::function<void(int frame, bool midpoint, int joint)>& over,
                       double bound = 0);

}  // namespace kinema::compress_detail
