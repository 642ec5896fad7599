// fuzz/fuzz_scene.cpp — simulation scenes (scene JSON, parse_sim_scene). The scene is named as
// if it lay in a private temporary folder, so that relative mesh and character paths resolve
// there and find nothing.
#include "fuzz_common.h"
#include "kinema/pipeline/sim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kinema::fuzz::TempFolder folder;
  static const std::string file = folder.write("scene.json", "");
  return kinema::fuzz::refuse_or_read([&] {
    kinema::pipeline::parse_sim_scene(std::string(kinema::fuzz::bytes_of(data, size)), file);
  });
}
