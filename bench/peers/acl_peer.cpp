// bench/peers/acl_peer.cpp — the Animation Compression Library (ACL), the peer of kinema's
// compression, in kinema_compress_bench on the same clips, the same resampled frames and the same
// error metric. Compiled only when CMake is given -DKINEMA_ACL_ROOT (an ACL checkout whose
// external/rtm holds Realtime Math); ACL is not a dependency of kinema and nothing of it is
// committed. BENCHMARKS.md has the commands.
//
// ACL runs at its defaults, as its acl_compressor tool does for a raw clip: pre_process_track_list
// with the recommended actions (lossy), get_default_compression_settings() (level medium,
// variable bit rates, drop-W rotations), qvvf_transform_error_metric, precision 0.01 cm and shell
// distance 3 cm. ACL's defaults are centimetres, so translations go in as centimetres and come
// back as metres. Its error is then measured by kinema's metric (pose_error: virtual vertices 3 cm
// along each joint's local axes, composed down the chain) at every frame and every midpoint,
// against the frames kinema compresses (compress.h's resample_frames), with ACL's decoder
// interpolating (sample_rounding_policy::none).
//
// Acl/Compress/<source>/<clip>   one compression; counters as kinema's Compress/… rows
// Acl/Decode/<source>/<clip>     warm whole-pose decode at a time advancing by 1/60 s
// AclVsKinema                    both compressors over every clip; prints per-source totals
//                                (ratios, kinema/ACL, max and p99 error, seconds)
#include <benchmark/benchmark.h>

#include <acl/compression/compress.h>
#include <acl/compression/pre_process.h>
#include <acl/compression/track_array.h>
#include <acl/compression/transform_error_metrics.h>
#include <acl/core/ansi_allocator.h>
#include <acl/decompression/decompress.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compress_bench_clips.h"
#include "kinema/compress/compress.h"
#include "kinema/skeleton/skeleton.h"

