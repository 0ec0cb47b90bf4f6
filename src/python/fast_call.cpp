// The mechanism of the C++ call path: the state checks, signature tables, running an entry and
// building result Arrays. The Python types that use it are in fast_call_types.cpp.
#include "fast_call.h"

#include <iterator>
#include <tuple>

#include <structmember.h>  // (PyMemberDef: the offsets of __slots__ members)

namespace xjax_fast {

namespace {

uint64_t g_epoch = 1;

}  // namespace

PyObject* aval_of(PyObject* leaf) { return slot(leaf, context().aval_off); }

const xjax::Array& value_of(PyObject* leaf) { return py::handle(slot(leaf, context().value_off)).cast<const xjax::Array&>(); }

bool same_aval(PyObject* a, PyObject* b) {
  if (a == b) return true;
  const Context& c = context();
  if (Py_TYPE(a) != c.aval_type || Py_TYPE(b) != c.aval_type) return false;
  if (slot(a, c.weak_off) != slot(b, c.weak_off)) return false;  // (Python bools)
  PyObject *da = slot(a, c.dtype_off), *db = slot(b, c.dtype_off);
  if (da != db) {
    int eq = PyObject_RichCompareBool(da, db, Py_EQ);
    if (eq != 1) {
      PyErr_Clear();
      return false;
    }
  }
  int eq = PyObject_RichCompareBool(slot(a, c.shape_off), slot(b, c.shape_off), Py_EQ);
  if (eq != 1) PyErr_Clear();
  return eq == 1;
}

namespace {

bool is_flat_tuple(const xjax_pytree::PyTreeDef& t, Py_ssize_t n) {
  if (t.nodes.empty() || t.nodes.back().kind != xjax_pytree::Kind::Tuple || t.nodes.back().arity != n) return false;
  for (size_t i = 0; i + 1 < t.nodes.size(); ++i)
    if (t.nodes[i].kind != xjax_pytree::Kind::Leaf) return false;
  return true;
}

// The GIL released around a run (host callbacks in the program take it on other threads).
struct WithoutGil {
  PyThreadState* s = PyEval_SaveThread();
  ~WithoutGil() { PyEval_RestoreThread(s); }
};

}  // namespace

Context& context() {
  static Context c;
  return c;
}

uint64_t epoch() { return g_epoch; }
void invalidate() { ++g_epoch; }

namespace {

// The calling thread's dicts of the thread-local states (borrowed), found once per Python thread
// state: a threading.local keeps a thread's dict as long as that thread state lives, and a thread
// state's id is never reused, so the id says whether the kept pointers are still this thread's.
// (A getattr on a threading.local finds the thread's dict anew each time: about half of this
// check's cost.)
struct ThreadDicts {
  bool found = false;
  uint64_t thread = 0;
  PyObject* state = nullptr;  // core._state's
  PyObject* mesh = nullptr;   // sharding._state's
};
thread_local ThreadDicts t_dicts;

PyObject* borrowed_dict_of(PyObject* local) {
  PyObject* d = PyObject_GetAttrString(local, "__dict__");
  if (!d) return nullptr;
  if (!PyDict_Check(d)) {
    Py_DECREF(d);
    PyErr_SetString(PyExc_TypeError, "[fast_call] a thread-local state's __dict__ is not a dict");
    return nullptr;
  }
  Py_DECREF(d);  // (the thread-local keeps it)
  return d;
}

const ThreadDicts* thread_dicts() {
  const uint64_t id = PyThreadState_GetID(PyThreadState_Get());
  if (t_dicts.found && t_dicts.thread == id) return &t_dicts;
  const Context& c = context();
  t_dicts.found = false;
  if (!(t_dicts.state = borrowed_dict_of(c.state)) || !(t_dicts.mesh = borrowed_dict_of(c.mesh_state))) return nullptr;
  t_dicts.thread = id;
  t_dicts.found = true;
  return &t_dicts;
}

}  // namespace

int eager_state_plain(bool for_jit) {
  const Context& c = context();
  const ThreadDicts* t = thread_dicts();
  if (!t) return -1;
  PyObject* trace = PyDict_GetItemWithError(t->state, c.s_trace);
  // (not a subclass's rules; a missing attribute: the Python path says so)
  if (!trace || Py_TYPE(trace) != reinterpret_cast<PyTypeObject*>(c.eval_trace_type)) return PyErr_Occurred() ? -1 : 0;
  PyObject* placement = PyDict_GetItemWithError(c.platforms_dict, c.s_placement);
  if (placement != Py_None) return PyErr_Occurred() ? -1 : 0;
  if (!for_jit) return 1;
  PyObject* env = PyDict_GetItemWithError(t->state, c.s_axis_env);
  if (!env) return PyErr_Occurred() ? -1 : 0;
  int has_env = PyObject_IsTrue(env);
  if (has_env) return has_env < 0 ? -1 : 0;
  PyObject* disabled = PyDict_GetItemWithError(c.config_values, c.s_disable_jit);
  if (!disabled) return PyErr_Occurred() ? -1 : 0;
  return disabled == Py_False ? 1 : 0;
}

PyObject* context_mesh() {
  const Context& c = context();
  const ThreadDicts* t = thread_dicts();
  if (!t) return nullptr;
  PyObject* meshes = PyDict_GetItemWithError(t->mesh, c.s_meshes);
  if (!meshes || !PyList_Check(meshes)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "[fast_call] the mesh stack must be a list");
    return nullptr;
  }
  return Py_NewRef(PyList_GET_SIZE(meshes) ? PyList_GET_ITEM(meshes, PyList_GET_SIZE(meshes) - 1) : Py_None);
}

