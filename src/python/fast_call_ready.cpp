// block_until_ready of xjax.Array and ShardedArray in C++: every benchmark loop and most training
// loops call it once per step, usually on a value already computed (a tiny program runs at once),
// where a Python method and the binding's own call of Array::wait cost more than the check.
#include "fast_call.h"

namespace xjax_fast {

namespace {

// The ShardedArray class and its blocks' slot (setup_sharded).
PyTypeObject* g_sharded = nullptr;
Py_ssize_t g_shards_off = 0;

// Waits for one xjax.Array's value.
void wait_value(PyObject* x) {
  py::object held;  // (a subclass's _value may be a property: a new reference)
  PyObject* v = Py_TYPE(x) == context().array_type ? slot(x, context().value_off) : nullptr;
  if (!v) {
    held = py::reinterpret_steal<py::object>(PyObject_GetAttrString(x, "_value"));
    if (!held) throw py::error_already_set();
    v = held.ptr();
  }
  wait_for(py::handle(v).cast<const xjax::Array&>());
}

PyObject* block_until_ready(PyObject*, PyObject* x) {
  return guarded([&]() -> PyObject* {
    if (!PyObject_TypeCheck(x, context().array_type))
      throw py::type_error(std::string("block_until_ready: expected an xjax.Array, got ") + Py_TYPE(x)->tp_name);
    if (g_sharded && Py_TYPE(x) == g_sharded) {
      PyObject* blocks = slot(x, g_shards_off);
      if (!blocks || !PyTuple_Check(blocks)) throw py::type_error("block_until_ready: a ShardedArray without its blocks");
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(blocks); ++i) wait_value(PyTuple_GET_ITEM(blocks, i));
    } else {
      wait_value(x);
    }
    return Py_NewRef(x);
  });
}

PyMethodDef block_def = {"block_until_ready", block_until_ready, METH_O,
                         "Waits until computed (every block of a ShardedArray); raises the error of a failed "
                         "computation; returns the array."};

void setup_sharded(py::handle sharded) {
  if (!PyType_Check(sharded.ptr()) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(sharded.ptr()), context().array_type))
    throw py::type_error("[fast_call] setup_sharded takes an Array subclass");
  g_shards_off = slot_offset(sharded, "_shards");
  Py_INCREF(sharded.ptr());  // (kept for the process)
  g_sharded = reinterpret_cast<PyTypeObject*>(sharded.ptr());
}

}  // namespace

void wait_for(const xjax::Array& a) {
  if (!a.computed()) {  // (a computed value needs no release of the GIL)
    py::gil_scoped_release released;
    a.wait();
  }
  a.wait();  // (rethrows the computation's error)
}

void init_fast_ready(py::module_& f) {
  // An instancemethod, so that as a class attribute it binds the array as a Python method does.
  PyObject* fn = PyCFunction_New(&block_def, nullptr);
  if (!fn) throw py::error_already_set();
  PyObject* method = PyInstanceMethod_New(fn);
  Py_DECREF(fn);
  if (!method) throw py::error_already_set();
  f.add_object("block_until_ready", py::reinterpret_steal<py::object>(method));
  f.def("setup_sharded", &setup_sharded, py::arg("sharded_array_type"),
        "Names ShardedArray, whose blocks block_until_ready waits for.");
}

}  // namespace xjax_fast
