// PyTreeDef: unflatten, flatten_up_to, repr, equality/hash and structural operations.
#include <algorithm>
#include <functional>

#include "pytree.h"

namespace xjax_pytree {

namespace {

py::object borrow(PyObject* o) { return py::reinterpret_borrow<py::object>(o); }

py::object steal_or_throw(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

bool py_equal(PyObject* a, PyObject* b) {
  int r = PyObject_RichCompareBool(a, b, Py_EQ);
  if (r < 0) throw py::error_already_set();
  return r;
}

// A tuple made of the last `n` stack entries, which it takes over.
py::tuple pop_tuple(std::vector<py::object>& stack, int n) {
  py::tuple t(n);
  size_t base = stack.size() - size_t(n);
  for (int j = 0; j < n; ++j) PyTuple_SET_ITEM(t.ptr(), j, stack[base + j].release().ptr());
  stack.resize(base);
  return t;
}

py::object build_node(const Node& node, std::vector<py::object>& stack) {
  size_t base = stack.size() - size_t(node.arity);
  switch (node.kind) {
    case Kind::Leaf:
      break;
    case Kind::None:
      return py::none();
    case Kind::Tuple:
      return pop_tuple(stack, node.arity);
    case Kind::List: {
      py::list l(node.arity);
      for (int j = 0; j < node.arity; ++j) PyList_SET_ITEM(l.ptr(), j, stack[base + j].release().ptr());
      stack.resize(base);
      return std::move(l);
    }
    case Kind::Dict: {
      py::dict d;
      for (int j = 0; j < node.arity; ++j)
        if (PyDict_SetItem(d.ptr(), PyList_GET_ITEM(node.data.ptr(), j), stack[base + j].ptr()) < 0)
          throw py::error_already_set();
      stack.resize(base);
      return std::move(d);
    }
    case Kind::NamedTuple: {
      py::tuple args = pop_tuple(stack, node.arity);
      return steal_or_throw(PyObject_Call(node.data.ptr(), args.ptr(), nullptr));
    }
    case Kind::Custom: {
      py::tuple children = pop_tuple(stack, node.arity);
      return steal_or_throw(
          PyObject_CallFunctionObjArgs(node.reg->from_iterable.ptr(), node.data.ptr(), children.ptr(), nullptr));
    }
    case Kind::Dataclass: {
      py::dict kwargs;
      const Registration& r = *node.reg;
      for (int j = 0; j < node.arity; ++j) kwargs[r.data_fields[j]] = stack[base + j];
      for (size_t j = 0; j < r.meta_fields.size(); ++j) kwargs[r.meta_fields[j]] = node.data[py::int_(j)];
      stack.resize(base);
      return steal_or_throw(PyObject_Call(r.type.ptr(), py::tuple().ptr(), kwargs.ptr()));
    }
  }
  throw py::value_error("[PyTreeDef] corrupt node");
}

}  // namespace

py::object PyTreeDef::unflatten(py::handle leaves) const {
  py::object seq = borrow(leaves.ptr());
  if (!PyList_CheckExact(seq.ptr()) && !PyTuple_CheckExact(seq.ptr())) {
    PyObject* l = PySequence_List(leaves.ptr());
    if (!l) {
      PyErr_Clear();
      throw py::type_error("[PyTreeDef.unflatten] leaves must be an iterable, got " +
                           py_repr(reinterpret_cast<PyObject*>(Py_TYPE(leaves.ptr()))));
    }
    seq = py::reinterpret_steal<py::object>(l);
  }
  Py_ssize_t given = PySequence_Fast_GET_SIZE(seq.ptr());
  if (given < num_leaves())
    throw py::value_error("Too few leaves for PyTreeDef; expected " + std::to_string(num_leaves()) + ", got " +
                          std::to_string(given) + "\nThe structure: " + repr());
  if (given > num_leaves())
    throw py::value_error("Too many leaves for PyTreeDef; expected " + std::to_string(num_leaves()) +
                          ".\nThe structure: " + repr() + ", given " + std::to_string(given) + " leaves");
  std::vector<py::object> stack;
  stack.reserve(nodes.size());
  Py_ssize_t next = 0;
  for (const Node& node : nodes) {
    if (node.kind == Kind::Leaf)
      stack.push_back(borrow(PySequence_Fast_GET_ITEM(seq.ptr(), next++)));
    else
      stack.push_back(build_node(node, stack));
  }
  return std::move(stack.back());
}

py::list PyTreeDef::flatten_up_to(py::handle tree) const {
  // Walks the nodes root first (reverse post-order), so leaves come out last to first.
  int n_leaves = num_leaves();
  py::list leaves(n_leaves);
  std::vector<py::object> stack{borrow(tree.ptr())};
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& node = nodes[i];
    py::object obj = std::move(stack.back());
    stack.pop_back();
    auto arity_error = [&](const char* what, Py_ssize_t got) {
      throw py::value_error(std::string(what) + " arity mismatch: " + std::to_string(got) + " != " +
                            std::to_string(node.arity) + "; " + (node.kind == Kind::Custom ? "value" : "tuple") + ": " +
                            py_repr(obj) + ".");
    };
    switch (node.kind) {
      case Kind::Leaf:
        PyList_SET_ITEM(leaves.ptr(), --n_leaves, obj.release().ptr());
        break;
      case Kind::None:
        if (!obj.is_none())
          throw py::value_error("Expected None, got " + py_repr(obj) +
                                ".\n\nNone is a pytree node without children, not a prefix of other values. "
                                "To map over None entries in the first tree only, write\n"
                                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                                "is_leaf=lambda x: x is None)");
        break;
      case Kind::Tuple:
      case Kind::List: {
        bool tuple = node.kind == Kind::Tuple;
        if (tuple ? !PyTuple_CheckExact(obj.ptr()) : !PyList_CheckExact(obj.ptr()))
          throw py::value_error(std::string("Expected ") + (tuple ? "tuple" : "list") + ", got " + py_repr(obj) + ".");
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj.ptr());
        if (n != node.arity) {
          if (tuple) arity_error("Tuple", n);
          throw py::value_error("List arity mismatch: " + std::to_string(n) + " != " + std::to_string(node.arity) +
                                "; list: " + py_repr(obj) + ".");
        }
        for (Py_ssize_t j = 0; j < n; ++j) stack.push_back(borrow(PySequence_Fast_GET_ITEM(obj.ptr(), j)));
        break;
      }
      case Kind::Dict: {
        if (!PyDict_CheckExact(obj.ptr())) throw py::value_error("Expected dict, got " + py_repr(obj) + ".");
        std::vector<py::object> values;
        py::list keys = sorted_items(obj.ptr(), values);
        if (!py_equal(keys.ptr(), node.data.ptr()))
          throw py::value_error("Dict key mismatch; expected keys: " + py_repr(node.data) + "; present keys: " +
                                py_repr(keys) + ".");
        for (auto& v : values) stack.push_back(std::move(v));
        break;
      }
      case Kind::NamedTuple: {
        if (!PyTuple_Check(obj.ptr()) || !py::hasattr(obj, "_fields"))
          throw py::value_error("Expected named tuple, got " + py_repr(obj) + ".");
        Py_ssize_t n = PyTuple_GET_SIZE(obj.ptr());
        if (n != node.arity) arity_error("Named tuple", n);
        if (reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())) != node.data.ptr())
          throw py::value_error("Named tuple type mismatch: expected type: " + py_repr(node.data) +
                                ", tuple: " + py_repr(obj) + ".");
        for (Py_ssize_t j = 0; j < n; ++j) stack.push_back(borrow(PyTuple_GET_ITEM(obj.ptr(), j)));
        break;
      }
      case Kind::Custom:
      case Kind::Dataclass: {
        // Flatten one level with the registry, then compare type, aux data and arity.
        bool dc = node.kind == Kind::Dataclass;
        const char* what = dc ? "Custom dataclass node" : "Custom node";
        if (reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())) != node.reg->type.ptr())
          throw py::value_error(std::string(what) + " type mismatch: expected type: " + py_repr(node.reg->type) +
                                ", value: " + py_repr(obj) + ".");
        auto [children, aux] = custom_children(obj.ptr(), *node.reg);
        if (!py_equal(aux.ptr(), node.data.ptr()))
          throw py::value_error(std::string("Mismatch custom ") + (dc ? "dataclass " : "") + "node data: " +
                                py_repr(node.data) + " != " + py_repr(aux) + "; value: " + py_repr(obj) + ".");
        if (Py_ssize_t(children.size()) != node.arity)
          throw py::value_error("Custom type arity mismatch: " + std::to_string(children.size()) + " != " +
                                std::to_string(node.arity) + "; value: " + py_repr(obj) + ".");
        for (auto c : children) stack.push_back(borrow(c.ptr()));
        break;
      }
    }
  }
  return leaves;
}

