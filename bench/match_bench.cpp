// bench/match_bench.cpp — single-query motion-matching search (kinema/match/search.h):
// BruteForceSearch and BoundedTreeSearch, and side by side on the same features and queries
// Daniel Holden's AABB search (-DKINEMA_HOLDEN_ROOT=<orangeduck/Motion-Matching checkout>,
// bench/peers/holden_peer.cpp) and nanoflann's exact k-d tree (when nanoflann.hpp is found,
// bench/peers/nanoflann_peer.cpp).
//
// Benchmarks are Search/<method>/<database>/<queries>: one iteration = one query, taken in turn
// from a fixed set of 1000. Counters: mean_us and p99_us (per-query times measured around each
// call with steady_clock, so they include ~20-40 ns of clock overhead), blocks (mean blocks of
// 8 frames visited, kinema only), nodes (mean tree nodes tested), bytes_per_frame (memory of the
// structure / frames), mismatches (queries of the set whose answer frame differs from
// BruteForceSearch's) and cost_bits_differ (same frame, other float bits).
//
// Crowd/<method>/<database>/<queries>/real_time/threads:N: the same queries from N threads at once
// on one shared structure (each thread starts at another place in the set); items_per_second is
// the total queries per second of all threads.
//
// Databases: synthetic, 10k / 54k / 200k frames × 27 features, unless one of these is set:
//  - KINEMA_MATCH_DB=path[,path...]: motion-matching databases (.kmm, `kinema match build`),
//    read with match::deserialize_database; the benchmarks search their normalized, weighted
//    features with their end-of-clip exclusion (searchable flags; the peers get the same frames).
//    Named by the file's stem (e.g. mm54k).
//  - KINEMA_MATCH_FEATURES=path: a raw file, the 4 bytes "KMF1", uint32 frames, uint32 dims, then
//    frames × dims float32 (little-endian, row-major, already normalized and weighted); every
//    frame searchable. Named "file".
// Synthetic: clips of 300 frames, each a smooth random trajectory of an 8-D latent state (damped
// random walk in velocity) mapped linearly to 27 features, plus a small smooth per-feature
// wobble; normalized to zero mean and unit variance per feature, as a motion-matching database is.
//
// Query sets (1000 queries each, fixed seed):
//  - "near" (real+noise): a database frame picked uniformly among all frames + Gaussian noise
//    σ = 0.1 per feature, in normalized units (what a running character asks for);
//  - "random": N(0, 1) per feature (adversarial: far from the data's manifold);
//  - "box": uniform per feature over the database's bounding box [min_d, max_d] (adversarial,
//    even farther from the manifold in most directions).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/match/search.h"
#include "match_peers.h"
#include "synthetic_features.h"

