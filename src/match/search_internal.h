// src/match/search_internal.h — build helpers BruteForceSearch and BoundedTreeSearch share.
// Internal header.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kinema/match/search.h"

namespace kinema::match::detail {

/// Throws kinema::Error on bad input (search.h lists the rules); returns the searchable frames
/// in increasing order.
std::vector<uint32_t> check_features(const FeatureMatrix& m);

/// Whether a query may be searched: dims values, all finite.
bool query_ok(std::span<const float> query, size_t dims);

/// Lays the frames `order` out in blocks of 8 lanes, dimension-major inside a block; padding
/// lanes get frame UINT32_MAX and +inf features. block_tags: OR and AND of each block's tags.
void fill_blocks(const FeatureMatrix& m, std::span<const uint32_t> order, size_t& blocks,
                 std::vector<float>& values, std::vector<uint32_t>& frame,
                 std::vector<uint64_t>& tags, std::vector<uint64_t>& block_tags);

/// How a filter applies to a database: use_tags is false when every frame passes.
struct FilterPlan {
  bool use_tags = false;
};

/// False when the filter lets no frame through (a database without tags is all tags = 0).
inline bool plan_filter(bool has_tags, const SearchFilter& filter, FilterPlan& plan) {
  if (filter.is_default()) return true;
  if (!has_tags) return filter.allows(0);
  plan.use_tags = true;
  return true;
}

/// Bit l set when lane l of a block holds a frame.
inline unsigned valid_lanes(const uint32_t* frame) {
  unsigned m = 0;
  for (unsigned l = 0; l < 8; ++l) m |= unsigned(frame[l] != UINT32_MAX) << l;
  return m;
}

}  // namespace kinema::match::detail
