// PmapCalls: the base of pmap's wrapper across processes, with one device in each, for a program
// that runs whole as one MpiCall (pmap_program.whole_runner). A call whose arguments (positional;
// xjax.Arrays, or ShardedArrays split as pmap splits that argument) match an installed signature
// reads the collective counter, timeout and exits from the distributed state, runs the MpiCall,
// writes the counter back and returns the ShardedArrays the Python path builds. Any other call
// goes to the wrapper's Python `_call_slow(args, kwargs)`, which installs the signature once it
// has run it whole. A failed run hands its exception to `on_error`, the Python path's own handler
// (mpi_channel.raise_failure), so the errors are the same.
#include <algorithm>

#include "core/distributed/mpi.h"
#include "fast_call.h"
#include "mpi_call.h"

namespace xjax_fast {

namespace {

struct PmapEntry : Entry {
  py::object call_object;                  // the _core.MpiCall
  const xjax_mpi::MpiCall* call = nullptr;  // its C++ object
  std::vector<py::object> in_shardings;    // per leaf: the split a ShardedArray argument must have
  std::vector<py::object> out_shardings, out_global_avals;  // per output
};

// ShardedArray's own __slots__ (its aval and _npy are Array's).
struct ShardedLayout {
  PyTypeObject* type = nullptr;
  Py_ssize_t shards = 0, sharding = 0, whole = 0, typed = 0;
};

// The slots of the distributed state (distributed._State) that a run reads and writes.
struct StateLayout {
  Py_ssize_t seq = 0, timeout = 0, failed = 0, exited = 0;
};

struct PmapObject {
  PyObject_HEAD
  Table* table;
  ShardedLayout sharded;
  PyObject* state;     // distributed.state: seq, timeout, exited, failed
  StateLayout state_layout;
  PyObject* on_error;  // (exception) -> raises what a failed collective gives
  unsigned long long hits;
};

// The local values of the leaves for the entry: an Array's own, a ShardedArray's one block when
// it has the entry's split (identical: the Python path compares further); false otherwise.
bool local_values(const PmapObject& p, const PmapEntry& e, const Leaves& leaves, std::vector<xjax::Array>* values) {
  values->reserve(size_t(leaves.n));
  for (Py_ssize_t i = 0; i < leaves.n; ++i) {
    PyObject* x = leaves.items[i];
    if (Py_TYPE(x) == p.sharded.type) {
      PyObject* blocks = slot(x, p.sharded.shards);
      if (slot(x, p.sharded.sharding) != e.in_shardings[size_t(i)].ptr() || !blocks || !PyTuple_Check(blocks) ||
          PyTuple_GET_SIZE(blocks) != 1 || !leaf_avals(&PyTuple_GET_ITEM(blocks, 0), 1, nullptr))
        return false;
      x = PyTuple_GET_ITEM(blocks, 0);
    }
    values->push_back(value_of(x));
  }
  return true;
}

// A slot's value (borrowed); an unset slot is an AttributeError, as Python's.
PyObject* read_slot(PyObject* obj, Py_ssize_t offset, const char* name) {
  PyObject* v = slot(obj, offset);
  if (!v) throw py::attribute_error(std::string("[PmapCalls] the distributed state has no ") + name);
  return v;
}

int64_t as_int64(PyObject* v) {
  const long long i = PyLong_AsLongLong(v);
  if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
  return i;
}

// The state's collective counter, timeout and the first collective a process exited after (none:
// 2**62, as mpi_channel.bracketed); false when an earlier collective failed (the Python path raises).
bool read_state(const PmapObject& p, int64_t* seq, double* timeout, int64_t* exited_after) {
  const StateLayout& l = p.state_layout;
  if (read_slot(p.state, l.failed, "failed") != Py_None) return false;
  *seq = as_int64(read_slot(p.state, l.seq, "seq"));
  *timeout = PyFloat_AsDouble(read_slot(p.state, l.timeout, "timeout"));
  if (*timeout == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  PyObject* exited = read_slot(p.state, l.exited, "exited");
  if (!PyDict_Check(exited)) throw py::type_error("[PmapCalls] state.exited must be a dict");
  *exited_after = int64_t(1) << 62;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(exited, &pos, &key, &value)) *exited_after = std::min(*exited_after, as_int64(value));
  return true;
}

void write_seq(const PmapObject& p) {
  PyObject* seq = PyLong_FromLongLong(xjax::mpi::seq());
  if (!seq) throw py::error_already_set();
  PyObject*& to = slot(p.state, p.state_layout.seq);
  Py_XSETREF(to, seq);
}

// A new ShardedArray of one block, as ShardedArray((block,), sharding, aval) makes it.
PyObject* make_sharded(const ShardedLayout& layout, PyObject* block, PyObject* sharding, PyObject* aval) {
  const Context& c = context();
  PyObject* obj = layout.type->tp_alloc(layout.type, 0);
  if (!obj) return nullptr;
  slot(obj, layout.shards) = PyTuple_Pack(1, block);
  slot(obj, layout.sharding) = Py_NewRef(sharding);
  slot(obj, c.aval_off) = Py_NewRef(aval);
  slot(obj, c.npy_off) = Py_NewRef(Py_None);
  slot(obj, layout.whole) = Py_NewRef(Py_None);
  slot(obj, layout.typed) = Py_NewRef(Py_None);
  if (!slot(obj, layout.shards)) Py_CLEAR(obj);
  return obj;
}

// The results of the entry's run, or null: with a Python error set, or (an earlier collective
// failed: the Python path raises) none.
PyObject* run_pmap(PmapObject& p, const PmapEntry& e, std::vector<xjax::Array> values) {
  int64_t seq, exited_after;
  double timeout;
  if (!read_state(p, &seq, &timeout, &exited_after)) return nullptr;
  std::vector<xjax::Array> outs;
  try {
    outs = e.call->run(std::move(values), seq, timeout, exited_after);
  } catch (...) {
    write_seq(p);
    py::detail::try_translate_exceptions();
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    if (trace) PyException_SetTraceback(value, trace);
    py::object error = py::reinterpret_steal<py::object>(value);
    Py_XDECREF(type);
    Py_XDECREF(trace);
    PyObject* r = PyObject_CallOneArg(p.on_error, error.ptr());
    if (r) {  // (on_error raises)
      Py_DECREF(r);
      PyErr_SetString(PyExc_RuntimeError, "[PmapCalls] on_error returned");
    }
    return nullptr;
  }
  write_seq(p);
  ++p.hits;
  const auto& block_avals = e.call->out_avals();
  py::list results(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    py::object block = py::reinterpret_steal<py::object>(make_array(std::move(outs[k]), block_avals[k].ptr()));
    if (!block) throw py::error_already_set();
    PyObject* r = make_sharded(p.sharded, block.ptr(), e.out_shardings[k].ptr(), e.out_global_avals[k].ptr());
    if (!r) throw py::error_already_set();
    PyList_SET_ITEM(results.ptr(), Py_ssize_t(k), r);
  }
  return xjax_pytree::unwrap_treedef(e.out_tree).unflatten(results).release().ptr();
}

// The results of a call the C++ path answers, or null: with a Python error set, or none (the
// Python path takes the call).
PyObject* fast_pmap(PmapObject& p, PyObject* args, PyObject* kwargs) {
  if (!p.table->size() || (kwargs && PyDict_GET_SIZE(kwargs))) return nullptr;
  int plain = eager_state_plain(true);
  if (plain <= 0) return nullptr;
  Leaves leaves;
  if (!leaves.of(args, nullptr, p.sharded.type)) return nullptr;
  auto found = p.table->find(leaves.items, leaves.n, leaves.flat ? nullptr : &leaves.treedef);
  if (!found) return nullptr;
  const auto& e = static_cast<const PmapEntry&>(*found);
  std::vector<xjax::Array> values;
  if (!local_values(p, e, leaves, &values)) return nullptr;
  return run_pmap(p, e, std::move(values));
}

PyObject* pmap_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  auto& p = *reinterpret_cast<PmapObject*>(self);
  return guarded([&]() -> PyObject* {
    if (PyObject* out = fast_pmap(p, args, kwargs)) return out;
    if (PyErr_Occurred()) return nullptr;
    static PyObject* name = PyUnicode_InternFromString("_call_slow");
    py::object kw = kwargs ? py::reinterpret_borrow<py::object>(kwargs) : py::dict();
    return PyObject_CallMethodObjArgs(self, name, args, kw.ptr(), nullptr);
  });
}

// install(args, mpi_call, in_shardings, out_shardings, out_global_avals, out_tree): adds the
// signature of these arguments (kept once); False when they cannot have one.
PyObject* pmap_install(PyObject* self, PyObject* const* argv, Py_ssize_t argc) {
  auto& p = *reinterpret_cast<PmapObject*>(self);
  return guarded([&]() -> PyObject* {
    if (argc != 6 || !PyTuple_Check(argv[0]))
      throw py::type_error("[PmapCalls] install takes (args tuple, MpiCall, in_shardings, out_shardings, "
                           "out_global_avals, out_tree)");
    auto entry = std::make_shared<PmapEntry>();
    Leaves leaves;
    if (!leaves.of(argv[0], &entry->in_avals, p.sharded.type)) Py_RETURN_FALSE;
    int plain = eager_state_plain(true);
    if (plain < 0) return nullptr;
    if (!plain) Py_RETURN_FALSE;  // (a signature under a named axis would be looked up without it)
    if (p.table->find(leaves.items, leaves.n, leaves.flat ? nullptr : &leaves.treedef)) Py_RETURN_TRUE;
    entry->flat = leaves.flat;
    entry->treedef = leaves.treedef;
    entry->call_object = py::reinterpret_borrow<py::object>(argv[1]);
    entry->call = &entry->call_object.cast<const xjax_mpi::MpiCall&>();
    for (auto s : py::reinterpret_borrow<py::sequence>(argv[2])) entry->in_shardings.push_back(py::reinterpret_borrow<py::object>(s));
    for (auto s : py::reinterpret_borrow<py::sequence>(argv[3])) entry->out_shardings.push_back(py::reinterpret_borrow<py::object>(s));
    for (auto a : py::reinterpret_borrow<py::sequence>(argv[4])) {
      if (Py_TYPE(a.ptr()) != context().aval_type) throw py::type_error("[PmapCalls] output avals must be ShapedArrays");
      entry->out_global_avals.push_back(py::reinterpret_borrow<py::object>(a));
    }
    const size_t outs = entry->call->out_avals().size();
    if (entry->in_shardings.size() != size_t(leaves.n) || entry->call->arity() != size_t(leaves.n) ||
        entry->out_shardings.size() != outs || entry->out_global_avals.size() != outs)
      throw py::value_error("[PmapCalls] install: " + std::to_string(leaves.n) + " leaves, " +
                            std::to_string(entry->in_shardings.size()) + " in_shardings for a program of " +
                            std::to_string(entry->call->arity()) + " inputs; " +
                            std::to_string(entry->out_shardings.size()) + " out_shardings and " +
                            std::to_string(entry->out_global_avals.size()) + " avals for " + std::to_string(outs) +
                            " outputs");
    entry->out_tree = py::reinterpret_borrow<py::object>(argv[5]);
    if (xjax_pytree::unwrap_treedef(entry->out_tree).num_leaves() != int(outs))
      throw py::value_error("[PmapCalls] install: out_tree's leaves are not the program's outputs");
    p.table->add(std::move(entry));
    Py_RETURN_TRUE;
  });
}

PyObject* pmap_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"state", "on_error", "sharded_array", nullptr};
  PyObject *state, *on_error, *sharded;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:PmapCalls", const_cast<char**>(names), &state, &on_error,
                                   &sharded))
    return nullptr;
  if (!PyCallable_Check(on_error) || !PyType_Check(sharded) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(sharded), context().array_type)) {
    PyErr_SetString(PyExc_TypeError, "PmapCalls: on_error must be callable and sharded_array an Array subclass");
    return nullptr;
  }
  ShardedLayout layout;
  StateLayout state_layout;
  if (!guarded([&]() -> PyObject* {
        py::handle state_type(reinterpret_cast<PyObject*>(Py_TYPE(state)));
        state_layout.seq = slot_offset(state_type, "seq");
        state_layout.timeout = slot_offset(state_type, "timeout");
        state_layout.failed = slot_offset(state_type, "failed");
        state_layout.exited = slot_offset(state_type, "exited");
        layout.type = reinterpret_cast<PyTypeObject*>(sharded);
        layout.shards = slot_offset(sharded, "_shards");
        layout.sharding = slot_offset(sharded, "_sharding");
        layout.whole = slot_offset(sharded, "_whole");
        layout.typed = slot_offset(sharded, "_typed");
        return Py_None;
      }))
    return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto& p = *reinterpret_cast<PmapObject*>(self);
  p.table = new Table(8);  // (signatures of one function)
  p.sharded = layout;
  Py_INCREF(sharded);
  p.state = Py_NewRef(state);
  p.state_layout = state_layout;
  p.on_error = Py_NewRef(on_error);
  p.hits = 0;
  return self;
}

