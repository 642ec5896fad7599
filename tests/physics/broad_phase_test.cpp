#include "kinema/physics/broad_phase.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace kinema;

namespace {

const BroadPhaseKind kAllKinds[] = {BroadPhaseKind::AabbTree, BroadPhaseKind::SweepAndPrune,
                                    BroadPhaseKind::UniformGrid};

std::vector<ProxyPair> brute_force_pairs(const std::vector<Aabb>& boxes,
                                         const std::vector<bool>& present) {
  std::vector<ProxyPair> pairs;
  for (ProxyId i = 0; i < boxes.size(); ++i)
    for (ProxyId j = i + 1; j < boxes.size(); ++j)
      if (present[i] && present[j] && aabb_overlap(boxes[i], boxes[j])) pairs.push_back({i, j});
  return pairs;
}

Aabb random_box(std::mt19937& rng, double world, double max_half) {
  std::uniform_real_distribution<double> pos(-world, world), half(0.05, max_half);
  const Vec3 c{pos(rng), pos(rng), pos(rng)};
  const Vec3 h{half(rng), half(rng), half(rng)};
  return {c - h, c + h};
}

}  // namespace

// Worked example: A = [0,2]×[0,2], B = [1.5,3]×[2.5,4], C = [1,3.5]×[1,3] (z spans [0,1] for all).
// On x A and B overlap but y has a gap from 2 to 2.5, so they do not; A–C and B–C overlap.
TEST(BroadPhaseAabb, WorkedBoxesOverlapOnlyWhereEveryAxisOverlaps) {
  const Aabb a{{0, 0, 0}, {2, 2, 1}}, b{{1.5, 2.5, 0}, {3, 4, 1}}, c{{1, 1, 0}, {3.5, 3, 1}};
  EXPECT_FALSE(aabb_overlap(a, b));
  EXPECT_FALSE(aabb_overlap(b, a));
  EXPECT_TRUE(aabb_overlap(a, c));
  EXPECT_TRUE(aabb_overlap(b, c));
  for (const BroadPhaseKind kind : kAllKinds) {
    auto bp = make_broad_phase({.kind = kind});
    ASSERT_TRUE(bp->insert(0, a) && bp->insert(1, b) && bp->insert(2, c));
    std::vector<ProxyPair> pairs;
    bp->pairs(pairs);
    EXPECT_EQ(pairs, (std::vector<ProxyPair>{{0, 2}, {1, 2}})) << broad_phase_kind_name(kind);
  }
}

TEST(BroadPhaseAabb, TouchingFacesCountAsOverlap) {
  const Aabb a{{0, 0, 0}, {1, 1, 1}}, b{{1, 0, 0}, {2, 1, 1}};
  EXPECT_TRUE(aabb_overlap(a, b));
  for (const BroadPhaseKind kind : kAllKinds) {
    auto bp = make_broad_phase({.kind = kind, .fat_margin = 0.0, .cell_size = 1.0});
    bp->insert(3, a);
    bp->insert(7, b);
    std::vector<ProxyPair> pairs;
    bp->pairs(pairs);
    EXPECT_EQ(pairs, (std::vector<ProxyPair>{{3, 7}})) << broad_phase_kind_name(kind);
  }
}

// Worked example: 1,000 bodies have 1000·999/2 = 499,500 pairs; when every box overlaps every
// other, each broad phase must report all of them.
TEST(BroadPhase, ThousandMutuallyOverlappingBoxesGive499500Pairs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.4, 0.4);
  std::vector<Aabb> boxes;
  for (int i = 0; i < 1000; ++i) {  // all hold the origin
    const Vec3 c{jitter(rng), jitter(rng), jitter(rng)};
    boxes.push_back({c - Vec3{0.5, 0.5, 0.5}, c + Vec3{0.5, 0.5, 0.5}});
  }
  const std::vector<bool> present(boxes.size(), true);
  EXPECT_EQ(brute_force_pairs(boxes, present).size(), 499500u);
  for (const BroadPhaseKind kind : kAllKinds) {
    auto bp = make_broad_phase({.kind = kind});
    for (ProxyId i = 0; i < boxes.size(); ++i) bp->insert(i, boxes[i]);
    std::vector<ProxyPair> pairs;
    bp->pairs(pairs);
    EXPECT_EQ(pairs.size(), 499500u) << broad_phase_kind_name(kind);
  }
}

