// python/src/common.h — helpers shared by the binding files: NumPy arrays to and from kinema's
// types, zero-copy views that keep their owner alive, and the GIL around long calls.
//
// Conventions of the Python API (python/kinema/__init__.pyi documents them for users):
// a pose is three arrays — translations (N, 3), rotations (N, 4) as unit quaternions (x, y, z, w)
// and scales (N, 3) — float64 for offline data (skeletons, raw clips, IK) and float32 for runtime
// data (RuntimeClip, CompressedClip, blending, skinning), as in C++. Matrices are (…, 4, 4) in
// row-major indexing (m[row, col], column vectors), whatever the storage.
#pragma once
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <vector>

#include "kinema/math/mat4.h"
#include "kinema/math/transform.h"

namespace kinema::python {
namespace py = pybind11;

template <class T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// A read-only NumPy view of memory owned by `owner` (kept alive while the view lives).
template <class T>
py::array view(const T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  py::array a(py::dtype::of<T>(), std::move(shape), {}, data, owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

/// A new C-contiguous array of the given shape.
template <class T>
py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
  return py::array_t<T>(std::move(shape));
}

/// Throws ValueError unless `a` has `ndim` dimensions with the given sizes (−1: any).
void check_shape(const py::array& a, std::initializer_list<py::ssize_t> shape, const char* what);

/// Local transforms from pose arrays: translations (N, 3), rotations (N, 4) xyzw, scales (N, 3)
/// or None (ones). Throws ValueError on a shape mismatch.
std::vector<Transform> transforms_from_arrays(const py::object& translations,
                                              const py::object& rotations,
                                              const py::object& scales);
std::vector<Transformf> transformsf_from_arrays(const py::object& translations,
                                                const py::object& rotations,
                                                const py::object& scales);
/// (translations, rotations, scales) of `n` transforms, copied into new float64 / float32 arrays.
py::tuple arrays_from_transforms(std::span<const Transform> pose);
py::tuple arrays_from_transforms(std::span<const Transformf> pose);

/// Column-major Mat4s as a new (n, 4, 4) float64 array, m[i, row, col].
py::array_t<double> array_from_matrices(std::span<const Mat4> matrices);
/// (n, 4, 4) or (4, 4) → Mat4s. Throws ValueError on a shape mismatch.
std::vector<Mat4> matrices_from_array(const py::object& array);

/// A pipeline progress callback that calls `callback(stage, done, total)` with the GIL taken
/// (the job runs with the GIL released). None gives an empty function.
std::function<void(const std::string&, long, long)> progress_callback(const py::object& callback);

void bind_core(py::module_& m);
void bind_runtime(py::module_& m);
void bind_deform(py::module_& m);
void bind_match(py::module_& m);
void bind_jobs(py::module_& m);

}  // namespace kinema::python
