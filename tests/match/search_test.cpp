// Exact nearest-neighbour search (kinema/match/search.h): the tree returns the brute force's answer
// bit for bit, brute force agrees with a double-precision reference, the four-candidate search of
// docs/worked_examples.md ("Motion matching"), filters and masks, bad input, no allocation,
// threads.
#include "kinema/match/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../src/match/search_internal.h"
#include "common/replace_global_new.h"  // the one replacement in kinema_match_tests
#include "kinema/core/error.h"

namespace kinema::match {
namespace {

// A database that looks like motion-matching features: clips are smooth random trajectories of
// an 8-D latent state (a damped random walk in velocity) mapped linearly to `dims` features,
// plus a small smooth per-feature wobble; then tight clusters (frames within 1e-3 of a centre)
// and exact duplicates of earlier frames, so that exact ties happen. Normalized per feature.
FeatureMatrix motion_like(size_t frames, size_t dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0, 1);
  constexpr size_t kLatent = 8;
  std::vector<float> mix(dims * kLatent);
  for (float& w : mix) w = n01(rng);
  FeatureMatrix m;
  m.dims = dims;
  m.values.reserve(frames * dims);
  const size_t trajectory_frames = frames * 8 / 10;
  std::vector<float> x(kLatent), v(kLatent), wobble(dims), wv(dims);
  for (size_t f = 0; f < trajectory_frames; ++f) {
    if (f % 300 == 0) {  // a new clip
      for (float& s : x) s = n01(rng);
      for (float& s : v) s = 0;
    }
    for (size_t k = 0; k < kLatent; ++k) {
      v[k] = 0.95f * v[k] + 0.02f * n01(rng) - 0.002f * x[k];
      x[k] += v[k];
    }
    for (size_t d = 0; d < dims; ++d) {
      wv[d] = 0.9f * wv[d] + 0.01f * n01(rng);
      wobble[d] = 0.98f * wobble[d] + wv[d];
      float s = wobble[d];
      for (size_t k = 0; k < kLatent; ++k) s += mix[d * kLatent + k] * x[k];
      m.values.push_back(s);
    }
  }
  std::uniform_int_distribution<size_t> pick(0, trajectory_frames - 1);
  while (m.values.size() < frames * dims) {
    const size_t src = pick(rng);
    const bool duplicate = (m.values.size() / dims) % 2 == 0;
    const size_t copies = duplicate ? 3 : 5;
    for (size_t c = 0; c < copies && m.values.size() < frames * dims; ++c) {
      for (size_t d = 0; d < dims; ++d) {
        const float s = m.values[src * dims + d];
        m.values.push_back(duplicate ? s : s + 1e-3f * n01(rng));
      }
    }
  }
  for (size_t d = 0; d < dims; ++d) {
    double mean = 0, var = 0;
    for (size_t f = 0; f < frames; ++f) mean += m.values[f * dims + d];
    mean /= double(frames);
    for (size_t f = 0; f < frames; ++f) var += std::pow(m.values[f * dims + d] - mean, 2);
    const double sd = std::sqrt(var / double(frames)) + 1e-9;
    for (size_t f = 0; f < frames; ++f)
      m.values[f * dims + d] = float((m.values[f * dims + d] - mean) / sd);
  }
  return m;
}

std::vector<float> random_query(size_t dims, std::mt19937& rng) {
  std::normal_distribution<float> n01(0, 1);
  std::vector<float> q(dims);
  for (float& v : q) v = n01(rng);
  return q;
}

std::vector<float> noisy_frame(const FeatureMatrix& m, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> noise(0, sigma);
  std::uniform_int_distribution<size_t> pick(0, m.frames() - 1);
  const size_t f = pick(rng);
  std::vector<float> q(m.values.begin() + long(f * m.dims),
                       m.values.begin() + long((f + 1) * m.dims));
  for (float& v : q) v += noise(rng);
  return q;
}

// The answer from first principles, in double: the allowed frame of least cost (ties: smallest
// index). Costs within a float rounding of each other may swap, so it returns the cost and the
// caller compares with a tolerance.
struct Reference {
  uint32_t frame = UINT32_MAX;
  double cost = INFINITY;
};
Reference reference(const FeatureMatrix& m, std::span<const float> q, const SearchFilter& f) {
  Reference best;
  for (size_t i = 0; i < m.frames(); ++i) {
    if (!m.searchable.empty() && m.searchable[i] == 0) continue;
    if (!f.allows(m.tags.empty() ? 0 : m.tags[i])) continue;
    double c = 0;
    for (size_t d = 0; d < m.dims; ++d) c += std::pow(double(m.values[i * m.dims + d]) - q[d], 2);
    if (c < best.cost) best = {uint32_t(i), c};
  }
  return best;
}

// Same frame and the same float bits.
::testing::AssertionResult same(const SearchResult& brute, const SearchResult& tree) {
  if (brute.frame == tree.frame &&
      std::bit_cast<uint32_t>(brute.cost) == std::bit_cast<uint32_t>(tree.cost))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "brute force frame " << brute.frame << " cost " << brute.cost << " (bits "
         << std::bit_cast<uint32_t>(brute.cost) << "), tree frame " << tree.frame << " cost "
         << tree.cost << " (bits " << std::bit_cast<uint32_t>(tree.cost) << ")";
}

TEST(MatchSearch, TreeEqualsBruteForceOnRandomQueries) {
  const FeatureMatrix m = motion_like(6000, 27, 1);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  std::mt19937 rng(2);
  int mismatches = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::vector<float> q = random_query(m.dims, rng);
    const SearchResult b = brute.search(q), t = tree.search(q);
    ASSERT_TRUE(b.found());
    if (!same(b, t)) ++mismatches;
    EXPECT_TRUE(same(b, t)) << "query " << i;
    if (mismatches > 5) break;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(MatchSearch, TreeEqualsBruteForceOnRealQueries) {
  const FeatureMatrix m = motion_like(6000, 27, 3);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  std::mt19937 rng(4);
  int mismatches = 0;
  SearchStats stats;
  uint64_t visited = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::vector<float> q = noisy_frame(m, rng, 0.1f);
    const SearchResult b = brute.search(q), t = tree.search(q, {}, &stats);
    visited += stats.blocks_visited;
    if (!same(b, t)) ++mismatches;
    EXPECT_TRUE(same(b, t)) << "query " << i;
    if (mismatches > 5) break;
  }
  EXPECT_EQ(mismatches, 0);
  // The tree must actually prune on queries near the data (else it is a slow brute force).
  EXPECT_LT(double(visited) / 10000, double(tree.blocks()) / 4);
}

// A query far from the data (here: a random one, N(0, 1) per normalized feature) leaves the walk
// for the pass over the bottom nodes at the first check, once its best cost is above a fifth of
// the frames' mean squared distance from their mean, where the AVX2 loops run the grid pass; the
// pass tests every bottom node, so the nodes a query visits show it. Queries near the data
// (real+noise) stay in the walk: they visit a few nodes. The answers stay brute force's.
TEST(MatchSearch, FarQueriesLeaveTheWalkForTheGridPass) {
  if (detail::search_isa() != detail::SearchIsa::kAvx2) GTEST_SKIP() << "no AVX2: no grid pass";
  const FeatureMatrix m = motion_like(20000, 27, 11);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  const size_t bottom_nodes = (tree.blocks() + 7) / 8;
  std::mt19937 rng(12);
  SearchStats stats;
  int far_in_pass = 0, near_in_pass = 0;
  for (int i = 0; i < 200; ++i) {
    const std::vector<float> far = random_query(m.dims, rng);
    const SearchResult t = tree.search(far, {}, &stats);
    EXPECT_TRUE(same(brute.search(far), t)) << "query " << i;
    far_in_pass += stats.nodes_visited >= bottom_nodes;
    const std::vector<float> near = noisy_frame(m, rng, 0.05f);
    const SearchResult n = tree.search(near, {}, &stats);
    EXPECT_TRUE(same(brute.search(near), n)) << "query " << i;
    near_in_pass += stats.nodes_visited >= bottom_nodes;
  }
  EXPECT_GE(far_in_pass, 190);
  EXPECT_LE(near_in_pass, 10);
}

// Queries far beyond that line (random ones three times wider) leave sooner: after the first
// bottom node past far_early_work_, not at the first check (blocks / 32 block evaluations, a
// node test counting two), so the walk before the pass tests fewer nodes. Still exact.
TEST(MatchSearch, QueriesFarBeyondLeaveTheWalkSooner) {
  if (detail::search_isa() == detail::SearchIsa::kBase) GTEST_SKIP() << "no AVX2: no grid pass";
  const FeatureMatrix m = motion_like(40000, 27, 13);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  const size_t bottom_nodes = (tree.blocks() + 7) / 8;
  std::mt19937 rng(14);
  SearchStats stats;
  size_t walk_nodes = 0, far = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<float> q = random_query(m.dims, rng);
    for (float& v : q) v *= 3.0f;
    const SearchResult t = tree.search(q, {}, &stats);
    EXPECT_TRUE(same(brute.search(q), t)) << "query " << i;
    if (stats.nodes_visited < bottom_nodes) continue;
    ++far;
    walk_nodes += stats.nodes_visited - bottom_nodes;
  }
  // 5,000 blocks: the first check comes after 156 block evaluations, ~59 node tests on these
  // queries without the sooner leave; ~16 with it (after 48).
  EXPECT_GE(far, 190u);
  EXPECT_LE(double(walk_nodes) / double(std::max<size_t>(far, 1)), 30.0);
}

