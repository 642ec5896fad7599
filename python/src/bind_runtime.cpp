// python/src/bind_runtime.cpp — the per-frame runtime: RuntimeClip sampling, pose blending, and
// compressed clips (compress, sample, decompress, measure).
#include <chrono>
#include <cmath>

#include "common.h"
#include "kinema/blend/pose_ops.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/compress/compress.h"
#include "kinema/compress/compressed_animation.h"
#include "kinema/compress/compressed_clip.h"
#include "kinema/core/error.h"
#include "kinema/math/soa_transform.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::python {
namespace {

// Poses written into three float32 arrays — (F, N, 3), (F, N, 4), (F, N, 3), or (N, …) for one
// pose — frame after frame: new arrays, or the caller's (`out`, reused without a copy).
struct PoseRows {
  py::array_t<float> t, r, s;
  float *tp, *rp, *sp;
  PoseRows(py::ssize_t frames, py::ssize_t joints, const py::object& out = py::none(),
           bool one_pose = false) {
    using Shape = std::vector<py::ssize_t>;
    auto shape = [&](py::ssize_t k) {
      return one_pose ? Shape{joints, k} : Shape{frames, joints, k};
    };
    if (out.is_none()) {
      t = new_array<float>(shape(3)), r = new_array<float>(shape(4)),
      s = new_array<float>(shape(3));
    } else {
      const auto arrays = out.cast<py::tuple>();
      if (arrays.size() != 3)
        throw py::value_error("out: expected (translations, rotations, scales)");
      const char* names[] = {"out[0]", "out[1]", "out[2]"};
      py::array_t<float>* dest[] = {&t, &r, &s};
      for (size_t i = 0; i < 3; ++i) {
        // Written in place: only a C-contiguous, writeable float32 array will do (no copy).
        if (!py::isinstance<py::array_t<float, py::array::c_style>>(arrays[i]))
          throw py::value_error(std::string(names[i]) + ": expected a C-contiguous float32 array");
        *dest[i] = arrays[i].cast<py::array_t<float>>();
        if (!dest[i]->writeable()) throw py::value_error(std::string(names[i]) + ": read-only");
        check_shape(*dest[i], {frames, joints, i == 1 ? 4 : 3}, names[i]);
      }
    }
    tp = t.mutable_data(), rp = r.mutable_data(), sp = s.mutable_data();
  }
  void append(std::span<const SoaTransform> pose, int joints) {
    for (int j = 0; j < joints; ++j) {
      const Transformf x = get_joint(pose, j);
      *tp++ = x.translation.x, *tp++ = x.translation.y, *tp++ = x.translation.z;
      *rp++ = x.rotation.x, *rp++ = x.rotation.y, *rp++ = x.rotation.z, *rp++ = x.rotation.w;
      *sp++ = x.scale.x, *sp++ = x.scale.y, *sp++ = x.scale.z;
    }
  }
  py::tuple arrays() const { return py::make_tuple(t, r, s); }
};

std::vector<SoaTransform> soa_pose(const py::tuple& pose, const char* what) {
  if (pose.size() < 2 || pose.size() > 3)
    throw py::value_error(std::string(what) + ": expected (translations, rotations[, scales])");
  const std::vector<Transformf> aos = transformsf_from_arrays(
      pose[0], pose[1], pose.size() == 3 ? py::object(pose[2]) : py::none());
  std::vector<SoaTransform> soa(static_cast<size_t>(soa_count(static_cast<int>(aos.size()))));
  to_soa(aos, soa);
  return soa;
}

template <class ClipT, class CacheT>
py::tuple sample_many(const ClipT& clip, const CArray<double>& times, const py::object& out) {
  check_shape(times, {-1}, "times");
  const int joints = clip.joint_count();
  PoseRows rows(times.shape(0), joints, out);
  const double* tp = times.data();
  {
    py::gil_scoped_release released;
    CacheT cache(clip);
    std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
    for (py::ssize_t f = 0; f < times.shape(0); ++f) {
      sample(clip, static_cast<float>(tp[f]), cache, pose);
      rows.append(pose, joints);
    }
  }
  return rows.arrays();
}

template <class ClipT>
py::tuple sample_one(const ClipT& clip, float time) {
  if (std::isnan(time)) throw py::value_error("time: NaN");
  std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
  sample(clip, time, pose);
  PoseRows rows(1, clip.joint_count(), py::none(), true);
  rows.append(pose, clip.joint_count());
  return rows.arrays();
}

py::tuple blend_poses(const std::vector<py::tuple>& poses, const std::vector<float>& weights,
                      const Skeleton& skeleton,
                      const std::optional<std::vector<py::object>>& masks) {
  if (poses.empty()) throw py::value_error("poses: at least one pose is needed");
  if (weights.size() != poses.size())
    throw py::value_error("weights: expected one per pose (" + std::to_string(poses.size()) + ")");
  if (masks && masks->size() != poses.size())
    throw py::value_error("joint_weights: expected one per pose (or None)");
  const int n = skeleton.joint_count();
  std::vector<std::vector<SoaTransform>> soa;
  std::vector<std::vector<float>> mask_values(poses.size());
  std::vector<BlendLayer> layers;
  for (size_t i = 0; i < poses.size(); ++i) {
    soa.push_back(soa_pose(poses[i], "poses"));
    if (soa.back().size() != static_cast<size_t>(soa_count(n)))
      throw py::value_error("poses[" + std::to_string(i) + "]: expected " + std::to_string(n) +
                            " joints");
    if (masks && !(*masks)[i].is_none()) {
      mask_values[i] = (*masks)[i].cast<std::vector<float>>();
      if (mask_values[i].size() != static_cast<size_t>(n))
        throw py::value_error("joint_weights[" + std::to_string(i) + "]: expected one per joint");
    }
  }
  for (size_t i = 0; i < poses.size(); ++i) layers.push_back({soa[i], weights[i], mask_values[i]});
  std::vector<Transformf> rest_aos;
  for (const Transform& x : skeleton.rest_pose()) rest_aos.push_back(Transformf(x));
  std::vector<SoaTransform> rest(static_cast<size_t>(soa_count(n))), out(rest.size());
  to_soa(rest_aos, rest);
  if (!blend(layers, rest, n, out))
    throw py::value_error("blend: inputs rejected (sizes or weights)");
  PoseRows rows(1, n, py::none(), true);
  rows.append(out, n);
  return rows.arrays();
}

// A compressed clip and, when it was made here, what compressing it measured.
struct Compressed {
  CompressedClip clip;
  std::optional<CompressionStats> stats;
};

py::dict stats_dict(const CompressionStats& s) {
  py::dict d;
  d["raw_bytes"] = s.raw_bytes;
  d["compressed_bytes"] = s.compressed_bytes;
  d["ratio"] = s.ratio;
  d["identity_tracks"] = s.identity_tracks;
  d["constant_tracks"] = s.constant_tracks;
  d["animated_tracks"] = s.animated_tracks;
  d["mean_bits"] = s.mean_bits;
  d["frames"] = s.frames;
  d["joints"] = s.joints;
  d["max_error"] = s.error.max;
  d["p99_error"] = s.error.p99;
  return d;
}

}  // namespace

