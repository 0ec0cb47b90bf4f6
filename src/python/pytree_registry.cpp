// The pytree node registry: which Python types are nodes, and how they flatten.
#include "pytree.h"

namespace xjax_pytree {

namespace {

std::unique_ptr<Registration> builtin(Kind kind, PyObject* type) {
  auto r = std::make_unique<Registration>();
  r->kind = kind;
  r->type = py::reinterpret_borrow<py::object>(type);
  return r;
}

}  // namespace

Registry::Registry() {
  types_[&PyTuple_Type] = builtin(Kind::Tuple, reinterpret_cast<PyObject*>(&PyTuple_Type));
  types_[&PyList_Type] = builtin(Kind::List, reinterpret_cast<PyObject*>(&PyList_Type));
  types_[&PyDict_Type] = builtin(Kind::Dict, reinterpret_cast<PyObject*>(&PyDict_Type));
  types_[Py_TYPE(Py_None)] = builtin(Kind::None, reinterpret_cast<PyObject*>(Py_TYPE(Py_None)));
  namedtuple_.kind = Kind::NamedTuple;
  tuple_ = types_[&PyTuple_Type].get();
  list_ = types_[&PyList_Type].get();
  dict_ = types_[&PyDict_Type].get();
  none_ = types_[Py_TYPE(Py_None)].get();
}

Registry& Registry::global() {
  // Never destroyed: the entries hold Python objects that must not be released after the
  // interpreter is gone.
  static Registry* registry = new Registry();
  return *registry;
}

static bool is_namedtuple_type(PyTypeObject* t) {
  static PyObject* fields = PyUnicode_InternFromString("_fields");
  if (!PyType_IsSubtype(t, &PyTuple_Type)) return false;
  int has = PyObject_HasAttr(reinterpret_cast<PyObject*>(t), fields);
  return has == 1;
}

const Registration* Registry::lookup(PyObject* obj) const {
  PyTypeObject* t = Py_TYPE(obj);
  // The built-in containers first: they are most nodes, and cannot be registered again.
  if (t == &PyDict_Type) return dict_;
  if (t == &PyList_Type) return list_;
  if (t == &PyTuple_Type) return tuple_;
  if (obj == Py_None) return none_;
  if (reinterpret_cast<PyObject*>(t) == last_leaf_type_.ptr()) return nullptr;
  auto it = types_.find(t);
  if (it != types_.end()) return it->second.get();
  // Namedtuple types are nodes without registration (unless registered explicitly above).
  if (PyTuple_Check(obj)) return is_namedtuple_type(t) ? &namedtuple_ : nullptr;
  // Leaves often come in runs of one type (arrays): remember the last one. The reference
  // keeps the type alive, so its address cannot be reused by another type.
  last_leaf_type_ = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(t));
  return nullptr;
}

const Registration* Registry::lookup_type(PyObject* type) const {
  if (!PyType_Check(type)) return nullptr;
  auto* t = reinterpret_cast<PyTypeObject*>(type);
  auto it = types_.find(t);
  if (it != types_.end()) return it->second.get();
  return is_namedtuple_type(t) ? &namedtuple_ : nullptr;
}

void Registry::add(std::unique_ptr<Registration> r, const char* what) {
  if (!PyType_Check(r->type.ptr()))
    throw py::type_error("[register_pytree_node] nodetype must be a type, got " + py_repr(r->type));
  auto* t = reinterpret_cast<PyTypeObject*>(r->type.ptr());
  if (types_.count(t))
    throw py::value_error(std::string("Duplicate custom ") + what + "PyTreeDef type registration for " +
                          py_repr(r->type) + ".");
  types_[t] = std::move(r);
  last_leaf_type_ = py::object();
}

void Registry::set_key_types(py::object seq, py::object dict, py::object attr, py::object flat) {
  key_types_[kSequence] = std::move(seq);
  key_types_[kDict] = std::move(dict);
  key_types_[kGetAttr] = std::move(attr);
  key_types_[kFlatIndex] = std::move(flat);
  for (int k = 0; k < kNumKeyKinds; ++k) {
    index_keys_[k].clear();
    str_keys_[k] = py::dict();
  }
}

static py::object make_key(const py::object& type, PyObject* value) {
  if (!type) throw py::type_error("[pytree] key classes are not set: import xjax.tree_util");
  PyObject* k = PyObject_CallOneArg(type.ptr(), value);
  if (!k) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(k);
}

py::object Registry::key(KeyKind kind, Py_ssize_t index) const {
  constexpr Py_ssize_t kCached = 1024;
  auto& cache = index_keys_[kind];
  if (index < Py_ssize_t(cache.size())) return cache[size_t(index)];
  py::object k = make_key(key_types_[kind], py::int_(index).ptr());
  if (index == Py_ssize_t(cache.size()) && index < kCached) cache.push_back(k);
  return k;
}

py::object Registry::key(KeyKind kind, PyObject* value) const {
  constexpr size_t kCached = 4096;
  if (!PyUnicode_CheckExact(value)) return make_key(key_types_[kind], value);
  py::dict& cache = str_keys_[kind];
  PyObject* hit = PyDict_GetItemWithError(cache.ptr(), value);
  if (hit) return py::reinterpret_borrow<py::object>(hit);
  if (PyErr_Occurred()) throw py::error_already_set();
  py::object k = make_key(key_types_[kind], value);
  if (cache.size() < kCached && PyDict_SetItem(cache.ptr(), value, k.ptr()) < 0) throw py::error_already_set();
  return k;
}

std::string py_repr(py::handle h) {
  py::object s = py::reinterpret_steal<py::object>(PyObject_Repr(h.ptr()));
  if (!s) throw py::error_already_set();
  return s.cast<std::string>();
}

std::string py_str(py::handle h) {
  py::object s = py::reinterpret_steal<py::object>(PyObject_Str(h.ptr()));
  if (!s) throw py::error_already_set();
  return s.cast<std::string>();
}

std::string type_name(PyObject* type) {
  if (!PyType_Check(type)) return py_str(type);
  return py::str(py::handle(type).attr("__name__")).cast<std::string>();
}

}  // namespace xjax_pytree
