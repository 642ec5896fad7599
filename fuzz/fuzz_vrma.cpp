// fuzz/fuzz_vrma.cpp — VRM Animation (read_vrma, which takes only a path: each input is written
// to a temporary file first).
#include "fuzz_common.h"
#include "kinema/io/vrma.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kinema::fuzz::TempFolder folder;
  const std::string path = folder.write("fuzz.vrma", kinema::fuzz::bytes_of(data, size));
  return kinema::fuzz::refuse_or_read([&] { kinema::read_vrma(path); });
}
