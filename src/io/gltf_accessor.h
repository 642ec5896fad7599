// src/io/gltf_accessor.h — reading glTF accessors into doubles with every index, bound and
// number checked (private to the io module; used by gltf_read.cpp).
#pragma once

#include <tiny_gltf.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kinema::gltf_detail {

/// Reads the accessors of a parsed glTF model; every failure is a kinema::Error naming `file`,
/// the JSON pointer of what is wrong and why.
class AccessorReader {
 public:
  AccessorReader(const tinygltf::Model& model, std::string file)
      : m_(model), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& place, const std::string& reason) const;

  /// Bytes of a bufferView, checked against its buffer.
  std::pair<const unsigned char*, size_t> view_bytes(int view, const std::string& place) const;

  /// Reads accessor `index` as doubles (count × components), de-normalizing integer data when
  /// the accessor says `normalized` or when `force_normalize` (weights, colours). Applies sparse
  /// substitution. Checks the type (when `expected_type` ≥ 0), bounds and, for floats,
  /// finiteness. `count_out` receives the element count.
  std::vector<double> accessor(int index, int expected_type, bool force_normalize = false,
                               size_t* count_out = nullptr) const;

  /// The element count of accessor `index` (checked to exist).
  int accessor_count(int index) const;

 private:
  void apply_sparse(const tinygltf::Accessor& a, const std::string& place, int comps, int csize,
                    bool normalized, std::vector<double>& out) const;

  const tinygltf::Model& m_;
  std::string file_;
};

}  // namespace kinema::gltf_detail
