// kinema/compress/quantize.h — building blocks of animation compression, for tools and tests:
// smallest-three quaternion codes and key reduction.
//
// The compressed clip format (kinema/compress/compressed_clip.h) uses smallest-three with a
// per-segment range instead of the fixed [−1/√2, 1/√2] range below, which is what makes it
// small; these functions are the textbook form, with the worked numbers of docs/worked_examples.md
// ("Compression") as tests.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/quat.h"

namespace kinema {

/// A quaternion in smallest-three form: the component of largest magnitude is dropped (its index
/// in x, y, z, w order), the sign of the whole quaternion is chosen so that it is positive, and
/// the other three, which lie in [−1/√2, 1/√2], are stored as `bits`-bit codes in that order.
struct SmallestThree {
  int dropped = 3;
  uint32_t codes[3] = {0, 0, 0};
  int bits = 10;
};

/// Encodes a unit quaternion (normalized first) with 1 ≤ bits ≤ 31: code =
/// round((v + 1/√2) / √2 · (2^bits − 1)).
SmallestThree encode_smallest_three(const Quat& q, int bits);
/// The stored value of one code: code / (2^bits − 1) · √2 − 1/√2.
double decode_smallest_three_component(uint32_t code, int bits);
/// Decodes all four components; the dropped one is sqrt(1 − a² − b² − c²).
Quat decode_smallest_three(const SmallestThree& s);

/// Key reduction on uniformly spaced samples (frame i at time i): greedily keeps the fewest keys
/// such that linear interpolation between consecutive kept keys stays within `tolerance` of every
/// sample. The first and last samples are always kept. Returns the kept indices, increasing.
std::vector<int> reduce_keys(std::span<const double> values, double tolerance);

}  // namespace kinema
