// fuzz/fuzz_kmc.cpp — .kmc compressed animations: the bytes, then every clip decompressed, as
// read_kmc does with a file's bytes.
#include "fuzz_common.h"
#include "kinema/compress/compressed_animation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read([&] {
    const kinema::CompressedAnimation a =
        kinema::deserialize_animation(kinema::fuzz::bytes_of(data, size), "fuzz.kmc");
    for (const kinema::CompressedClip& c : a.clips) kinema::decompress_clip(c, a.skeleton);
  });
}
