// fuzz/fuzz_graph.cpp — animation graph JSON (build_graph). Every clip file the graph names is
// served from memory: one small character whose clip is offered under each name the seeds use.
#include "fuzz_common.h"
#include "kinema/graph/graph_builder.h"
#include "kinema/io/bvh.h"
#include "seed_texts.h"

namespace {

kinema::Asset make_clips() {
  kinema::Asset a = kinema::parse_bvh(kinema::fuzz::kSmallBvh, "clips.bvh");
  const kinema::Clip clip = a.clips.at(0);
  a.clips.clear();
  for (const char* name : {"idle", "walk", "run", "aim", "jump", "flinch"}) {
    a.clips.push_back(clip);
    a.clips.back().name = name;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kinema::Asset clips = make_clips();
  static const kinema::GraphBuildOptions options = [] {
    kinema::GraphBuildOptions o;
    o.load_file = [](const std::string&) { return clips; };
    return o;
  }();
  return kinema::fuzz::refuse_or_read([&] {
    kinema::build_graph(kinema::fuzz::bytes_of(data, size), "/virtual/fuzz.graph.json", options);
  });
}
