// fuzz/fuzz_tags.cpp — motion-matching tag ranges (TAGS.json, parse_tag_ranges) for two clips.
#include <array>

#include "fuzz_common.h"
#include "kinema/match/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::array<std::string, 2> clips = {"walk", "run"};
  return kinema::fuzz::refuse_or_read([&] {
    kinema::match::parse_tag_ranges(kinema::fuzz::bytes_of(data, size), "tags.json", clips);
  });
}
