// xjax._core.pytree: flatten/unflatten and treedefs. Bindings only; the walks are in pytree_*.cpp,
// the PyTreeDef type and the flatten entry points in pytree_type.cpp.
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
    if (!PyUnicode_Check(n.ptr()))
      throw py::type_error("[register_dataclass] field names must be str, got " + py_repr(n));
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

  add_treedef_type(t);
  t.def("flatten_one_level", &flatten_one_level, py::arg("tree"), py::arg("keyed") = false,
        "(children, aux) of one node, children as (key, child) pairs when keyed; None for a leaf.");
  t.def("all_leaves", &all_leaves, py::arg("iterable"));
  t.def("is_node", [](py::handle type) { return Registry::global().lookup_type(type.ptr()) != nullptr; });
  t.def(
      "treedef_tuple",
      [](py::handle treedefs) {
        std::vector<PyTreeDef> children;
        for (auto h : treedefs) children.push_back(unwrap_treedef(h));
        return wrap_treedef(PyTreeDef::make_tuple(children));
      },
      py::arg("treedefs"));
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
