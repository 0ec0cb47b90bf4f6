// The C++ path of Primitive.bind (fast_call.h): `Primitive.bind` is a PrimitiveBind, a method
// descriptor, so `prim.bind(*operands, **params)` comes here unbound. Operands that are all exact
// xjax.Arrays, with the plain EvalTrace current and no GPU placement, look up (primitive, params,
// operand avals) -- the key of eager dispatch's Python cache -- in a table of the primitive and run
// its one-op executable. A miss asks `resolve(prim, avals, params)` (backends/cpu.bind_program),
// which declines a primitive with an impl of its own; anything else, and a resolve that raises,
// calls the Python bind, which stays the definition (and raises its own errors).
#include <cstddef>
#include <iterator>
#include <unordered_map>

#include "fast_call.h"

namespace xjax_fast {

namespace {

// One signature: the parameters' names and values (in call order, as the Python key keeps them),
// a weak reference to the impl the primitive had when it was resolved, and what runs (exe null:
// the Python bind).
struct BindEntry {
  std::vector<py::object> names, values;
  py::object impl;
  std::shared_ptr<Entry> entry;
};

// The signatures of one primitive, known by a weak reference (the table keeps no primitive or impl
// alive; a table whose primitive died is dropped, even when a new one takes its address).
struct PrimTable {
  py::object prim;
  std::vector<BindEntry> entries;  // the most recently used last
  uint64_t epoch = 0;
};

constexpr size_t kMaxPerPrimitive = 32;

struct BindObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* slow;     // the Python bind(prim, *args, **params)
  PyObject* resolve;  // (prim, avals tuple, params dict) -> ((exe, extern, out_pos, out avals, owner), out_tree) or None
  std::unordered_map<PyObject*, PrimTable>* tables;  // by the primitive's address
  size_t swept;  // tables after the last sweep
  unsigned long long hits;
};

bool equal(PyObject* a, PyObject* b) {
  if (a == b) return true;
  int eq = PyObject_RichCompareBool(a, b, Py_EQ);
  if (eq < 0) PyErr_Clear();  // (a value that cannot say: no match; the Python path decides)
  return eq == 1;
}

bool matches(const BindEntry& b, PyObject* const* ops, Py_ssize_t n, PyObject* const* vals, PyObject* kwnames) {
  const Py_ssize_t k = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (Py_ssize_t(b.names.size()) != k || Py_ssize_t(b.entry->in_avals.size()) != n) return false;
  for (Py_ssize_t i = 0; i < k; ++i)
    if (!equal(PyTuple_GET_ITEM(kwnames, i), b.names[i].ptr()) || !equal(vals[i], b.values[i].ptr())) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!same_aval(aval_of(ops[i]), b.entry->in_avals[i].ptr())) return false;
  return true;
}

// The entry of this call from `resolve`, kept in the table (a declined signature without a
// program); null when resolve raised (the Python bind then raises its error).
BindEntry* resolve_entry(BindObject* self, PrimTable& t, PyObject* prim, PyObject* const* ops, Py_ssize_t n,
                         PyObject* const* vals, PyObject* kwnames, PyObject* impl) {
  BindEntry b;
  b.impl = py::reinterpret_steal<py::object>(PyWeakref_NewRef(impl, nullptr));
  if (!b.impl) {
    PyErr_Clear();  // (an impl without weak references: never cached)
    return nullptr;
  }
  b.entry = std::make_shared<Entry>();
  Entry& e = *b.entry;
  leaf_avals(ops, n, &e.in_avals);
  e.flat = true;
  e.out_tree = py::none();
  py::tuple avals(n);
  for (Py_ssize_t i = 0; i < n; ++i) avals[i] = e.in_avals[i];
  py::dict params;
  const Py_ssize_t k = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < k; ++i) {
    b.names.push_back(py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(kwnames, i)));
    b.values.push_back(py::reinterpret_borrow<py::object>(vals[i]));
    params[b.names.back()] = b.values.back();
  }
  PyObject* r = PyObject_CallFunctionObjArgs(self->resolve, prim, avals.ptr(), params.ptr(), nullptr);
  if (!r) {
    PyErr_Clear();
    return nullptr;
  }
  py::object result = py::reinterpret_steal<py::object>(r);
  if (!result.is_none()) {
    auto parts = result.cast<py::tuple>();
    if (parts.size() != 2) throw py::value_error("[Primitive.bind] resolve must return (program parts, out_tree or None) or None");
    fill_program(e, parts[0]);
    e.out_tree = parts[1];
    if (!e.out_tree.is_none()) xjax_pytree::unwrap_treedef(e.out_tree);  // (a TypeError otherwise)
    else if (e.out_avals.size() != 1) throw py::value_error("[Primitive.bind] out_tree None needs exactly one output");
  }
  if (t.entries.size() >= kMaxPerPrimitive) t.entries.erase(t.entries.begin());
  t.entries.push_back(std::move(b));
  return &t.entries.back();
}