void pmap_dealloc(PyObject* self) {
  auto& p = *reinterpret_cast<PmapObject*>(self);
  delete p.table;
  Py_XDECREF(reinterpret_cast<PyObject*>(p.sharded.type));
  Py_XDECREF(p.state);
  Py_XDECREF(p.on_error);
  Py_TYPE(self)->tp_free(self);
}

PyObject* pmap_hits(PyObject* self, void*) { return PyLong_FromUnsignedLongLong(reinterpret_cast<PmapObject*>(self)->hits); }
PyObject* pmap_size(PyObject* self, void*) { return PyLong_FromSize_t(reinterpret_cast<PmapObject*>(self)->table->size()); }

PyMethodDef pmap_methods[] = {
    {"install", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pmap_install)), METH_FASTCALL,
     "Installs the signature of these arguments: (args, MpiCall, in_shardings, out_shardings, out_global_avals, "
     "out_tree)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef pmap_getset[] = {
    {"hits", pmap_hits, nullptr, "Calls the C++ path answered.", nullptr},
    {"size", pmap_size, nullptr, "Signatures installed.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject PmapType = {PyVarObject_HEAD_INIT(nullptr, 0)};

}  // namespace

void init_fast_pmap(py::module_& f) {
  PmapType.tp_name = "xjax._core.fast_call.PmapCalls";
  PmapType.tp_basicsize = sizeof(PmapObject);
  PmapType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  PmapType.tp_doc = "Base of pmap's wrapper across processes: calls matching an installed signature run in C++, "
                    "others go to `_call_slow(args, kwargs)`.";
  PmapType.tp_new = pmap_new;
  PmapType.tp_dealloc = pmap_dealloc;
  PmapType.tp_call = pmap_call;
  PmapType.tp_methods = pmap_methods;
  PmapType.tp_getset = pmap_getset;
  ready_type(f, PmapType, "PmapCalls");
}

}  // namespace xjax_fast
