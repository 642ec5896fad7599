// Internal: the fluid module's way of running work over [0, n) in blocks on a oneTBB arena (the
// same idea as the physics module's, which another module cannot include). Each index belongs to
// one block and each block to one call, so work that writes only its own indices gives the same
// bits whatever the thread count.
#pragma once

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

namespace kinema::sph_detail {

/// Runs body(begin, end) over [0, n) in blocks of `block` indices, on `arena` unless one thread
/// is asked (then here, block after block, in order; `arena` may then be null).
template <class Body>
void for_blocks(tbb::task_arena* arena, int threads, std::size_t n, std::size_t block,
                const Body& body) {
  const std::size_t blocks = (n + block - 1) / block;
  if (threads == 1 || blocks <= 1 || arena == nullptr) {
    for (std::size_t b = 0; b < blocks; ++b) body(b * block, std::min(n, (b + 1) * block));
    return;
  }
  arena->execute([&] {
    tbb::parallel_for(std::size_t(0), blocks,
                      [&](std::size_t b) { body(b * block, std::min(n, (b + 1) * block)); });
  });
}

}  // namespace kinema::sph_detail
