// fuzz/fuzz_stick_path.cpp — scripted stick paths (PATH.json, parse_stick_path).
#include "fuzz_common.h"
#include "kinema/match/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read([&] {
    const kinema::match::StickPath p =
        kinema::match::parse_stick_path(kinema::fuzz::bytes_of(data, size), "path.json");
    p.at(0.5 * p.duration);  // what the controller asks of it
  });
}
