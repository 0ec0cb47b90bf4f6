// xjax._core: thin pybind11 bindings over the C++ runtime. Conversion and checks only, no logic.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "core/array.h"
#include "core/compiler/callbacks.h"
#include "core/compiler/executable.h"
#include "core/compiler/passes.h"
#include "core/ops/float8_ops.h"
#include "core/cpu/blas.h"
#include "core/devices.h"
#include "core/ops/scalar_names.h"
#include "core/stream.h"
#include "core/thread_pool.h"
#include "convert.h"

namespace py = pybind11;
using namespace xjax;

// Other binding files, each adding one area to the module.
void init_pytree(py::module_& m);
void init_export(py::module_& m);
void init_cuda(py::module_& m);
void init_mpi(py::module_& m);
void init_fast_call(py::module_& m);
namespace xjax_fast {
void wait_for(const Array& a);  // (fast_call_ready.cpp)
}

namespace {

// A Python int as int64, or a ValueError naming `what` (a dimension, an attribute).
int64_t int64_from_py(const py::handle& v, const std::string& what) {
  int overflow = 0;
  long long r = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow) throw ValueError(what + " " + py::str(v).cast<std::string>() + " does not fit in int64");
  if (r == -1 && PyErr_Occurred()) throw py::error_already_set();
  return r;
}

// Sizes are checked where the shape meets its dtype (core/size.h); here only the conversion.
Shape shape_from_py(const py::handle& h) {
  Shape s;
  for (auto d : h) {
    int64_t v = int64_from_py(d, "dimension");
    if (v < 0) throw ValueError("negative dimension in shape");
    s.push_back(v);
  }
  return s;
}

py::tuple shape_to_py(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

}  // namespace

TypeInfo type_from_py(const py::handle& h) {
  auto t = h.cast<py::tuple>();
  if (t.size() != 2) throw ValueError("a type is a (shape, dtype name) pair");
  return {shape_from_py(t[0]), dtype_from_name(t[1].cast<std::string>())};
}

namespace {

py::tuple type_to_py(const TypeInfo& t) { return py::make_tuple(shape_to_py(t.shape), dtype_name(t.dtype)); }

AttrValue attr_from_py(const std::string& name, const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return int64_t(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) return int64_from_py(v, "attribute '" + name + "'");
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::bytes>(v)) return std::string(v.cast<py::bytes>());  // e.g. a constant's data
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    std::vector<int64_t> out;
    for (auto e : v) out.push_back(int64_from_py(e, "attribute '" + name + "' entry"));
    return out;
  }
  throw TypeError("attribute '" + name + "' must be an int, float, str, bytes or a sequence of ints");
}

}  // namespace

Attrs attrs_from_py(const py::dict& d) {
  Attrs a;
  for (auto item : d) {
    std::string name = item.first.cast<std::string>();
    a.set(name, attr_from_py(name, item.second));
  }
  return a;
}