// The baseline loops and the AVX2 ones (chosen at run time, search_walk.h) give the same bits,
// for both structures, with and without filters. On a CPU without AVX2 both runs take the
// baseline and the test is trivially true.
TEST(MatchSearch, EveryInstructionSetGivesTheSameBits) {
  FeatureMatrix m = motion_like(3000, 27, 5);
  m.tags.resize(m.frames());
  for (size_t i = 0; i < m.tags.size(); ++i) m.tags[i] = uint64_t{1} << (i % 5);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  std::mt19937 rng(6);
  const SearchFilter filters[] = {{}, {.require_any = 0b0110, .exclude = 0b0100}};
  std::vector<std::vector<float>> queries;
  for (int i = 0; i < 1000; ++i)
    queries.push_back(i % 2 ? random_query(m.dims, rng) : noisy_frame(m, rng, 0.1f));
  std::vector<SearchResult> fast;
  for (const auto& q : queries)
    for (const SearchFilter& f : filters) {
      fast.push_back(brute.search(q, f));
      fast.push_back(tree.search(q, f));
    }
  detail::force_baseline_search(true);
  EXPECT_EQ(detail::search_isa(), detail::SearchIsa::kBase);
  size_t i = 0;
  for (const auto& q : queries)
    for (const SearchFilter& f : filters) {
      EXPECT_TRUE(same(fast[i++], brute.search(q, f)));
      EXPECT_TRUE(same(fast[i++], tree.search(q, f)));
    }
  detail::force_baseline_search(false);
}

TEST(MatchSearch, BruteForceAgreesWithDoubleReference) {
  const FeatureMatrix m = motion_like(3000, 27, 5);
  const BruteForceSearch brute(m);
  std::mt19937 rng(6);
  for (int i = 0; i < 300; ++i) {
    const std::vector<float> q = i % 2 ? random_query(m.dims, rng) : noisy_frame(m, rng, 0.1f);
    const SearchResult b = brute.search(q);
    const Reference r = reference(m, q, {});
    ASSERT_TRUE(b.found());
    EXPECT_NEAR(b.cost, r.cost, 1e-5 * (1 + r.cost));
    if (b.frame != r.frame) {  // only a near tie may swap
      double c = 0;
      for (size_t d = 0; d < m.dims; ++d)
        c += std::pow(double(m.values[b.frame * m.dims + d]) - q[d], 2);
      EXPECT_NEAR(c, r.cost, 1e-5 * (1 + r.cost)) << "query " << i;
    }
  }
}

