// fuzz/fuzz_kmm.cpp — .kmm motion-matching databases (deserialize_database).
#include "fuzz_common.h"
#include "kinema/match/database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read(
      [&] { kinema::match::deserialize_database(kinema::fuzz::bytes_of(data, size), "fuzz.kmm"); });
}
