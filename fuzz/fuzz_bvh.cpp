// fuzz/fuzz_bvh.cpp — BVH text (parse_bvh), with each way of reading position channels.
#include "fuzz_common.h"
#include "kinema/io/bvh.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The last byte picks the translation mode, so one corpus covers all three.
  kinema::BvhReadOptions options;
  if (size > 0) options.translation = static_cast<kinema::BvhTranslation>(data[size - 1] % 3);
  return kinema::fuzz::refuse_or_read(
      [&] { kinema::parse_bvh(kinema::fuzz::bytes_of(data, size), "fuzz.bvh", options); });
}
