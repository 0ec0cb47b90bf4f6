// xjax._core.pytree: the node registry, PyTreeDef and the flatten/unflatten walks.
//
// A PyTreeDef is the structure of a pytree stored as a post-order list of nodes: every node
// follows its children, so unflatten is one pass with a stack and the root is the last node.
// The hot loops use the CPython API directly (no pybind11 wrappers per element).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace xjax_pytree {

namespace py = pybind11;

enum class Kind : uint8_t { Leaf, None, Tuple, List, Dict, NamedTuple, Custom, Dataclass };

// How one registered type flattens. Built-in kinds have no functions.
struct Registration {
  Kind kind = Kind::Leaf;
  py::object type;
  py::object to_iterable;      // Custom: x -> (children, aux)
  py::object from_iterable;    // Custom: (aux, children tuple) -> x
  py::object to_iterable_keys; // Custom, optional: x -> (((key, child), ...), aux)
  py::tuple data_fields;       // Dataclass: attribute names of the children
  py::tuple meta_fields;       // Dataclass: attribute names kept in the treedef
};

// Types that are pytree nodes, looked up by exact type. Lives for the whole process.
class Registry {
 public:
  static Registry& global();
  // Null for leaves; namedtuples (tuple subclasses with _fields) get a shared entry.
  const Registration* lookup(PyObject* obj) const;
  // The same for a type object (null when not a node type).
  const Registration* lookup_type(PyObject* type) const;
  void add(std::unique_ptr<Registration> r, const char* what);

  // Key path entries for the *_with_path walks. Keys are immutable, so small indices and str
  // keys are built once and shared.
  enum KeyKind { kSequence, kDict, kGetAttr, kFlatIndex, kNumKeyKinds };
  void set_key_types(py::object seq, py::object dict, py::object attr, py::object flat);
  py::object key(KeyKind kind, Py_ssize_t index) const;
  py::object key(KeyKind kind, PyObject* value) const;

 private:
  Registry();
  std::unordered_map<PyTypeObject*, std::unique_ptr<Registration>> types_;
  Registration namedtuple_;
  const Registration *tuple_, *list_, *dict_, *none_;
  mutable py::object last_leaf_type_;
  py::object key_types_[kNumKeyKinds];
  mutable std::vector<py::object> index_keys_[kNumKeyKinds];
  mutable py::dict str_keys_[kNumKeyKinds];
};

struct Node {
  Kind kind = Kind::Leaf;
  int32_t arity = 0;
  int32_t num_leaves = 0;  // in this subtree
  int32_t num_nodes = 0;   // in this subtree, itself included
  py::object data;         // Dict: sorted key list; Custom: aux; Dataclass: meta tuple; NamedTuple: type
  const Registration* reg = nullptr;  // Custom and Dataclass
};

class PyTreeDef {
 public:
  std::vector<Node> nodes;

  int num_leaves() const { return nodes.empty() ? 0 : nodes.back().num_leaves; }
  int num_nodes() const { return int(nodes.size()); }
  py::object unflatten(py::handle leaves) const;
  py::list flatten_up_to(py::handle tree) const;
  std::string repr() const;
  bool equals(const PyTreeDef& other) const;
  size_t hash() const;
  std::vector<PyTreeDef> children() const;
  py::object node_data() const;
  PyTreeDef compose(const PyTreeDef& inner) const;

  static PyTreeDef make_tuple(const std::vector<PyTreeDef>& children);
  static PyTreeDef from_node_data_and_children(py::handle node_data, const std::vector<PyTreeDef>& children);

 private:
  mutable size_t hash_ = 0;
  mutable bool hashed_ = false;
};

// The Python PyTreeDef type (pytree_type.cpp): wrap moves a treedef into a new Python object,
// unwrap raises TypeError for other objects.
py::object wrap_treedef(PyTreeDef&& def);
const PyTreeDef& unwrap_treedef(py::handle h);
// Adds the PyTreeDef type and the flatten functions to the module.
void add_treedef_type(py::module_& m);

// Flattens `tree`; is_leaf (or None) is called on every subtree before it is looked up.
std::pair<py::list, PyTreeDef> flatten(py::handle tree, py::handle is_leaf);
// Same, with a key path tuple per leaf; is_leaf takes (path, subtree).
std::pair<py::list, PyTreeDef> flatten_with_path(py::handle tree, py::handle is_leaf);
// One level: (children list, aux) or None for a leaf; keyed gives ((key, child), ...).
py::object flatten_one_level(py::handle tree, bool keyed);
bool all_leaves(py::handle iterable);
// Children and aux data of one Custom or Dataclass node (no key paths, no recursion).
std::pair<py::tuple, py::object> custom_children(PyObject* obj, const Registration& r);

// Dict keys in sorted order (the order of leaves and of unflattened dicts); ValueError when
// the keys do not compare.
py::list sorted_keys(PyObject* dict);
// The same keys; their values are appended to `values` in that order.
py::list sorted_items(PyObject* dict, std::vector<py::object>& values);

// Names a type as JAX's reprs do.
std::string type_name(PyObject* type);
std::string py_repr(py::handle h);
std::string py_str(py::handle h);

}  // namespace xjax_pytree