// The table of `prim`, current (another epoch's or a dead primitive's entries dropped); its
// `prim` is null when the primitive takes no weak references.
PrimTable& table_of(BindObject* self, PyObject* prim) {
  auto& tables = *self->tables;
  if (tables.size() > 2 * self->swept + 64) {  // (sweep out the tables of dead primitives)
    for (auto it = tables.begin(); it != tables.end();)
      it = PyWeakref_GetObject(it->second.prim.ptr()) == Py_None ? tables.erase(it) : std::next(it);
    self->swept = tables.size();
  }
  PrimTable& t = tables[prim];
  if (t.epoch != epoch() || !t.prim || PyWeakref_GetObject(t.prim.ptr()) != prim) {
    t.entries.clear();
    t.epoch = epoch();
    t.prim = py::reinterpret_steal<py::object>(PyWeakref_NewRef(prim, nullptr));
    if (!t.prim) PyErr_Clear();
  }
  return t;
}

// The program for this call, or null (the Python bind runs it).
std::shared_ptr<Entry> lookup(BindObject* self, PyObject* prim, PyObject* const* ops, Py_ssize_t n,
                              PyObject* const* vals, PyObject* kwnames) {
  const Py_ssize_t k = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < k; ++i)
    if (PyFloat_Check(vals[i])) return nullptr;  // (the Python key spells floats out: NaN, -0.0)
  if (!leaf_avals(ops, n, nullptr)) return nullptr;
  int plain = eager_state_plain(false);
  if (plain < 0) throw py::error_already_set();
  if (!plain) return nullptr;
  static PyObject* s_impl = PyUnicode_InternFromString("impl");
  py::object impl = py::reinterpret_steal<py::object>(PyObject_GetAttr(prim, s_impl));
  if (!impl) {
    PyErr_Clear();
    return nullptr;
  }
  PrimTable& t = table_of(self, prim);
  if (!t.prim) return nullptr;
  BindEntry* found = nullptr;
  for (auto it = t.entries.rbegin(); it != t.entries.rend(); ++it) {
    if (matches(*it, ops, n, vals, kwnames)) {
      if (it != t.entries.rbegin()) {  // (to the back: the next search finds it first)
        BindEntry b = std::move(*it);
        t.entries.erase(std::next(it).base());
        t.entries.push_back(std::move(b));
      }
      found = &t.entries.back();
      break;
    }
  }
  if (found && PyWeakref_GetObject(found->impl.ptr()) != impl.ptr()) {  // (an impl set since: resolved again)
    t.entries.pop_back();
    found = nullptr;
  }
  if (!found) found = resolve_entry(self, t, prim, ops, n, vals, kwnames, impl.ptr());
  if (!found) return nullptr;
  return found->entry->exe ? found->entry : nullptr;
}

PyObject* bind_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* b = reinterpret_cast<BindObject*>(self);
  return guarded([&]() -> PyObject* {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1) {
      std::shared_ptr<Entry> entry = lookup(b, args[0], args + 1, nargs - 1, args + nargs, kwnames);
      if (entry) {
        ++b->hits;
        return run_entry(*entry, args + 1, nargs - 1);
      }
    }
    return PyObject_Vectorcall(b->slow, args, nargsf, kwnames);
  });
}

PyObject* bind_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *slow, *resolve;
  if (!parse_slow_resolve(args, kwargs, "PrimitiveBind", &slow, &resolve)) return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* b = reinterpret_cast<BindObject*>(self);
  b->vectorcall = bind_vectorcall;
  b->slow = Py_NewRef(slow);
  b->resolve = Py_NewRef(resolve);
  b->tables = new std::unordered_map<PyObject*, PrimTable>();
  b->swept = 0;
  b->hits = 0;
  return self;
}

void bind_dealloc(PyObject* self) {
  auto* b = reinterpret_cast<BindObject*>(self);
  delete b->tables;
  Py_XDECREF(b->slow);
  Py_XDECREF(b->resolve);
  Py_TYPE(self)->tp_free(self);
}

PyObject* bind_hits(PyObject* self, void*) { return PyLong_FromUnsignedLongLong(reinterpret_cast<BindObject*>(self)->hits); }

PyGetSetDef bind_getset[] = {{"hits", bind_hits, nullptr, "Binds the C++ path answered.", nullptr},
                             {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject BindType = {PyVarObject_HEAD_INIT(nullptr, 0)};

}  // namespace

void init_fast_bind(py::module_& f) {
  BindType.tp_name = "xjax._core.fast_call.PrimitiveBind";
  BindType.tp_basicsize = sizeof(BindObject);
  BindType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  BindType.tp_doc = "Primitive.bind: eager binds on Arrays of known (params, avals) run their executable in C++.";
  BindType.tp_new = bind_new;
  BindType.tp_dealloc = bind_dealloc;
  BindType.tp_call = PyVectorcall_Call;
  BindType.tp_vectorcall_offset = offsetof(BindObject, vectorcall);
  BindType.tp_descr_get = method_get;
  BindType.tp_getattro = slow_getattro<BindObject>;
  BindType.tp_getset = bind_getset;
  ready_type(f, BindType, "PrimitiveBind");
}

}  // namespace xjax_fast
