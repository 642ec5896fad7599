// kinema/match/search.h — TEMPORARY: the feature matrix only, until the search lands.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kinema::match {

struct FeatureMatrix {
  size_t dims = 0;
  std::vector<float> values;
  std::vector<uint64_t> tags;
  std::vector<uint8_t> searchable;
  size_t frames() const { return dims ? values.size() / dims : 0; }
};

}  // namespace kinema::match
