// The PyTreeDef Python type and the flatten entry points, on the raw CPython API: jit flattens
// its arguments on every call, and a pybind11 class instance plus pybind11 dispatch would cost
// several times the flatten of a small tree.
#include "pytree.h"

namespace xjax_pytree {

namespace {

struct TreeDefObject {
  PyObject_HEAD
  PyTreeDef def;
};

PyTypeObject* g_type = nullptr;

// Runs `body`, turning C++ exceptions into a Python error and a null result.
template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

const PyTreeDef& self_def(PyObject* self) { return reinterpret_cast<TreeDefObject*>(self)->def; }

py::list wrap_all(std::vector<PyTreeDef> defs) {
  py::list out(defs.size());
  for (size_t i = 0; i < defs.size(); ++i)
    PyList_SET_ITEM(out.ptr(), i, wrap_treedef(std::move(defs[i])).release().ptr());
  return out;
}

std::vector<PyTreeDef> unwrap_all(py::handle seq) {
  std::vector<PyTreeDef> out;
  for (auto h : seq) out.push_back(unwrap_treedef(h));
  return out;
}

// --- Type slots ---

void td_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  reinterpret_cast<TreeDefObject*>(self)->def.~PyTreeDef();
  type->tp_free(self);
  Py_DECREF(type);
}

// Traversed for the cycle collector; no tp_clear, so node data is never null: cycles through a
// treedef are broken at the other objects in them.
int td_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  for (const Node& n : self_def(self).nodes) Py_VISIT(n.data.ptr());
  return 0;
}

PyObject* td_repr(PyObject* self) {
  return guarded([&] { return py::str(self_def(self).repr()); });
}

Py_hash_t td_hash(PyObject* self) {
  try {
    auto h = Py_hash_t(self_def(self).hash());
    return h == -1 ? -2 : h;
  } catch (py::error_already_set& e) {
    e.restore();
  }
  return -1;
}

PyObject* td_richcompare(PyObject* a, PyObject* b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, g_type)) Py_RETURN_NOTIMPLEMENTED;
  return guarded([&] { return py::bool_(self_def(a).equals(self_def(b)) == (op == Py_EQ)); });
}

PyObject* td_num_leaves(PyObject* self, void*) { return PyLong_FromLong(self_def(self).num_leaves()); }
PyObject* td_num_nodes(PyObject* self, void*) { return PyLong_FromLong(self_def(self).num_nodes()); }

PyObject* td_unflatten(PyObject* self, PyObject* leaves) {
  return guarded([&] { return self_def(self).unflatten(leaves); });
}

PyObject* td_flatten_up_to(PyObject* self, PyObject* tree) {
  return guarded([&] { return self_def(self).flatten_up_to(tree); });
}

PyObject* td_children(PyObject* self, PyObject*) {
  return guarded([&] { return wrap_all(self_def(self).children()); });
}

PyObject* td_node_data(PyObject* self, PyObject*) {
  return guarded([&] { return self_def(self).node_data(); });
}

PyObject* td_compose(PyObject* self, PyObject* inner) {
  return guarded([&] { return wrap_treedef(self_def(self).compose(unwrap_treedef(inner))); });
}

PyObject* td_from_node_data_and_children(PyObject*, PyObject* args) {
  PyObject *node_data, *children;
  if (!PyArg_ParseTuple(args, "OO:from_node_data_and_children", &node_data, &children)) return nullptr;
  return guarded([&] {
    return wrap_treedef(PyTreeDef::from_node_data_and_children(node_data, unwrap_all(children)));
  });
}

// Treedefs are immutable: copies are the object itself.
PyObject* td_copy(PyObject* self, PyObject*) { return Py_NewRef(self); }