TEST(MatchSearch, ExactTiesGoToTheSmallestFrame) {
  // Frames 2, 5 and 9 are the same point; a query on it must return frame 2 from both.
  FeatureMatrix m;
  m.dims = 3;
  std::mt19937 rng(7);
  std::normal_distribution<float> n01(0, 1);
  for (int f = 0; f < 40; ++f)
    for (int d = 0; d < 3; ++d) m.values.push_back(n01(rng));
  for (int f : {5, 9})
    for (int d = 0; d < 3; ++d) m.values[size_t(f * 3 + d)] = m.values[size_t(2 * 3 + d)];
  const std::vector<float> q(m.values.begin() + 6, m.values.begin() + 9);
  for (const SearchResult r : {BruteForceSearch(m).search(q), BoundedTreeSearch(m).search(q)}) {
    EXPECT_EQ(r.frame, 2u);
    EXPECT_EQ(r.cost, 0.0f);
  }
  // Equidistant but not equal: (±1, 0, 0) around the origin, frame 7 and frame 3.
  m.values.assign(40 * 3, 50.0f);
  m.values[7 * 3] = 1.0f, m.values[7 * 3 + 1] = 0, m.values[7 * 3 + 2] = 0;
  m.values[3 * 3] = -1.0f, m.values[3 * 3 + 1] = 0, m.values[3 * 3 + 2] = 0;
  const std::vector<float> origin{0, 0, 0};
  EXPECT_EQ(BruteForceSearch(m).search(origin).frame, 3u);
  EXPECT_EQ(BoundedTreeSearch(m).search(origin).frame, 3u);
}

TEST(MatchSearch, EveryBlockTailAndDimensionCount) {
  // 1…40 frames (every tail of a block of 8) × dims 1…40, random and near queries, with and
  // without tags, filters and searchable masks; compared with the double reference too.
  std::mt19937 rng(8);
  std::normal_distribution<float> n01(0, 1);
  std::uniform_int_distribution<int> bit(0, 3);
  for (size_t dims = 1; dims <= 40; ++dims) {
    for (size_t frames = 1; frames <= 40; ++frames) {
      FeatureMatrix m;
      m.dims = dims;
      for (size_t i = 0; i < frames * dims; ++i) m.values.push_back(n01(rng));
      const bool tagged = (dims + frames) % 2 == 0, masked = (dims + frames) % 3 == 0;
      if (tagged) {
        for (size_t f = 0; f < frames; ++f) m.tags.push_back(f % 5 == 0 ? 0 : 1ull << bit(rng));
      }
      if (masked) {
        for (size_t f = 0; f < frames; ++f) m.searchable.push_back(f % 4 != 3);
      }
      const BruteForceSearch brute(m);
      const BoundedTreeSearch tree(m);
      ASSERT_EQ(brute.frames(), frames);
      ASSERT_EQ(tree.frames(), frames);
      const SearchFilter filters[] = {{}, {0b0011, 0}, {~0ull, 0b0100}, {0b1010, 0b0010}};
      for (int k = 0; k < 8; ++k) {
        const std::vector<float> q = k % 2 ? random_query(dims, rng) : noisy_frame(m, rng, 0.1f);
        for (const SearchFilter& filter : filters) {
          const SearchResult b = brute.search(q, filter), t = tree.search(q, filter);
          ASSERT_TRUE(same(b, t)) << frames << " frames, " << dims << " dims";
          const Reference r = reference(m, q, filter);
          ASSERT_EQ(b.found(), r.frame != UINT32_MAX) << frames << " frames, " << dims << " dims";
          if (b.found()) {
            ASSERT_NEAR(b.cost, r.cost, 1e-5 * (1 + r.cost));
            if (!m.searchable.empty()) {
              ASSERT_NE(m.searchable[b.frame], 0);
            }
            ASSERT_TRUE(filter.allows(m.tags.empty() ? 0 : m.tags[b.frame]));
          }
        }
      }
    }
  }
}

TEST(MatchSearch, FiltersFollowTheDocumentedRule) {
  // Frames 0..3 sit at distance 0, 1, 2, 3 along x; tags: none, A, B, A|B.
  FeatureMatrix m;
  m.dims = 2;
  m.values = {0, 0, 1, 0, 2, 0, 3, 0};
  m.tags = {0, 1, 2, 3};
  const std::vector<float> q{0, 0};
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  auto frame = [&](SearchFilter f) {
    const SearchResult b = brute.search(q, f);
    EXPECT_TRUE(same(b, tree.search(q, f)));
    return b.frame;
  };
  EXPECT_EQ(frame({}), 0u);                  // untagged frames are found by default
  EXPECT_EQ(frame({1, 0}), 1u);              // require A
  EXPECT_EQ(frame({2, 0}), 2u);              // require B
  EXPECT_EQ(frame({~0ull, 1}), 0u);          // exclude A: untagged frame 0 stays
  EXPECT_EQ(frame({3, 1}), 2u);              // A or B, but not A
  EXPECT_EQ(frame({0, 0}), UINT32_MAX);      // require nothing of nothing: no frame
  EXPECT_EQ(frame({~0ull, 3}), 0u);          // only the untagged frame survives
  EXPECT_EQ(frame({4, 0}), UINT32_MAX);      // a tag no frame has
  EXPECT_EQ(frame({3, 1 | 2}), UINT32_MAX);  // every allowed frame excluded

  // A database without tags behaves as all tags = 0.
  m.tags.clear();
  EXPECT_EQ(BoundedTreeSearch(m).search(q, {1, 0}).frame, UINT32_MAX);
  EXPECT_EQ(BruteForceSearch(m).search(q, {1, 0}).frame, UINT32_MAX);
  EXPECT_EQ(BoundedTreeSearch(m).search(q, {~0ull, 1}).frame, 0u);
}