std::string PyTreeDef::repr() const {
  std::vector<std::string> stack;
  auto join = [&](int n) {
    std::string s;
    for (size_t j = stack.size() - size_t(n); j < stack.size(); ++j) {
      if (!s.empty() || j != stack.size() - size_t(n)) s += ", ";
      s += stack[j];
    }
    stack.resize(stack.size() - size_t(n));
    return s;
  };
  for (const Node& node : nodes) {
    std::string s;
    switch (node.kind) {
      case Kind::Leaf: s = "*"; break;
      case Kind::None: s = "None"; break;
      case Kind::Tuple: s = "(" + join(node.arity) + (node.arity == 1 ? ",)" : ")"); break;
      case Kind::List: s = "[" + join(node.arity) + "]"; break;
      case Kind::Dict: {
        size_t base = stack.size() - size_t(node.arity);
        s = "{";
        for (int j = 0; j < node.arity; ++j) {
          if (j) s += ", ";
          s += py_repr(PyList_GET_ITEM(node.data.ptr(), j)) + ": " + stack[base + j];
        }
        stack.resize(base);
        s += "}";
        break;
      }
      case Kind::NamedTuple:
        s = "CustomNode(namedtuple[" + type_name(node.data.ptr()) + "], [" + join(node.arity) + "])";
        break;
      case Kind::Custom:
      case Kind::Dataclass:
        s = "CustomNode(" + type_name(node.reg->type.ptr()) + "[" + py_str(node.data) + "], [" + join(node.arity) +
            "])";
        break;
    }
    stack.push_back(std::move(s));
  }
  return "PyTreeDef(" + (stack.empty() ? std::string() : stack.back()) + ")";
}