namespace {

// Whether an entry's context mesh is this one (None on either side: only when both are None).
bool same_mesh(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (a == Py_None || b == Py_None) return false;
  int eq = PyObject_RichCompareBool(a, b, Py_EQ);
  if (eq < 0) PyErr_Clear();  // (no match: the Python path compares again and raises)
  return eq == 1;
}

}  // namespace

void Table::refresh() {
  if (epoch_ != g_epoch) {
    entries_.clear();
    epoch_ = g_epoch;
  }
}

std::shared_ptr<Entry> Table::find(PyObject* const* leaves, Py_ssize_t n, const xjax_pytree::PyTreeDef* treedef,
                                   PyObject* mesh) {
  refresh();
  const Context& c = context();
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    const Entry& e = **it;
    if (Py_ssize_t(e.in_avals.size()) != n) continue;
    if (treedef ? (e.flat || !e.treedef.equals(*treedef)) : !e.flat) continue;
    if (mesh && !same_mesh(e.mesh.ptr(), mesh)) continue;
    bool match = true;
    for (Py_ssize_t i = 0; i < n && match; ++i) {
      PyObject* aval = slot(leaves[i], c.aval_off);
      match = aval && same_aval(aval, e.in_avals[i].ptr());
    }
    if (match) {
      std::shared_ptr<Entry> found = *it;
      if (it != entries_.rbegin()) {  // (to the back: the next search finds it first)
        entries_.erase(std::next(it).base());
        entries_.push_back(found);
      }
      return found;
    }
  }
  return nullptr;
}

void Table::add(std::shared_ptr<Entry> e) {
  refresh();
  if (entries_.size() >= max_entries_) entries_.erase(entries_.begin());
  entries_.push_back(std::move(e));
}

bool leaf_avals(PyObject* const* leaves, Py_ssize_t n, std::vector<py::object>* avals, PyTypeObject* also) {
  const Context& c = context();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyTypeObject* type = Py_TYPE(leaves[i]);
    if (type != c.array_type && (type != also || !also)) return false;
    PyObject* aval = slot(leaves[i], c.aval_off);
    if (!aval || Py_TYPE(aval) != c.aval_type || (type == c.array_type && !slot(leaves[i], c.value_off))) return false;
    if (avals) avals->push_back(py::reinterpret_borrow<py::object>(aval));
  }
  return true;
}

bool Leaves::of(PyObject* args, std::vector<py::object>* avals, PyTypeObject* also) {
  n = PyTuple_GET_SIZE(args);
  items = &PyTuple_GET_ITEM(args, 0);
  if (leaf_avals(items, n, avals, also)) return true;
  flat = false;
  try {
    std::tie(list, treedef) = xjax_pytree::flatten(args, py::none());
  } catch (py::error_already_set&) {
    PyErr_Clear();  // (the Python path raises it again, with its context)
    return false;
  }
  n = PyList_GET_SIZE(list.ptr());
  items = &PyList_GET_ITEM(list.ptr(), 0);
  if (avals) avals->clear();
  return leaf_avals(items, n, avals, also);
}

