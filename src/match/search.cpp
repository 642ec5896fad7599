// src/match/search.cpp — input checks and the brute-force search (kinema/match/search.h).
#include "kinema/match/search.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <new>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kinema/core/cpu_features.h"
#include "kinema/core/error.h"
#include "search_internal.h"
#include "search_kernels.h"
#include "search_walk.h"

namespace kinema::match {

namespace search_detail {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
size_t huge_rounded(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }
}  // namespace

void* allocate_large(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kLargeArrayBytes && bytes <= SIZE_MAX / 2) {
    // Map one huge page more than needed, keep the 2 MiB-aligned part, unmap the rest.
    const size_t len = huge_rounded(bytes);
    void* raw =
        mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (begin + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
    if (aligned > begin) munmap(raw, aligned - begin);
    if (const size_t tail = begin + len + kHugePage - (aligned + len); tail > 0)
      munmap(reinterpret_cast<void*>(aligned + len), tail);
    void* p = reinterpret_cast<void*>(aligned);
    madvise(p, len, MADV_HUGEPAGE);  // advice only: without THP, plain pages
    return p;
  }
#endif
  return ::operator new(bytes);
}

size_t large_array_footprint(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kLargeArrayBytes && bytes <= SIZE_MAX / 2) return huge_rounded(bytes);
#endif
  return bytes;
}

void deallocate_large(void* p, size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kLargeArrayBytes && bytes <= SIZE_MAX / 2) {
    munmap(p, huge_rounded(bytes));
    return;
  }
#endif
  ::operator delete(p);
}

}  // namespace search_detail

namespace detail {

std::vector<uint32_t> check_features(const FeatureMatrix& m) {
  auto fail = [](std::string place, std::string reason) {
    throw Error("", std::move(place), "feature matrix: " + std::move(reason));
  };
  if (m.dims == 0) fail("", "dims is 0");
  if (m.values.size() % m.dims != 0)
    fail("", std::to_string(m.values.size()) +
                 " values is not a multiple of dims = " + std::to_string(m.dims));
  const size_t frames = m.frames();
  if (frames == 0) fail("", "no frames");
  if (frames >= UINT32_MAX) fail("", std::to_string(frames) + " frames, 2^32 - 1 or more");
  if (!m.tags.empty() && m.tags.size() != frames)
    fail("tags", std::to_string(m.tags.size()) + " tags for " + std::to_string(frames) +
                     " frames (give one per frame, or none)");
  if (!m.searchable.empty() && m.searchable.size() != frames)
    fail("searchable", std::to_string(m.searchable.size()) + " flags for " +
                           std::to_string(frames) + " frames (give one per frame, or none)");
  for (size_t f = 0; f < frames; ++f) {
    for (size_t d = 0; d < m.dims; ++d) {
      const float v = m.values[f * m.dims + d];
      if (!std::isfinite(v))
        fail("frame " + std::to_string(f) + ", dimension " + std::to_string(d),
             std::string("feature is ") + (std::isnan(v) ? "NaN" : "infinite"));
    }
  }
  std::vector<uint32_t> kept;
  kept.reserve(frames);
  for (size_t f = 0; f < frames; ++f)
    if (m.searchable.empty() || m.searchable[f] != 0) kept.push_back(uint32_t(f));
  return kept;
}

namespace {
std::atomic<bool> g_force_baseline{false};
}  // namespace

SearchIsa search_isa() {
#if defined(KINEMA_MATCH_AVX2)
  static const bool has_avx2 = cpu_features().avx2 && cpu_features().f16c;
  if (has_avx2 && !g_force_baseline.load(std::memory_order_relaxed)) return SearchIsa::kAvx2;
#endif
  return SearchIsa::kBase;
}

void force_baseline_search(bool on) { g_force_baseline.store(on, std::memory_order_relaxed); }

bool query_ok(std::span<const float> query, size_t dims) {
  if (query.size() != dims || dims == 0) return false;
  for (const float v : query)
    if (!std::isfinite(v)) return false;
  return true;
}

void fill_blocks(const FeatureMatrix& m, std::span<const uint32_t> order, size_t& blocks,
                 std::vector<float, search_detail::LargeArrayAllocator<float>>& values,
                 std::vector<uint32_t>& frame, std::vector<uint64_t>& tags,
                 std::vector<uint64_t>& block_tags) {
  const size_t dims = m.dims;
  blocks = (order.size() + kLanes - 1) / kLanes;
  // Padding lanes hold +inf features and no frame; no lane mask lets them through.
  values.assign(blocks * dims * kLanes, INFINITY);
  frame.assign(blocks * kLanes, UINT32_MAX);
  tags.assign(blocks * kLanes, 0);
  block_tags.assign(blocks * 2, 0);
  for (size_t b = 0; b < blocks; ++b) {
    uint64_t tag_or = 0, tag_and = ~uint64_t{0};
    for (size_t l = 0; l < kLanes && b * kLanes + l < order.size(); ++l) {
      const uint32_t f = order[b * kLanes + l];
      frame[b * kLanes + l] = f;
      for (size_t d = 0; d < dims; ++d)
        values[(b * dims + d) * kLanes + l] = m.values[size_t(f) * dims + d];
      const uint64_t t = m.tags.empty() ? 0 : m.tags[f];
      tags[b * kLanes + l] = t;
      tag_or |= t;
      tag_and &= t;
    }
    block_tags[b * 2] = tag_or;
    block_tags[b * 2 + 1] = tag_and;
  }
}

}  // namespace detail

using namespace detail;

BruteForceSearch::BruteForceSearch(const FeatureMatrix& features) {
  const std::vector<uint32_t> kept = check_features(features);
  dims_ = features.dims;
  frames_ = features.frames();
  has_tags_ = !features.tags.empty();
  fill_blocks(features, kept, blocks_, values_, frame_, tags_, block_tags_);
}

SearchResult BruteForceSearch::search(std::span<const float> query, const SearchFilter& filter,
                                      SearchStats* stats) const noexcept {
#if defined(KINEMA_MATCH_AVX2)
  if (search_isa() == SearchIsa::kAvx2) return search_with<1>(query, filter, stats);
#endif
  return search_with<0>(query, filter, stats);
}

size_t BruteForceSearch::memory_bytes() const {
  return search_detail::large_array_footprint(values_.capacity() * sizeof(float)) +
         frame_.capacity() * sizeof(uint32_t) + tags_.capacity() * sizeof(uint64_t) +
         block_tags_.capacity() * sizeof(uint64_t);
}

}  // namespace kinema::match
