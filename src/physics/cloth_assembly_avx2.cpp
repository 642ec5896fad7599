// The implicit cloth step's assembly (cloth_assembly.h) for CPUs with AVX2: the same kernels
// compiled with -mavx2 (CMakeLists.txt), four lanes in one register; called only when the CPU
// has it.
#include "cloth_assembly_kernel.h"

namespace kinema::detail {

void cloth_spring_pass_avx2(const ClothSpringPass& pass, std::size_t begin, std::size_t end,
                            bool in_system) {
  cloth_lanes::spring_pass_kernel(pass, begin, end, in_system);
}

void cloth_vertex_pass_avx2(const ClothVertexPass& pass, std::size_t free_count) {
  cloth_lanes::vertex_pass_kernel(pass, free_count);
}

void cloth_wind_pass_avx2(const ClothWindPass& pass, std::size_t count) {
  cloth_lanes::wind_pass_kernel(pass, count);
}

}  // namespace kinema::detail
