// The implicit cloth step's assembly (cloth_assembly.h): the baseline kernels, and the choice of
// the AVX2 ones.
#include "cloth_assembly.h"

#include "cloth_assembly_kernel.h"
#include "kinema/core/cpu_features.h"

namespace kinema::detail {

#if defined(KINEMA_CLOTH_AVX2)
void cloth_spring_pass_avx2(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                            bool in_system);
void cloth_vertex_pass_avx2(const ClothVertexPass& pass, std::size_t free_count);
void cloth_wind_pass_avx2(const ClothWindPass& pass, std::size_t count);

namespace {
bool has_avx2() {
  static const bool has = cpu_features().avx2;
  return has;
}
}  // namespace
#endif

void cloth_spring_pass(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                       bool in_system) {
#if defined(KINEMA_CLOTH_AVX2)
  if (has_avx2()) return cloth_spring_pass_avx2(pass, begin, end, in_system);
#endif
  cloth_spring_pass_baseline(pass, begin, end, in_system);
}

void cloth_vertex_pass(const ClothVertexPass& pass, std::size_t free_count) {
#if defined(KINEMA_CLOTH_AVX2)
  if (has_avx2()) return cloth_vertex_pass_avx2(pass, free_count);
#endif
  cloth_vertex_pass_baseline(pass, free_count);
}

void cloth_wind_pass(const ClothWindPass& pass, std::size_t count) {
#if defined(KINEMA_CLOTH_AVX2)
  if (has_avx2()) return cloth_wind_pass_avx2(pass, count);
#endif
  cloth_wind_pass_baseline(pass, count);
}

void cloth_spring_pass_baseline(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                                bool in_system) {
  cloth_lanes::spring_pass_kernel(pass, begin, end, in_system);
}

void cloth_vertex_pass_baseline(const ClothVertexPass& pass, std::size_t free_count) {
  cloth_lanes::vertex_pass_kernel(pass, free_count);
}

void cloth_wind_pass_baseline(const ClothWindPass& pass, std::size_t count) {
  cloth_lanes::wind_pass_kernel(pass, count);
}

}  // namespace kinema::detail
