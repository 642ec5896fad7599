// Learned motion matching against the exact search, per frame on one core
// (kinema/match/learned.h, kinema/match/search.h):
//   Learned/step_decompress   the stepper and the decompressor (LearnedPlayer::step + decompress)
//                             and decode_pose into local transforms: what every frame costs;
//   Learned/project           the projector at a query: what a search costs;
//   Exact/search/<db>         BoundedTreeSearch (exact) at real+noise queries of the database.
// The networks have the sizes `kinema match learn` trains by default (27 features, latent 32,
// 512 hidden units; decompressor 1 hidden layer, stepper 2, projector 4) for a skeleton of
// KINEMA_LEARNED_JOINTS joints (default 100, the Character Creator rig), random weights (time
// does not depend on the values), unless KINEMA_LEARNED_MODEL names a .kml. Databases: the
// synthetic 10k / 54k / 200k × 27 features of kinema_match_bench, or KINEMA_MATCH_DB=a.kmm,b.kmm.
//
//   taskset -c 1 build/release/bench/kinema_learned_match_bench --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/file.h"
#include "kinema/match/database.h"
#include "kinema/match/learned.h"
#include "kinema/match/search.h"
#include "random_mlp.h"
#include "synthetic_features.h"

namespace {

using namespace kinema;
using namespace kinema::match;

constexpr size_t kFeatures = 27, kLatent = 32, kHidden = 512;

const LearnedModel& model() {
  static const LearnedModel m = [] {
    if (const char* path = std::getenv("KINEMA_LEARNED_MODEL"); path && *path)
      return deserialize_learned_model(read_file(path), path);
    const char* joints_env = std::getenv("KINEMA_LEARNED_JOINTS");
    const int joints = joints_env && *joints_env ? std::atoi(joints_env) : 100;
    const uint32_t S = kFeatures + kLatent, P = uint32_t(pose_vector_size(joints)), H = kHidden;
    LearnedModel r;
    r.mean.assign(kFeatures, 0);
    r.latent_dims = kLatent;
    r.start_state.assign(S, 0.1f);
    r.decompressor = bench::random_mlp({S, H, P}, Activation::relu, 1);
    r.stepper = bench::random_mlp({S, H, H, S}, Activation::relu, 2);
    r.projector = bench::random_mlp({kFeatures, H, H, H, H, S}, Activation::relu, 3);
    return r;
  }();
  return m;
}

void BM_LearnedStepDecompress(benchmark::State& state) {
  const LearnedModel& m = model();
  LearnedPlayer player(m);
  const size_t joints = (m.decompressor.outputs() - 5) / 9;
  std::vector<Transformf> local(joints);
  RootStep step;
  bool contacts[2];
  for (auto _ : state) {
    player.step();
    decode_pose(player.decompress(), local, step, contacts);
    benchmark::DoNotOptimize(local.data());
    benchmark::ClobberMemory();
    // Keep the state bounded: random stepper weights would otherwise drift it far away.
    if (std::abs(player.state()[0]) > 1e3f) player.reset();
  }
  state.counters["joints"] = double(joints);
  state.counters["model_bytes"] = double(m.model_bytes());
}
BENCHMARK(BM_LearnedStepDecompress)->Name("Learned/step_decompress");

/// Real+noise queries of a feature matrix: a frame + N(0, 0.1²) per feature.
std::vector<std::vector<float>> queries_of(const FeatureMatrix& f, size_t count) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<size_t> pick(0, f.frames() - 1);
  std::normal_distribution<float> noise(0, 0.1f);
  std::vector<std::vector<float>> out(count, std::vector<float>(f.dims));
  for (auto& q : out) {
    const size_t frame = pick(rng);
    for (size_t d = 0; d < f.dims; ++d) q[d] = f.values[frame * f.dims + d] + noise(rng);
  }
  return out;
}

void BM_LearnedProject(benchmark::State& state) {
  LearnedPlayer player(model());
  FeatureMatrix f;
  f.dims = kFeatures;
  std::mt19937 rng(4);
  std::normal_distribution<float> n01(0, 1);
  f.values.resize(1000 * kFeatures);
  for (float& v : f.values) v = n01(rng);
  const auto queries = queries_of(f, 1000);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(player.project(queries[i]));
    i = i + 1 == queries.size() ? 0 : i + 1;
  }
}
BENCHMARK(BM_LearnedProject)->Name("Learned/project");

struct ExactDatabase {
  FeatureMatrix features;
  std::unique_ptr<BoundedTreeSearch> tree;
  std::vector<std::vector<float>> queries;
  size_t bytes = 0;  ///< the .kmm's size (features and poses), or the features' bytes
};

void BM_ExactSearch(benchmark::State& state, const std::string& source) {
  static std::map<std::string, ExactDatabase> cache;
  ExactDatabase& db = cache[source];
  if (!db.tree) {
    if (source.starts_with("kmm:")) {
      const std::string bytes = read_file(source.substr(4));
      db.bytes = bytes.size();
      db.features = deserialize_database(bytes, source.substr(4)).features;
    } else {
      db.features = bench::synthetic_features(size_t(std::stoul(source)) * 1000, kFeatures, 11);
      db.bytes = db.features.values.size() * sizeof(float);
    }
    db.tree = std::make_unique<BoundedTreeSearch>(db.features);
    db.queries = queries_of(db.features, 1000);
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.tree->search(db.queries[i]));
    i = i + 1 == db.queries.size() ? 0 : i + 1;
  }
  state.counters["frames"] = double(db.features.frames());
  state.counters["database_bytes"] = double(db.bytes);
}

[[maybe_unused]] const bool registered = [] {
  std::vector<std::pair<std::string, std::string>> dbs;
  if (const char* env = std::getenv("KINEMA_MATCH_DB"); env && *env) {
    const std::string list = env;
    for (size_t b = 0; b <= list.size();) {
      size_t e = list.find(',', b);
      if (e == std::string::npos) e = list.size();
      const std::string path = list.substr(b, e - b);
      if (!path.empty()) {
        std::string stem = path.substr(path.find_last_of('/') + 1);
        stem = stem.substr(0, stem.find_last_of('.'));
        dbs.emplace_back(stem, "kmm:" + path);
      }
      b = e + 1;
    }
  } else {
    for (const char* k : {"10", "54", "200"}) dbs.emplace_back(std::string(k) + "k", k);
  }
  for (const auto& [name, source] : dbs)
    benchmark::RegisterBenchmark(("Exact/search/" + name).c_str(), BM_ExactSearch, source);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
