// tests/io/gltf_bytes.h — building glTF documents in tests: base64 for data URIs and raw float
// buffers.
#pragma once

#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>

namespace kinema::test {

/// Standard base64 with padding (a glTF data URI's payload).
inline std::string b64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    unsigned v = unsigned(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) v |= unsigned(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < in.size()) v |= unsigned(static_cast<unsigned char>(in[i + 2]));
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < in.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? k[v & 63] : '=';
  }
  return out;
}

/// The bytes of little-endian floats, as a glTF buffer holds them.
inline std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

}  // namespace kinema::test
