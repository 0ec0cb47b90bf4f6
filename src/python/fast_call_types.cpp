// The Python types of the C++ call path (fast_call.h):
// - JitFunction: the base of jit's wrapper. Its call looks the arguments up in the wrapper's
//   signature table and runs the entry; a miss calls the wrapper's Python `_call_slow(args, kwargs)`,
//   which installs the signature (`_fast_install`) once it has a compiled program for it.
// - BinaryOp: an Array operator (`Array.__mul__`). Two Arrays, or an Array and a Python float,
//   resolve through a table to the program the Python side made for their avals (for two Arrays
//   the one-op executable of eager dispatch); anything else, or a signature that `resolve`
//   declines, calls the Python operator.
#include <cstddef>

#include "fast_call.h"

namespace xjax_fast {

namespace {

// ---- JitFunction --------------------------------------------------------------------------

struct JitObject {
  PyObject_HEAD
  Table* table;
  unsigned long long hits;
};

PyObject* jit_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  reinterpret_cast<JitObject*>(self)->table = new Table(8);  // (signatures of one function)
  reinterpret_cast<JitObject*>(self)->hits = 0;
  return self;
}

void jit_dealloc(PyObject* self) {
  delete reinterpret_cast<JitObject*>(self)->table;
  Py_TYPE(self)->tp_free(self);
}

PyObject* jit_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  auto* f = reinterpret_cast<JitObject*>(self);
  return guarded([&]() -> PyObject* {
    if (f->table->size() && !(kwargs && PyDict_GET_SIZE(kwargs))) {
      int plain = eager_state_plain(true);
      if (plain < 0) return nullptr;
      Leaves leaves;
      if (plain && leaves.of(args, nullptr)) {
        py::object mesh = py::reinterpret_steal<py::object>(context_mesh());
        if (!mesh) return nullptr;
        auto entry = f->table->find(leaves.items, leaves.n, leaves.flat ? nullptr : &leaves.treedef, mesh.ptr());
        if (entry && entry->exe) {
          ++f->hits;
          return run_entry(*entry, leaves.items, leaves.n);
        }
      }
    }
    static PyObject* name = PyUnicode_InternFromString("_call_slow");
    py::object kw = kwargs ? py::reinterpret_borrow<py::object>(kwargs) : py::dict();
    return PyObject_CallMethodObjArgs(self, name, args, kw.ptr(), nullptr);
  });
}

PyObject* jit_install(PyObject* self, PyObject* const* argv, Py_ssize_t argc) {
  return guarded([&]() -> PyObject* {
    if (argc != 3 || !PyTuple_Check(argv[0]))
      throw py::type_error("[jit] _fast_install takes (args tuple, program parts, out_tree or None)");
    auto entry = std::make_shared<Entry>();
    Leaves leaves;
    if (!leaves.of(argv[0], &entry->in_avals)) Py_RETURN_FALSE;
    entry->flat = leaves.flat;
    entry->treedef = leaves.treedef;
    entry->mesh = py::reinterpret_steal<py::object>(context_mesh());  // (the signature's key: see jit._signature)
    if (!entry->mesh) return nullptr;
    fill_program(*entry, argv[1]);
    entry->out_tree = py::reinterpret_borrow<py::object>(argv[2]);
    if (!entry->out_tree.is_none()) xjax_pytree::unwrap_treedef(entry->out_tree);  // (a TypeError otherwise)
    else if (entry->out_avals.size() != 1) throw py::value_error("[jit] out_tree None needs exactly one output");
    reinterpret_cast<JitObject*>(self)->table->add(std::move(entry));
    Py_RETURN_TRUE;
  });
}

PyObject* jit_clear(PyObject* self, PyObject*) {
  reinterpret_cast<JitObject*>(self)->table->clear();
  Py_RETURN_NONE;
}

PyObject* jit_hits(PyObject* self, void*) { return PyLong_FromUnsignedLongLong(reinterpret_cast<JitObject*>(self)->hits); }
PyObject* jit_size(PyObject* self, void*) { return PyLong_FromSize_t(reinterpret_cast<JitObject*>(self)->table->size()); }