void bind_runtime(py::module_& m) {
  py::class_<RuntimeClip>(m, "RuntimeClip", R"(A clip resampled for per-frame playback.

Uniform frames, SoA storage, 16-bit rotations (about 0.002 degrees); sampling returns float32
poses.)")
      .def(py::init([](const Clip& clip, const Skeleton& skeleton, double sample_rate,
                       const std::string& format, double constant_tolerance) {
             RuntimeClipOptions options;
             options.sample_rate = sample_rate;
             options.constant_tolerance = constant_tolerance;
             if (format == "compact")
               options.format = RuntimeClipFormat::Compact;
             else if (format != "fast")
               throw kinema::UsageError("format must be 'fast' or 'compact', not '" + format + "'");
             return RuntimeClip::build(clip, skeleton, options);
           }),
           py::arg("clip"), py::arg("skeleton"), py::arg("sample_rate") = 0.0,
           py::arg("format") = "fast", py::arg("constant_tolerance") = 1e-6,
           "Builds from a raw clip (sample_rate 0: the clip's own, 30 without one). format 'fast' "
           "(whole four-joint groups, 16-bit rotations) or 'compact' (only the moving joints, "
           "smallest-three rotations: about half the memory); a channel moving less than "
           "constant_tolerance (metres, quaternion component) is stored once.")
      .def_property_readonly("name", &RuntimeClip::name)
      .def_property_readonly("duration", &RuntimeClip::duration)
      .def_property_readonly("sample_rate", &RuntimeClip::sample_rate)
      .def_property_readonly("frame_count", &RuntimeClip::frame_count)
      .def_property_readonly("joint_count", &RuntimeClip::joint_count)
      .def_property_readonly("memory_bytes", &RuntimeClip::memory_bytes)
      .def("sample", &sample_one<RuntimeClip>, py::arg("time"),
           "The local pose at `time` (clamped): (translations, rotations, scales), float32.")
      .def("sample_many", &sample_many<RuntimeClip, SamplingCache>, py::arg("times"),
           py::arg("out") = py::none(),
           "Poses at every time, (F, N, 3/4/3) float32, with a decoding cache. out: three "
           "C-contiguous float32 arrays of those shapes to write into (reused, no allocation); "
           "returns them. Releases the GIL.");

  // For bench/python_overhead.py: the same samples as RuntimeClip.sample_many, timed inside C++
  // (SoA poses, no conversion, no Python): what a C++ caller pays per pose.
  m.def(
      "_time_cpp_sampling",
      [](const RuntimeClip& clip, const CArray<double>& times, bool cached) {
        check_shape(times, {-1}, "times");
        py::gil_scoped_release released;
        SamplingCache cache(clip);
        std::vector<SoaTransform> pose(static_cast<size_t>(clip.soa_count()));
        const auto start = std::chrono::steady_clock::now();
        for (py::ssize_t i = 0; i < times.shape(0); ++i) {
          const auto t = static_cast<float>(times.data()[i]);
          if (cached)
            sample(clip, t, cache, pose);
          else
            sample(clip, t, pose);
        }
        const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
        return s.count();
      },
      py::arg("clip"), py::arg("times"), py::arg("cached") = true,
      "Internal (benchmarks): seconds C++ takes to sample every time, without Python.");

  m.def("blend", &blend_poses, py::arg("poses"), py::arg("weights"), py::arg("skeleton"),
        py::arg("joint_weights") = py::none(),
        R"(Weighted blend of local poses (each (translations, rotations[, scales])).

Weights need not sum to one (they are normalized per joint); joint_weights: an optional mask
per pose, one weight per joint. Joints whose total weight is below 1e-4 take the skeleton's rest.
Returns a float32 pose.)");

  py::class_<Compressed>(m, "CompressedClip", R"(A clip compressed within an error bound.

The bound is on the positions of points `vertex_distance` metres from each joint (ACL's
virtual vertices), in metres.)")
      .def_property_readonly("name", [](const Compressed& c) { return c.clip.name(); })
      .def_property_readonly("duration", [](const Compressed& c) { return c.clip.duration(); })
      .def_property_readonly("sample_rate",
                             [](const Compressed& c) { return c.clip.sample_rate(); })
      .def_property_readonly("frame_count",
                             [](const Compressed& c) { return c.clip.frame_count(); })
      .def_property_readonly("joint_count",
                             [](const Compressed& c) { return c.clip.joint_count(); })
      .def_property_readonly("size_bytes", [](const Compressed& c) { return c.clip.size_bytes(); })
      .def_property_readonly("memory_bytes",
                             [](const Compressed& c) { return c.clip.memory_bytes(); })
      .def_property_readonly(
          "stats",
          [](const Compressed& c) -> py::object {
            return c.stats ? py::object(stats_dict(*c.stats)) : py::none();
          },
          "What compress() measured (None for a clip read from bytes).")
      .def(
          "to_bytes",
          [](const Compressed& c) {
            const auto b = c.clip.bytes();
            return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
          },
          "The serialized clip (what from_bytes reads).")
      .def_static(
          "from_bytes",
          [](const py::bytes& data, const std::string& source) {
            const std::string_view bytes = data;
            return Compressed{CompressedClip::deserialize(
                                  std::as_bytes(std::span(bytes.data(), bytes.size())), source),
                              std::nullopt};
          },
          py::arg("data"), py::arg("source") = "",
          "Reads a serialized clip; raises kinema.Error naming `source` and the byte offset.")
      .def(
          "sample", [](const Compressed& c, float time) { return sample_one(c.clip, time); },
          py::arg("time"), "The decoded local pose at `time`, float32.")
      .def(
          "sample_many",
          [](const Compressed& c, const CArray<double>& times, const py::object& out) {
            return sample_many<CompressedClip, CompressedSamplingCache>(c.clip, times, out);
          },
          py::arg("times"), py::arg("out") = py::none(),
          "Decoded poses at every time, with a cache; `out` as RuntimeClip.sample_many's. "
          "Releases the GIL.")
      .def(
          "decompress",
          [](const Compressed& c, const Skeleton& skeleton) {
            py::gil_scoped_release released;
            return decompress_clip(c.clip, skeleton);
          },
          py::arg("skeleton"), "A raw clip with a key per compressed frame.")
      .def(
          "measure_error",
          [](const Compressed& c, const Clip& clip, const Skeleton& skeleton,
             double vertex_distance) {
            ErrorStats e;
            {
              py::gil_scoped_release released;
              e = measure_error(clip, skeleton, c.clip, vertex_distance);
            }
            py::dict d;
            d["max"] = e.max;
            d["p99"] = e.p99;
            d["worst_joint"] = e.worst_joint;
            d["worst_time"] = e.worst_time;
            d["samples"] = e.samples;
            return d;
          },
          py::arg("clip"), py::arg("skeleton"), py::arg("vertex_distance") = 0.03,
          "The error against the raw clip at every frame and midpoint, metres.");

  m.def(
      "compress",
      [](const Clip& clip, const Skeleton& skeleton, double max_error, double vertex_distance,
         int segment_frames, double sample_rate) {
        CompressOptions options;
        options.max_error = max_error;
        options.vertex_distance = vertex_distance;
        options.segment_frames = segment_frames;
        options.sample_rate = sample_rate;
        py::gil_scoped_release released;
        Compressed out;
        CompressionStats stats;
        out.clip = compress(clip, skeleton, options, &stats);
        out.stats = stats;
        return out;
      },
      py::arg("clip"), py::arg("skeleton"), py::arg("max_error") = 1e-4,
      py::arg("vertex_distance") = 0.03, py::arg("segment_frames") = 16,
      py::arg("sample_rate") = 0.0,
      R"(Compresses a clip so that no virtual vertex moves more than max_error metres.

Raises kinema.Error when the clip does not validate or an option is out of range. Releases the
GIL.)");
}

}  // namespace kinema::python
