// Flattening: pytree -> (leaves, PyTreeDef), optionally with key paths; flatten_up_to.
#include <algorithm>

#include "pytree.h"

namespace xjax_pytree {

namespace {

py::object borrow(PyObject* o) { return py::reinterpret_borrow<py::object>(o); }

py::object steal_or_throw(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

// Guards the C stack against self-referencing or absurdly deep trees.
struct RecursionGuard {
  RecursionGuard() {
    if (Py_EnterRecursiveCall(" while flattening a pytree")) throw py::error_already_set();
  }
  ~RecursionGuard() { Py_LeaveRecursiveCall(); }
};

// The (children, aux) pair a custom flatten function returned, checked.
std::pair<py::object, py::object> split_custom(const py::object& out) {
  if (!PyTuple_Check(out.ptr()) || PyTuple_GET_SIZE(out.ptr()) != 2)
    throw py::value_error(
        "The to_iterable function for a custom PyTree node should return a (children, aux_data) tuple, got " +
        py_repr(out));
  py::object children = borrow(PyTuple_GET_ITEM(out.ptr(), 0));
  if (!PyTuple_Check(children.ptr()) && !PyList_Check(children.ptr())) {
    PyObject* it = PyObject_GetIter(children.ptr());
    if (!it) {
      PyErr_Clear();
      throw py::value_error(
          "The to_iterable function for a custom PyTree node should return a (children, aux_data) tuple where "
          "'children' is iterable, got " +
          py_repr(out));
    }
    Py_DECREF(it);
    children = steal_or_throw(PySequence_Tuple(children.ptr()));
  }
  return {children, borrow(PyTuple_GET_ITEM(out.ptr(), 1))};
}

py::object call1(const py::object& f, PyObject* x) { return steal_or_throw(PyObject_CallOneArg(f.ptr(), x)); }

class Flattener {
 public:
  Flattener(PyObject* is_leaf, bool with_path) : is_leaf_(is_leaf), with_path_(with_path), reg_(Registry::global()) {}

  void walk(PyObject* obj);
  py::list take_leaves();
  void reserve_leaves(size_t n) { leaves_.reserve(n); }
  std::vector<Node> nodes;

 private:
  PyObject* is_leaf_;  // borrowed; null when absent
  bool with_path_;
  const Registry& reg_;
  std::vector<py::object> path_;
  std::vector<py::object> leaves_;
  std::vector<py::object> dict_values_;  // values of the dicts being walked, a stack
  int num_leaves_ = 0;

  py::object path_tuple() const {
    py::tuple t(path_.size());
    for (size_t i = 0; i < path_.size(); ++i) {
      PyObject* k = path_[i].ptr();
      Py_INCREF(k);
      PyTuple_SET_ITEM(t.ptr(), i, k);
    }
    return std::move(t);
  }
  bool claimed_by_is_leaf(PyObject* obj) const {
    py::object r = with_path_ ? steal_or_throw(PyObject_CallFunctionObjArgs(is_leaf_, path_tuple().ptr(), obj, nullptr))
                              : steal_or_throw(PyObject_CallOneArg(is_leaf_, obj));
    int truth = PyObject_IsTrue(r.ptr());
    if (truth < 0) throw py::error_already_set();
    return truth;
  }
  void add_leaf(PyObject* obj) {
    if (with_path_)
      leaves_.push_back(steal_or_throw(PyTuple_Pack(2, path_tuple().ptr(), obj)));
    else
      leaves_.push_back(borrow(obj));
    Node n;
    n.num_leaves = n.num_nodes = 1;
    nodes.push_back(std::move(n));
    ++num_leaves_;
  }
  // Walks one child; `key` is built only when paths are recorded.
  template <typename MakeKey>
  void child(PyObject* obj, MakeKey make_key) {
    if (!with_path_) return walk(obj);
    path_.push_back(make_key());
    walk(obj);
    path_.pop_back();
  }
  int walk_sequence(PyObject* seq) {
    // Items are held while walking: callbacks may mutate the container.
    Py_ssize_t i = 0;
    for (; i < PySequence_Fast_GET_SIZE(seq); ++i) {
      py::object item = borrow(PySequence_Fast_GET_ITEM(seq, i));
      child(item.ptr(), [&] { return reg_.key(Registry::kSequence, i); });
    }
    return int(i);
  }
  int walk_custom(PyObject* obj, const Registration& r, py::object& aux);
};

int Flattener::walk_custom(PyObject* obj, const Registration& r, py::object& aux) {
  if (with_path_ && r.to_iterable_keys) {
    py::object out = call1(r.to_iterable_keys, obj);
    auto [pairs, a] = split_custom(out);
    aux = a;
    int n = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(pairs.ptr()); ++i, ++n) {
      py::object pair = borrow(PySequence_Fast_GET_ITEM(pairs.ptr(), i));
      if ((!PyTuple_Check(pair.ptr()) && !PyList_Check(pair.ptr())) || PySequence_Fast_GET_SIZE(pair.ptr()) != 2)
        throw py::value_error(
            "The flatten_with_keys function for a custom PyTree node should return (key, child) pairs, got " +
            py_repr(pair));
      py::object key = borrow(PySequence_Fast_GET_ITEM(pair.ptr(), 0));
      py::object value = borrow(PySequence_Fast_GET_ITEM(pair.ptr(), 1));
      child(value.ptr(), [&] { return key; });
    }
    return n;
  }
  py::object out = call1(r.to_iterable, obj);
  auto [children, a] = split_custom(out);
  aux = a;
  int n = 0;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(children.ptr()); ++i, ++n) {
    py::object item = borrow(PySequence_Fast_GET_ITEM(children.ptr(), i));
    child(item.ptr(), [&] { return reg_.key(Registry::kFlatIndex, i); });
  }
  return n;
}

void Flattener::walk(PyObject* obj) {
  RecursionGuard guard;
  if (is_leaf_ && claimed_by_is_leaf(obj)) return add_leaf(obj);
  const Registration* r = reg_.lookup(obj);
  if (!r) return add_leaf(obj);

  size_t first_node = nodes.size();
  int first_leaf = num_leaves_;
  Node node;
  node.kind = r->kind;
  switch (r->kind) {
    case Kind::None:
    case Kind::Leaf:
      break;
    case Kind::Tuple:
    case Kind::List:
      node.arity = walk_sequence(obj);
      break;
    case Kind::NamedTuple: {
      node.data = borrow(reinterpret_cast<PyObject*>(Py_TYPE(obj)));
      if (!with_path_) {
        node.arity = walk_sequence(obj);
        break;
      }
      py::object fields = steal_or_throw(PySequence_Tuple(node.data.attr("_fields").ptr()));
      if (PyTuple_GET_SIZE(fields.ptr()) != PyTuple_GET_SIZE(obj))
        throw py::value_error("[tree_flatten_with_path] namedtuple " + py_repr(obj) + " does not match its _fields");
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i, ++node.arity) {
        py::object item = borrow(PyTuple_GET_ITEM(obj, i));
        child(item.ptr(), [&] { return reg_.key(Registry::kGetAttr, PyTuple_GET_ITEM(fields.ptr(), i)); });
      }
      break;
    }
    case Kind::Dict: {
      size_t base = dict_values_.size();
      py::list keys = sorted_items(obj, dict_values_);
      size_t n = dict_values_.size() - base;
      for (size_t i = 0; i < n; ++i, ++node.arity) {
        PyObject* key = PyList_GET_ITEM(keys.ptr(), i);
        py::object value = dict_values_[base + i];  // a copy: walking may grow the vector
        child(value.ptr(), [&] { return reg_.key(Registry::kDict, key); });
      }
      dict_values_.resize(base);
      node.data = std::move(keys);
      break;
    }
    case Kind::Custom:
      node.reg = r;
      node.arity = walk_custom(obj, *r, node.data);
      break;
    case Kind::Dataclass: {
      node.reg = r;
      for (auto name : r->data_fields) {
        py::object value = steal_or_throw(PyObject_GetAttr(obj, name.ptr()));
        child(value.ptr(), [&] { return reg_.key(Registry::kGetAttr, name.ptr()); });
        ++node.arity;
      }
      py::tuple meta(r->meta_fields.size());
      for (size_t i = 0; i < r->meta_fields.size(); ++i)
        PyTuple_SET_ITEM(meta.ptr(), i, steal_or_throw(PyObject_GetAttr(obj, r->meta_fields[i].ptr())).release().ptr());
      node.data = std::move(meta);
      break;
    }
  }
  node.num_leaves = num_leaves_ - first_leaf;
  node.num_nodes = int(nodes.size() - first_node) + 1;
  nodes.push_back(std::move(node));
}