// Random boxes moved, removed and re-inserted over several rounds: each broad phase reports
// exactly the brute-force pair set every round.
TEST(BroadPhase, EveryKindMatchesBruteForceOverMovingBoxes) {
  constexpr int kCount = 1000;
  for (const BroadPhaseKind kind : kAllKinds) {
    std::mt19937 rng(11);
    std::vector<Aabb> boxes;
    std::vector<bool> present(kCount, true);
    auto bp = make_broad_phase({.kind = kind});
    for (ProxyId i = 0; i < kCount; ++i) {
      boxes.push_back(random_box(rng, 10, 0.6));
      ASSERT_TRUE(bp->insert(i, boxes[i]));
    }
    std::uniform_real_distribution<double> step(-0.3, 0.3), coin(0, 1);
    std::vector<ProxyPair> pairs;
    for (int round = 0; round < 6; ++round) {
      for (ProxyId i = 0; i < kCount; ++i) {
        const double u = coin(rng);
        if (present[i] && u < 0.03) {
          ASSERT_TRUE(bp->remove(i));
          present[i] = false;
        } else if (!present[i] && u < 0.5) {
          boxes[i] = random_box(rng, 10, 0.6);
          ASSERT_TRUE(bp->insert(i, boxes[i]));
          present[i] = true;
        } else if (present[i]) {
          const Vec3 d{step(rng), step(rng), step(rng)};
          boxes[i] = {boxes[i].min + d, boxes[i].max + d};
          if (u > 0.98) boxes[i].max += Vec3{3, 0, 0};  // now and then a long box (grid: oversized)
          ASSERT_TRUE(bp->update(i, boxes[i]));
        }
      }
      bp->pairs(pairs);
      const std::vector<ProxyPair> expected = brute_force_pairs(boxes, present);
      ASSERT_EQ(pairs, expected) << broad_phase_kind_name(kind) << " round " << round;
      ASSERT_GT(expected.size(), 100u);
    }
    // A query returns the ids overlapping a box, sorted.
    const Aabb probe{{-2, -2, -2}, {2, 2, 2}};
    std::vector<ProxyId> hits, expected_hits;
    bp->query(probe, hits);
    for (ProxyId i = 0; i < kCount; ++i)
      if (present[i] && aabb_overlap(boxes[i], probe)) expected_hits.push_back(i);
    EXPECT_EQ(hits, expected_hits) << broad_phase_kind_name(kind);
  }
}

// A query near a proxy (its box swept a little way, as a fast body's continuous collision asks)
// returns what a query of the whole structure returns, in every kind: the tree answers it from
// its neighbour lists while the swept box stays inside the proxy's fattened one, and by a walk
// when the box leaves it.
TEST(BroadPhase, QueryNearAProxyMatchesAFullQuery) {
  constexpr int kCount = 500;
  for (const BroadPhaseKind kind : kAllKinds) {
    std::mt19937 rng(23);
    std::vector<Aabb> boxes;
    auto bp = make_broad_phase({.kind = kind});
    for (ProxyId i = 0; i < kCount; ++i) {
      boxes.push_back(random_box(rng, 6, 0.5));
      ASSERT_TRUE(bp->insert(i, boxes[i]));
    }
    std::uniform_real_distribution<double> step(-0.15, 0.15), sweep(-0.6, 0.6);
    std::vector<ProxyId> near, full;
    std::size_t hits = 0;
    for (int round = 0; round < 4; ++round) {
      for (ProxyId i = 0; i < kCount; ++i) {
        const Vec3 d{step(rng), step(rng), step(rng)};
        boxes[i] = {boxes[i].min + d, boxes[i].max + d};
        ASSERT_TRUE(bp->update(i, boxes[i]));
      }
      std::vector<ProxyPair> pairs;
      bp->pairs(pairs);
      for (ProxyId i = 0; i < kCount; ++i) {
        // Short sweeps stay inside the 0.1 m margin; long ones leave it.
        const double reach = i % 3 == 0 ? 1.0 : 0.1;
        const Vec3 motion = Vec3{sweep(rng), sweep(rng), sweep(rng)} * reach;
        const Aabb moved{boxes[i].min + motion, boxes[i].max + motion};
        const Aabb swept = aabb_union(boxes[i], moved);
        bp->query_near(i, swept, near);
        bp->query(swept, full);
        ASSERT_EQ(near, full) << broad_phase_kind_name(kind) << " proxy " << i;
        hits += near.size();
      }
    }
    EXPECT_GT(hits, std::size_t(kCount) * 4 + kCount)
        << broad_phase_kind_name(kind);  // not only itself
  }
}

// The same boxes inserted in a different order give the same pairs in the same order.
TEST(BroadPhase, PairsDoNotDependOnInsertionOrder) {
  std::mt19937 rng(5);
  std::vector<Aabb> boxes;
  for (int i = 0; i < 300; ++i) boxes.push_back(random_box(rng, 4, 0.5));
  for (const BroadPhaseKind kind : kAllKinds) {
    auto forward = make_broad_phase({.kind = kind});
    auto backward = make_broad_phase({.kind = kind});
    for (ProxyId i = 0; i < boxes.size(); ++i) forward->insert(i, boxes[i]);
    for (ProxyId i = static_cast<ProxyId>(boxes.size()); i-- > 0;) backward->insert(i, boxes[i]);
    std::vector<ProxyPair> a, b;
    forward->pairs(a);
    backward->pairs(b);
    EXPECT_EQ(a, b) << broad_phase_kind_name(kind);
    for (const ProxyPair& p : a) EXPECT_LT(p.first, p.second);
  }
}

TEST(BroadPhase, RefusesBadInput) {
  for (const BroadPhaseKind kind : kAllKinds) {
    auto bp = make_broad_phase({.kind = kind});
    const Aabb good{{0, 0, 0}, {1, 1, 1}};
    const Aabb inverted{{1, 0, 0}, {0, 1, 1}};
    const Aabb nan{{0, 0, 0}, {std::nan(""), 1, 1}};
    EXPECT_FALSE(bp->insert(0, inverted));
    EXPECT_FALSE(bp->insert(0, nan));
    EXPECT_FALSE(bp->insert(kMaxProxyId + 1, good));
    EXPECT_TRUE(bp->insert(0, good));
    EXPECT_FALSE(bp->insert(0, good));  // already present
    EXPECT_FALSE(bp->update(0, nan));
    EXPECT_FALSE(bp->update(1, good));  // absent
    EXPECT_FALSE(bp->remove(1));
    EXPECT_EQ(bp->size(), 1u);
    EXPECT_TRUE(bp->remove(0));
    EXPECT_EQ(bp->size(), 0u);
    EXPECT_FALSE(bp->contains(0));
  }
}
