// python/src/module.cpp — the `kinema._kinema` extension: kinema's errors as Python exceptions,
// the array helpers of common.h, and the binding files' entry points.
#include <cstring>

#include "common.h"
#include "kinema/core/error.h"

namespace kinema::python {

void check_shape(const py::array& a, std::initializer_list<py::ssize_t> shape, const char* what) {
  bool ok = a.ndim() == static_cast<py::ssize_t>(shape.size());
  py::ssize_t axis = 0;
  for (const py::ssize_t size : shape) {
    if (!ok) break;
    ok = size < 0 || a.shape(axis) == size;
    ++axis;
  }
  if (ok) return;
  std::string want = "(";
  axis = 0;
  for (const py::ssize_t size : shape)
    want += (axis++ ? ", " : "") + (size < 0 ? std::string("n") : std::to_string(size));
  want += shape.size() == 1 ? ",)" : ")";
  std::string got = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
  got += a.ndim() == 1 ? ",)" : ")";
  throw py::value_error(std::string(what) + ": expected an array of shape " + want + ", got " +
                        got);
}

namespace {

template <class T>
std::vector<TransformT<T>> transforms_from(const py::object& translations,
                                           const py::object& rotations, const py::object& scales) {
  const auto t = CArray<T>::ensure(translations);
  const auto r = CArray<T>::ensure(rotations);
  if (!t) throw py::value_error("translations: expected an array of shape (n, 3)");
  if (!r) throw py::value_error("rotations: expected an array of shape (n, 4)");
  check_shape(t, {-1, 3}, "translations");
  const py::ssize_t n = t.shape(0);
  check_shape(r, {n, 4}, "rotations");
  // A default py::array is an empty array, not a null handle: presence is the flag's.
  const bool has_scales = !scales.is_none();
  CArray<T> s;
  if (has_scales) {
    s = CArray<T>::ensure(scales);
    if (!s) throw py::value_error("scales: expected an array of shape (n, 3)");
    check_shape(s, {n, 3}, "scales");
  }
  std::vector<TransformT<T>> out(static_cast<size_t>(n));
  const T* tp = t.data();
  const T* rp = r.data();
  for (py::ssize_t i = 0; i < n; ++i) {
    auto& x = out[static_cast<size_t>(i)];
    x.translation = {tp[3 * i], tp[3 * i + 1], tp[3 * i + 2]};
    x.rotation = {rp[4 * i], rp[4 * i + 1], rp[4 * i + 2], rp[4 * i + 3]};
    if (has_scales) {
      const T* sp = s.data();
      x.scale = {sp[3 * i], sp[3 * i + 1], sp[3 * i + 2]};
    }
  }
  return out;
}

template <class T>
py::tuple arrays_from(std::span<const TransformT<T>> pose) {
  const auto n = static_cast<py::ssize_t>(pose.size());
  auto t = new_array<T>({n, 3});
  auto r = new_array<T>({n, 4});
  auto s = new_array<T>({n, 3});
  T* tp = t.mutable_data();
  T* rp = r.mutable_data();
  T* sp = s.mutable_data();
  for (size_t i = 0; i < pose.size(); ++i) {
    const auto& x = pose[i];
    tp[3 * i] = x.translation.x, tp[3 * i + 1] = x.translation.y, tp[3 * i + 2] = x.translation.z;
    rp[4 * i] = x.rotation.x, rp[4 * i + 1] = x.rotation.y, rp[4 * i + 2] = x.rotation.z;
    rp[4 * i + 3] = x.rotation.w;
    sp[3 * i] = x.scale.x, sp[3 * i + 1] = x.scale.y, sp[3 * i + 2] = x.scale.z;
  }
  return py::make_tuple(t, r, s);
}

}  // namespace

std::vector<Transform> transforms_from_arrays(const py::object& translations,
                                              const py::object& rotations,
                                              const py::object& scales) {
  return transforms_from<double>(translations, rotations, scales);
}
std::vector<Transformf> transformsf_from_arrays(const py::object& translations,
                                                const py::object& rotations,
                                                const py::object& scales) {
  return transforms_from<float>(translations, rotations, scales);
}
py::tuple arrays_from_transforms(std::span<const Transform> pose) { return arrays_from(pose); }
py::tuple arrays_from_transforms(std::span<const Transformf> pose) { return arrays_from(pose); }

py::array_t<double> array_from_matrices(std::span<const Mat4> matrices) {
  auto out = new_array<double>({static_cast<py::ssize_t>(matrices.size()), 4, 4});
  double* p = out.mutable_data();
  for (const Mat4& m : matrices)
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 4; ++col) *p++ = m(row, col);
  return out;
}

std::vector<Mat4> matrices_from_array(const py::object& array) {
  const auto a = CArray<double>::ensure(array);
  if (!a) throw py::value_error("matrices: expected an array of shape (n, 4, 4)");
  const bool single = a.ndim() == 2;
  if (single)
    check_shape(a, {4, 4}, "matrix");
  else
    check_shape(a, {-1, 4, 4}, "matrices");
  const size_t n = single ? 1 : static_cast<size_t>(a.shape(0));
  std::vector<Mat4> out(n);
  const double* p = a.data();
  for (Mat4& m : out)
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 4; ++col) m(row, col) = *p++;
  return out;
}

std::function<void(const std::string&, long, long)> progress_callback(const py::object& callback) {
  if (callback.is_none()) return {};
  // Held by a shared_ptr whose deleter takes the GIL: the function may be destroyed by the job
  // with the GIL released.
  auto held = std::shared_ptr<py::object>(new py::object(callback), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  return [held](const std::string& stage, long done, long total) {
    py::gil_scoped_acquire gil;
    (*held)(stage, done, total);
  };
}

}  // namespace kinema::python

namespace {
namespace py = pybind11;

// The exception classes live as long as the interpreter: never destroyed at exit, when Python
// may already be gone.
py::object* error_class = nullptr;
py::object* usage_error_class = nullptr;

void register_errors(py::module_& m) {
  error_class = new py::object(py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "kinema.Error",
      "Bad data: a file or an input kinema cannot use. `file`, `place` and `reason` say which, "
      "where (a line, a JSON pointer, a byte offset, a joint name; empty when the whole input is "
      "at fault) and why; str() is the full message.",
      PyExc_Exception, nullptr)));
  usage_error_class = new py::object(py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "kinema.UsageError",
      "A request that cannot be carried out as asked, whatever the data (an output that is one "
      "of the inputs, a clip the file does not have, a format kinema cannot write).",
      PyExc_ValueError, nullptr)));
  m.attr("Error") = *error_class;
  m.attr("UsageError") = *usage_error_class;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kinema::Error& e) {
      py::object instance = (*error_class)(e.what());
      instance.attr("file") = e.file();
      instance.attr("place") = e.place();
      instance.attr("reason") = e.reason();
      PyErr_SetObject(error_class->ptr(), instance.ptr());
    } catch (const kinema::UsageError& e) {
      PyErr_SetString(usage_error_class->ptr(), e.what());
    }
  });
}

}  // namespace

PYBIND11_MODULE(_kinema, m) {
  m.doc() = "kinema: character animation and simulation (the C++ library's Python bindings)";
  register_errors(m);
  kinema::python::bind_core(m);
  kinema::python::bind_runtime(m);
  kinema::python::bind_deform(m);
  kinema::python::bind_match(m);
  kinema::python::bind_jobs(m);
}