namespace kinema::bench {
namespace {

using match::FeatureMatrix;
using match::SearchResult;

constexpr size_t kQueries = 1000;

FeatureMatrix read_features(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", "cannot open");
  char magic[4];
  uint32_t frames = 0, dims = 0;
  in.read(magic, 4);
  in.read(reinterpret_cast<char*>(&frames), 4);
  in.read(reinterpret_cast<char*>(&dims), 4);
  if (!in || std::memcmp(magic, "KMF1", 4) != 0)
    throw Error(path, "byte 0", "not a KMF1 feature file");
  FeatureMatrix m;
  m.dims = dims;
  m.values.resize(size_t(frames) * dims);
  in.read(reinterpret_cast<char*>(m.values.data()), std::streamsize(m.values.size() * 4));
  if (!in) throw Error(path, "byte 12", "shorter than frames × dims floats");
  return m;
}

// A database with every structure built and both query sets.
struct Database {
  FeatureMatrix m;
  std::unique_ptr<match::BruteForceSearch> brute;
  std::unique_ptr<match::BoundedTreeSearch> tree;
  std::map<std::string, std::unique_ptr<PeerSearch>> peers;
  std::map<std::string, std::vector<std::vector<float>>> queries;
  std::map<std::string, std::vector<SearchResult>> truth;  // brute force's answers
  size_t searchable = 0;                                   // frames the searches may return
};

// The databases to measure: label → source (a synthetic size in thousands, "kmm:path" or
// "kmf:path").
std::vector<std::pair<std::string, std::string>> database_names() {
  std::vector<std::pair<std::string, std::string>> out;
  if (const char* env = std::getenv("KINEMA_MATCH_DB"); env && *env) {
    std::string list = env;
    for (size_t b = 0; b <= list.size();) {
      size_t e = list.find(',', b);
      if (e == std::string::npos) e = list.size();
      const std::string path = list.substr(b, e - b);
      if (!path.empty()) {
        const size_t slash = path.find_last_of('/');
        std::string stem = path.substr(slash == std::string::npos ? 0 : slash + 1);
        if (const size_t dot = stem.find_last_of('.'); dot != std::string::npos && dot > 0)
          stem.resize(dot);
        out.emplace_back(stem, "kmm:" + path);
      }
      b = e + 1;
    }
  } else if (const char* kmf = std::getenv("KINEMA_MATCH_FEATURES"); kmf && *kmf) {
    out.emplace_back("file", std::string("kmf:") + kmf);
  } else {
    for (const char* k : {"10", "54", "200"}) out.emplace_back(std::string(k) + "k", k);
  }
  return out;
}

Database& database(const std::string& source) {
  static std::mutex mutex;  // the crowd benchmarks' threads all ask at once
  const std::lock_guard lock(mutex);
  static std::map<std::string, std::unique_ptr<Database>> cache;
  auto& slot = cache[source];
  if (slot) return *slot;
  slot = std::make_unique<Database>();
  Database& db = *slot;
  if (source.starts_with("kmm:")) {
    const std::string path = source.substr(4);
    db.m = match::deserialize_database(read_file(path), path).features;
  } else if (source.starts_with("kmf:")) {
    db.m = read_features(source.substr(4));
  } else {
    db.m = synthetic_features(size_t(std::stoul(source)) * 1000, 27, 7);
  }
  db.searchable = 0;
  for (size_t f = 0; f < db.m.frames(); ++f)
    db.searchable += db.m.searchable.empty() || db.m.searchable[f] != 0;
  db.brute = std::make_unique<match::BruteForceSearch>(db.m);
  db.tree = std::make_unique<match::BoundedTreeSearch>(db.m);
#ifdef KINEMA_MATCH_HOLDEN_PEER
  db.peers["HoldenAabb"] = make_holden_search(db.m);
#endif
#ifdef KINEMA_MATCH_NANOFLANN_PEER
  db.peers["NanoflannKd"] = make_nanoflann_search(db.m);
#endif
  const size_t dims = db.m.dims;
  std::vector<float> lo(dims, INFINITY), hi(dims, -INFINITY);
  for (size_t f = 0; f < db.m.frames(); ++f)
    for (size_t d = 0; d < dims; ++d) {
      lo[d] = std::min(lo[d], db.m.values[f * dims + d]);
      hi[d] = std::max(hi[d], db.m.values[f * dims + d]);
    }
  std::mt19937 rng(11);
  std::normal_distribution<float> n01(0, 1), noise(0, 0.1f);
  std::uniform_real_distribution<float> u01(0, 1);
  std::uniform_int_distribution<size_t> pick(0, db.m.frames() - 1);
  auto& near = db.queries["near"];
  auto& random = db.queries["random"];
  auto& box = db.queries["box"];
  for (size_t i = 0; i < kQueries; ++i) {
    const size_t f = pick(rng);
    std::vector<float> q(db.m.values.begin() + long(f * dims),
                         db.m.values.begin() + long((f + 1) * dims));
    for (float& v : q) v += noise(rng);
    near.push_back(q);
    for (float& v : q) v = n01(rng);
    random.push_back(q);
    for (size_t d = 0; d < dims; ++d) q[d] = lo[d] + (hi[d] - lo[d]) * u01(rng);
    box.push_back(q);
  }
  for (const auto& [set, qs] : db.queries)
    for (const auto& q : qs) db.truth[set].push_back(db.brute->search(q));
  return db;
}

// One query with the named method.
SearchResult search_one(const Database& db, const std::string& method, const std::vector<float>& q,
                        match::SearchStats* stats) {
  if (method == "BruteForce") return db.brute->search(q, {}, stats);
  if (method == "BoundedTree") return db.tree->search(q, {}, stats);
  return db.peers.at(method)->search(q.data());
}

void run(benchmark::State& state, const std::string& method, const std::string& name,
         const std::string& set) {
  const Database& db = database(name);
  const auto& qs = db.queries.at(set);
  const auto& truth = db.truth.at(set);
  auto one = [&](const std::vector<float>& q, match::SearchStats* stats) {
    return search_one(db, method, q, stats);
  };
  // Answers first (not timed, once per benchmark even with repetitions): how many differ from
  // brute force's.
  struct Check {
    double mismatches = 0, bits = 0, blocks = 0, nodes = 0;
  };
  static std::map<std::string, Check> checks;
  const std::string key = method + "/" + name + "/" + set;
  if (!checks.count(key)) {
    Check& c = checks[key];
    for (size_t i = 0; i < qs.size(); ++i) {
      match::SearchStats stats;
      const SearchResult r = one(qs[i], &stats);
      c.blocks += stats.blocks_visited;
      c.nodes += stats.nodes_visited;
      if (r.frame != truth[i].frame) {
        ++c.mismatches;
      } else if (std::bit_cast<uint32_t>(r.cost) != std::bit_cast<uint32_t>(truth[i].cost)) {
        ++c.bits;
      }
    }
  }
  const auto [mismatches, bits, blocks, nodes] = checks.at(key);
  std::vector<double> times;
  times.reserve(1 << 16);
  size_t i = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const SearchResult r = one(qs[i], nullptr);
    benchmark::DoNotOptimize(r);
    const auto t1 = std::chrono::steady_clock::now();
    if (times.size() < (1 << 16)) times.push_back(std::chrono::duration<double>(t1 - t0).count());
    i = i + 1 == qs.size() ? 0 : i + 1;
  }
  double sum = 0;
  for (const double t : times) sum += t;
  std::sort(times.begin(), times.end());
  const size_t bytes = method == "BruteForce"    ? db.brute->memory_bytes()
                       : method == "BoundedTree" ? db.tree->memory_bytes()
                                                 : db.peers.at(method)->memory_bytes();
  state.counters["mean_us"] = times.empty() ? 0 : 1e6 * sum / double(times.size());
  state.counters["p99_us"] = times.empty() ? 0 : 1e6 * times[times.size() * 99 / 100];
  state.counters["blocks"] = blocks / double(qs.size());
  state.counters["nodes"] = nodes / double(qs.size());
  if (method == "BoundedTree") state.counters["tree_nodes"] = double(db.tree->nodes());
  // Per searchable frame (the frames every method indexes; Holden's boxes and nanoflann's
  // adaptor also hold the unsearchable ones).
  state.counters["bytes_per_frame"] = double(bytes) / double(db.searchable);
  state.counters["frames"] = double(db.searchable);
  state.counters["mismatches"] = mismatches;
  state.counters["cost_bits_differ"] = bits;
}

// Crowd scale: every thread runs its own queries on the one shared structure (searches are const
// and thread-safe); Google Benchmark sums the threads' items, so items_per_second is the total.
void crowd(benchmark::State& state, const std::string& method, const std::string& name,
           const std::string& set) {
  const Database& db = database(name);
  const auto& qs = db.queries.at(set);
  size_t i = (size_t(state.thread_index()) * 397) % qs.size();
  for (auto _ : state) {
    const SearchResult r = search_one(db, method, qs[i], nullptr);
    benchmark::DoNotOptimize(r);
    i = i + 1 == qs.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}

void register_all() {
  std::vector<std::string> methods = {"BruteForce", "BoundedTree"};
#ifdef KINEMA_MATCH_HOLDEN_PEER
  methods.push_back("HoldenAabb");
#endif
#ifdef KINEMA_MATCH_NANOFLANN_PEER
  methods.push_back("NanoflannKd");
#endif
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (const auto& [label, source] : database_names())
    for (const char* set : {"near", "random", "box"})
      for (const auto& method : methods) {
        const std::string suffix = method + "/" + label + "/" + set;
        benchmark::RegisterBenchmark(("Search/" + suffix).c_str(), [=, source = source](
                                                                       benchmark::State& s) {
          run(s, method, source, set);
        })->Unit(benchmark::kMicrosecond);
        auto* b = benchmark::RegisterBenchmark(
            ("Crowd/" + suffix).c_str(),
            [=, source = source](benchmark::State& s) { crowd(s, method, source, set); });
        b->Unit(benchmark::kMicrosecond)->UseRealTime()->Threads(1);
        if (cores > 1) b->Threads(int(cores));
      }
}

}  // namespace
}  // namespace kinema::bench

int main(int argc, char** argv) {
  kinema::bench::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