py::list Flattener::take_leaves() {
  py::list out(leaves_.size());
  for (size_t i = 0; i < leaves_.size(); ++i) PyList_SET_ITEM(out.ptr(), i, leaves_[i].release().ptr());
  leaves_.clear();
  return out;
}

// Sizes of the last flatten: the next one is likely the same structure, so reserve as much.
size_t g_nodes_hint = 16, g_leaves_hint = 16;

std::pair<py::list, PyTreeDef> run(py::handle tree, py::handle is_leaf, bool with_path) {
  Flattener f(is_leaf.is_none() ? nullptr : is_leaf.ptr(), with_path);
  f.nodes.reserve(g_nodes_hint);
  f.reserve_leaves(g_leaves_hint);
  if (!is_leaf.is_none() && !PyCallable_Check(is_leaf.ptr()))
    throw py::type_error("[tree_flatten] is_leaf must be callable or None, got " + py_repr(is_leaf));
  f.walk(tree.ptr());
  PyTreeDef def;
  def.nodes = std::move(f.nodes);
  g_nodes_hint = std::max<size_t>(def.nodes.size(), 4);
  py::list leaves = f.take_leaves();
  g_leaves_hint = std::max<size_t>(leaves.size(), 4);
  return {std::move(leaves), std::move(def)};
}

}  // namespace