TEST(MatchSearch, NothingAllowedGivesTheEmptyResult) {
  FeatureMatrix m = motion_like(500, 27, 9);
  m.searchable.assign(m.frames(), 0);
  const std::vector<float> q(27, 0.0f);
  EXPECT_EQ(BruteForceSearch(m).search(q), SearchResult{});
  EXPECT_EQ(BoundedTreeSearch(m).search(q), SearchResult{});
  m.searchable.clear();
  m.tags.assign(m.frames(), 1);
  EXPECT_EQ(BruteForceSearch(m).search(q, {~0ull, 1}), SearchResult{});
  EXPECT_EQ(BoundedTreeSearch(m).search(q, {~0ull, 1}), SearchResult{});
  EXPECT_FALSE(SearchResult{}.found());
  EXPECT_EQ(SearchResult{}.frame, UINT32_MAX);
  EXPECT_TRUE(std::isinf(SearchResult{}.cost));
}

TEST(MatchSearch, SearchableMaskHidesFrames) {
  FeatureMatrix m = motion_like(2000, 27, 10);
  m.searchable.assign(m.frames(), 1);
  const BruteForceSearch all(m);
  std::mt19937 rng(11);
  const std::vector<float> q = noisy_frame(m, rng, 0.1f);
  const uint32_t first = all.search(q).frame;
  m.searchable[first] = 0;
  const SearchResult b = BruteForceSearch(m).search(q), t = BoundedTreeSearch(m).search(q);
  EXPECT_NE(b.frame, first);
  EXPECT_TRUE(same(b, t));
  EXPECT_EQ(b.frame, uint32_t(reference(m, q, {}).frame));
}