bool PyTreeDef::equals(const PyTreeDef& other) const {
  if (nodes.size() != other.nodes.size()) return false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& a = nodes[i];
    const Node& b = other.nodes[i];
    if (a.kind != b.kind || a.arity != b.arity || a.reg != b.reg || a.num_leaves != b.num_leaves) return false;
    switch (a.kind) {
      case Kind::NamedTuple:
        if (!a.data.is(b.data)) return false;
        break;
      case Kind::Dict:
      case Kind::Custom:
      case Kind::Dataclass:
        if (!py_equal(a.data.ptr(), b.data.ptr())) return false;
        break;
      default:
        break;
    }
  }
  return true;
}

size_t PyTreeDef::hash() const {
  if (hashed_) return hash_;
  // Aux data is left out (it need not be hashable); dict keys always are.
  size_t h = nodes.size();
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const Node& n : nodes) {
    mix(size_t(n.kind) | (size_t(n.arity) << 8));
    if (n.reg) mix(std::hash<const void*>()(n.reg));
    if (n.kind == Kind::NamedTuple) mix(std::hash<const void*>()(n.data.ptr()));
    if (n.kind == Kind::Dict)
      for (auto k : n.data) {
        Py_hash_t kh = PyObject_Hash(k.ptr());
        if (kh == -1) throw py::error_already_set();
        mix(size_t(kh));
      }
  }
  hash_ = h;
  hashed_ = true;
  return h;
}

