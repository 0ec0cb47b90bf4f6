// The call path in C++: what every repeated call of a jitted function or of an Array operator
// pays, without Python frames. A call whose arguments match an installed signature runs its
// executable here and builds the result Arrays directly; anything else (a first call, a tracer,
// a Python scalar, a GPU placement, a disabled jit) takes the Python path, which installs the
// signature once it has compiled it. The Python path stays the definition of every behaviour.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/compiler/executable.h"
#include "pytree.h"

namespace xjax_fast {

namespace py = pybind11;

// The Python objects the fast path reads, set once by xjax at import (setup()).
struct Context {
  PyTypeObject* array_type = nullptr;   // xjax.Array (exact type only: not GPU arrays, not tracers)
  Py_ssize_t value_off = 0, aval_off = 0, npy_off = 0;  // its slots
  PyTypeObject* aval_type = nullptr;    // core.ShapedArray
  Py_ssize_t shape_off = 0, dtype_off = 0, weak_off = 0;
  PyObject* state = nullptr;            // core._state (thread-local: .trace, .axis_env)
  PyObject* eval_trace_type = nullptr;  // core.EvalTrace
  PyObject* platforms = nullptr;        // platforms module (._placement: None = everything on the CPU)
  PyObject* platforms_dict = nullptr;   // its __dict__ (borrowed: the module is kept)
  PyObject* config_values = nullptr;    // config._values
  PyObject* mesh_state = nullptr;       // sharding._state (thread-local: .meshes, set by jax.set_mesh)
  PyObject* s_trace = nullptr, *s_axis_env = nullptr, *s_placement = nullptr, *s_disable_jit = nullptr;
  PyObject* s_meshes = nullptr;
};
Context& context();

// Counts cache clears: a table made under another epoch is dropped before its next lookup.
uint64_t epoch();
void invalidate();

// Whether no transformation, named axis or GPU placement is in play: the states in which the
// Python path would run the cached executable on the CPU. -1 with a Python error set.
int eager_state_plain(bool for_jit);

// The mesh jax.set_mesh set (the top of the mesh stack: a jit signature's key, since a trace reads
// it), or None; a new reference, null with a Python error set.
PyObject* context_mesh();

// What a matched signature runs.
struct Entry {
  std::vector<py::object> in_avals;     // per leaf
  bool flat = false;                    // the arguments are a tuple of Array leaves (no flatten)
  xjax_pytree::PyTreeDef treedef;       // otherwise their structure
  std::shared_ptr<xjax::Executable> exe;  // null: a signature the Python path always takes
  std::vector<xjax::Array> extern_values;
  std::vector<int> out_pos;             // empty: outputs in order
  std::vector<py::object> out_avals;
  py::object out_tree;                  // None: one Array is the result
  py::object owner;                     // what keeps the program's host callbacks registered
  int scalar_bits = 0;                  // 32/64: a Python float follows the leaves, as float32/float64
  py::object mesh;                      // jit: the context mesh it was installed under (None: none)
};

// A small table of signatures, searched from the most recently used; bounded (a function called
// with ever new shapes keeps its Python cache's programs, not a growing copy here).
class Table {
 public:
  explicit Table(size_t max_entries) : max_entries_(max_entries) {}
  // The entry whose key matches these leaves (treedef null: a flat tuple of leaves) and, when
  // `mesh` is given, was installed under that context mesh (compared as the Python key compares
  // it: identity, else ==); or null.
  std::shared_ptr<Entry> find(PyObject* const* leaves, Py_ssize_t n, const xjax_pytree::PyTreeDef* treedef,
                              PyObject* mesh = nullptr);
  void add(std::shared_ptr<Entry> e);
  void clear() { entries_.clear(); }
  size_t size() { refresh(); return entries_.size(); }