void expect_error(const FeatureMatrix& m, const std::string& place, const std::string& word) {
  for (int which = 0; which < 2; ++which) {
    try {
      if (which == 0) BruteForceSearch{m};
      if (which == 1) BoundedTreeSearch{m};
      ADD_FAILURE() << "no error; expected one at '" << place << "' about " << word;
    } catch (const Error& e) {
      EXPECT_EQ(e.place(), place) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
}

TEST(MatchSearch, BadInputIsRejectedAtBuild) {
  FeatureMatrix m;
  m.dims = 4;
  m.values.assign(20, 0.5f);
  m.values[3 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  expect_error(m, "frame 3, dimension 2", "NaN");
  m.values[3 * 4 + 2] = 0;
  m.values[4 * 4 + 0] = -std::numeric_limits<float>::infinity();
  expect_error(m, "frame 4, dimension 0", "infinite");
  m.values[4 * 4 + 0] = 0;
  m.tags.assign(3, 1);
  expect_error(m, "tags", "3 tags for 5 frames");
  m.tags.clear();
  m.searchable.assign(6, 1);
  expect_error(m, "searchable", "6 flags for 5 frames");
  m.searchable.clear();
  m.values.push_back(1);
  expect_error(m, "", "not a multiple");
  m.values.clear();
  expect_error(m, "", "no frames");
  m.dims = 0;
  m.values.assign(4, 1);
  expect_error(m, "", "dims is 0");
}

TEST(MatchSearch, BadQueryGivesTheEmptyResult) {
  const FeatureMatrix m = motion_like(300, 27, 12);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  const std::vector<float> short_q(26, 0.0f), long_q(28, 0.0f), empty;
  std::vector<float> nan_q(27, 0.0f), inf_q(27, 0.0f);
  nan_q[5] = std::numeric_limits<float>::quiet_NaN();
  inf_q[26] = std::numeric_limits<float>::infinity();
  SearchStats stats{7, 7};
  for (const auto& q : {short_q, long_q, empty, nan_q, inf_q}) {
    EXPECT_EQ(brute.search(q, {}, &stats), SearchResult{});
    EXPECT_EQ(stats.blocks_visited, 0u);
    EXPECT_EQ(tree.search(q), SearchResult{});
  }
  // A default-constructed structure answers nothing.
  EXPECT_EQ(BruteForceSearch{}.search(short_q), SearchResult{});
  EXPECT_EQ(BoundedTreeSearch{}.search(empty), SearchResult{});
}

TEST(MatchSearch, FootFeaturesRejectACloserTrajectoryOnTheWrongFoot) {
  // Six numbers per frame: future root (x, z) at 0.5 s and 1.0 s, then the left and right feet's
  // forward offsets. Each is divided by its group's standard deviation (trajectory 0.5 m, feet
  // 0.2 m; all weights 1), so the cost is the sum of squared normalized differences.
  const float sd[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.2f, 0.2f};
  const float raw[4][6] = {
      {0.0f, 0.75f, 0.0f, 1.5f, 0.12f, -0.12f},    // A straight walk
      {0.25f, 0.7f, 0.85f, 1.25f, -0.10f, 0.14f},  // B right turn, opposite foot
      {0.3f, 0.65f, 0.95f, 1.1f, 0.18f, -0.05f},   // C right turn walk
      {0.6f, 1.4f, 1.8f, 2.6f, 0.2f, -0.2f},       // D right turn run
  };
  const float raw_q[6] = {0.3f, 0.7f, 0.9f, 1.2f, 0.15f, -0.10f};
  // Features [first, last) of every candidate and the query, scaled by 1 / std.
  auto matrix = [&](size_t first, size_t last, std::vector<float>& q) {
    FeatureMatrix m;
    m.dims = last - first;
    for (const auto& row : raw)
      for (size_t d = first; d < last; ++d) m.values.push_back(row[d] / sd[d]);
    m.tags = {1, 2, 4, 8};  // one tag per candidate, to read each one's cost
    q.clear();
    for (size_t d = first; d < last; ++d) q.push_back(raw_q[d] / sd[d]);
    return m;
  };
  auto costs = [&](size_t first, size_t last, uint32_t& winner) {
    std::vector<float> q;
    const FeatureMatrix m = matrix(first, last, q);
    const BruteForceSearch brute(m);
    const BoundedTreeSearch tree(m);
    std::vector<float> out;
    for (uint64_t tag = 1; tag <= 8; tag <<= 1) {
      const SearchResult b = brute.search(q, {tag, 0});
      EXPECT_TRUE(same(b, tree.search(q, {tag, 0})));
      EXPECT_EQ(b.frame, uint32_t(std::countr_zero(tag)));
      out.push_back(b.cost);
    }
    const SearchResult b = brute.search(q);
    EXPECT_TRUE(same(b, tree.search(q)));
    winner = b.frame;
    return out;
  };
  uint32_t winner = 0, unused = 0;
  const std::vector<float> all = costs(0, 6, winner);
  const std::vector<float> trajectory = costs(0, 4, unused);
  const std::vector<float> pose = costs(4, 6, unused);
  // To three decimals: A 4.003, B 3.033, C 0.145, D 13.713 (4.0025, 3.0325, 0.145, 13.7125
  // exactly; a printed …5 may round either way).
  const double expected[4] = {4.0025, 3.0325, 0.145, 13.7125};
  const double expected_trajectory[4] = {3.970, 0.030, 0.060, 13.400};
  const double expected_pose[4] = {0.0325, 3.0025, 0.085, 0.3125};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(all[size_t(i)], expected[i], 1e-4) << "candidate " << char('A' + i);
    EXPECT_NEAR(trajectory[size_t(i)], expected_trajectory[i], 1e-4);
    EXPECT_NEAR(pose[size_t(i)], expected_pose[i], 1e-4);
    EXPECT_NEAR(trajectory[size_t(i)] + pose[size_t(i)], all[size_t(i)], 1e-4);
  }
  EXPECT_EQ(winner, 2u);  // C wins
}

TEST(MatchSearch, RandomizedStress) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<size_t> frames_of(1, 3000), dims_of(1, 48);
  std::uniform_int_distribution<int> coin(0, 3);
  for (int round = 0; round < 40; ++round) {
    const size_t frames = frames_of(rng), dims = dims_of(rng);
    FeatureMatrix m = motion_like(std::max<size_t>(frames, 4), dims, uint32_t(100 + round));
    if (coin(rng) == 0) {
      std::uniform_int_distribution<int> bit(0, 5);
      for (size_t f = 0; f < m.frames(); ++f) m.tags.push_back((1ull << bit(rng)) | (f % 7 == 0));
    }
    if (coin(rng) == 0)
      for (size_t f = 0; f < m.frames(); ++f) m.searchable.push_back(coin(rng) != 0);
    if (coin(rng) == 0)  // coarse values: many exact ties in cost
      for (float& v : m.values) v = std::round(v * 2) / 2;
    const BruteForceSearch brute(m);
    const BoundedTreeSearch tree(m);
    const SearchFilter filters[] = {{}, {0b000011, 0}, {~0ull, 0b000001}, {0b110000, 0b000100}};
    for (int k = 0; k < 200; ++k) {
      std::vector<float> q = k % 2 ? random_query(dims, rng) : noisy_frame(m, rng, 0.1f);
      if (k % 5 == 0)
        for (float& v : q) v = std::round(v * 2) / 2;
      const SearchFilter& filter = filters[size_t(k) % 4];
      ASSERT_TRUE(same(brute.search(q, filter), tree.search(q, filter)))
          << "round " << round << ": " << m.frames() << " frames, " << dims << " dims, query " << k;
    }
  }
}

// The tree forms its blocks either from consecutive frames (time-coherent data, as mocap) or by
// splitting frames (data without time coherence): both ways, with awkward frame counts (the
// last block partial), masks and filters, it answers as the brute force does.
TEST(MatchSearch, BothBlockFormationsMatchBruteForce) {
  std::mt19937 rng(17);
  for (const bool shuffled : {false, true}) {
    for (const size_t frames : {9, 63, 517, 2049}) {
      // Only the smooth trajectories of motion_like (its last fifth repeats frames, which
      // frame splits gather into tight blocks).
      FeatureMatrix m = motion_like(frames * 5 / 4 + 1, 27, uint32_t(frames));
      m.values.resize(frames * 27);
      if (shuffled) {  // no time coherence left: i.i.d.-like rows
        std::vector<size_t> perm(frames);
        for (size_t i = 0; i < frames; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<float> values(m.values.size());
        for (size_t i = 0; i < frames; ++i)
          std::copy_n(m.values.begin() + long(perm[i] * 27), 27, values.begin() + long(i * 27));
        m.values = std::move(values);
      }
      for (size_t f = 0; f < frames; ++f) {
        m.tags.push_back(1ull << (f / 50 % 3));
        m.searchable.push_back(f % 97 != 96);
      }
      const BruteForceSearch brute(m);
      const BoundedTreeSearch tree(m);
      const SearchFilter filters[] = {{}, {0b011, 0}, {~0ull, 0b001}};
      for (int k = 0; k < 300; ++k) {
        const std::vector<float> q = k % 2 ? random_query(27, rng) : noisy_frame(m, rng, 0.1f);
        const SearchFilter& filter = filters[size_t(k) % 3];
        ASSERT_TRUE(same(brute.search(q, filter), tree.search(q, filter)))
            << (shuffled ? "shuffled, " : "in order, ") << frames << " frames, query " << k;
      }
    }
  }
}

TEST(MatchSearch, SearchDoesNotAllocate) {
  FeatureMatrix m = motion_like(5000, 27, 14);
  m.tags.assign(m.frames(), 1);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  std::mt19937 rng(15);
  std::vector<std::vector<float>> queries;
  for (int i = 0; i < 50; ++i)
    queries.push_back(i % 2 ? random_query(27, rng) : noisy_frame(m, rng, 0.1f));
  SearchStats stats;
  uint32_t sum = 0;
  test::start_counting_allocations();
  for (const auto& q : queries) {
    sum += brute.search(q).frame + tree.search(q, {1, 0}, &stats).frame;
    sum += tree.search(q, {~0ull, 2}).frame;
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  EXPECT_GT(sum, 0u);
}

TEST(MatchSearch, ConcurrentSearchesAgree) {
  const FeatureMatrix m = motion_like(8000, 27, 16);
  const BoundedTreeSearch tree(m);
  std::mt19937 rng(17);
  std::vector<std::vector<float>> queries;
  for (int i = 0; i < 400; ++i)
    queries.push_back(i % 2 ? random_query(27, rng) : noisy_frame(m, rng, 0.1f));
  std::vector<SearchResult> serial;
  for (const auto& q : queries) serial.push_back(tree.search(q));
  std::vector<std::vector<SearchResult>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (const auto& q : queries) results[t].push_back(tree.search(q));
    });
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, serial);
}