PyMethodDef jit_methods[] = {
    {"_fast_install", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(jit_install)), METH_FASTCALL,
     "Installs the signature of these arguments: (args, (exe, extern, out_pos, out_avals, owner), out_tree or None)."},
    {"_fast_clear", jit_clear, METH_NOARGS, "Drops the installed signatures."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef jit_getset[] = {
    {"_fast_hits", jit_hits, nullptr, "Calls the C++ path answered.", nullptr},
    {"_fast_size", jit_size, nullptr, "Signatures installed.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject JitType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---- BinaryOp -----------------------------------------------------------------------------

struct BinaryObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* slow;     // op(self, other): the Python operator
  PyObject* resolve;  // (aval, aval or float) -> ((exe, extern, out_pos, out avals, owner), scalar bits) or None
  Table* table;       // two Arrays
  Table* scalar_table;  // an Array and a Python float
  unsigned long long hits;
};

// The entry of these operands (n = 2 Arrays, or n = 1 Array and a float) from `resolve`; a
// declined signature is kept as an entry without a program.
std::shared_ptr<Entry> resolve_entry(BinaryObject* op, PyObject* const* args, Py_ssize_t n) {
  auto entry = std::make_shared<Entry>();
  if (!leaf_avals(args, n, &entry->in_avals)) return nullptr;
  entry->flat = true;
  entry->out_tree = py::none();
  PyObject* other = n == 2 ? entry->in_avals[1].ptr() : reinterpret_cast<PyObject*>(&PyFloat_Type);
  py::object r = py::reinterpret_steal<py::object>(
      PyObject_CallFunctionObjArgs(op->resolve, entry->in_avals[0].ptr(), other, nullptr));
  if (!r) throw py::error_already_set();
  if (!r.is_none()) {
    auto t = r.cast<py::tuple>();
    if (t.size() != 2) throw py::value_error("[BinaryOp] resolve must return (program parts, scalar bits) or None");
    entry->scalar_bits = t[1].cast<int>();
    if (n == 1 ? entry->scalar_bits != 32 && entry->scalar_bits != 64 : entry->scalar_bits != 0)
      throw py::value_error("[BinaryOp] scalar bits must be 32 or 64 for a float operand, 0 for an Array");
    fill_program(*entry, t[0]);
    if (entry->out_avals.size() != 1) throw py::value_error("[BinaryOp] an operator has one result");
  }
  (n == 2 ? op->table : op->scalar_table)->add(entry);
  return entry;
}

PyObject* binary_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* op = reinterpret_cast<BinaryObject*>(self);
  return guarded([&]() -> PyObject* {
    if (PyVectorcall_NARGS(nargsf) == 2 && !kwnames) {
      const Py_ssize_t n = PyFloat_CheckExact(args[1]) ? 1 : 2;  // (n = 1: the float follows)
      if (leaf_avals(args, n, nullptr)) {
        int plain = eager_state_plain(false);
        if (plain < 0) return nullptr;
        if (plain) {
          auto entry = (n == 2 ? op->table : op->scalar_table)->find(args, n, nullptr);
          if (!entry) entry = resolve_entry(op, args, n);
          if (entry && entry->exe) {
            ++op->hits;
            return run_entry(*entry, args, n, n == 1 ? args[1] : nullptr);
          }
        }
      }
    }
    return PyObject_Vectorcall(op->slow, args, nargsf, kwnames);
  });
}

PyObject* binary_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *slow, *resolve;
  if (!parse_slow_resolve(args, kwargs, "BinaryOp", &slow, &resolve)) return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* op = reinterpret_cast<BinaryObject*>(self);
  op->vectorcall = binary_vectorcall;
  Py_INCREF(slow);
  Py_INCREF(resolve);
  op->slow = slow;
  op->resolve = resolve;
  op->table = new Table(32);  // (the shapes a program computes with)
  op->scalar_table = new Table(32);
  op->hits = 0;
  return self;
}

void binary_dealloc(PyObject* self) {
  auto* op = reinterpret_cast<BinaryObject*>(self);
  delete op->table;
  delete op->scalar_table;
  Py_XDECREF(op->slow);
  Py_XDECREF(op->resolve);
  Py_TYPE(self)->tp_free(self);
}

PyObject* binary_hits(PyObject* self, void*) { return PyLong_FromUnsignedLongLong(reinterpret_cast<BinaryObject*>(self)->hits); }

