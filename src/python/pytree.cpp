// xjax._core.pytree: flatten/unflatten and treedefs. Bindings only; the walks are in pytree_*.cpp.
#include <pybind11/stl.h>

#include "pytree.h"

namespace py = pybind11;
using namespace xjax_pytree;

namespace {

void register_node(py::handle type, py::object to_iterable, py::object from_iterable, py::object to_iterable_keys) {
  auto r = std::make_unique<Registration>();
  r->kind = Kind::Custom;
  r->type = py::reinterpret_borrow<py::object>(type);
  r->to_iterable = std::move(to_iterable);
  r->from_iterable = std::move(from_iterable);
  if (!to_iterable_keys.is_none()) r->to_iterable_keys = std::move(to_iterable_keys);
  Registry::global().add(std::move(r), "");
}

py::tuple interned_names(py::handle names) {
  py::tuple t(py::len(names));
  size_t i = 0;
  for (auto n : names) {
    if (!PyUnicode_Check(n.ptr())) throw py::type_error("[register_dataclass] field names must be str, got " + py_repr(n));
    PyObject* s = n.ptr();
    Py_INCREF(s);
    PyUnicode_InternInPlace(&s);
    PyTuple_SET_ITEM(t.ptr(), i++, s);
  }
  return t;
}

void register_dataclass(py::handle type, py::handle data_fields, py::handle meta_fields) {
  auto r = std::make_unique<Registration>();
  r->kind = Kind::Dataclass;
  r->type = py::reinterpret_borrow<py::object>(type);
  r->data_fields = interned_names(data_fields);
  r->meta_fields = interned_names(meta_fields);
  Registry::global().add(std::move(r), "dataclass ");
}

}  // namespace

void init_pytree(py::module_& m) {
  py::module_ t = m.def_submodule("pytree", "Pytree flattening in C++.");

  py::class_<PyTreeDef>(t, "PyTreeDef", "The structure of a pytree: its nodes without the leaves.")
      .def_property_readonly("num_leaves", &PyTreeDef::num_leaves)
      .def_property_readonly("num_nodes", &PyTreeDef::num_nodes)
      .def("unflatten", &PyTreeDef::unflatten, py::arg("leaves"), "Builds the pytree with these leaves.")
      .def("flatten_up_to", &PyTreeDef::flatten_up_to, py::arg("tree"),
           "Flattens `tree` down to this structure: its subtrees at our leaves are the result.")
      .def("children", &PyTreeDef::children, "Treedefs of the root's children.")
      .def("node_data", &PyTreeDef::node_data, "None for a leaf, else (type, node data) of the root.")
      .def("compose", &PyTreeDef::compose, py::arg("inner"), "This structure with `inner` at every leaf.")
      .def_static(
          "from_node_data_and_children",
          [](py::handle node_data, const std::vector<PyTreeDef>& children) {
            return PyTreeDef::from_node_data_and_children(node_data, children);
          },
          py::arg("node_data"), py::arg("children"))
      .def("__repr__", &PyTreeDef::repr)
      .def("__eq__", &PyTreeDef::equals, py::is_operator())
      .def("__ne__", [](const PyTreeDef& a, const PyTreeDef& b) { return !a.equals(b); }, py::is_operator())
      .def("__hash__", [](const PyTreeDef& d) { return py::ssize_t(d.hash()); });

  t.def("flatten", &flatten, py::arg("tree"), py::arg("is_leaf") = py::none(), "(leaves, treedef) of a pytree.");
  t.def(
      "leaves", [](py::handle tree, py::handle is_leaf) { return flatten(tree, is_leaf).first; }, py::arg("tree"),
      py::arg("is_leaf") = py::none());
  t.def(
      "structure", [](py::handle tree, py::handle is_leaf) { return flatten(tree, is_leaf).second; },
      py::arg("tree"), py::arg("is_leaf") = py::none());
  t.def("flatten_with_path", &flatten_with_path, py::arg("tree"), py::arg("is_leaf") = py::none(),
        "([(key path, leaf), ...], treedef); is_leaf takes (key path, subtree).");
  t.def("flatten_one_level", &flatten_one_level, py::arg("tree"), py::arg("keyed") = false,
        "(children, aux) of one node, children as (key, child) pairs when keyed; None for a leaf.");
  t.def("all_leaves", &all_leaves, py::arg("iterable"));
  t.def("is_node", [](py::handle type) { return Registry::global().lookup_type(type.ptr()) != nullptr; });
  t.def("treedef_tuple", &PyTreeDef::make_tuple, py::arg("treedefs"));
  t.def("register_node", &register_node, py::arg("type"), py::arg("to_iterable"), py::arg("from_iterable"),
        py::arg("to_iterable_keys") = py::none());
  t.def("register_dataclass", &register_dataclass, py::arg("type"), py::arg("data_fields"), py::arg("meta_fields"));
  t.def(
      "set_key_types",
      [](py::object seq, py::object dict, py::object attr, py::object flat) {
        Registry::global().set_key_types(std::move(seq), std::move(dict), std::move(attr), std::move(flat));
      },
      "Sets the key classes that flatten_with_path builds.");
}
