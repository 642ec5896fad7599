// python/src/bind_core.cpp — skeletons, raw clips, assets and their files.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "kinema/character/asset.h"
#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::python {
namespace {

Skeleton build_skeleton(const std::vector<std::string>& names, const std::vector<int>& parents,
                        const py::object& translations, const py::object& rotations,
                        const py::object& scales, bool require_single_root) {
  if (parents.size() != names.size())
    throw py::value_error("parents: expected one per name (" + std::to_string(names.size()) +
                          "), got " + std::to_string(parents.size()));
  // Missing parts of the rest pose are identities: zero translations, identity rotations.
  const auto n = static_cast<py::ssize_t>(names.size());
  py::object t = translations, r = rotations;
  if (t.is_none()) {
    auto zeros = new_array<double>({n, 3});
    std::fill_n(zeros.mutable_data(), 3 * n, 0.0);
    t = zeros;
  }
  if (r.is_none()) {
    auto identity = new_array<double>({n, 4});
    double* p = identity.mutable_data();
    for (py::ssize_t i = 0; i < 4 * n; ++i) p[i] = i % 4 == 3 ? 1 : 0;
    r = identity;
  }
  const std::vector<Transform> rest = transforms_from_arrays(t, r, scales);
  if (rest.size() != names.size())
    throw py::value_error("translations: expected one row per name (" +
                          std::to_string(names.size()) + ")");
  std::vector<Joint> joints(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    joints[i].name = names[i];
    joints[i].parent = parents[i];
    joints[i].rest = rest[i];
  }
  return Skeleton::build(std::move(joints), require_single_root);
}

py::tuple skeleton_rest(const Skeleton& s) {
  const std::vector<Transform> rest = s.rest_pose();
  return arrays_from_transforms(rest);
}

py::array_t<double> model_matrices(const Skeleton& s, const py::object& translations,
                                   const py::object& rotations, const py::object& scales) {
  const std::vector<Transform> local = transforms_from_arrays(translations, rotations, scales);
  if (local.size() != static_cast<size_t>(s.joint_count()))
    throw py::value_error("pose: expected " + std::to_string(s.joint_count()) + " joints, got " +
                          std::to_string(local.size()));
  std::vector<Mat4> model(local.size());
  local_to_model(s.parents(), local, model);
  return array_from_matrices(model);
}

// A Clip reaches Python only validated (read, built from poses, resampled, decoded; its keys are
// read-only there), so what remains to check against a skeleton is that its tracks fit: a key
// walk (Clip::validate) only then, for its message, not on every sample.
void check_clip_fits(const Clip& clip, const Skeleton& skeleton) {
  if (clip.tracks.size() > static_cast<size_t>(skeleton.joint_count()))
    clip.validate(skeleton.joint_count());
}

void save(const Asset& asset, const std::string& path) {
  py::gil_scoped_release released;
  save_asset(asset, path);
}

WrapMode wrap_of(bool loop) { return loop ? WrapMode::Loop : WrapMode::Clamp; }

py::tuple sample_clip(const Clip& clip, const Skeleton& skeleton, double time, bool loop) {
  check_clip_fits(clip, skeleton);
  std::vector<Transform> pose(static_cast<size_t>(skeleton.joint_count()));
  sample_pose(clip, skeleton, wrap_time(time, clip.duration, wrap_of(loop)), wrap_of(loop), pose);
  return arrays_from_transforms(pose);
}

// Every time of `times` sampled, the GIL released: (F, N, 3), (F, N, 4), (F, N, 3) float64.
py::tuple sample_clip_many(const Clip& clip, const Skeleton& skeleton, const CArray<double>& times,
                           bool loop) {
  check_clip_fits(clip, skeleton);
  check_shape(times, {-1}, "times");
  const auto frames = times.shape(0);
  const auto n = static_cast<py::ssize_t>(skeleton.joint_count());
  auto t = new_array<double>({frames, n, 3});
  auto r = new_array<double>({frames, n, 4});
  auto s = new_array<double>({frames, n, 3});
  const double* tp = times.data();
  double *to = t.mutable_data(), *ro = r.mutable_data(), *so = s.mutable_data();
  {
    py::gil_scoped_release released;
    std::vector<Transform> pose(static_cast<size_t>(n));
    for (py::ssize_t f = 0; f < frames; ++f) {
      sample_pose(clip, skeleton, wrap_time(tp[f], clip.duration, wrap_of(loop)), wrap_of(loop),
                  pose);
      for (const Transform& x : pose) {
        *to++ = x.translation.x, *to++ = x.translation.y, *to++ = x.translation.z;
        *ro++ = x.rotation.x, *ro++ = x.rotation.y, *ro++ = x.rotation.z, *ro++ = x.rotation.w;
        *so++ = x.scale.x, *so++ = x.scale.y, *so++ = x.scale.z;
      }
    }
  }
  return py::make_tuple(t, r, s);
}

// A clip with a LINEAR key per frame on every joint, frame f at f / rate seconds.
Clip clip_from_poses(const std::string& name, double rate, const py::object& translations,
                     const py::object& rotations, const py::object& scales) {
  if (!(rate > 0) || !std::isfinite(rate)) throw py::value_error("rate: must be positive");
  const auto t = CArray<double>::ensure(translations);
  const auto r = CArray<double>::ensure(rotations);
  if (!t || !r) throw py::value_error("translations, rotations: expected float arrays");
  check_shape(t, {-1, -1, 3}, "translations");
  const py::ssize_t frames = t.shape(0), joints = t.shape(1);
  check_shape(r, {frames, joints, 4}, "rotations");
  const bool has_scales = !scales.is_none();
  CArray<double> s;
  if (has_scales) {
    s = CArray<double>::ensure(scales);
    if (!s) throw py::value_error("scales: expected a float array");
    check_shape(s, {frames, joints, 3}, "scales");
  }
  if (frames < 1) throw py::value_error("translations: at least one frame is needed");
  Clip clip;
  clip.name = name;
  clip.sample_rate = rate;
  clip.duration = static_cast<double>(frames - 1) / rate;
  clip.tracks.resize(static_cast<size_t>(joints));
  for (py::ssize_t f = 0; f < frames; ++f)
    for (py::ssize_t j = 0; j < joints; ++j) {
      Transform x;
      const double* tp = t.data() + (f * joints + j) * 3;
      const double* rp = r.data() + (f * joints + j) * 4;
      x.translation = {tp[0], tp[1], tp[2]};
      x.rotation = {rp[0], rp[1], rp[2], rp[3]};
      if (has_scales) {
        const double* sp = s.data() + (f * joints + j) * 3;
        x.scale = {sp[0], sp[1], sp[2]};
      }
      append_key(clip.tracks[static_cast<size_t>(j)], static_cast<double>(f) / rate, x);
    }
  clip.validate(static_cast<int>(joints), name);
  return clip;
}

py::array vec3f_view(const std::vector<Vec3f>& v, py::handle owner) {
  if (v.empty()) return py::array_t<float>(std::vector<py::ssize_t>{0, 3});
  return view(&v[0].x, {static_cast<py::ssize_t>(v.size()), 3}, owner);
}

py::dict source_info(const SourceInfo& s) {
  py::dict d;
  d["path"] = s.path;
  d["format"] = s.format;
  d["generator"] = s.generator;
  d["unit_in_meters"] = s.unit_in_meters;
  d["unit_name"] = s.unit_name;
  d["unit_detected"] = s.unit_detected;
  d["up_axis"] = s.up_axis;
  d["forward_axis"] = s.forward_axis;
  d["warnings"] = s.warnings;
  return d;
}

Asset load(const std::string& path, std::optional<double> bvh_unit) {
  LoadOptions options;
  options.bvh.unit_in_meters = bvh_unit;
  py::gil_scoped_release released;
  return load_asset(path, options);
}

}  // namespace

