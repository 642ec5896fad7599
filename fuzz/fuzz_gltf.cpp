// fuzz/fuzz_gltf.cpp — glTF, GLB and VRM (read_gltf, which takes only a path: each input is
// written to a temporary file first; GLB or JSON is chosen by the bytes' magic, as the reader
// does).
#include "fuzz_common.h"
#include "kinema/io/gltf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kinema::fuzz::TempFolder folder;
  const std::string path = folder.write("fuzz.vrm", kinema::fuzz::bytes_of(data, size));
  return kinema::fuzz::refuse_or_read([&] { kinema::read_gltf(path); });
}
