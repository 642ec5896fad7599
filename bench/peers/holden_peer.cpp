// bench/peers/holden_peer.cpp — Daniel Holden's motion-matching search (orangeduck/Motion-Matching,
// MIT), compiled from its database.h when KINEMA_HOLDEN_ROOT names a checkout (off by default).
#include <cfloat>
#include <memory>
#include <vector>

// From KINEMA_HOLDEN_ROOT (a SYSTEM include directory); database.h uses character.h's bone enum,
// so it comes first, as in Holden's controller.cpp.
#include "character.h"
#include "database.h"
#include "match_peers.h"

namespace kinema::bench {
namespace {

class HoldenSearch final : public PeerSearch {
 public:
  explicit HoldenSearch(const match::FeatureMatrix& m) : rows_(int(m.frames())) {
    const int cols = int(m.dims);
    // database_build_bounds reads the frame count from bone_positions; one dummy bone.
    db_.bone_positions.resize(rows_, 1);
    db_.features.resize(rows_, cols);
    for (int f = 0; f < rows_; ++f)
      for (int d = 0; d < cols; ++d) db_.features(f, d) = m.values[size_t(f) * m.dims + size_t(d)];
    db_.features_offset.resize(cols);
    db_.features_scale.resize(cols);
    // One range per run of searchable frames (Holden's ranges are clips whose last frames his
    // demo skips with ignore_range_end; here the database's own end-of-clip exclusion, so every
    // method searches the same frames). Boxes still cover every frame, in frame order, as his.
    std::vector<int> starts, stops;
    for (int f = 0; f < rows_; ++f) {
      const bool on = m.searchable.empty() || m.searchable[size_t(f)] != 0;
      const bool was = f > 0 && (m.searchable.empty() || m.searchable[size_t(f) - 1] != 0);
      if (on && !was) starts.push_back(f);
      if (!on && was) stops.push_back(f);
    }
    if (stops.size() < starts.size()) stops.push_back(rows_);
    db_.range_starts.resize(int(starts.size()));
    db_.range_stops.resize(int(stops.size()));
    for (size_t r = 0; r < starts.size(); ++r) {
      db_.range_starts(int(r)) = starts[r];
      db_.range_stops(int(r)) = stops[r];
    }
    database_build_bounds(db_);
  }

  match::SearchResult search(const float* query) const override {
    int best = -1;
    float cost = FLT_MAX;
    motion_matching_search(best, cost, db_.range_starts, db_.range_stops, db_.features,
                           db_.features_offset, db_.features_scale, db_.bound_sm_min,
                           db_.bound_sm_max, db_.bound_lr_min, db_.bound_lr_max,
                           slice1d<float>(db_.nfeatures(), const_cast<float*>(query)), 0.0f, 0, 0);
    if (best < 0) return {};
    return {uint32_t(best), cost};
  }

  size_t memory_bytes() const override {
    auto bytes = [](const array2d<float>& a) { return size_t(a.rows) * size_t(a.cols) * 4; };
    return bytes(db_.features) + bytes(db_.bound_sm_min) + bytes(db_.bound_sm_max) +
           bytes(db_.bound_lr_min) + bytes(db_.bound_lr_max);
  }

 private:
  int rows_;
  database db_;
};

}  // namespace

std::unique_ptr<PeerSearch> make_holden_search(const match::FeatureMatrix& m) {
  return std::make_unique<HoldenSearch>(m);
}

}  // namespace kinema::bench