static void raise_sort_error() {
  py::raise_from(PyExc_ValueError, "Comparator raised exception while sorting pytree dictionary keys.");
  throw py::error_already_set();
}

py::list sorted_keys(PyObject* dict) {
  py::list keys = py::reinterpret_steal<py::list>(PyDict_Keys(dict));
  if (!keys) throw py::error_already_set();
  if (PyList_Sort(keys.ptr()) < 0) raise_sort_error();
  return keys;
}

static bool key_less(PyObject* a, PyObject* b) {
  if (PyUnicode_CheckExact(a) && PyUnicode_CheckExact(b)) return PyUnicode_Compare(a, b) < 0;
  int r = PyObject_RichCompareBool(a, b, Py_LT);
  if (r < 0) raise_sort_error();
  return r;
}

py::list sorted_items(PyObject* dict, std::vector<py::object>& values) {
  constexpr Py_ssize_t kSmall = 16;
  Py_ssize_t n = PyDict_GET_SIZE(dict);
  if (n > kSmall) {
    py::list keys = sorted_keys(dict);
    for (auto k : keys) {
      PyObject* v = PyDict_GetItemWithError(dict, k.ptr());
      if (!v) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, k.ptr());
        throw py::error_already_set();
      }
      values.push_back(borrow(v));
    }
    return keys;
  }
  // Small dicts: a stable insertion sort over the entries, as list.sort orders them, without
  // building and sorting a key list and looking every key up again. The entries are held
  // (a comparison may run Python code) as raw references, released on error.
  PyObject* ks[kSmall];
  PyObject* vs[kSmall];
  Py_ssize_t pos = 0, i = 0;
  PyObject *k, *v;
  while (i < n && PyDict_Next(dict, &pos, &k, &v)) {
    Py_INCREF(k);
    Py_INCREF(v);
    ks[i] = k;
    vs[i] = v;
    ++i;
  }
  n = i;
  try {
    for (i = 1; i < n; ++i)
      for (Py_ssize_t j = i; j > 0 && key_less(ks[j], ks[j - 1]); --j) {
        std::swap(ks[j], ks[j - 1]);
        std::swap(vs[j], vs[j - 1]);
      }
  } catch (...) {
    for (i = 0; i < n; ++i) {
      Py_DECREF(ks[i]);
      Py_DECREF(vs[i]);
    }
    throw;
  }
  PyObject* keys = PyList_New(n);
  if (!keys) {
    for (i = 0; i < n; ++i) {
      Py_DECREF(ks[i]);
      Py_DECREF(vs[i]);
    }
    throw py::error_already_set();
  }
  for (i = 0; i < n; ++i) {
    PyList_SET_ITEM(keys, i, ks[i]);
    values.push_back(py::reinterpret_steal<py::object>(vs[i]));
  }
  return py::reinterpret_steal<py::list>(keys);
}

