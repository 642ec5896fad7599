// fuzz/fuzz_png.cpp — PNG height maps (decode_height_map_png).
#include "fuzz_common.h"
#include "kinema/io/terrain.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read(
      [&] { kinema::decode_height_map_png(kinema::fuzz::bytes_of(data, size), "fuzz.png"); });
}