// The principal-axes bound (search_pca.cpp): for every frame x and query q, the bound of a box
// holding x (as the tree builds it: double coordinates rounded to nearest, then one ulp outward)
// never exceeds prune_threshold(cost of x), so a pruned box never holds a frame as good as the
// best. Boxes of one frame (the tightest) and of 8 frames; queries random, near, on a frame
// exactly and one ulp off it; data correlated, i.i.d., constant, all equal, one frame, offset
// by 1e4 (cancellation), tiny (1e-20: costs underflow) and huge (1e18).
void expect_pca_bound_below_costs(const FeatureMatrix& m, uint32_t seed,
                                  size_t max_axes = detail::kMaxPcaAxes) {
  std::vector<uint32_t> all(m.frames());
  for (size_t f = 0; f < all.size(); ++f) all[f] = uint32_t(f);
  const detail::PcaBasis pca = detail::build_pca(m, all, max_axes);
  const size_t k = pca.coords(), n = m.dims;
  ASSERT_EQ(pca.axes, std::min({n, max_axes, detail::kMaxPcaAxes}));
  // Every frame's box, rounded as the tree rounds it.
  std::vector<float> flo(m.frames() * k), fhi(m.frames() * k);
  std::vector<double> y(k);
  for (size_t f = 0; f < m.frames(); ++f) {
    detail::pca_coords(pca, m.values.data() + f * n, y.data());
    for (size_t i = 0; i < k; ++i) {
      flo[f * k + i] = std::nextafter(float(y[i]), -INFINITY);
      fhi[f * k + i] = std::nextafter(float(y[i]), INFINITY);
    }
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, m.frames() - 1);
  std::vector<float> lo(k * 8), hi(k * 8), qp(detail::kMaxPcaCoords);
  float bound[8];
  size_t checked = 0;
  for (int t = 0; t < 60; ++t) {
    std::vector<float> q;
    const size_t src = pick(rng);
    q.assign(m.values.begin() + long(src * n), m.values.begin() + long((src + 1) * n));
    float scale = 0;
    for (const float v : q) scale = std::max(scale, std::abs(v));
    if (t % 4 == 1) {  // near: noise relative to the data's scale
      std::normal_distribution<float> noise(0, 0.01f * (scale > 0 ? scale : 1));
      for (float& v : q) v += noise(rng);
    } else if (t % 4 == 2) {  // one ulp off
      for (float& v : q) v = std::nextafter(v, t % 8 < 4 ? INFINITY : -INFINITY);
    } else if (t % 4 == 3) {  // random, at the data's scale
      std::normal_distribution<float> wide(0, scale > 0 ? scale : 1);
      for (float& v : q) v += wide(rng);
    }
    const double delta = detail::project_query(pca, q.data(), qp.data());
    for (size_t f0 = 0; f0 < m.frames(); f0 += 8) {
      // Lanes 0-6: one frame each; lane 7: the box of frames f0 .. f0+7.
      float cost[8];
      for (size_t i = 0; i < k; ++i) {
        for (size_t l = 0; l < 8; ++l) {
          const size_t f = std::min(m.frames() - 1, f0 + l);
          lo[i * 8 + l] = flo[f * k + i];
          hi[i * 8 + l] = fhi[f * k + i];
        }
        for (size_t l = 1; l < 8 && f0 + l < m.frames(); ++l) {
          lo[i * 8 + 7] = std::min(lo[i * 8 + 7], flo[(f0 + l - 1) * k + i]);
          hi[i * 8 + 7] = std::max(hi[i * 8 + 7], fhi[(f0 + l - 1) * k + i]);
        }
      }
      float group_min = INFINITY;
      for (size_t l = 0; l < 8; ++l) {
        const size_t f = std::min(m.frames() - 1, f0 + l);
        cost[l] = detail::frame_cost(m.values.data() + f * n, q.data(), n);
        group_min = std::min(group_min, cost[l]);
      }
      detail::box_bounds(lo.data(), hi.data(), qp.data(), k, bound);
      for (size_t l = 0; l < 7; ++l) {
        EXPECT_FALSE(bound[l] > detail::prune_threshold(pca, cost[l], delta))
            << "frame " << std::min(m.frames() - 1, f0 + l) << " cost " << cost[l] << " bound "
            << bound[l];
        ++checked;
      }
      EXPECT_FALSE(bound[7] > detail::prune_threshold(pca, group_min, delta));
      EXPECT_GE(detail::prune_threshold(pca, cost[0], delta), cost[0]);
    }
  }
  EXPECT_GT(checked, 0u);
}

FeatureMatrix iid(size_t frames, size_t dims, uint32_t seed, float offset, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0, 1);
  FeatureMatrix m;
  m.dims = dims;
  for (size_t i = 0; i < frames * dims; ++i) m.values.push_back(offset + scale * n01(rng));
  return m;
}

TEST(MatchSearch, PcaBoundNeverExceedsTheCost) {
  expect_pca_bound_below_costs(motion_like(1500, 27, 31), 1);
  expect_pca_bound_below_costs(motion_like(300, 40, 32), 2);       // more dims than axes kept
  expect_pca_bound_below_costs(motion_like(1000, 27, 51), 11, 4);  // a large residual
  expect_pca_bound_below_costs(iid(500, 27, 52, 0, 1), 12, 10);
  expect_pca_bound_below_costs(iid(300, 27, 53, 1e4f, 1), 13, 6);
  expect_pca_bound_below_costs(iid(800, 27, 33, 0, 1), 3);
  expect_pca_bound_below_costs(iid(500, 27, 34, 1e4f, 1), 4);
  expect_pca_bound_below_costs(iid(500, 9, 35, 0, 1e-20f), 5);
  expect_pca_bound_below_costs(iid(500, 9, 36, 0, 1e18f), 6);
  expect_pca_bound_below_costs(iid(64, 3, 37, 0, 1), 7);
  FeatureMatrix constant = iid(200, 27, 38, 0, 1);
  for (size_t f = 0; f < constant.frames(); ++f)
    for (size_t d = 0; d < 27; d += 2) constant.values[f * 27 + d] = 0.5f;  // constant features
  expect_pca_bound_below_costs(constant, 8);
  FeatureMatrix equal = iid(1, 27, 39, 0, 1);
  const std::vector<float> row = equal.values;
  for (int f = 1; f < 100; ++f) equal.values.insert(equal.values.end(), row.begin(), row.end());
  expect_pca_bound_below_costs(equal, 9);
  expect_pca_bound_below_costs(iid(1, 27, 40, 0, 1), 10);  // one frame
}