void bind_core(py::module_& m) {
  py::class_<Skeleton>(m, "Skeleton", R"(A joint hierarchy with its rest pose, parents first.

Joint i's parent has a smaller index (roots: -1). Rest transforms are local to the parent, in
metres, with unit quaternions (x, y, z, w).)")
      .def(py::init<>())
      .def_static("build", &build_skeleton, py::arg("names"), py::arg("parents"),
                  py::arg("translations") = py::none(), py::arg("rotations") = py::none(),
                  py::arg("scales") = py::none(), py::arg("require_single_root") = false,
                  R"(Builds a skeleton from joints in any order (reordered parents first, stable).

names: N unique joint names; parents: N parent indices into `names` (-1 for a root);
translations (N, 3), rotations (N, 4) xyzw, scales (N, 3): the rest pose (identity when None).
Raises kinema.Error naming the joint on unknown parents, cycles, duplicate or empty names.)")
      .def_property_readonly("joint_count", &Skeleton::joint_count)
      .def("__len__", &Skeleton::joint_count)
      .def_property_readonly(
          "names",
          [](const Skeleton& s) {
            std::vector<std::string> names;
            for (const Joint& j : s.joints()) names.push_back(j.name);
            return names;
          },
          "Joint names, in joint order.")
      .def_property_readonly(
          "parents",
          [](py::object self) {
            const auto& s = self.cast<const Skeleton&>();
            const auto p = s.parents();
            return view(p.data(), {static_cast<py::ssize_t>(p.size())}, self);
          },
          "Parent indices (int32, -1 for roots): a read-only view, no copy.")
      .def(
          "find", [](const Skeleton& s, const std::string& name) { return s.find(name); },
          py::arg("name"), "Index of the joint with this exact name, or -1.")
      .def("children", &Skeleton::children, py::arg("joint"))
      .def("roots", &Skeleton::roots)
      .def("depth", &Skeleton::depth, py::arg("joint"))
      .def("rest_pose", &skeleton_rest,
           "The rest pose: (translations (N, 3), rotations (N, 4), scales (N, 3)), float64 copies.")
      .def(
          "rest_model_matrices",
          [](const Skeleton& s) { return array_from_matrices(rest_model_matrices(s)); },
          "Model-space matrices of the rest pose, (N, 4, 4).")
      .def("model_matrices", &model_matrices, py::arg("translations"), py::arg("rotations"),
           py::arg("scales") = py::none(),
           "Forward kinematics of a local pose: model-space matrices (N, 4, 4), m[j, row, col].")
      .def("__repr__", [](const Skeleton& s) {
        return "<kinema.Skeleton " + std::to_string(s.joint_count()) + " joints>";
      });

  py::class_<Clip>(m, "Clip", R"(A raw animation clip: per-joint key tracks in seconds.

Tracks follow the skeleton's joint order; a joint without keys holds its rest value.)")
      .def(py::init<>())
      .def_static("from_poses", &clip_from_poses, py::arg("name"), py::arg("rate"),
                  py::arg("translations"), py::arg("rotations"), py::arg("scales") = py::none(),
                  R"(A clip with one LINEAR key per frame and joint, frame f at f / rate seconds.

translations (F, N, 3), rotations (F, N, 4) xyzw, scales (F, N, 3) or None (ones).)")
      .def_readwrite("name", &Clip::name)
      .def_readonly("duration", &Clip::duration, "Seconds.")
      .def_readonly("sample_rate", &Clip::sample_rate,
                    "Nominal frames per second of the source (0: keys at arbitrary times).")
      .def_property_readonly("frame_count", &Clip::frame_count)
      .def_property_readonly("key_count", &Clip::key_count)
      .def_property_readonly("track_count", [](const Clip& c) { return c.tracks.size(); })
      .def("frame_rate", &infer_frame_rate,
           "The clip's frame rate: its sample_rate, else the grid its keys lie on, else 0.")
      .def("validate", &Clip::validate, py::arg("joint_count"), py::arg("source") = "",
           "Raises kinema.Error when the keys are not usable on `joint_count` joints.")
      .def("sample", &sample_clip, py::arg("skeleton"), py::arg("time"), py::arg("loop") = false,
           "The local pose at `time` seconds: (translations, rotations, scales), float64.")
      .def("sample_many", &sample_clip_many, py::arg("skeleton"), py::arg("times"),
           py::arg("loop") = false,
           "Local poses at every time: arrays (F, N, 3), (F, N, 4), (F, N, 3). Releases the GIL.")
      .def(
          "sample_model",
          [](const Clip& c, const Skeleton& s, double time, bool loop) {
            check_clip_fits(c, s);
            return array_from_matrices(
                sample_model_pose(c, s, wrap_time(time, c.duration, wrap_of(loop)), wrap_of(loop)));
          },
          py::arg("skeleton"), py::arg("time"), py::arg("loop") = false,
          "Model-space matrices at `time`, (N, 4, 4).")
      .def(
          "resample",
          [](const Clip& c, const Skeleton& s, double rate) {
            check_clip_fits(c, s);
            if (!(rate > 0) || !std::isfinite(rate))
              throw py::value_error("rate: must be positive");
            return resample(c, s, rate);
          },
          py::arg("skeleton"), py::arg("rate"),
          "The clip resampled to `rate` frames per second with LINEAR keys.")
      .def("__repr__", [](const Clip& c) {
        return "<kinema.Clip '" + c.name + "' " + std::to_string(c.duration) + " s, " +
               std::to_string(c.frame_count()) + " frames>";
      });

  py::class_<Mesh>(m, "Mesh", "A triangle mesh of an asset; its arrays are read-only views.")
      .def_readonly("name", &Mesh::name)
      .def_readonly("node", &Mesh::node, "Skeleton joint the mesh hangs from (-1: none).")
      .def_readonly("skin", &Mesh::skin, "Index into Asset.skins (-1: rigid).")
      .def_readonly("influences", &Mesh::influences, "Joint influences a vertex: 0, 4 or 8.")
      .def_property_readonly("vertex_count", &Mesh::vertex_count)
      .def_property_readonly(
          "positions",
          [](py::object self) { return vec3f_view(self.cast<const Mesh&>().positions, self); },
          "(V, 3) float32, metres, bind space.")
      .def_property_readonly(
          "normals",
          [](py::object self) { return vec3f_view(self.cast<const Mesh&>().normals, self); },
          "(V, 3) float32, or (0, 3) when the mesh has none.")
      .def_property_readonly(
          "indices",
          [](py::object self) {
            const auto& mesh = self.cast<const Mesh&>();
            return view(mesh.indices.data(), {static_cast<py::ssize_t>(mesh.indices.size() / 3), 3},
                        self);
          },
          "(T, 3) uint32 triangle list.")
      .def_property_readonly(
          "joints",
          [](py::object self) {
            const auto& mesh = self.cast<const Mesh&>();
            const py::ssize_t k = std::max(mesh.influences, 1);
            return view(mesh.joints.data(), {static_cast<py::ssize_t>(mesh.joints.size()) / k, k},
                        self);
          },
          "(V, influences) uint16 indices into the skin's joints.")
      .def_property_readonly(
          "weights",
          [](py::object self) {
            const auto& mesh = self.cast<const Mesh&>();
            const py::ssize_t k = std::max(mesh.influences, 1);
            return view(mesh.weights.data(), {static_cast<py::ssize_t>(mesh.weights.size()) / k, k},
                        self);
          },
          "(V, influences) float32 weights, each row summing to 1.")
      .def_property_readonly("morph_target_names",
                             [](const Mesh& mesh) {
                               std::vector<std::string> names;
                               for (const auto& t : mesh.morph_targets) names.push_back(t.name);
                               return names;
                             })
      .def("__repr__", [](const Mesh& mesh) {
        return "<kinema.Mesh '" + mesh.name + "' " + std::to_string(mesh.vertex_count()) +
               " vertices>";
      });

  py::class_<Skin>(m, "Skin", "Which skeleton joints a skinned mesh's palette uses.")
      .def_readonly("name", &Skin::name)
      .def_property_readonly(
          "joints",
          [](py::object self) {
            const auto& s = self.cast<const Skin&>();
            return view(s.joints.data(), {static_cast<py::ssize_t>(s.joints.size())}, self);
          },
          "Skeleton joint index of each palette entry (int32 view).")
      .def_property_readonly(
          "inverse_bind", [](const Skin& s) { return array_from_matrices(s.inverse_bind); },
          "(J, 4, 4) inverse bind matrices.");

  py::class_<Asset>(m, "Asset",
                    R"(What a file holds: a skeleton, clips, meshes, skins, humanoid map.

`skeleton` and `clips` are copies in and out (assign to change them); `meshes` and `skins` are
read-only views that keep the asset alive.)")
      .def(py::init<>())
      .def_static("load", &load, py::arg("path"), py::arg("bvh_unit") = py::none(),
                  "Same as kinema.load().")
      .def("save", &save, py::arg("path"), "Same as kinema.save(asset, path).")
      .def_property(
          "skeleton", [](const Asset& a) { return a.skeleton; },
          [](Asset& a, const Skeleton& s) { a.skeleton = s; }, "The skeleton (a copy).")
      .def_property(
          "clips", [](const Asset& a) { return a.clips; },
          [](Asset& a, std::vector<Clip> clips) { a.clips = std::move(clips); },
          "The clips (copies; assign a list to replace them).")
      .def(
          "clip",
          [](const Asset& a, const py::object& which) -> Clip {
            if (py::isinstance<py::int_>(which)) {
              const auto i = which.cast<long>();
              if (i < 0 || i >= static_cast<long>(a.clips.size()))
                throw py::index_error("clip " + std::to_string(i) + ": the asset has " +
                                      std::to_string(a.clips.size()) + " clips");
              return a.clips[static_cast<size_t>(i)];
            }
            const auto name = which.cast<std::string>();
            for (const Clip& c : a.clips)
              if (c.name == name) return c;
            throw py::key_error("no clip named '" + name + "'");
          },
          py::arg("which"), "A clip (a copy) by index or name.")
      .def_property_readonly(
          "meshes",
          [](py::object self) {
            auto& a = self.cast<Asset&>();
            py::list out;
            for (Mesh& mesh : a.meshes)
              out.append(py::cast(&mesh, py::return_value_policy::reference_internal, self));
            return out;
          })
      .def_property_readonly(
          "skins",
          [](py::object self) {
            auto& a = self.cast<Asset&>();
            py::list out;
            for (Skin& s : a.skins)
              out.append(py::cast(&s, py::return_value_policy::reference_internal, self));
            return out;
          })
      .def_property_readonly(
          "humanoid",
          [](const Asset& a) {
            py::dict d;
            if (a.humanoid)
              for (const auto& [bone, joint] : a.humanoid->bones) d[py::str(bone)] = joint;
            return d;
          },
          "Humanoid bone name → joint index (empty without a humanoid map).")
      .def_property_readonly(
          "source", [](const Asset& a) { return source_info(a.source); },
          "Where the asset came from: path, format, unit, axes, warnings.")
      .def_property_readonly("spring_bone_count",
                             [](const Asset& a) { return a.spring_bones.joint_count(); })
      .def("__repr__", [](const Asset& a) {
        return "<kinema.Asset " + std::to_string(a.skeleton.joint_count()) + " joints, " +
               std::to_string(a.clips.size()) + " clips, " + std::to_string(a.meshes.size()) +
               " meshes>";
      });

  m.def("load", &load, py::arg("path"), py::arg("bvh_unit") = py::none(),
        R"(Loads .bvh .gltf .glb .vrm .vrma .fbx .dae .kmc, chosen by extension.

bvh_unit: one BVH file unit in metres (None: detected). Raises kinema.Error naming the file,
the place and the reason. Releases the GIL.)");
  m.def("save", &save, py::arg("asset"), py::arg("path"),
        "Saves by extension (.bvh .gltf .glb .vrm .vrma .fbx .kmc), atomically. Releases the GIL.");
}

}  // namespace kinema::python
