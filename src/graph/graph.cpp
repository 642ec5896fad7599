// The runtime graph (kinema/graph/graph.h): parameter lookup, and sampling a graph clip in
// whichever form holds it.
#include "kinema/graph/graph.h"

namespace kinema {

int AnimGraph::find_parameter(std::string_view name) const {
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].name == name) return static_cast<int>(i);
  return -1;
}

void GraphClipCache::reset(const GraphClip& clip) {
  if (clip.compressed)
    compressed.reset(*clip.compressed);
  else
    runtime.reset(clip.runtime);
}

bool sample(const GraphClip& clip, float time, GraphClipCache& cache, std::span<SoaTransform> out) {
  return clip.compressed ? sample(*clip.compressed, time, cache.compressed, out)
                         : sample(clip.runtime, time, cache.runtime, out);
}

bool sample(const GraphClip& clip, float time, std::span<SoaTransform> out) {
  return clip.compressed ? sample(*clip.compressed, time, out) : sample(clip.runtime, time, out);
}

}  // namespace kinema
