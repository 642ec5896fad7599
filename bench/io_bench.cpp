// bench/io_bench.cpp — file reading and writing speed.
//
// BVH parse throughput (MB/s, from memory so the disk is not measured) on the largest shared BVH
// of each skeleton family, BVH formatting, and glTF/GLB load time (CesiumMan, the Quaternius
// robot). The shared data folder is $KINEMA_SHARED_DATA, default ../shared/data beside the
// checkout; files that are not there are reported and skipped (the benchmark list says which ran).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/gltf.h"
#include "shared_data.h"

namespace {

namespace fs = std::filesystem;

using kinema::bench::shared_data;

void bvh_parse(benchmark::State& state, const std::string& path) {
  const std::string text = kinema::read_file(path);
  for (auto _ : state) {
    kinema::Asset asset = kinema::parse_bvh(text, path);
    benchmark::DoNotOptimize(asset.clips.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["file_MB"] = static_cast<double>(text.size()) / 1e6;
}

void bvh_format(benchmark::State& state, const std::string& path) {
  const kinema::Asset asset = kinema::read_bvh(path);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = kinema::format_bvh(asset);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void gltf_load(benchmark::State& state, const std::string& path) {
  size_t bytes = 0;
  std::error_code ec;
  bytes = static_cast<size_t>(fs::file_size(path, ec));
  for (auto _ : state) {
    kinema::Asset asset = kinema::read_gltf(path);
    benchmark::DoNotOptimize(asset.meshes.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string data = shared_data();
  struct Entry {
    const char* name;
    const char* rel;
    void (*fn)(benchmark::State&, const std::string&);
  };
  const std::vector<Entry> entries = {
      {"BvhParse/cmu_cgspeed_01_03", "bvh/cmu_cgspeed_mb/01_03.bvh", bvh_parse},
      {"BvhParse/cmu_daz_indian_06", "bvh/cmu_daz_acrnn/indian_06.bvh", bvh_parse},
      {"BvhParse/cmu_iclone_cc3_001_01", "bvh/cmu_iclone_cc3/001_01.bvh", bvh_parse},
      {"BvhFormat/cmu_cgspeed_01_03", "bvh/cmu_cgspeed_mb/01_03.bvh", bvh_format},
      {"GltfLoad/cesium_man_gltf", "gltf/cesium_man/cesium_man.gltf", gltf_load},
      {"GltfLoad/quaternius_robot_glb", "gltf/quaternius_robot/robot.glb", gltf_load},
      {"GltfLoad/godette_vrm", "vrm/godette/Godette_vrm_v4.vrm", gltf_load},
  };
  for (const Entry& e : entries) {
    const std::string path = data + "/" + e.rel;
    if (!fs::exists(path)) {
      std::fprintf(stderr, "io_bench: %s not found, %s skipped (set KINEMA_SHARED_DATA)\n",
                   path.c_str(), e.name);
      continue;
    }
    benchmark::RegisterBenchmark(e.name, e.fn, path)->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
