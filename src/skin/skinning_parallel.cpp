// The multi-threaded skinning path: oneTBB parallel_for over blocks of stored vertices, each
// block on the SIMD kernels. Every vertex is computed alone by the same code, so the result has
// the same bits whatever the number of threads or the block boundaries.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "skinning_kernels.h"

namespace kinema::skin_detail {

void lbs_parallel(const KernelMesh& mesh, const Affine3x4f* palette, const KernelOut& out,
                  size_t grain) {
#if KINEMA_SKIN_AVX2
  if (lbs_by_columns(mesh, out)) {
    // One column copy for all blocks, read by every thread.
    alignas(32) float columns[column_palette_joints * 16];
    column_palette_avx2(palette, mesh.palette_size, columns);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.vertex_count, grain ? grain : 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        lbs_columns_avx2(mesh, columns, out, r.begin(), r.end());
                      });
    return;
  }
#endif
  tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.vertex_count, grain ? grain : 1),
                    [&](const tbb::blocked_range<size_t>& r) {
                      lbs_range(mesh, palette, out, r.begin(), r.end());
                    });
}

void dqs_parallel(const KernelMesh& mesh, const DqsKernelPalette& palette, const KernelOut& out,
                  size_t grain) {
#if KINEMA_SKIN_AVX2
  if (dqs_by_call_copies(mesh, palette, out)) {
    // One set of copies for all blocks, read by every thread.
    with_dqs_call_copies(
        mesh, palette, out, [&](const float* signed_quats, const DqsKernelPalette& p) {
          tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.vertex_count, grain ? grain : 1),
                            [&](const tbb::blocked_range<size_t>& r) {
                              if (signed_quats)
                                dqs_signed_avx2(mesh, signed_quats, out, r.begin(), r.end(),
                                                p.rigid_columns);
                              else
                                dqs_range_direct(mesh, p, out, r.begin(), r.end());
                            });
        });
    return;
  }
#endif
  tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.vertex_count, grain ? grain : 1),
                    [&](const tbb::blocked_range<size_t>& r) {
                      dqs_range(mesh, palette, out, r.begin(), r.end());
                    });
}

}  // namespace kinema::skin_detail
