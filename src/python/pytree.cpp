// xjax._core.pytree: flatten/unflatten and treedefs (filled in by the pytree work).
#include <pybind11/pybind11.h>

namespace py = pybind11;

void init_pytree(py::module_& m) { m.def_submodule("pytree", "Pytree flattening in C++."); }