// The integer grid of the tree's AVX2 bottom-node pass (search_internal.h): for every frame, its
// grid bound (its own grid value on every coordinate, as the frames' test does on the first 16),
// its 8-frame group's grid box bound, and the mixed bound the pass uses (the frame's value on the
// first 16 coordinates, the box on the rest) never exceed grid_limit of the prune threshold of
// the frame's (the group's least) float cost, for queries on a frame, one ulp off, near and
// random. (Giving the frame values a one-step error fails it; the end-to-end tests miss that.)
void expect_grid_bounds_below_costs(const FeatureMatrix& m, uint32_t seed) {
  std::vector<uint32_t> all(m.frames());
  for (size_t f = 0; f < all.size(); ++f) all[f] = uint32_t(f);
  const detail::PcaBasis pca = detail::build_pca(m, all, detail::kMaxPcaAxes);
  const size_t k = pca.coords(), n = m.dims, frames = m.frames();
  std::vector<float> pc(frames * k);
  std::vector<double> y(k);
  double extent = 0;
  for (size_t f = 0; f < frames; ++f) {
    detail::pca_coords(pca, m.values.data() + f * n, y.data());
    for (size_t i = 0; i < k; ++i) {
      pc[f * k + i] = float(y[i]);
      extent = std::max({extent, std::abs(double(std::nextafter(float(y[i]), -INFINITY))),
                         std::abs(double(std::nextafter(float(y[i]), INFINITY)))});
    }
  }
  const double step = detail::grid_step_for(extent);
  ASSERT_GT(step, 0.0);
  std::vector<int32_t> g(frames * k), glo(frames * k), ghi(frames * k);
  bool frame_grid = true;
  for (size_t f = 0; f < frames; ++f)
    for (size_t i = 0; i < k; ++i)
      frame_grid = frame_grid && detail::grid_frame_value(pc[f * k + i], step, g[f * k + i]);
  for (size_t f0 = 0; f0 < frames; f0 += 8)
    for (size_t i = 0; i < k; ++i) {
      float lo = INFINITY, hi = -INFINITY;
      for (size_t f = f0; f < std::min(frames, f0 + 8); ++f) {
        lo = std::min(lo, std::nextafter(pc[f * k + i], -INFINITY));
        hi = std::max(hi, std::nextafter(pc[f * k + i], INFINITY));
      }
      detail::grid_box(lo, hi, step, glo[f0 * k + i], ghi[f0 * k + i]);
      EXPECT_GE(glo[f0 * k + i], -detail::kGridMax);
      EXPECT_LE(ghi[f0 * k + i], detail::kGridMax);
    }
  auto term = [](int64_t lo, int64_t hi, int64_t up, int64_t down) {
    const int64_t t = std::max({int64_t{0}, lo - up, down - hi});
    return t * t;
  };
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, frames - 1);
  std::vector<float> qp(detail::kMaxPcaCoords);
  std::vector<int32_t> up(k), down(k);
  size_t checked = 0;
  for (int t = 0; t < 40; ++t) {
    const size_t src = pick(rng);
    std::vector<float> q(m.values.begin() + long(src * n), m.values.begin() + long((src + 1) * n));
    float scale = 0;
    for (const float v : q) scale = std::max(scale, std::abs(v));
    if (t % 4 == 1) {
      std::normal_distribution<float> noise(0, 0.01f * (scale > 0 ? scale : 1));
      for (float& v : q) v += noise(rng);
    } else if (t % 4 == 2) {
      for (float& v : q) v = std::nextafter(v, t % 8 < 4 ? INFINITY : -INFINITY);
    } else if (t % 4 == 3) {
      std::normal_distribution<float> wide(0, scale > 0 ? scale : 1);
      for (float& v : q) v += wide(rng);
    }
    const double delta = detail::project_query(pca, q.data(), qp.data());
    for (size_t i = 0; i < k; ++i) detail::grid_query(qp[i], step, up[i], down[i]);
    for (size_t f0 = 0; f0 < frames; f0 += 8) {
      float group_min = INFINITY;
      for (size_t f = f0; f < std::min(frames, f0 + 8); ++f) {
        const float cost = detail::frame_cost(m.values.data() + f * n, q.data(), n);
        group_min = std::min(group_min, cost);
        const int64_t limit = detail::grid_limit(detail::prune_threshold(pca, cost, delta), step);
        if (!frame_grid) continue;
        int64_t own = 0, mixed = 0;
        for (size_t i = 0; i < k; ++i) {
          const int64_t fv = term(g[f * k + i] - 1, g[f * k + i] + 1, up[i], down[i]);
          own += fv;
          mixed += i < 16 ? fv : term(glo[f0 * k + i], ghi[f0 * k + i], up[i], down[i]);
        }
        EXPECT_LE(own, limit) << "frame " << f << " query " << t;
        EXPECT_LE(mixed, limit) << "frame " << f << " query " << t;
        ++checked;
      }
      int64_t box = 0;
      for (size_t i = 0; i < k; ++i) box += term(glo[f0 * k + i], ghi[f0 * k + i], up[i], down[i]);
      EXPECT_LE(box, detail::grid_limit(detail::prune_threshold(pca, group_min, delta), step));
    }
  }
  if (frame_grid) {
    EXPECT_GT(checked, 0u);
  }
}

