// Internal: what the cloth's source files share (cloth.cpp, cloth_implicit.cpp).
#pragma once

#include <tbb/task_arena.h>

#include <cstdint>
#include <vector>

#include "kinema/physics/cloth.h"
#include "parallel_blocks.h"

namespace kinema {

/// The threads a cloth runs on, made once (an arena per substep cost its set-up every time).
struct Cloth::Parallel {
  tbb::task_arena arena;
  explicit Parallel(int threads) : arena(threads > 0 ? threads : tbb::task_arena::automatic) {}
};

namespace cloth_detail {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr std::size_t kBlock = 1024;  ///< vertices per parallel task (and per partial sum)

/// Runs body(begin, end) over [0, n) in blocks of kBlock, in parallel unless one thread is asked.
template <class Body>
void for_blocks(tbb::task_arena& arena, int threads, std::size_t n, const Body& body) {
  detail::for_blocks(&arena, threads, n, kBlock, body);
}

}  // namespace cloth_detail
}  // namespace kinema