std::pair<py::list, PyTreeDef> flatten(py::handle tree, py::handle is_leaf) { return run(tree, is_leaf, false); }

std::pair<py::list, PyTreeDef> flatten_with_path(py::handle tree, py::handle is_leaf) {
  return run(tree, is_leaf, true);
}

py::object flatten_one_level(py::handle tree, bool keyed) {
  const Registration* r = Registry::global().lookup(tree.ptr());
  if (!r) return py::none();
  if (keyed) {
    // A keyed walk where every child of the root is claimed as a leaf.
    py::cpp_function at_depth_one([](py::handle path, py::handle) { return PyTuple_GET_SIZE(path.ptr()) > 0; });
    auto [entries, def] = run(tree, at_depth_one, true);
    py::list pairs;
    for (auto e : entries) {
      PyObject* path = PyTuple_GET_ITEM(e.ptr(), 0);
      pairs.append(py::make_tuple(borrow(PyTuple_GET_ITEM(path, 0)), borrow(PyTuple_GET_ITEM(e.ptr(), 1))));
    }
    const Node& root = def.nodes.back();
    py::object aux = root.data ? root.data : py::none();
    if (root.kind == Kind::Dict) aux = py::tuple(root.data);
    bool builtin =
        root.kind == Kind::None || root.kind == Kind::Tuple || root.kind == Kind::List || root.kind == Kind::Dict;
    return py::make_tuple(builtin ? py::object(py::tuple(pairs)) : py::object(pairs), aux);
  }
  // Children as JAX gives them: the container itself for tuples and lists, the flatten
  // function's result for custom nodes.
  switch (r->kind) {
    case Kind::Leaf:
    case Kind::None:
      return py::make_tuple(py::tuple(), py::none());
    case Kind::Tuple:
    case Kind::List:
      return py::make_tuple(tree, py::none());
    case Kind::Dict: {
      std::vector<py::object> values;
      py::list keys = sorted_items(tree.ptr(), values);
      py::tuple children(values.size());
      for (size_t i = 0; i < values.size(); ++i) PyTuple_SET_ITEM(children.ptr(), i, values[i].release().ptr());
      return py::make_tuple(children, py::tuple(keys));
    }
    case Kind::NamedTuple:
      return py::make_tuple(steal_or_throw(PySequence_List(tree.ptr())),
                            borrow(reinterpret_cast<PyObject*>(Py_TYPE(tree.ptr()))));
    case Kind::Custom: {
      py::object out = call1(r->to_iterable, tree.ptr());
      auto [children, aux] = split_custom(out);
      return py::make_tuple(borrow(PyTuple_GET_ITEM(out.ptr(), 0)), aux);
    }
    case Kind::Dataclass: {
      auto [children, meta] = custom_children(tree.ptr(), *r);
      return py::make_tuple(py::list(children), meta);
    }
  }
  return py::none();
}

std::pair<py::tuple, py::object> custom_children(PyObject* obj, const Registration& r) {
  if (r.kind == Kind::Custom) {
    auto [children, aux] = split_custom(call1(r.to_iterable, obj));
    return {py::tuple(children), aux};
  }
  py::tuple children(r.data_fields.size()), meta(r.meta_fields.size());
  for (size_t i = 0; i < r.data_fields.size(); ++i)
    PyTuple_SET_ITEM(children.ptr(), i, steal_or_throw(PyObject_GetAttr(obj, r.data_fields[i].ptr())).release().ptr());
  for (size_t i = 0; i < r.meta_fields.size(); ++i)
    PyTuple_SET_ITEM(meta.ptr(), i, steal_or_throw(PyObject_GetAttr(obj, r.meta_fields[i].ptr())).release().ptr());
  return {children, meta};
}

bool all_leaves(py::handle iterable) {
  const Registry& reg = Registry::global();
  for (auto x : iterable)
    if (reg.lookup(x.ptr())) return false;
  return true;
}

}  // namespace xjax_pytree
