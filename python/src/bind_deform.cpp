// python/src/bind_deform.cpp — inverse kinematics (two-bone) and skinning (LBS, DQS).
#include <algorithm>
#include <cmath>

#include "common.h"
#include "kinema/character/asset.h"
#include "kinema/ik/ccd.h"
#include "kinema/ik/chain.h"
#include "kinema/ik/fabrik.h"
#include "kinema/ik/two_bone.h"
#include "kinema/math/dual_quat.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/skinning.h"

namespace kinema::python {
namespace {

Vec3 vec3_of(const py::object& o, const char* what) {
  const auto a = CArray<double>::ensure(o);
  if (!a) throw py::value_error(std::string(what) + ": expected 3 numbers");
  check_shape(a, {3}, what);
  return {a.data()[0], a.data()[1], a.data()[2]};
}

const char* status_name(TwoBoneStatus s) {
  switch (s) {
    case TwoBoneStatus::kReached:
      return "reached";
    case TwoBoneStatus::kUnreachable:
      return "unreachable";
    case TwoBoneStatus::kSoftened:
      return "softened";
    case TwoBoneStatus::kDegenerate:
      return "degenerate";
    case TwoBoneStatus::kInvalidInput:
      return "invalid_input";
  }
  return "?";
}

py::dict result_dict(const TwoBoneResult& r) {
  auto quat = [](const Quat& q) { return py::make_tuple(q.x, q.y, q.z, q.w); };
  auto vec = [](const Vec3& v) { return py::make_tuple(v.x, v.y, v.z); };
  py::dict d;
  d["status"] = status_name(r.status);
  d["reached"] = r.reached;
  d["pole_fallback"] = r.pole_fallback;
  d["root_delta"] = quat(r.root_delta);
  d["mid_delta"] = quat(r.mid_delta);
  d["end_delta"] = quat(r.end_delta);
  d["mid_position"] = vec(r.mid_position);
  d["end_position"] = vec(r.end_position);
  d["mid_bend"] = r.mid_bend;
  return d;
}

TwoBoneInput two_bone_input(const Vec3& root, const Vec3& mid, const Vec3& end,
                            const py::object& target, const py::object& pole, int elbow_side,
                            double weight, double soft_distance) {
  TwoBoneInput in;
  in.root = root, in.mid = mid, in.end = end;
  in.target = vec3_of(target, "target");
  in.pole = vec3_of(pole, "pole");
  in.elbow_side = elbow_side;
  in.weight = weight;
  in.soft_distance = soft_distance;
  return in;
}

py::tuple two_bone_on_pose(const Skeleton& skeleton, const py::object& translations,
                           const py::object& rotations, const py::object& scales, int root, int mid,
                           int end, const py::object& target, const py::object& pole,
                           int elbow_side, double weight, double soft_distance) {
  std::vector<Transform> local = transforms_from_arrays(translations, rotations, scales);
  const int n = skeleton.joint_count();
  if (local.size() != static_cast<size_t>(n))
    throw py::value_error("pose: expected " + std::to_string(n) + " joints");
  for (const int j : {root, mid, end})
    if (j < 0 || j >= n)
      throw py::index_error("joint " + std::to_string(j) + " is not in the skeleton");
  std::vector<Mat4> model(local.size());
  local_to_model(skeleton.parents(), local, model);
  const TwoBoneResult r = solve_two_bone(two_bone_input(
      model[size_t(root)].translation_part(), model[size_t(mid)].translation_part(),
      model[size_t(end)].translation_part(), target, pole, elbow_side, weight, soft_distance));
  if (!apply_two_bone(r, skeleton.parents(), root, mid, end, local) &&
      r.status != TwoBoneStatus::kDegenerate && r.status != TwoBoneStatus::kInvalidInput)
    throw py::value_error("root, mid, end: expected a chain, root above mid above end");
  return py::make_tuple(arrays_from_transforms(local), result_dict(r));
}

const char* ik_status_name(IkStatus s) {
  switch (s) {
    case IkStatus::kReached:
      return "reached";
    case IkStatus::kUnreachable:
      return "unreachable";
    case IkStatus::kMaxIterations:
      return "max_iterations";
    case IkStatus::kInvalidInput:
      return "invalid_input";
  }
  return "?";
}

// CCD or FABRIK on the joints from `root` down to `end` (the end effector): the chain's local
// rotations change, nothing else. Ancestors' scales are taken as uniform (model rotations are
// the products of the local ones).
py::tuple chain_ik_on_pose(const Skeleton& skeleton, const py::object& translations,
                           const py::object& rotations, const py::object& scales, int root, int end,
                           const py::object& target, const std::string& method, double tolerance,
                           int max_iterations) {
  std::vector<Transform> local = transforms_from_arrays(translations, rotations, scales);
  const int n = skeleton.joint_count();
  if (local.size() != static_cast<size_t>(n))
    throw py::value_error("pose: expected " + std::to_string(n) + " joints");
  for (const int j : {root, end})
    if (j < 0 || j >= n)
      throw py::index_error("joint " + std::to_string(j) + " is not in the skeleton");
  if (method != "ccd" && method != "fabrik")
    throw py::value_error("method: expected 'ccd' or 'fabrik', got '" + method + "'");
  std::vector<int> path;  // end, its parent, …, root
  for (int j = end; j != root; j = skeleton.parent(j)) {
    if (j == kNoParent) throw py::value_error("root, end: the end joint is not below the root");
    path.push_back(j);
  }
  path.push_back(root);
  std::reverse(path.begin(), path.end());
  const size_t joints = path.size() - 1;
  if (joints < 1 || joints > kMaxIkChainJoints)
    throw py::value_error("root, end: the chain has " + std::to_string(joints) + " joints; 1 to " +
                          std::to_string(kMaxIkChainJoints) + " are solved");
  std::vector<Mat4> model(local.size());
  local_to_model(skeleton.parents(), local, model);
  Quat base_rotation = Quat::identity();
  for (int j = skeleton.parent(root); j != kNoParent; j = skeleton.parent(j))
    base_rotation = local[static_cast<size_t>(j)].rotation * base_rotation;
  std::vector<Vec3> offsets(joints);
  std::vector<Quat> chain_local(joints);
  for (size_t i = 0; i < joints; ++i) {
    const Transform& joint = local[static_cast<size_t>(path[i])];
    offsets[i] = mul(joint.scale, local[static_cast<size_t>(path[i + 1])].translation);
    chain_local[i] = joint.rotation;
  }
  const IkChain chain{model[static_cast<size_t>(root)].translation_part(), base_rotation, offsets};
  const Vec3 goal = vec3_of(target, "target");
  const IkSettings settings{tolerance, max_iterations};
  const IkResult r = method == "ccd"
                         ? ccd_solve(chain, chain_local, goal, CcdSettings{settings, {}})
                         : fabrik_solve_chain(chain, chain_local, goal, settings);
  if (r.status != IkStatus::kInvalidInput)
    for (size_t i = 0; i < joints; ++i)
      local[static_cast<size_t>(path[i])].rotation = chain_local[i];
  py::dict d;
  d["status"] = ik_status_name(r.status);
  d["iterations"] = r.iterations;
  d["error"] = r.error;
  d["joints"] = std::vector<int>(path.begin(), path.end() - 1);
  return py::make_tuple(arrays_from_transforms(local), d);
}

// Palette (J, 3, 4) float32: S_j = W_skin_joint(j) · B_j⁻¹ as 3×4 affine rows.
py::array_t<float> palette(const py::object& model, const std::vector<int>& skin_joints,
                           const py::object& inverse_bind) {
  const std::vector<Mat4> w = matrices_from_array(model);
  const std::vector<Mat4> b = matrices_from_array(inverse_bind);
  if (b.size() != skin_joints.size())
    throw py::value_error("inverse_bind: expected one matrix per skin joint");
  for (const int j : skin_joints)
    if (j < 0 || static_cast<size_t>(j) >= w.size())
      throw py::index_error("skin joint " + std::to_string(j) + " is not in the model pose");
  auto out = new_array<float>({static_cast<py::ssize_t>(b.size()), 3, 4});
  skinning_palette(w, skin_joints, b,
                   std::span(reinterpret_cast<Affine3x4f*>(out.mutable_data()), b.size()));
  return out;
}

py::object skin(const py::object& positions, const py::object& joints, const py::object& weights,
                const py::object& palette_array, const py::object& normals,
                const std::string& method) {
  const auto p = CArray<float>::ensure(positions);
  const auto j = CArray<uint16_t>::ensure(joints);
  const auto w = CArray<float>::ensure(weights);
  const auto pal = CArray<float>::ensure(palette_array);
  if (!p || !j || !w || !pal) throw py::value_error("skin: expected numeric arrays");
  check_shape(p, {-1, 3}, "positions");
  const py::ssize_t v = p.shape(0);
  check_shape(j, {v, -1}, "joints");
  const py::ssize_t k = j.shape(1);
  check_shape(w, {v, k}, "weights");
  check_shape(pal, {-1, 3, 4}, "palette");
  const bool has_normals = !normals.is_none();
  CArray<float> nrm;
  if (has_normals) {
    nrm = CArray<float>::ensure(normals);
    if (!nrm) throw py::value_error("normals: expected a float array");
    check_shape(nrm, {v, 3}, "normals");
  }
  if (method != "lbs" && method != "dqs")
    throw py::value_error("method: expected 'lbs' or 'dqs', got '" + method + "'");
  SkinMeshView mesh;
  mesh.positions = {reinterpret_cast<const Vec3f*>(p.data()), static_cast<size_t>(v)};
  if (has_normals)
    mesh.normals = {reinterpret_cast<const Vec3f*>(nrm.data()), static_cast<size_t>(v)};
  mesh.influences = static_cast<int>(k);
  mesh.joints = {j.data(), static_cast<size_t>(v * k)};
  mesh.weights = {w.data(), static_cast<size_t>(v * k)};
  const size_t entries = static_cast<size_t>(pal.shape(0));
  validate_skin_mesh(mesh, entries, "", "");
  const std::span<const Affine3x4f> affine(reinterpret_cast<const Affine3x4f*>(pal.data()),
                                           entries);
  auto out_p = new_array<float>({v, 3});
  py::array_t<float> out_n;
  SkinOutputs out;
  out.positions = {reinterpret_cast<Vec3f*>(out_p.mutable_data()), static_cast<size_t>(v)};
  if (has_normals) {
    out_n = new_array<float>({v, 3});
    out.normals = {reinterpret_cast<Vec3f*>(out_n.mutable_data()), static_cast<size_t>(v)};
  }
  bool ok;
  {
    py::gil_scoped_release released;
    if (method == "lbs") {
      ok = skin_lbs(mesh, affine, out);
    } else {
      std::vector<DualQuatf> dq(entries);
      std::vector<Affine3x4f> prescale(entries);
      bool any_scale = false;
      ok = dual_quat_palette(affine, dq, prescale, &any_scale);
      DqsPaletteView view{
          dq, any_scale ? std::span<const Affine3x4f>(prescale) : std::span<const Affine3x4f>()};
      ok = ok && skin_dqs(mesh, view, out);
    }
  }
  if (!ok) throw py::value_error("skin: inputs rejected (sizes)");
  if (has_normals) return py::make_tuple(out_p, out_n);
  return out_p;
}

}  // namespace

void bind_deform(py::module_& m) {
  m.def(
      "solve_two_bone",
      [](const py::object& root, const py::object& mid, const py::object& end,
         const py::object& target, const py::object& pole, int elbow_side, double weight,
         double soft_distance) {
        return result_dict(solve_two_bone(two_bone_input(vec3_of(root, "root"), vec3_of(mid, "mid"),
                                                         vec3_of(end, "end"), target, pole,
                                                         elbow_side, weight, soft_distance)));
      },
      py::arg("root"), py::arg("mid"), py::arg("end"), py::arg("target"), py::arg("pole"),
      py::arg("elbow_side") = 1, py::arg("weight") = 1.0, py::arg("soft_distance") = 0.0,
      R"(Analytic two-bone IK on model-space positions (metres).

Returns a dict: status ('reached', 'unreachable', 'softened', 'degenerate', 'invalid_input'),
the model-space delta rotations of the three joints (x, y, z, w), the new mid and end positions
and the mid joint's bend (radians, 0 straight).)");
  m.def("two_bone_ik", &two_bone_on_pose, py::arg("skeleton"), py::arg("translations"),
        py::arg("rotations"), py::arg("scales") = py::none(), py::kw_only(), py::arg("root"),
        py::arg("mid"), py::arg("end"), py::arg("target"), py::arg("pole"),
        py::arg("elbow_side") = 1, py::arg("weight") = 1.0, py::arg("soft_distance") = 0.0,
        R"(Two-bone IK on a local pose: the chain root → mid → end reaches for `target`.

Only the three joints' local rotations change. Returns ((translations, rotations, scales),
result dict as solve_two_bone's).)");
  m.def("chain_ik", &chain_ik_on_pose, py::arg("skeleton"), py::arg("translations"),
        py::arg("rotations"), py::arg("scales") = py::none(), py::kw_only(), py::arg("root"),
        py::arg("end"), py::arg("target"), py::arg("method") = "ccd", py::arg("tolerance") = 1e-4,
        py::arg("max_iterations") = 32,
        R"(Iterative IK on a local pose: the joints from `root` down to `end`'s parent turn so
that `end` reaches `target` (model space, metres), by CCD ('ccd') or FABRIK on rotations
('fabrik'). Bone lengths are kept; only those joints' local rotations change (ancestors' scales
taken as uniform). Returns ((translations, rotations, scales), dict: status 'reached',
'unreachable' (the chain points at the target), 'max_iterations' or 'invalid_input' (pose
unchanged), iterations, error in metres, the chain's joints).)");
  m.def("skinning_palette", &palette, py::arg("model"), py::arg("skin_joints"),
        py::arg("inverse_bind"),
        "Skinning matrices (J, 3, 4) float32 from model matrices (N, 4, 4), a skin's joints and "
        "its inverse binds.");
  m.def("skin", &skin, py::arg("positions"), py::arg("joints"), py::arg("weights"),
        py::arg("palette"), py::arg("normals") = py::none(), py::arg("method") = "lbs",
        R"(Skins vertices: linear blend ('lbs') or dual-quaternion ('dqs') skinning.

positions (V, 3) float32 in bind space; joints (V, K) uint16 palette indices; weights (V, K)
summing to one; palette (J, 3, 4) from skinning_palette. Returns positions (V, 3), or
(positions, normals) when normals are given. Raises kinema.Error naming the first bad vertex.
Releases the GIL.)");
}

}  // namespace kinema::python
