// The contact pass four manifolds at a time (src/physics/contact_batches.h): the batching, and the
// baseline kernel with the choice of the AVX2 one.
#include "contact_batches.h"

#include <algorithm>

#include "contact_batches_kernel.h"
#include "kinema/core/cpu_features.h"

namespace kinema::detail {

#if defined(KINEMA_CONTACT_AVX2)
void solve_contact_batches_avx2(std::span<const ContactBatch> batches,
                                std::span<WideContactPoint> points,
                                std::span<RigidBody* const> bodies);
#endif

namespace {

// A manifold looks at most this many batches past the first it may join for a free lane, then
// opens a new one (any batch after its bodies' last is correct): the dealing stays linear in the
// manifolds however the lanes fill.
constexpr int kMostBatchesScanned = 32;

int lanes_used(const ContactBatch& batch) {
  int lanes = 0;
  while (lanes < kContactLanes && batch.manifold[lanes] >= 0) ++lanes;
  return lanes;
}

}  // namespace

void deal_contact_batches(std::span<const std::uint32_t> pair_a,
                          std::span<const std::uint32_t> pair_b, std::span<const char> moves,
                          std::vector<ContactBatch>& batches,
                          std::vector<std::int32_t>& last_batch) {
  batches.clear();
  last_batch.assign(moves.size(), -1);
  std::size_t first_open = 0;  // every batch before it is full
  for (std::size_t m = 0; m < pair_a.size(); ++m) {
    const std::uint32_t a = pair_a[m], b = pair_b[m];
    // After every batch that holds one of its moving bodies, in the first one with a free lane.
    std::int32_t after = -1;
    if (moves[a]) after = std::max(after, last_batch[a]);
    if (moves[b]) after = std::max(after, last_batch[b]);
    std::size_t k = std::max(first_open, std::size_t(after + 1));
    int scanned = 0;
    while (k < batches.size() && lanes_used(batches[k]) == kContactLanes)
      k = ++scanned < kMostBatchesScanned ? k + 1 : batches.size();
    if (k == batches.size()) batches.emplace_back();
    ContactBatch& batch = batches[k];
    const int lane = lanes_used(batch);
    batch.body_a[lane] = a;
    batch.body_b[lane] = b;
    batch.manifold[lane] = std::int32_t(m);
    if (moves[a]) last_batch[a] = std::int32_t(k);
    if (moves[b]) last_batch[b] = std::int32_t(k);
    while (first_open < batches.size() && lanes_used(batches[first_open]) == kContactLanes)
      ++first_open;
  }
}

void solve_contact_batches_baseline(std::span<const ContactBatch> batches,
                                    std::span<WideContactPoint> points,
                                    std::span<RigidBody* const> bodies) {
  solve_contact_batches_kernel(batches, points, bodies.data());
}

void solve_contact_batches(std::span<const ContactBatch> batches,
                           std::span<WideContactPoint> points, std::span<RigidBody* const> bodies) {
#if defined(KINEMA_CONTACT_AVX2)
  static const bool has_avx2 = cpu_features().avx2;
  if (has_avx2) return solve_contact_batches_avx2(batches, points, bodies);
#endif
  solve_contact_batches_kernel(batches, points, bodies.data());
}

}  // namespace kinema::detail