TEST(MatchSearch, GridBoundNeverExceedsTheCost) {
  expect_grid_bounds_below_costs(motion_like(1500, 27, 31), 1);
  expect_grid_bounds_below_costs(motion_like(300, 40, 32), 2);
  expect_grid_bounds_below_costs(iid(500, 27, 52, 0, 1), 3);
  expect_grid_bounds_below_costs(iid(300, 27, 53, 1e4f, 1), 4);
  expect_grid_bounds_below_costs(iid(500, 9, 35, 0, 1e-20f), 5);
  expect_grid_bounds_below_costs(iid(500, 9, 36, 0, 1e18f), 6);
  expect_grid_bounds_below_costs(iid(64, 3, 37, 0, 1), 7);
}

// The tree on degenerate data: constant features, one frame, all frames equal, far offsets,
// tiny and huge scales; random, near and on-frame queries, same answers as the brute force.
TEST(MatchSearch, DegenerateDataMatchesBruteForce) {
  std::vector<FeatureMatrix> sets;
  sets.push_back(iid(1, 27, 41, 0, 1));
  FeatureMatrix equal = iid(1, 27, 42, 0, 1);
  const std::vector<float> row = equal.values;
  for (int f = 1; f < 777; ++f) equal.values.insert(equal.values.end(), row.begin(), row.end());
  sets.push_back(equal);
  FeatureMatrix constant = motion_like(3000, 27, 43);
  for (size_t f = 0; f < constant.frames(); ++f)
    for (size_t d = 20; d < 27; ++d) constant.values[f * 27 + d] = -2.0f;
  sets.push_back(constant);
  FeatureMatrix zero = iid(500, 5, 44, 0, 0);
  sets.push_back(zero);
  sets.push_back(iid(2000, 27, 45, 1e4f, 1));
  sets.push_back(iid(2000, 12, 46, 0, 1e-20f));
  sets.push_back(iid(2000, 12, 47, 0, 1e18f));
  // Principal coordinates beyond 2^100 (costs overflow to +inf): no integer grid, so the AVX2
  // loops test the half-float boxes.
  sets.push_back(iid(600, 6, 49, 0, 1e31f));
  std::mt19937 rng(48);
  for (const FeatureMatrix& m : sets) {
    const BruteForceSearch brute(m);
    const BoundedTreeSearch tree(m);
    float scale = 0;
    for (const float v : m.values) scale = std::max(scale, std::abs(v));
    for (int t = 0; t < 300; ++t) {
      std::vector<float> q = noisy_frame(m, rng, t % 3 == 0 ? 0.0f : 1e-3f * (scale + 1e-30f));
      if (t % 3 == 2) {
        std::normal_distribution<float> wide(0, scale > 0 ? scale : 1);
        for (float& v : q) v += wide(rng);
      }
      ASSERT_TRUE(same(brute.search(q), tree.search(q))) << "dims " << m.dims << " query " << t;
    }
  }
}

TEST(MatchSearch, MemoryIsReported) {
  const FeatureMatrix m = motion_like(4000, 27, 18);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  const size_t raw = m.values.size() * sizeof(float);
  EXPECT_GE(brute.memory_bytes(), raw);
  EXPECT_GT(tree.memory_bytes(), brute.memory_bytes());
  EXPECT_LT(tree.memory_bytes(), 3 * brute.memory_bytes());
  EXPECT_EQ(tree.blocks(), (m.frames() + 7) / 8);
  EXPECT_GT(tree.nodes(), 0u);
}

// A block store of 2 MiB or more has its own mapping, 2 MiB aligned (search_detail::
// allocate_large, for huge pages): copies, moves and searches work as with the small ones, and
// the reported memory holds the rounding.
TEST(MatchSearch, LargeBlockStoresSearchCopyAndMove) {
  const FeatureMatrix m = motion_like(20000, 27, 19);
  const size_t block_bytes = (m.frames() + 7) / 8 * 8 * m.dims * sizeof(float);
  ASSERT_GE(block_bytes, search_detail::kLargeArrayBytes);
  const BruteForceSearch brute(m);
  const BoundedTreeSearch tree(m);
  EXPECT_GE(brute.memory_bytes(), block_bytes);
  EXPECT_EQ(search_detail::large_array_footprint(block_bytes) % (size_t{2} << 20), 0u);
  BruteForceSearch brute_copy = brute;
  BoundedTreeSearch tree_copy = tree;
  const BoundedTreeSearch tree_moved = std::move(tree_copy);
  std::mt19937 rng(20);
  for (int t = 0; t < 300; ++t) {
    const std::vector<float> q = t % 2 ? random_query(m.dims, rng) : noisy_frame(m, rng, 0.1f);
    const SearchResult r = brute.search(q);
    ASSERT_TRUE(same(r, brute_copy.search(q))) << t;
    ASSERT_TRUE(same(r, tree.search(q))) << t;
    ASSERT_TRUE(same(r, tree_moved.search(q))) << t;
  }
  brute_copy = BruteForceSearch(motion_like(100, 27, 21));  // a large store freed, a small one
  EXPECT_TRUE(brute_copy.search(noisy_frame(m, rng, 0.1f)).found());
}

// The tree's half-float boxes use the same allocator with 16-bit elements: an array of 2 MiB or
// more is mapped (2 MiB rounding), copies keep the values, a small one uses operator new.
TEST(MatchSearch, LargeHalfArraysCopy) {
  using HalfVector = std::vector<uint16_t, search_detail::LargeArrayAllocator<uint16_t>>;
  HalfVector big(search_detail::kLargeArrayBytes / sizeof(uint16_t) + 1, 7);
  big.back() = 9;
#if defined(__linux__)
  EXPECT_EQ(search_detail::large_array_footprint(big.size() * sizeof(uint16_t)), size_t{4} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % (size_t{2} << 20), 0u);
#endif
  const HalfVector copy = big;
  EXPECT_EQ(copy.front(), 7);
  EXPECT_EQ(copy.back(), 9);
  HalfVector moved = std::move(big);
  EXPECT_EQ(moved.back(), 9);
  moved = HalfVector(1000, 3);  // a mapped array freed, a small one
  EXPECT_EQ(search_detail::large_array_footprint(1000 * sizeof(uint16_t)), 2000u);
  EXPECT_EQ(moved[999], 3);
}

}  // namespace
}  // namespace kinema::match