Py_ssize_t slot_offset(py::handle type, const char* name) {
  py::object d = py::reinterpret_steal<py::object>(PyObject_GetAttrString(type.ptr(), name));
  if (!d) throw py::error_already_set();
  if (Py_TYPE(d.ptr()) != &PyMemberDescr_Type)
    throw py::type_error(std::string("[fast_call] ") + name + " is not a __slots__ member");
  return reinterpret_cast<PyMemberDescrObject*>(d.ptr())->d_member->offset;
}

void ready_type(py::module_& m, PyTypeObject& t, const char* name) {
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  m.add_object(name, py::handle(reinterpret_cast<PyObject*>(&t)));
}

PyObject* make_array(xjax::Array&& value, PyObject* aval) {
  const Context& c = context();
  py::object v = py::cast(std::move(value));
  PyObject* obj = c.array_type->tp_alloc(c.array_type, 0);
  if (!obj) return nullptr;
  slot(obj, c.value_off) = v.release().ptr();
  Py_INCREF(aval);
  slot(obj, c.aval_off) = aval;
  Py_INCREF(Py_None);
  slot(obj, c.npy_off) = Py_None;
  return obj;
}

PyObject* run_entry(const Entry& e, PyObject* const* leaves, Py_ssize_t n, PyObject* scalar) {
  const Context& c = context();
  std::vector<xjax::Array> inputs;
  inputs.reserve(size_t(n) + 1 + e.extern_values.size());
  for (Py_ssize_t i = 0; i < n; ++i) inputs.push_back(value_of(leaves[i]));
  if (e.scalar_bits) {  // (as array.scalar places a Python float: one rounding from the double)
    const double v = PyFloat_AsDouble(scalar);
    if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    xjax::Array s = xjax::Array::empty({}, e.scalar_bits == 32 ? xjax::DType::Float32 : xjax::DType::Float64);
    if (e.scalar_bits == 32) *static_cast<float*>(s.data()) = float(v);
    else *static_cast<double*>(s.data()) = v;
    inputs.push_back(std::move(s));
  }
  inputs.insert(inputs.end(), e.extern_values.begin(), e.extern_values.end());
  std::vector<xjax::Array> outs;
  if (e.exe->brief()) {  // (releasing and taking the GIL back would cost about 7% of a tiny call)
    outs = e.exe->run(inputs);
  } else {
    WithoutGil released;
    outs = e.exe->run(inputs);
  }
  size_t m = e.out_avals.size();
  if (e.out_tree.is_none()) return make_array(std::move(outs[e.out_pos.empty() ? 0 : e.out_pos[0]]), e.out_avals[0].ptr());
  py::list results(m);
  for (size_t i = 0; i < m; ++i) {
    xjax::Array v = outs[e.out_pos.empty() ? i : size_t(e.out_pos[i])];
    PyObject* a = make_array(std::move(v), e.out_avals[i].ptr());
    if (!a) throw py::error_already_set();
    PyList_SET_ITEM(results.ptr(), Py_ssize_t(i), a);
  }
  return xjax_pytree::unwrap_treedef(e.out_tree).unflatten(results).release().ptr();
}

void fill_program(Entry& e, py::handle parts) {
  auto t = parts.cast<py::tuple>();
  if (t.size() != 5)
    throw py::value_error("[fast_call] program parts must be (exe, extern, out_pos, out_avals, owner)");
  e.owner = t[4];
  e.exe = t[0].cast<std::shared_ptr<xjax::Executable>>();
  for (auto v : t[1]) e.extern_values.push_back(v.cast<xjax::Array>());
  if (!t[2].is_none())
    for (auto i : t[2]) e.out_pos.push_back(i.cast<int>());
  for (auto a : t[3]) {
    if (Py_TYPE(a.ptr()) != context().aval_type) throw py::type_error("[fast_call] output avals must be ShapedArrays");
    e.out_avals.push_back(py::reinterpret_borrow<py::object>(a));
  }
  size_t outs = e.exe->output_types().size();
  for (int i : e.out_pos)
    if (i < 0 || size_t(i) >= outs) throw py::value_error("[fast_call] out_pos names an output the program lacks");
  if (e.out_pos.empty() && e.out_avals.size() != outs)
    throw py::value_error("[fast_call] " + std::to_string(e.out_avals.size()) + " output avals for a program of " +
                          std::to_string(outs) + " outputs");
  const size_t given = e.in_avals.size() + (e.scalar_bits ? 1 : 0) + e.extern_values.size();
  if (e.exe->input_types().size() != given)
    throw py::value_error("[fast_call] the program takes " + std::to_string(e.exe->input_types().size()) +
                          " inputs, the signature gives " + std::to_string(given));
}

}  // namespace xjax_fast