PyGetSetDef binary_getset[] = {{"hits", binary_hits, nullptr, "Calls the C++ path answered.", nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject BinaryType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---- setup --------------------------------------------------------------------------------

void setup(py::handle array_type, py::handle aval_type, py::handle state, py::handle eval_trace_type,
           py::handle platforms, py::dict config_values, py::handle mesh_state) {
  if (!PyType_Check(array_type.ptr()) || !PyType_Check(aval_type.ptr()) || !PyType_Check(eval_trace_type.ptr()))
    throw py::type_error("[fast_call] setup takes the Array, ShapedArray and EvalTrace types");
  if (!PyModule_Check(platforms.ptr())) throw py::type_error("[fast_call] setup takes the platforms module");
  Context& c = context();
  c.value_off = slot_offset(array_type, "_value");
  c.aval_off = slot_offset(array_type, "aval");
  c.npy_off = slot_offset(array_type, "_npy");
  c.shape_off = slot_offset(aval_type, "shape");
  c.dtype_off = slot_offset(aval_type, "dtype");
  c.weak_off = slot_offset(aval_type, "weak_type");
  for (PyObject* o : {array_type.ptr(), aval_type.ptr(), state.ptr(), eval_trace_type.ptr(), platforms.ptr(),
                      config_values.ptr(), mesh_state.ptr()})
    Py_INCREF(o);  // (kept for the process)
  c.array_type = reinterpret_cast<PyTypeObject*>(array_type.ptr());
  c.aval_type = reinterpret_cast<PyTypeObject*>(aval_type.ptr());
  c.state = state.ptr();
  c.eval_trace_type = eval_trace_type.ptr();
  c.platforms = platforms.ptr();
  c.platforms_dict = PyModule_GetDict(platforms.ptr());
  c.config_values = config_values.ptr();
  c.mesh_state = mesh_state.ptr();
  c.s_trace = PyUnicode_InternFromString("trace");
  c.s_axis_env = PyUnicode_InternFromString("axis_env");
  c.s_placement = PyUnicode_InternFromString("_placement");
  c.s_disable_jit = PyUnicode_InternFromString("jax_disable_jit");
  c.s_meshes = PyUnicode_InternFromString("meshes");
  invalidate();
}

}  // namespace

}  // namespace xjax_fast

void init_fast_call(pybind11::module_& m) {
  using namespace xjax_fast;
  py::module_ f = m.def_submodule("fast_call", "The C++ call path of jit, pmap and Array operators.");

  JitType.tp_name = "xjax._core.fast_call.JitFunction";
  JitType.tp_basicsize = sizeof(JitObject);
  JitType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  JitType.tp_doc = "Base of jit's wrapper: calls matching an installed signature run in C++.";
  JitType.tp_new = jit_new;
  JitType.tp_dealloc = jit_dealloc;
  JitType.tp_call = jit_call;
  JitType.tp_methods = jit_methods;
  JitType.tp_getset = jit_getset;
  ready_type(f, JitType, "JitFunction");

  BinaryType.tp_name = "xjax._core.fast_call.BinaryOp";
  BinaryType.tp_basicsize = sizeof(BinaryObject);
  BinaryType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  BinaryType.tp_doc = "An Array operator: two Arrays, or an Array and a float, of known avals run their program in C++.";
  BinaryType.tp_new = binary_new;
  BinaryType.tp_dealloc = binary_dealloc;
  BinaryType.tp_call = PyVectorcall_Call;
  BinaryType.tp_vectorcall_offset = offsetof(BinaryObject, vectorcall);
  BinaryType.tp_descr_get = method_get;
  BinaryType.tp_getattro = slow_getattro<BinaryObject>;
  BinaryType.tp_getset = binary_getset;
  ready_type(f, BinaryType, "BinaryOp");
  init_fast_bind(f);
  init_fast_pmap(f);
  init_fast_ready(f);

  f.def("setup", &setup, py::arg("array_type"), py::arg("aval_type"), py::arg("state"), py::arg("eval_trace_type"),
        py::arg("platforms"), py::arg("config_values"), py::arg("mesh_state"), "Names the Python objects the call path reads.");
  f.def("invalidate", &invalidate, "Drops every installed signature (a cache was cleared).");
}
