// Internal: little-endian binary writing and bounds-checked reading for kinema's own file
// formats (.kmm motion-matching databases, .kmc compressed animations). The reader checks every
// count against the bytes left before allocating, so a hostile file cannot ask for gigabytes,
// and every failure names the file, the byte offset and what was being read.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/core/error.h"

namespace kinema::detail {

/// 64-bit FNV-1a of `bytes`.
inline uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  return h;
}

class ByteWriter {
 public:
  template <class T>
  void put(T value) {
    char b[sizeof(T)];
    std::memcpy(b, &value, sizeof(T));
    out.append(b, sizeof(T));
  }
  /// u32 length, then the bytes.
  void put_string(std::string_view s) {
    put(uint32_t(s.size()));
    out += s;
  }
  template <class T>
  void put_array(const std::vector<T>& v) {
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string out;
};

class ByteReader {
 public:
  /// `base`: the offset of bytes[0] in the file (for messages).
  ByteReader(std::string_view bytes, size_t base, const std::string& file)
      : bytes_(bytes), base_(base), file_(file) {}

  [[noreturn]] void fail(const std::string& reason) const {
    throw Error(file_, "byte " + std::to_string(base_ + at_), reason);
  }
  template <class T>
  T get(const char* what) {
    if (bytes_.size() - at_ < sizeof(T)) fail(std::string("truncated: ") + what + " is missing");
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  float get_finite(const char* what) {
    const float v = get<float>(what);
    if (!std::isfinite(v)) {
      at_ -= sizeof(float);
      fail(std::string(what) + " is not a finite number");
    }
    return v;
  }
  /// A u64 count of items of `item_bytes` each that must fit in what is left (and ≤ limit).
  size_t get_count(const char* what, size_t item_bytes, size_t limit) {
    const uint64_t n = get<uint64_t>(what);
    if (n > limit || n * item_bytes > bytes_.size() - at_) {
      at_ -= sizeof(uint64_t);
      fail(std::string(what) + " (" + std::to_string(n) + ") does not fit the file");
    }
    return size_t(n);
  }
  /// A u32-length string of at most 4096 bytes.
  std::string get_string(const char* what) {
    const uint32_t n = get<uint32_t>(what);
    if (n > 4096 || n > bytes_.size() - at_) {
      at_ -= sizeof(uint32_t);
      fail(std::string(what) + ": a string of " + std::to_string(n) + " bytes does not fit");
    }
    std::string s(bytes_.substr(at_, n));
    at_ += n;
    return s;
  }
  /// `n` raw bytes (the caller has checked they fit, e.g. with get_count).
  std::string_view get_bytes(size_t n) {
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  template <class T>
  void get_array(std::vector<T>& v, size_t n) {
    v.resize(n);
    std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
  }
  size_t offset() const { return at_; }
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  size_t base_;
  const std::string& file_;
  size_t at_ = 0;
};

}  // namespace kinema::detail