PyMethodDef td_methods[] = {
    {"__copy__", td_copy, METH_NOARGS, nullptr},
    {"__deepcopy__", td_copy, METH_O, nullptr},
    {"unflatten", td_unflatten, METH_O, "unflatten(leaves): the pytree of this structure with these leaves."},
    {"flatten_up_to", td_flatten_up_to, METH_O,
     "flatten_up_to(tree): the subtrees of `tree` at the leaves of this structure."},
    {"children", td_children, METH_NOARGS, "Treedefs of the root's children."},
    {"node_data", td_node_data, METH_NOARGS, "None for a leaf, else (type, node data) of the root."},
    {"compose", td_compose, METH_O, "compose(inner): this structure with `inner` at every leaf."},
    {"from_node_data_and_children", td_from_node_data_and_children, METH_VARARGS | METH_STATIC,
     "from_node_data_and_children(node_data, children): the treedef with this root and these children."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef td_getset[] = {
    {"num_leaves", td_num_leaves, nullptr, "Number of leaves.", nullptr},
    {"num_nodes", td_num_nodes, nullptr, "Number of nodes, leaves and None included.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot td_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(td_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(td_traverse)},
    {Py_tp_repr, reinterpret_cast<void*>(td_repr)},
    {Py_tp_hash, reinterpret_cast<void*>(td_hash)},
    {Py_tp_richcompare, reinterpret_cast<void*>(td_richcompare)},
    {Py_tp_methods, td_methods},
    {Py_tp_getset, td_getset},
    {Py_tp_doc, const_cast<char*>("The structure of a pytree: its nodes without the leaves. Hashable.")},
    {0, nullptr}};

PyType_Spec td_spec = {"xjax._core.pytree.PyTreeDef", sizeof(TreeDefObject), 0,
                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, td_slots};

// --- Module functions: fn(tree, is_leaf=None) ---

bool parse_tree_args(const char* name, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** tree,
                     PyObject** is_leaf) {
  *is_leaf = Py_None;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs < 1 || nargs > 2) {
    if (nargs == 0 && nkw) {
      // tree given by keyword
    } else {
      PyErr_Format(PyExc_TypeError, "%s() takes tree and an optional is_leaf, got %zd positional arguments", name,
                   nargs);
      return false;
    }
  }
  *tree = nargs >= 1 ? args[0] : nullptr;
  if (nargs == 2) *is_leaf = args[1];
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* kw = PyTuple_GET_ITEM(kwnames, i);
    PyObject* value = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(kw, "is_leaf") == 0 && nargs < 2) {
      *is_leaf = value;
    } else if (PyUnicode_CompareWithASCIIString(kw, "tree") == 0 && nargs < 1) {
      *tree = value;
    } else {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword argument '%U'", name, kw);
      return false;
    }
  }
  if (!*tree) {
    PyErr_Format(PyExc_TypeError, "%s() missing required argument 'tree'", name);
    return false;
  }
  return true;
}

template <int What>  // 0: (leaves, treedef), 1: leaves, 2: treedef, 3: with paths
PyObject* flatten_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const char* names[] = {"flatten", "leaves", "structure", "flatten_with_path"};
  PyObject *tree, *is_leaf;
  if (!parse_tree_args(names[What], args, nargs, kwnames, &tree, &is_leaf)) return nullptr;
  return guarded([&]() -> py::object {
    auto [leaves, def] = What == 3 ? flatten_with_path(tree, is_leaf) : flatten(tree, is_leaf);
    if (What == 1) return std::move(leaves);
    if (What == 2) return wrap_treedef(std::move(def));
    py::object td = wrap_treedef(std::move(def));
    return py::reinterpret_steal<py::object>(PyTuple_Pack(2, leaves.ptr(), td.ptr()));
  });
}

PyMethodDef module_functions[] = {
    {"flatten", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(flatten_entry<0>)),
     METH_FASTCALL | METH_KEYWORDS, "flatten(tree, is_leaf=None) -> (leaves, treedef)"},
    {"leaves", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(flatten_entry<1>)),
     METH_FASTCALL | METH_KEYWORDS, "leaves(tree, is_leaf=None) -> leaves"},
    {"structure", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(flatten_entry<2>)),
     METH_FASTCALL | METH_KEYWORDS, "structure(tree, is_leaf=None) -> treedef"},
    {"flatten_with_path", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(flatten_entry<3>)),
     METH_FASTCALL | METH_KEYWORDS,
     "flatten_with_path(tree, is_leaf=None) -> ([(key path, leaf), ...], treedef); is_leaf takes (path, x)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

py::object wrap_treedef(PyTreeDef&& def) {
  auto* obj = PyObject_GC_New(TreeDefObject, g_type);
  if (!obj) throw py::error_already_set();
  new (&obj->def) PyTreeDef(std::move(def));
  PyObject_GC_Track(obj);
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(obj));
}

const PyTreeDef& unwrap_treedef(py::handle h) {
  if (!PyObject_TypeCheck(h.ptr(), g_type))
    throw py::type_error("expected a PyTreeDef, got " + py_repr(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()))));
  return self_def(h.ptr());
}

void add_treedef_type(py::module_& m) {
  g_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&td_spec));
  if (!g_type) throw py::error_already_set();
  m.add_object("PyTreeDef", py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(g_type)));
  if (PyModule_AddFunctions(m.ptr(), module_functions) < 0) throw py::error_already_set();
}

}  // namespace xjax_pytree