namespace {

using kinema::bench::CompressBenchClip;

constexpr float kCentimetres = 100.0f;  // ACL's default precision and shell distance are in cm

acl::ansi_allocator& allocator() {
  static acl::ansi_allocator a;
  return a;
}

/// One clip compressed by ACL, with the frames it was built from.
struct AclResult {
  acl::compressed_tracks* tracks = nullptr;  // owned, freed by the deleter below
  std::vector<kinema::Transform> frames;     // frames × joints, metres
  double rate = 0;
  int joints = 0, frame_count = 0;
  double seconds = 0;  // pre-processing + compression
  ~AclResult() {
    if (tracks) allocator().deallocate(tracks, tracks->get_size());
  }
};

/// Compresses `clip` with ACL at its defaults.
std::unique_ptr<AclResult> acl_compress(const CompressBenchClip& clip) {
  auto r = std::make_unique<AclResult>();
  const kinema::Skeleton& skeleton = clip.asset->skeleton;
  r->frames = kinema::resample_frames(clip.asset->clips[0], skeleton, 0, r->rate);
  r->joints = skeleton.joint_count();
  r->frame_count = int(r->frames.size() / size_t(r->joints));
  const auto t0 = std::chrono::steady_clock::now();
  acl::track_array_qvvf tracks(allocator(), uint32_t(r->joints));
  for (int j = 0; j < r->joints; ++j) {
    acl::track_desc_transformf desc;
    desc.output_index = uint32_t(j);
    desc.parent_index =
        skeleton.parent(j) < 0 ? acl::k_invalid_track_index : uint32_t(skeleton.parent(j));
    desc.precision = 0.01f;
    desc.shell_distance = 3.0f;
    acl::track_qvvf track =
        acl::track_qvvf::make_reserve(desc, allocator(), uint32_t(r->frame_count), float(r->rate));
    for (int f = 0; f < r->frame_count; ++f) {
      const kinema::Transform& x = r->frames[size_t(f) * size_t(r->joints) + size_t(j)];
      track[uint32_t(f)] =
          rtm::qvv_set(rtm::quat_set(float(x.rotation.x), float(x.rotation.y), float(x.rotation.z),
                                     float(x.rotation.w)),
                       rtm::vector_set(float(x.translation.x) * kCentimetres,
                                       float(x.translation.y) * kCentimetres,
                                       float(x.translation.z) * kCentimetres),
                       rtm::vector_set(float(x.scale.x), float(x.scale.y), float(x.scale.z)));
    }
    tracks[uint32_t(j)] = std::move(track);
  }
  acl::compression_settings settings = acl::get_default_compression_settings();
  acl::qvvf_transform_error_metric metric;
  settings.error_metric = &metric;
  acl::pre_process_settings_t pre;
  pre.actions = acl::pre_process_actions::recommended;
  pre.precision_policy = acl::pre_process_precision_policy::lossy;
  pre.error_metric = &metric;
  acl::pre_process_track_list(allocator(), pre, tracks);
  acl::output_stats stats;
  const acl::error_result result =
      acl::compress_track_list(allocator(), tracks, settings, r->tracks, stats);
  r->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (result.any()) {
    std::fprintf(stderr, "ACL failed on %s/%s: %s\n", clip.source.c_str(), clip.name.c_str(),
                 result.c_str());
    return nullptr;
  }
  return r;
}

/// Writes ACL's decoded tracks as kinema transforms (metres).
struct PoseWriter final : public acl::track_writer {
  kinema::Transform* out = nullptr;
  void RTM_SIMD_CALL write_rotation(uint32_t i, rtm::quatf_arg0 q) {
    out[i].rotation = {rtm::quat_get_x(q), rtm::quat_get_y(q), rtm::quat_get_z(q),
                       rtm::quat_get_w(q)};
  }
  void RTM_SIMD_CALL write_translation(uint32_t i, rtm::vector4f_arg0 t) {
    out[i].translation = {rtm::vector_get_x(t) / kCentimetres, rtm::vector_get_y(t) / kCentimetres,
                          rtm::vector_get_z(t) / kCentimetres};
  }
  void RTM_SIMD_CALL write_scale(uint32_t i, rtm::vector4f_arg0 s) {
    out[i].scale = {rtm::vector_get_x(s), rtm::vector_get_y(s), rtm::vector_get_z(s)};
  }
};

/// Warm decode writes into rtm's own types (what an engine using ACL would do).
struct QvvWriter final : public acl::track_writer {
  rtm::qvvf* out = nullptr;
  void RTM_SIMD_CALL write_rotation(uint32_t i, rtm::quatf_arg0 q) { out[i].rotation = q; }
  void RTM_SIMD_CALL write_translation(uint32_t i, rtm::vector4f_arg0 t) { out[i].translation = t; }
  void RTM_SIMD_CALL write_scale(uint32_t i, rtm::vector4f_arg0 s) { out[i].scale = s; }
};

/// kinema's error metric on ACL's output: every frame and midpoint, against the resampled frames
/// (midpoints: their lerp / nlerp, as kinema's own verification uses).
kinema::ErrorStats acl_error(const kinema::Skeleton& skeleton, const AclResult& r) {
  acl::decompression_context<acl::default_transform_decompression_settings> context;
  context.initialize(*r.tracks);
  const size_t n = size_t(r.joints);
  std::vector<kinema::Transform> decoded(n), ref(n);
  std::vector<double> per_joint(n);
  std::vector<float> errors;
  PoseWriter writer;
  writer.out = decoded.data();
  kinema::ErrorStats st;
  for (int f = 0; f < r.frame_count; ++f)
    for (int mid = 0; mid < (f + 1 < r.frame_count ? 2 : 1); ++mid) {
      const double t = (f + 0.5 * mid) / r.rate;
      context.seek(float(t), acl::sample_rounding_policy::none);
      context.decompress_tracks(writer);
      for (size_t j = 0; j < n; ++j) {
        const kinema::Transform& a = r.frames[size_t(f) * n + j];
        if (!mid) {
          ref[j] = a;
          continue;
        }
        const kinema::Transform& b = r.frames[size_t(f + 1) * n + j];
        ref[j] = {lerp(a.translation, b.translation, 0.5), nlerp(a.rotation, b.rotation, 0.5),
                  lerp(a.scale, b.scale, 0.5)};
      }
      for (kinema::Transform& x : decoded) x.rotation = normalize(x.rotation);
      kinema::pose_error(skeleton, ref, decoded, 0.03, per_joint);
      for (size_t j = 0; j < n; ++j) {
        errors.push_back(float(per_joint[j]));
        if (per_joint[j] > st.max) {
          st.max = per_joint[j];
          st.worst_joint = int(j);
          st.worst_time = t;
        }
      }
    }
  st.samples = errors.size();
  if (!errors.empty()) {
    const size_t k = size_t(std::floor(0.99 * double(errors.size() - 1)));
    std::nth_element(errors.begin(), errors.begin() + std::ptrdiff_t(k), errors.end());
    st.p99 = errors[k];
  }
  return st;
}

size_t raw_bytes(const AclResult& r) { return 40 * size_t(r.joints) * size_t(r.frame_count); }

void acl_compress_one(benchmark::State& state, const CompressBenchClip* clip) {
  std::unique_ptr<AclResult> r;
  for (auto _ : state) {
    r = acl_compress(*clip);
    if (!r) {
      state.SkipWithError("ACL failed");
      return;
    }
  }
  const kinema::ErrorStats e = acl_error(clip->asset->skeleton, *r);
  state.counters["ratio"] = double(raw_bytes(*r)) / double(r->tracks->get_size());
  state.counters["max_error_cm"] = e.max * 100;
  state.counters["p99_error_cm"] = e.p99 * 100;
  state.counters["raw_MB"] = double(raw_bytes(*r)) / 1e6;
  state.counters["compressed_kB"] = double(r->tracks->get_size()) / 1e3;
  state.counters["joints"] = r->joints;
  state.counters["frames"] = r->frame_count;
}

void acl_decode(benchmark::State& state, const CompressBenchClip* clip) {
  const std::unique_ptr<AclResult> r = acl_compress(*clip);
  if (!r) {
    state.SkipWithError("ACL failed");
    return;
  }
  acl::decompression_context<acl::default_transform_decompression_settings> context;
  context.initialize(*r->tracks);
  std::vector<rtm::qvvf> pose(size_t(r->joints));
  QvvWriter writer;
  writer.out = pose.data();
  const float duration = float(r->frame_count - 1) / float(r->rate);
  float t = 0;
  for (auto _ : state) {
    t += 1.0f / 60;
    if (t > duration) t = 0;
    context.seek(t, acl::sample_rounding_policy::none);
    context.decompress_tracks(writer);
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  state.counters["joints"] = r->joints;
  state.counters["compressed_kB"] = double(r->tracks->get_size()) / 1e3;
}

struct Side {
  size_t raw = 0, compressed = 0, clips = 0;
  double max_error = 0, p99 = 0, seconds = 0;
  void add(size_t r, size_t c, const kinema::ErrorStats& e, double s) {
    raw += r, compressed += c, ++clips;
    max_error = std::max(max_error, e.max);
    p99 = std::max(p99, e.p99);
    seconds += s;
  }
  double ratio() const { return double(raw) / double(std::max<size_t>(compressed, 1)); }
};

void acl_vs_kinema(benchmark::State& state, std::vector<CompressBenchClip> clips) {
  std::map<std::string, std::pair<Side, Side>> by_source;  // (kinema, ACL)
  for (auto _ : state) {
    by_source.clear();
    for (const CompressBenchClip& clip : clips) {
      kinema::CompressionStats ks;
      const auto t0 = std::chrono::steady_clock::now();
      const kinema::CompressedClip k =
          kinema::compress(clip.asset->clips[0], clip.asset->skeleton, {}, &ks);
      const double kseconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      benchmark::DoNotOptimize(k.bytes().data());
      const std::unique_ptr<AclResult> a = acl_compress(clip);
      if (!a) continue;
      const kinema::ErrorStats ae = acl_error(clip.asset->skeleton, *a);
      std::printf("%-16s %-28s kinema %7.2f : 1 max %.5f cm | ACL %7.2f : 1 max %.5f cm\n",
                  clip.source.c_str(), clip.name.c_str(), ks.ratio, ks.error.max * 100,
                  double(raw_bytes(*a)) / double(a->tracks->get_size()), ae.max * 100);
      for (const std::string& key : {clip.source, std::string("total")}) {
        by_source[key].first.add(ks.raw_bytes, ks.compressed_bytes, ks.error, kseconds);
        by_source[key].second.add(raw_bytes(*a), a->tracks->get_size(), ae, a->seconds);
      }
    }
  }
  std::printf("\n%-14s %5s %12s | %11s %7s %9s %9s %7s | %11s %7s %9s %9s %7s | %8s\n", "source",
              "clips", "raw_bytes", "kinema", "ratio", "max_cm", "p99_cm*", "s", "ACL", "ratio",
              "max_cm", "p99_cm*", "s", "k / ACL");
  for (const auto& [name, sides] : by_source) {
    const Side& k = sides.first;
    const Side& a = sides.second;
    std::printf(
        "%-14s %5zu %12zu | %11zu %7.2f %9.5f %9.5f %7.3f | %11zu %7.2f %9.5f %9.5f %7.3f | "
        "%7.3fx\n",
        name.c_str(), k.clips, k.raw, k.compressed, k.ratio(), k.max_error * 100, k.p99 * 100,
        k.seconds, a.compressed, a.ratio(), a.max_error * 100, a.p99 * 100, a.seconds,
        k.ratio() / a.ratio());
  }
  std::printf("(* the largest per-clip 99th percentile; s: compression seconds, one core)\n\n");
  const auto& total = by_source["total"];
  state.counters["kinema_ratio"] = total.first.ratio();
  state.counters["acl_ratio"] = total.second.ratio();
}

}  // namespace

void register_acl_benchmarks(const std::vector<CompressBenchClip>& clips) {
  benchmark::RegisterBenchmark("AclVsKinema", acl_vs_kinema, clips)
      ->Unit(benchmark::kSecond)
      ->Iterations(1);
  for (const CompressBenchClip& clip : clips) {
    const std::string id = clip.source + "/" + clip.name;
    benchmark::RegisterBenchmark(("Acl/Compress/" + id).c_str(), acl_compress_one, &clip)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    benchmark::RegisterBenchmark(("Acl/Decode/" + id).c_str(), acl_decode, &clip);
  }
}
