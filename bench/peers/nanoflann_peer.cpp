// bench/peers/nanoflann_peer.cpp — nanoflann's exact k-d tree (Debian libnanoflann-dev, BSD),
// compiled in when CMake finds nanoflann.hpp.
#include <nanoflann.hpp>

#include <memory>
#include <vector>

#include "match_peers.h"

namespace kinema::bench {
namespace {

struct Rows {  // nanoflann's dataset adaptor over the searchable rows of the feature matrix
  const match::FeatureMatrix& m;
  std::vector<uint32_t> frame;  // point i = database frame frame[i]
  size_t kdtree_get_point_count() const { return frame.size(); }
  float kdtree_get_pt(uint32_t i, size_t d) const {
    return m.values[size_t(frame[i]) * m.dims + d];
  }
  template <class Box>
  bool kdtree_get_bbox(Box&) const {
    return false;
  }
};

std::vector<uint32_t> searchable_frames(const match::FeatureMatrix& m) {
  std::vector<uint32_t> out;
  for (size_t f = 0; f < m.frames(); ++f)
    if (m.searchable.empty() || m.searchable[f] != 0) out.push_back(uint32_t(f));
  return out;
}

using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Rows>, Rows,
                                                 -1, uint32_t>;

class NanoflannSearch final : public PeerSearch {
 public:
  explicit NanoflannSearch(const match::FeatureMatrix& m)
      : rows_{m, searchable_frames(m)},
        tree_(m.dims, rows_, nanoflann::KDTreeSingleIndexAdaptorParams(10)) {}

  match::SearchResult search(const float* query) const override {
    uint32_t index = UINT32_MAX;
    float cost = INFINITY;
    if (tree_.knnSearch(query, 1, &index, &cost) == 0) return {};
    return {rows_.frame[index], cost};
  }

  size_t memory_bytes() const override {
    return tree_.usedMemory(tree_) + rows_.m.values.size() * sizeof(float) +
           rows_.frame.size() * sizeof(uint32_t);
  }

 private:
  Rows rows_;
  mutable Tree tree_;  // usedMemory() is not const
};

}  // namespace

std::unique_ptr<PeerSearch> make_nanoflann_search(const match::FeatureMatrix& m) {
  return std::make_unique<NanoflannSearch>(m);
}

}  // namespace kinema::bench
