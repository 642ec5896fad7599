// bench/match_peers.h — the peer nearest-neighbour searches kinema_match_bench measures side by
// side with kinema's (bench/peers/*_peer.cpp; each is compiled in only when its CMake option
// finds the peer's headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kinema/match/search.h"

namespace kinema::bench {

/// One exact nearest-neighbour search over the searchable frames of a feature matrix (no tags).
class PeerSearch {
 public:
  virtual ~PeerSearch() = default;
  /// The nearest frame to `query` (dims floats) and its cost as the peer computes it.
  virtual match::SearchResult search(const float* query) const = 0;
  virtual size_t memory_bytes() const = 0;
};

#ifdef KINEMA_MATCH_HOLDEN_PEER
/// Daniel Holden's AABB search (orangeduck/Motion-Matching, database.h: boxes of 16 and 64
/// consecutive frames, partial-distance early-out), one range holding every frame.
std::unique_ptr<PeerSearch> make_holden_search(const match::FeatureMatrix& m);
#endif
#ifdef KINEMA_MATCH_NANOFLANN_PEER
/// nanoflann's exact k-d tree (KDTreeSingleIndexAdaptor, L2_Simple_Adaptor<float>, leaf size
/// 10), k = 1.
std::unique_ptr<PeerSearch> make_nanoflann_search(const match::FeatureMatrix& m);
#endif

}  // namespace kinema::bench