namespace {

ValueRef ref_from_py(const py::handle& h) {
  auto t = h.cast<py::tuple>();
  return {t[0].cast<int>(), t[1].cast<int>()};
}

py::list refs_to_py(const std::vector<ValueRef>& refs) {
  py::list out;
  for (ValueRef v : refs) out.append(py::make_tuple(v.node, v.index));
  return out;
}

// A host callback's Python exception, raised to whoever waits for the computation as
// _core.JaxRuntimeError (JAX's jax.errors.JaxRuntimeError, a RuntimeError).
struct CallbackError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
PyObject* jax_runtime_error_type = nullptr;  // the Python class of CallbackError (set by the module)

// A Python callable as a host callback: called under the GIL with the operands as _core.Arrays.
// A JaxRuntimeError it raises (xjax's callbacks word the user's exception as JAX does) keeps its
// message; any other exception is named in one.
int64_t register_py_callback(const py::function& fn) {
  std::shared_ptr<py::object> holder(new py::object(fn), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  return register_callback([holder](const std::vector<Array>& args) {
    py::gil_scoped_acquire gil;
    try {
      py::list l;
      for (const Array& a : args) l.append(py::cast(a));
      (*holder)(l);
    } catch (py::error_already_set& e) {
      if (e.matches(jax_runtime_error_type)) throw CallbackError(py::str(e.value()).cast<std::string>());
      throw CallbackError(std::string("[host_callback] ") + e.what());
    }
  });
}

Array array_from_buffer(py::buffer b, const py::handle& shape, const std::string& dtype) {
  py::buffer_info info = b.request();
  Shape s = shape_from_py(shape);
  DType dt = dtype_from_name(dtype);
  const size_t want = size_t(checked_size(s, dt, "Array").bytes);
  bool contiguous = true;
  int64_t expect = info.itemsize;
  for (py::ssize_t i = info.ndim; i-- > 0;) {
    if (info.shape[i] != 1 && info.strides[i] != expect) contiguous = false;
    expect *= info.shape[i];
  }
  size_t nbytes = size_t(info.size) * size_t(info.itemsize);
  if (!contiguous) throw ValueError("[Array] source buffer must be C-contiguous");
  if (nbytes != want)
    throw ValueError("[Array] source buffer has " + std::to_string(nbytes) + " bytes, " + dtype + shape_str(s) +
                     " needs " + std::to_string(want));
  Array a = Array::empty(s, dt);
  if (nbytes) std::memcpy(a.data(), info.ptr, nbytes);
  return a;
}

// One element of `dtype` from a Python bool/int/float (or complex, for a complex dtype).
Array array_from_scalar(const py::handle& v, const std::string& dtype) {
  Array a = Array::empty({}, dtype_from_name(dtype));
  if (is_complex(a.dtype)) {
    if (!py::isinstance<py::float_>(v) && !py::isinstance<py::int_>(v) && !PyComplex_Check(v.ptr()))
      throw TypeError("[Array] a complex scalar must be a bool, int, float or complex");
    const Py_complex z = PyComplex_AsCComplex(v.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    dispatch_complex(a.dtype, [&](auto tag) {
      using C = decltype(tag);
      *static_cast<C*>(a.data()) = C(typename C::value_type(z.real), typename C::value_type(z.imag));
    });
    return a;
  }
  if (is_float8(a.dtype)) {  // the value rounded to the format by the core's conversion
    if (!py::isinstance<py::float_>(v) && !py::isinstance<py::int_>(v))
      throw TypeError("[Array] a float8 scalar must be a bool, int or float");
    const double x = PyFloat_AsDouble(v.ptr());  // (a Python int too: OverflowError past a double)
    if (PyErr_Occurred()) throw py::error_already_set();
    *static_cast<uint8_t*>(a.data()) = float8_from_double(x, a.dtype);
    return a;
  }
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(a.data());
    if (py::isinstance<py::float_>(v)) {
      *out = T(v.cast<double>());
    } else if (py::isinstance<py::bool_>(v)) {
      *out = T(v.cast<bool>());
    } else if (py::isinstance<py::int_>(v)) {
      // Two's-complement wrap-around, as NumPy's astype does for out-of-range integers.
      *out = T(static_cast<int64_t>(PyLong_AsUnsignedLongLongMask(v.ptr())));
    } else {
      throw TypeError("[Array] scalar must be a bool, int or float");
    }
  });
  return a;
}

py::array bytes_view(const Array& a) {
  {
    py::gil_scoped_release release;
    a.wait();
  }
  if (!a.buffer_matches())
    throw ValueError(std::string("[Array] ") + dtype_name(a.dtype) + shape_str(a.shape) + " has no buffer of its size");
  auto* keep = new std::shared_ptr<Buffer>(a.buffer);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  py::array view(py::dtype("uint8"), {py::ssize_t(a.nbytes())}, {py::ssize_t(1)},
                 static_cast<uint8_t*>(a.data()), owner);
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

// A writable view of a fresh array's buffer, for a producer outside the core (an MPI receive)
// to fill once before the array is shared.
py::array writable_view(const Array& a) {
  if (!a.buffer_matches() || a.buffer->read_only() || a.ready)
    throw ValueError(std::string("[Array] writable_view: ") + dtype_name(a.dtype) + shape_str(a.shape) +
                     " is not a fresh array from Array.empty");
  auto* keep = new std::shared_ptr<Buffer>(a.buffer);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  return py::array(py::dtype("uint8"), {py::ssize_t(a.nbytes())}, {py::ssize_t(1)}, static_cast<uint8_t*>(a.data()),
                   owner);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "The xjax C++ runtime: arrays, the graph compiler and its executables.";
  py::register_local_exception<TypeError>(m, "CoreTypeError", PyExc_TypeError);
  py::register_local_exception<NotImplementedError>(m, "CoreNotImplementedError", PyExc_NotImplementedError);
  jax_runtime_error_type = py::register_exception<CallbackError>(m, "JaxRuntimeError", PyExc_RuntimeError).ptr();

  py::class_<Array>(m, "Array")
      .def_static("from_buffer", &array_from_buffer, py::arg("buffer"), py::arg("shape"), py::arg("dtype"),
                  "Copies a C-contiguous buffer into a new array.")
      .def_static("from_scalar", &array_from_scalar, py::arg("value"), py::arg("dtype"))
      .def_static(
          "empty", [](const py::handle& shape, const std::string& dtype) {
            return Array::empty(shape_from_py(shape), dtype_from_name(dtype));
          },
          py::arg("shape"), py::arg("dtype"), "An uninitialised array, to be filled through writable_view().")
      .def("writable_view", &writable_view, "A writable uint8 NumPy view of a fresh array from Array.empty.")
      .def(
          "reshaped", [](const Array& a, const py::handle& shape) {
            Array b = a;
            b.shape = shape_from_py(shape);
            if (b.size() != a.size())
              throw ValueError("[Array] reshaped: " + shape_str(a.shape) + " has " + std::to_string(a.size()) +
                               " elements, " + shape_str(b.shape) + " needs " + std::to_string(b.size()));
            return b;
          },
          py::arg("shape"), "The same buffer under another shape of as many elements (no copy).")
      .def_property_readonly("shape", [](const Array& a) { return shape_to_py(a.shape); })
      .def_property_readonly("dtype", [](const Array& a) { return std::string(dtype_name(a.dtype)); })
      .def_property_readonly("nbytes", &Array::nbytes)
      .def("is_ready", &Array::computed)
      .def("wait", &xjax_fast::wait_for, "Blocks until computed; raises the error of the computation that produced it.")
      .def("bytes_view", &bytes_view, "A read-only uint8 NumPy view of the data (waits first).");

  py::class_<Executable, std::shared_ptr<Executable>>(m, "Executable")
      .def("run", &Executable::run, py::arg("inputs"), py::call_guard<py::gil_scoped_release>(),
           "Queues the computation (or runs it at once when tiny, without the GIL); returns the results.")
      .def("run_on_devices", &Executable::run_on_devices, py::arg("inputs"), py::arg("devices"),
           py::call_guard<py::gil_scoped_release>(),
           "Runs inputs[i] on CPU device devices[i], all at once; returns the results per device when all are done.")
      .def_property_readonly("brief", &Executable::brief,
                             "Whether a run returns within microseconds: the C++ call path keeps the GIL across it.")
      .def_property_readonly("num_kernels", &Executable::num_kernels,
                             "Kernel steps of the plan (fused kernels and single-op kernels).")
      .def_property_readonly("num_buffers", [](const Executable& e) { return e.plan().pool.size(); },
                             "Pooled intermediate buffers the plan allocates per run.")
      .def("plan_text", &Executable::plan_text, "The plan: one line per step, then where each value lives.")
      .def_property_readonly("graph", [](const Executable& e) { return e.graph(); }, "The optimised graph.")
      .def_property_readonly("input_types", [](const Executable& e) {
        py::list l;
        for (auto& t : e.input_types()) l.append(type_to_py(t));
        return l;
      })
      .def_property_readonly("output_types", [](const Executable& e) {
        py::list l;
        for (auto& t : e.output_types()) l.append(type_to_py(t));
        return l;
      });

  py::class_<Graph>(m, "Graph")
      .def(py::init<>())
      .def("parameter", [](Graph& g, const py::handle& shape, const std::string& dtype) {
        ValueRef v = g.parameter({shape_from_py(shape), dtype_from_name(dtype)});
        return py::make_tuple(v.node, v.index);
      })
      .def("add", [](Graph& g, const std::string& op, const py::list& inputs, const py::dict& attrs) {
        std::vector<ValueRef> in;
        for (auto h : inputs) in.push_back(ref_from_py(h));
        py::list out;
        for (ValueRef v : g.add(op_from_name(op), in, attrs_from_py(attrs))) out.append(py::make_tuple(v.node, v.index));
        return out;
      })
      .def("set_outputs", [](Graph& g, const py::list& outputs) {
        std::vector<ValueRef> out;
        for (auto h : outputs) out.push_back(ref_from_py(h));
        g.set_outputs(out);
      })
      .def("type", [](const Graph& g, const py::handle& ref) { return type_to_py(g.type(ref_from_py(ref))); })
      .def(
          "add_subgraph_op",
          [](Graph& g, const std::string& op, const py::list& inputs, const py::dict& attrs,
             const std::vector<Graph>& subgraphs) {
            std::vector<ValueRef> in;
            for (auto h : inputs) in.push_back(ref_from_py(h));
            std::vector<std::shared_ptr<const Graph>> subs;
            for (const Graph& sg : subgraphs) subs.push_back(std::make_shared<const Graph>(sg));
            return refs_to_py(g.add_subgraph_op(op_from_name(op), in, attrs_from_py(attrs), std::move(subs)));
          },
          py::arg("op"), py::arg("inputs"), py::arg("attrs"), py::arg("subgraphs"),
          "Adds a control op (cond, while) over subgraphs; returns its results.")
      .def("optimized", [](const Graph& g, const std::vector<std::string>& passes) { return run_passes(g, passes); },
           py::arg("passes"), "A new graph after the named passes (verify, simplify, fold, cse, dce).")
      .def("verify", [](const Graph& g) { verify(g); })
      .def_property_readonly("num_nodes", [](const Graph& g) { return g.nodes().size(); })
      .def("ops", [](const Graph& g) {
        py::list l;
        for (const Node& n : g.nodes()) l.append(op_name(n.op));
        return l;
      }, "The op name of every node, in order.")
      .def_property_readonly("outputs", [](const Graph& g) { return refs_to_py(g.outputs()); })
      .def("text", &Graph::text)
      .def("__repr__", &Graph::text);

  m.def(
      "compile",
      [](const Graph& g, const py::object& passes, bool fuse, bool reuse_buffers, bool reference) {
        CompileOptions o = default_compile_options();
        if (!passes.is_none()) o.passes = passes.cast<std::vector<std::string>>();
        o.fuse = fuse;
        o.reuse_buffers = reuse_buffers;
        o.reference = reference;
        return compile(g, o);
      },
      py::arg("graph"), py::arg("passes") = py::none(), py::arg("fuse") = true, py::arg("reuse_buffers") = true,
      py::arg("reference") = false,
      "Compiles a graph into an Executable: graph passes (default: all), fusion, buffer planning. "
      "reference=True runs the reference interpreter instead (op by op, in double).");
  m.def("register_callback", &register_py_callback, py::arg("fn"),
        "Registers fn(list of Arrays) as a host callback; returns its callback_id.");
  m.def("unregister_callback", &unregister_callback, py::arg("callback_id"));
  m.def(
      "compile_op",
      [](const std::string& op, const py::list& inputs, const py::dict& attrs) {
        std::vector<TypeInfo> in;
        for (auto h : inputs) in.push_back(type_from_py(h));
        return compile_op(op_from_name(op), in, attrs_from_py(attrs));
      },
      py::arg("op"), py::arg("input_types"), py::arg("attrs"),
      "Compiles a one-op graph: what eager dispatch runs.");
  m.def("infer", [](const std::string& op, const py::list& inputs, const py::dict& attrs) {
    std::vector<TypeInfo> in;
    for (auto h : inputs) in.push_back(type_from_py(h));
    py::list out;
    for (auto& t : infer_types(op_from_name(op), in, attrs_from_py(attrs))) out.append(type_to_py(t));
    return out;
  });
  m.def("scalar_source", &scalar_source, "The scalar op headers' text, which generated CUDA starts with.");
  m.def("scalar_special_source", &scalar_special_source,
        "The special functions' header text, which follows scalar_source() in sources that call one.");
  m.def(
      "scalar_expression",
      [](const std::string& op, const std::vector<std::string>& in, const std::string& out, const py::dict& attrs,
         const std::vector<std::string>& args) {
        std::vector<DType> dts;
        for (const std::string& d : in) dts.push_back(dtype_from_name(d));
        return scalar_expression(op_from_name(op), dts, dtype_from_name(out), attrs_from_py(attrs), args);
      },
      py::arg("op"), py::arg("in_dtypes"), py::arg("out_dtype"), py::arg("attrs"), py::arg("args"),
      "The C++ expression computing an elementwise op in generated code ('' when none).");
  m.def("scalar_types", [](const std::string& dt) {
    DType d = dtype_from_name(dt);
    return py::make_tuple(scalar_storage_type(d), scalar_compute_type(d));
  }, "(storage type, compute type) of a dtype in generated code.");
  m.def("scalar_load", [](const std::string& dt, const std::string& slot) { return scalar_load(dtype_from_name(dt), slot); });
  m.def("scalar_store", [](const std::string& dt, const std::string& v) { return scalar_store(dtype_from_name(dt), v); });
  m.def("synchronize", [] { Stream::global().synchronize(); }, py::call_guard<py::gil_scoped_release>());
  m.def("num_threads", [] { return ThreadPool::global().size(); });
  m.def("set_num_devices", &set_num_devices, py::arg("n"), "Splits the CPU into n devices (before their first use).");
  m.def("num_devices", &num_devices, "The number of CPU devices (fixes it: the devices are made at first use).");
  m.def("device_num_threads", [](int d) { return device_pool(d).size(); }, py::arg("device"),
        "The size of CPU device d's share of the thread pool.");
  m.def("load_blas", &load_blas, py::arg("path"));
  m.def("blas_loaded", &blas_loaded);
  init_pytree(m);
  init_export(m);
  init_cuda(m);
  init_mpi(m);
  init_fast_call(m);
}
