// fuzz/fuzz_kml.cpp — .kml learned motion-matching models (deserialize_learned_model), and a
// model that loads runs one frame of LearnedPlayer (step, project, decompress).
#include <vector>

#include "fuzz_common.h"
#include "kinema/match/learned.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read([&] {
    const kinema::match::LearnedModel model =
        kinema::match::deserialize_learned_model(kinema::fuzz::bytes_of(data, size), "fuzz.kml");
    kinema::match::LearnedPlayer player(model);
    player.step();
    player.project(std::vector<float>(model.dims(), 0.5f));
    player.jump_to_candidate();
    player.decompress();
  });
}
