// bench/compress_bench.cpp — animation compression (issue 7): ratio, error, compression time and
// decode time per clip, on every BVH of $KINEMA_SHARED_DATA/bvh (default
// ../shared/data beside the checkout) plus CesiumMan, at the default bound (0.01 cm, 3 cm virtual
// vertices).
//
// Compress/<source>/<clip>  one compression (files are read before timing); counters: ratio,
//                           max_error_cm, p99_error_cm (measured with the real decoder at every
//                           frame and midpoint), raw_MB, compressed_kB, joints, frames.
// CompressAll               every clip once, on one thread: the whole set's time; per-source
//                           totals are printed as a table after the run (raw and compressed bytes,
//                           ratio, max and p99 error, seconds).
// Decode/<source>/<clip>    warm whole-pose decode at a time advancing by 1/60 s (wrapping).
// DecodeCached/…            the same with a CompressedSamplingCache (decodes only new frames).
// DecodeRandom/…            the same at random times (cold cache lines per call).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compress_bench_clips.h"
#include "kinema/compress/compress.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "shared_data.h"

namespace {

namespace fs = std::filesystem;

using kinema::bench::shared_data;

struct Entry {
  std::string source, name;
  kinema::Asset asset;
};

std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}

void load_all() {
  const fs::path root = shared_data();
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(root / "bvh", ec))
    for (const auto& dir : fs::directory_iterator(root / "bvh"))
      if (dir.is_directory())
        for (const auto& f : fs::directory_iterator(dir.path()))
          if (f.path().extension() == ".bvh") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files)
    entries().push_back(
        {f.parent_path().filename().string(), f.stem().string(), kinema::read_bvh(f.string())});
  const fs::path cesium = root / "gltf/cesium_man/cesium_man.gltf";
  if (fs::exists(cesium, ec))
    entries().push_back({"cesium_man", "cesium_man", kinema::load_asset(cesium.string())});
  if (entries().empty()) std::fprintf(stderr, "no clips under %s\n", root.c_str());
}

void compress_one(benchmark::State& state, const Entry* e) {
  kinema::CompressionStats st;
  for (auto _ : state) {
    kinema::CompressedClip c = kinema::compress(e->asset.clips[0], e->asset.skeleton, {}, &st);
    benchmark::DoNotOptimize(c.bytes().data());
  }
  state.counters["ratio"] = st.ratio;
  state.counters["max_error_cm"] = st.error.max * 100;
  state.counters["p99_error_cm"] = st.error.p99 * 100;
  state.counters["raw_MB"] = double(st.raw_bytes) / 1e6;
  state.counters["compressed_kB"] = double(st.compressed_bytes) / 1e3;
  state.counters["joints"] = st.joints;
  state.counters["frames"] = st.frames;
}

struct Totals {
  size_t raw = 0, compressed = 0, clips = 0;
  double max_error = 0, p99 = 0, seconds = 0;
};

void compress_all(benchmark::State& state) {
  std::map<std::string, Totals> by_source;
  for (auto _ : state) {
    by_source.clear();
    for (const Entry& e : entries()) {
      kinema::CompressionStats st;
      const auto t0 = std::chrono::steady_clock::now();
      kinema::CompressedClip c = kinema::compress(e.asset.clips[0], e.asset.skeleton, {}, &st);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      benchmark::DoNotOptimize(c.bytes().data());
      for (const std::string& key : {e.source, std::string("total")}) {
        Totals& t = by_source[key];
        t.raw += st.raw_bytes, t.compressed += st.compressed_bytes, ++t.clips;
        t.max_error = std::max(t.max_error, st.error.max);
        t.p99 = std::max(t.p99, st.error.p99);
        t.seconds += s;
      }
    }
  }
  std::printf("\n%-16s %5s %12s %12s %8s %10s %10s %8s\n", "source", "clips", "raw_bytes",
              "compressed", "ratio", "max_cm", "p99_cm*", "seconds");
  for (const auto& [k, t] : by_source)
    std::printf("%-16s %5zu %12zu %12zu %8.2f %10.5f %10.5f %8.3f\n", k.c_str(), t.clips, t.raw,
                t.compressed, double(t.raw) / double(t.compressed), t.max_error * 100, t.p99 * 100,
                t.seconds);
  std::printf("(* the largest per-clip 99th percentile)\n\n");
  const Totals& all = by_source["total"];
  state.counters["ratio"] = double(all.raw) / double(std::max<size_t>(all.compressed, 1));
  state.counters["max_error_cm"] = all.max_error * 100;
}

void decode(benchmark::State& state, const Entry* e, bool random, bool cached) {
  const kinema::CompressedClip c = kinema::compress(e->asset.clips[0], e->asset.skeleton);
  std::vector<kinema::SoaTransform> out(size_t(c.soa_count()));
  kinema::CompressedSamplingCache cache(c);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, c.duration());
  float t = 0;
  for (auto _ : state) {
    if (random) {
      t = u(rng);
    } else {
      t += 1.0f / 60;
      if (t > c.duration()) t = 0;
    }
    if (cached)
      kinema::sample(c, t, cache, out);
    else
      kinema::sample(c, t, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["joints"] = c.joint_count();
  state.counters["compressed_kB"] = double(c.size_bytes()) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  load_all();
  benchmark::RegisterBenchmark("CompressAll", compress_all)
      ->Unit(benchmark::kSecond)
      ->Iterations(1);
  for (const Entry& e : entries()) {
    const std::string id = e.source + "/" + e.name;
    benchmark::RegisterBenchmark(("Compress/" + id).c_str(), compress_one, &e)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    benchmark::RegisterBenchmark(("Decode/" + id).c_str(), decode, &e, false, false);
    benchmark::RegisterBenchmark(("DecodeCached/" + id).c_str(), decode, &e, false, true);
    benchmark::RegisterBenchmark(("DecodeRandom/" + id).c_str(), decode, &e, true, false);
  }
#ifdef KINEMA_COMPRESS_ACL_PEER
  static std::vector<kinema::bench::CompressBenchClip> clips;
  for (const Entry& e : entries()) clips.push_back({e.source, e.name, &e.asset});
  register_acl_benchmarks(clips);
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
