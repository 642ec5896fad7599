// src/match/search_avx2.cpp — the search loops of search_walk.h compiled for AVX2 + F16C (one
// 8-float register per dimension of a block instead of two SSE ones; node boxes read as half
// floats). No FMA (-ffp-contract=off, CMakeLists.txt): the same bits as the baseline. search()
// calls them only on CPUs with AVX2 and F16C (search_isa()).
//
// The target is set by `#pragma GCC target` after the standard and public headers, so only the
// search's own code (search_kernels.h, search_walk.h: their own inline namespace and template
// argument) is compiled for AVX2: no inline function of a shared header gets an AVX2 copy that
// the linker could pick for the baseline.
#include "search_internal.h"

#if defined(KINEMA_MATCH_AVX2)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kinema/match/search.h"

#pragma GCC target("avx2,f16c")
#pragma GCC diagnostic ignored "-Wpsabi"
#define KINEMA_MATCH_TARGET_AVX2 1
#include "search_walk.h"

namespace kinema::match {

template SearchResult BruteForceSearch::search_with<1>(std::span<const float>, const SearchFilter&,
                                                       SearchStats*) const noexcept;
template SearchResult BoundedTreeSearch::search_with<1>(std::span<const float>, const SearchFilter&,
                                                        SearchStats*) const noexcept;

}  // namespace kinema::match
#endif