std::vector<PyTreeDef> PyTreeDef::children() const {
  std::vector<PyTreeDef> out;
  if (nodes.empty()) return out;
  const Node& root = nodes.back();
  // Children sit right before their parent, the last child nearest to it.
  size_t end = nodes.size() - 1;
  for (int c = 0; c < root.arity; ++c) {
    size_t start = end - size_t(nodes[end - 1].num_nodes);
    PyTreeDef child;
    child.nodes.assign(nodes.begin() + start, nodes.begin() + end);
    out.push_back(std::move(child));
    end = start;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

py::object PyTreeDef::node_data() const {
  const Node& root = nodes.back();
  switch (root.kind) {
    case Kind::Leaf: return py::none();
    case Kind::None: return py::make_tuple(borrow(reinterpret_cast<PyObject*>(Py_TYPE(Py_None))), py::none());
    case Kind::Tuple: return py::make_tuple(borrow(reinterpret_cast<PyObject*>(&PyTuple_Type)), py::none());
    case Kind::List: return py::make_tuple(borrow(reinterpret_cast<PyObject*>(&PyList_Type)), py::none());
    case Kind::Dict: return py::make_tuple(borrow(reinterpret_cast<PyObject*>(&PyDict_Type)), py::list(root.data));
    case Kind::NamedTuple: return py::make_tuple(root.data, py::none());
    case Kind::Custom:
    case Kind::Dataclass: return py::make_tuple(root.reg->type, root.data);
  }
  return py::none();
}

PyTreeDef PyTreeDef::compose(const PyTreeDef& inner) const {
  PyTreeDef out;
  out.nodes.reserve(size_t(num_leaves()) * inner.nodes.size() + nodes.size());
  for (const Node& node : nodes) {
    if (node.kind == Kind::Leaf) {
      out.nodes.insert(out.nodes.end(), inner.nodes.begin(), inner.nodes.end());
      continue;
    }
    Node n = node;
    n.num_nodes = (node.num_nodes - node.num_leaves) + node.num_leaves * inner.num_nodes();
    n.num_leaves = node.num_leaves * inner.num_leaves();
    out.nodes.push_back(std::move(n));
  }
  return out;
}

static PyTreeDef with_root(Node root, const std::vector<PyTreeDef>& children) {
  PyTreeDef out;
  root.arity = int(children.size());
  root.num_leaves = 0;
  root.num_nodes = 1;
  for (const PyTreeDef& c : children) {
    out.nodes.insert(out.nodes.end(), c.nodes.begin(), c.nodes.end());
    root.num_leaves += c.num_leaves();
    root.num_nodes += c.num_nodes();
  }
  out.nodes.push_back(std::move(root));
  return out;
}

PyTreeDef PyTreeDef::make_tuple(const std::vector<PyTreeDef>& children) {
  Node root;
  root.kind = Kind::Tuple;
  return with_root(std::move(root), children);
}

PyTreeDef PyTreeDef::from_node_data_and_children(py::handle node_data, const std::vector<PyTreeDef>& children) {
  Node root;
  if (node_data.is_none()) {
    if (!children.empty()) throw py::value_error("[PyTreeDef] a leaf has no children");
    root.num_leaves = root.num_nodes = 1;
    PyTreeDef out;
    out.nodes.push_back(std::move(root));
    return out;
  }
  if (!PyTuple_Check(node_data.ptr()) || PyTuple_GET_SIZE(node_data.ptr()) != 2)
    throw py::type_error("[PyTreeDef] node_data must be None or a (type, data) pair, got " + py_repr(node_data));
  PyObject* type = PyTuple_GET_ITEM(node_data.ptr(), 0);
  py::object data = borrow(PyTuple_GET_ITEM(node_data.ptr(), 1));
  const Registration* reg = Registry::global().lookup_type(type);
  if (!reg) throw py::value_error("[PyTreeDef] not a pytree node type: " + py_repr(type));
  root.kind = reg->kind;
  size_t n = children.size();
  switch (reg->kind) {
    case Kind::None:
      if (n) throw py::value_error("[PyTreeDef] None has no children");
      break;
    case Kind::Dict:
      root.data = py::list(data);
      if (py::len(root.data) != n)
        throw py::value_error("[PyTreeDef] " + std::to_string(py::len(root.data)) + " dict keys for " +
                              std::to_string(n) + " children");
      break;
    case Kind::NamedTuple:
      root.data = borrow(type);
      break;
    case Kind::Dataclass:
      if (n != reg->data_fields.size())
        throw py::value_error("[PyTreeDef] " + py_repr(type) + " has " + std::to_string(reg->data_fields.size()) +
                              " data fields, got " + std::to_string(n) + " children");
      root.reg = reg;
      root.data = data;
      break;
    case Kind::Custom:
      root.reg = reg;
      root.data = data;
      break;
    default:
      break;
  }
  return with_root(std::move(root), children);
}

}  // namespace xjax_pytree
