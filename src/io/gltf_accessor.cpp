// Reading glTF accessors (see gltf_accessor.h): component types, normalization, strides, sparse
// substitution, every offset checked against its bufferView and buffer.
#include "gltf_accessor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "gltf_internal.h"
#include "kinema/core/error.h"

namespace kinema::gltf_detail {
namespace {

int component_count(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR:
      return 1;
    case TINYGLTF_TYPE_VEC2:
      return 2;
    case TINYGLTF_TYPE_VEC3:
      return 3;
    case TINYGLTF_TYPE_VEC4:
      return 4;
    case TINYGLTF_TYPE_MAT2:
      return 4;
    case TINYGLTF_TYPE_MAT3:
      return 9;
    case TINYGLTF_TYPE_MAT4:
      return 16;
    default:
      return 0;
  }
}

int component_size(int component_type) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
      return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT:
      return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT:
      return 4;
    default:
      return 0;
  }
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double read_component(const unsigned char* p, int component_type, bool normalized) {
  switch (component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const double v = load<int8_t>(p);
      return normalized ? std::max(v / 127.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: {
      const double v = load<uint8_t>(p);
      return normalized ? v / 255.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      const double v = load<int16_t>(p);
      return normalized ? std::max(v / 32767.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      const double v = load<uint16_t>(p);
      return normalized ? v / 65535.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
      return load<uint32_t>(p);
    default:
      return load<float>(p);
  }
}

}  // namespace

void AccessorReader::fail(const std::string& place, const std::string& reason) const {
  throw Error(file_, place, reason);
}

std::pair<const unsigned char*, size_t> AccessorReader::view_bytes(int view,
                                                                   const std::string& place) const {
  if (view < 0 || view >= static_cast<int>(m_.bufferViews.size()))
    fail(place, "bufferView " + std::to_string(view) + " does not exist");
  const auto& bv = m_.bufferViews[static_cast<size_t>(view)];
  const std::string bvp = pointer("bufferViews", view);
  if (bv.buffer < 0 || bv.buffer >= static_cast<int>(m_.buffers.size()))
    fail(bvp, "buffer " + std::to_string(bv.buffer) + " does not exist");
  const auto& buf = m_.buffers[static_cast<size_t>(bv.buffer)];
  if (buf.data.empty())
    fail(pointer("buffers", bv.buffer),
         "buffer has no data (missing or unreadable file" +
             (buf.uri.empty() ? std::string() : " '" + buf.uri + "'") + ")");
  if (bv.byteOffset > buf.data.size() || bv.byteLength > buf.data.size() - bv.byteOffset)
    fail(bvp, "byteOffset " + std::to_string(bv.byteOffset) + " + byteLength " +
                  std::to_string(bv.byteLength) + " exceeds buffer size " +
                  std::to_string(buf.data.size()));
  return {buf.data.data() + bv.byteOffset, bv.byteLength};
}

std::vector<double> AccessorReader::accessor(int index, int expected_type, bool force_normalize,
                                             size_t* count_out) const {
  const std::string place = pointer("accessors", index);
  if (index < 0 || index >= static_cast<int>(m_.accessors.size()))
    fail(place, "accessor does not exist");
  const auto& a = m_.accessors[static_cast<size_t>(index)];
  const int comps = component_count(a.type);
  const int csize = component_size(a.componentType);
  if (comps == 0) fail(place, "unknown accessor type " + std::to_string(a.type));
  if (csize == 0) fail(place, "unknown componentType " + std::to_string(a.componentType));
  if (expected_type >= 0 && a.type != expected_type)
    fail(place, "accessor type " + std::to_string(a.type) + " where " +
                    std::to_string(expected_type) + " is required");
  const size_t elem = static_cast<size_t>(comps) * static_cast<size_t>(csize);
  // No real file needs more than 2^28 elements; the byte check below bounds the rest.
  if (a.count > (size_t{1} << 28)) fail(place, "absurd count " + std::to_string(a.count));
  const bool normalized = a.normalized || force_normalize;
  std::vector<double> out;
  if (a.bufferView >= 0) {
    auto [bytes, length] = view_bytes(a.bufferView, place);
    const auto& bv = m_.bufferViews[static_cast<size_t>(a.bufferView)];
    const size_t stride = bv.byteStride != 0 ? bv.byteStride : elem;
    if (stride < elem) fail(place, "byteStride smaller than the element size");
    if (a.count > 0) {
      const size_t need = a.byteOffset + stride * (a.count - 1) + elem;
      if (a.byteOffset > length || need > length || need < a.byteOffset)
        fail(place, "count " + std::to_string(a.count) + " at byteOffset " +
                        std::to_string(a.byteOffset) + " needs " + std::to_string(need) +
                        " bytes but bufferView " + std::to_string(a.bufferView) + " has " +
                        std::to_string(length));
    }
    out.resize(a.count * static_cast<size_t>(comps));
    for (size_t i = 0; i < a.count; ++i) {
      const unsigned char* p = bytes + a.byteOffset + stride * i;
      for (int c = 0; c < comps; ++c)
        out[i * static_cast<size_t>(comps) + static_cast<size_t>(c)] =
            read_component(p + static_cast<size_t>(c * csize), a.componentType, normalized);
    }
  } else {
    if (!a.sparse.isSparse) fail(place, "accessor has neither bufferView nor sparse data");
    out.assign(a.count * static_cast<size_t>(comps), 0.0);
  }
  if (a.sparse.isSparse) apply_sparse(a, place, comps, csize, normalized, out);
  if (a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT)
    for (size_t i = 0; i < out.size(); ++i)
      if (!std::isfinite(out[i]))
        fail(place, "non-finite value (NaN or Inf) at element " +
                        std::to_string(i / static_cast<size_t>(comps)));
  if (count_out) *count_out = a.count;
  return out;
}

void AccessorReader::apply_sparse(const tinygltf::Accessor& a, const std::string& place, int comps,
                                  int csize, bool normalized, std::vector<double>& out) const {
  const std::string sp = place + "/sparse";
  const size_t n = static_cast<size_t>(std::max(a.sparse.count, 0));
  if (n > a.count) fail(sp, "sparse count exceeds the accessor count");
  const int isize = component_size(a.sparse.indices.componentType);
  if (isize == 0 || a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_BYTE ||
      a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_SHORT ||
      a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT)
    fail(sp + "/indices", "invalid componentType");
  auto [ib, il] = view_bytes(a.sparse.indices.bufferView, sp + "/indices");
  auto [vb, vl] = view_bytes(a.sparse.values.bufferView, sp + "/values");
  const size_t ioff = static_cast<size_t>(std::max(a.sparse.indices.byteOffset, 0));
  const size_t voff = static_cast<size_t>(std::max(a.sparse.values.byteOffset, 0));
  const size_t elem = static_cast<size_t>(comps * csize);
  if (ioff > il || n * static_cast<size_t>(isize) > il - ioff)
    fail(sp + "/indices", "indices exceed their bufferView");
  if (voff > vl || n * elem > vl - voff) fail(sp + "/values", "values exceed their bufferView");
  for (size_t k = 0; k < n; ++k) {
    const size_t target = static_cast<size_t>(read_component(
        ib + ioff + k * static_cast<size_t>(isize), a.sparse.indices.componentType, false));
    if (target >= a.count) fail(sp + "/indices", "index " + std::to_string(target) + " >= count");
    for (int c = 0; c < comps; ++c)
      out[target * static_cast<size_t>(comps) + static_cast<size_t>(c)] = read_component(
          vb + voff + k * elem + static_cast<size_t>(c * csize), a.componentType, normalized);
  }
}

int AccessorReader::accessor_count(int index) const {
  if (index < 0 || index >= static_cast<int>(m_.accessors.size()))
    fail(pointer("accessors", index), "accessor does not exist");
  return static_cast<int>(m_.accessors[static_cast<size_t>(index)].count);
}

}  // namespace kinema::gltf_detail
