// bench/compress_bench_clips.h — the clips of kinema_compress_bench, shared with the ACL peer
// (bench/peers/acl_peer.cpp) so that both compress the same files.
#pragma once

#include <string>
#include <vector>

#include "kinema/character/asset.h"

namespace kinema::bench {

struct CompressBenchClip {
  std::string source;            ///< the folder under shared/data/bvh, or "cesium_man"
  std::string name;              ///< the file's stem
  const Asset* asset = nullptr;  ///< skeleton and clips[0], loaded once
};

}  // namespace kinema::bench

/// Registers the ACL benchmarks (defined in bench/peers/acl_peer.cpp when CMake is given
/// -DKINEMA_ACL_ROOT). `clips` must outlive the benchmark run.
void register_acl_benchmarks(const std::vector<kinema::bench::CompressBenchClip>& clips);