 private:
  void refresh();
  size_t max_entries_;
  std::vector<std::shared_ptr<Entry>> entries_;  // the most recently used last
  uint64_t epoch_ = 0;
};

// The avals of leaves that are all exact xjax.Arrays (or of the exact type `also`, an Array
// subclass whose runtime value its caller finds: pmap's ShardedArray), or false (no Python error)
// when one is not.
bool leaf_avals(PyObject* const* leaves, Py_ssize_t n, std::vector<py::object>* avals, PyTypeObject* also = nullptr);

// Call arguments as leaves: the tuple itself when all are Arrays, else its flattening (`flat`
// false, `treedef` its structure); `of` is false when some leaf is not an Array (or of `also`).
struct Leaves {
  py::list list;
  xjax_pytree::PyTreeDef treedef;
  PyObject* const* items = nullptr;
  Py_ssize_t n = 0;
  bool flat = true;

  bool of(PyObject* args, std::vector<py::object>* avals, PyTypeObject* also = nullptr);
};

// A __slots__ member of an object, at the offset slot_offset found in its type.
inline PyObject*& slot(PyObject* obj, Py_ssize_t off) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + off);
}
Py_ssize_t slot_offset(py::handle type, const char* name);

// Runs the entry on the leaves' values (and the Python float `scalar` when the entry takes one);
// returns the result (one Array or the output pytree).
PyObject* run_entry(const Entry& e, PyObject* const* leaves, Py_ssize_t n, PyObject* scalar = nullptr);

// The aval slot of an exact xjax.Array (borrowed), and whether two avals are equal as the Python
// caches compare them (shape, dtype, weak type).
PyObject* aval_of(PyObject* leaf);
const xjax::Array& value_of(PyObject* leaf);  // its runtime value (leaf_avals accepted it)
bool same_aval(PyObject* a, PyObject* b);

// The type of Primitive.bind (fast_call_bind.cpp), added to the fast_call module.
void init_fast_bind(py::module_& f);
// pmap's across processes (fast_call_pmap.cpp).
void init_fast_pmap(py::module_& f);
void init_fast_ready(py::module_& f);
// Waits for the value, releasing the GIL only while it is still being computed (fast_call_ready.cpp).
void wait_for(const xjax::Array& a);
// Readies a static type and adds it to the module under `name`.
void ready_type(py::module_& m, PyTypeObject& t, const char* name);

// A new xjax.Array holding `value` with abstract value `aval`, without running Python.
PyObject* make_array(xjax::Array&& value, PyObject* aval);

// Entry fields from the Python path's compiled call: (exe, extern, out_pos or None, out_avals, owner).
void fill_program(Entry& e, py::handle parts);

// Runs `body`; a C++ exception becomes the Python exception pybind11 translates it to.
template <class F>
PyObject* guarded(F&& body) {
  try {
    return body();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// The C++ types that stand in for a Python function (`T` has a `slow` member, that function): a
// method of the class they are set on (Py_TPFLAGS_METHOD_DESCRIPTOR: `a * b` calls them unbound),
// with the function's docstring and the attributes they lack (__name__, __qualname__, ...).
inline PyObject* method_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}
template <typename T>
PyObject* slow_getattro(PyObject* self, PyObject* name) {
  PyObject* slow = reinterpret_cast<T*>(self)->slow;
  if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__doc__") == 0) return PyObject_GetAttr(slow, name);
  PyObject* r = PyObject_GenericGetAttr(self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(slow, name);
}

// The constructor arguments of those stand-ins, (slow, resolve), both callable; false with the
// Python error set otherwise.
inline bool parse_slow_resolve(PyObject* args, PyObject* kwargs, const char* type_name, PyObject** slow,
                               PyObject** resolve) {
  static const char* names[] = {"slow", "resolve", nullptr};
  const std::string format = std::string("OO:") + type_name;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format.c_str(), const_cast<char**>(names), slow, resolve))
    return false;
  if (PyCallable_Check(*slow) && PyCallable_Check(*resolve)) return true;
  PyErr_SetString(PyExc_TypeError, (std::string(type_name) + ": slow and resolve must be callable").c_str());
  return false;
}

}  // namespace xjax_fast
