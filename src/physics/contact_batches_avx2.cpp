// The batched contact pass (src/physics/contact_batches.h) for CPUs with AVX2: the same kernel
// compiled with -mavx2 (CMakeLists.txt), four lanes in one register; called only when the CPU has
// it.
#include "contact_batches_kernel.h"

namespace kinema::detail {

void solve_contact_batches_avx2(std::span<const ContactBatch> batches,
                                std::span<WideContactPoint> points,
                                std::span<RigidBody* const> bodies) {
  solve_contact_batches_kernel(batches, points, bodies.data());
}

}  // namespace kinema::detail
