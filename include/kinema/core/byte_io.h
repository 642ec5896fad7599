// kinema/core/byte_io.h — little-endian binary writing and bounds-checked reading for kinema's own
// file formats (.kmm motion-matching databases, .kmc compressed animations). The reader checks
// every count against the bytes left before allocating, so a hostile file cannot ask for gigabytes,
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
    if (v.empty()) return;
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
    if (n == 0) return;  // an empty vector's data() may be null, which memcpy must not get
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

/// kinema's binary files start with a 32-byte header: an 8-byte magic, u32 format version, u32
/// zero, u64 payload bytes, u64 FNV-1a of the payload. `payload` with that header in front.
inline std::string with_header(const char (&magic)[8], uint32_t version,
                               const std::string& payload) {
  ByteWriter h;
  h.out.assign(magic, sizeof(magic));
  h.put(version);
  h.put(uint32_t(0));
  h.put(uint64_t(payload.size()));
  h.put(fnv1a64(payload));
  return h.out + payload;
}

/// The payload of a file written by with_header, after checking the magic (`what` names the
/// kind of file, e.g. "kinema motion-matching database"), the version (`newer` is added to a
/// mismatch, e.g. " (rebuild the database)"), the reserved word, the size and the checksum.
/// Throws kinema::Error naming `file` and the byte.
inline std::string_view checked_payload(std::string_view bytes, const char (&magic)[8],
                                        uint32_t version, const std::string& file,
                                        const std::string& what, const std::string& newer = {}) {
  constexpr size_t header_bytes = 32;
  ByteReader header(bytes, 0, file);
  const std::string magic_name(magic, std::strlen(magic));
  if (bytes.size() < header_bytes)
    header.fail("truncated: a " + what + " starts with a 32-byte header");
  if (std::memcmp(bytes.data(), magic, sizeof(magic)) != 0)
    header.fail("not a " + what + " (no " + magic_name + " magic)");
  header.get<uint64_t>("magic");
  const uint32_t found = header.get<uint32_t>("version");
  if (found != version)
    throw Error(file, "byte 8",
                "format version " + std::to_string(found) + "; this kinema reads version " +
                    std::to_string(version) + newer);
  if (header.get<uint32_t>("reserved") != 0)
    throw Error(file, "byte 12",
                "the reserved header bytes are not zero (a newer or damaged file)");
  const uint64_t size = header.get<uint64_t>("payload size");
  const uint64_t checksum = header.get<uint64_t>("checksum");
  const std::string_view payload = bytes.substr(header_bytes);
  if (payload.size() != size)
    throw Error(file, "byte 16",
                "the header says " + std::to_string(size) + " payload bytes, the file has " +
                    std::to_string(payload.size()) + (payload.size() < size ? " (truncated)" : ""));
  if (fnv1a64(payload) != checksum)
    throw Error(file, "byte 24", "checksum mismatch: the file is corrupted");
  return payload;
}

}  // namespace kinema::detail
