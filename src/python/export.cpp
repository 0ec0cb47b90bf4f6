// Bindings of the .xjx format (src/core/export): write a module, read one (from bytes or a mapped
// file) and call its compiled functions. Conversion only.
#include <limits>
#include <map>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/export/format.h"
#include "core/export/loaded.h"

namespace py = pybind11;
using namespace xjax;

namespace {

// A read module: its definition (weights over the file's bytes) and its compiled functions.
struct PyModule {
  ModuleDef def;
  std::vector<std::shared_ptr<LoadedFunction>> functions;
};

ArgSpec spec_from_py(const py::handle& h) {
  auto t = h.cast<py::tuple>();
  if (t.size() != 3) throw ValueError("[xjx] a spec is a (shape, dtype name, weak) triple");
  return {{t[0].cast<std::vector<int64_t>>(), dtype_from_name(t[1].cast<std::string>())}, t[2].cast<bool>()};
}

py::list specs_to_py(const std::vector<ArgSpec>& specs) {
  py::list l;
  for (const ArgSpec& s : specs) {
    py::tuple shape(s.type.shape.size());
    for (size_t i = 0; i < s.type.shape.size(); ++i) shape[i] = py::int_(s.type.shape[i]);
    l.append(py::make_tuple(shape, dtype_name(s.type.dtype), s.weak));
  }
  return l;
}

// `graphs` (Python graph object -> its copy) lets functions given one graph share it: written once.
FunctionDef function_from_py(const py::handle& h, std::map<PyObject*, std::shared_ptr<const Graph>>* graphs = nullptr) {
  auto t = h.cast<py::tuple>();
  if (t.size() != 7) throw ValueError("[xjx] a function is (name, graph, inputs, outputs, weights, in_tree, out_tree)");
  FunctionDef f;
  f.name = t[0].cast<std::string>();
  std::shared_ptr<const Graph>* shared = graphs ? &(*graphs)[t[1].ptr()] : nullptr;
  f.graph = shared && *shared ? *shared : std::make_shared<const Graph>(t[1].cast<const Graph&>());
  if (shared) *shared = f.graph;
  for (auto s : t[2]) f.inputs.push_back(spec_from_py(s));
  for (auto s : t[3]) f.outputs.push_back(spec_from_py(s));
  f.weights = t[4].cast<std::vector<int64_t>>();
  f.in_tree = t[5].cast<std::string>();
  f.out_tree = t[6].cast<std::string>();
  return f;
}

std::shared_ptr<PyModule> compiled(ModuleDef def, int64_t max_plan_bytes) {
  auto m = std::make_shared<PyModule>();
  m->functions = compile_module(def, max_plan_bytes);
  m->def = std::move(def);
  return m;
}

ReadOptions read_options(bool verify_checksum, int64_t max_array_bytes, bool map_file = true) {
  ReadOptions o;
  o.verify_checksum = verify_checksum;
  o.max_array_bytes = max_array_bytes;
  o.map_file = map_file;
  return o;
}

// The bytes of a buffer that is one C-contiguous run of memory (a strided view would be read past
// its first element's run); ValueError otherwise.
std::pair<const void*, size_t> contiguous_bytes(const py::buffer& data, const char* api) {
  py::buffer_info info = data.request();
  ssize_t stride = info.itemsize;
  for (ssize_t d = info.ndim; d-- > 0;) {
    if (info.shape[size_t(d)] != 1 && info.strides[size_t(d)] != stride)
      throw py::value_error(std::string("[") + api + "] the bytes must be C-contiguous (copy a strided view first)");
    stride *= info.shape[size_t(d)];
  }
  return {info.ptr, size_t(info.size) * size_t(info.itemsize)};
}

}  // namespace

void init_export(py::module_& m) {
  m.attr("XJX_FORMAT_VERSION") = xjx::kFormatVersion;
  m.attr("XJX_OPSET_VERSION") = xjx::kOpsetVersion;

  py::class_<LoadedFunction, std::shared_ptr<LoadedFunction>>(m, "LoadedFunction")
      .def_property_readonly("name", [](const LoadedFunction& f) { return f.def().name; })
      .def_property_readonly("inputs", [](const LoadedFunction& f) { return specs_to_py(f.def().inputs); })
      .def_property_readonly("outputs", [](const LoadedFunction& f) { return specs_to_py(f.def().outputs); })
      .def_property_readonly("in_tree", [](const LoadedFunction& f) { return f.def().in_tree; })
      .def_property_readonly("out_tree", [](const LoadedFunction& f) { return f.def().out_tree; })
      .def_property_readonly("weights", [](const LoadedFunction& f) { return f.def().weights; },
                             "The module weights its graph takes after the inputs, by index.")
      .def_property_readonly("graph", [](const LoadedFunction& f) { return *f.def().graph; },
                             "The graph as stored (before optimisation).")
      .def("call", &LoadedFunction::call, py::arg("inputs"), py::call_guard<py::gil_scoped_release>(),
           "Checks the arguments against the signature and queues the computation; returns the results.");

  py::class_<PyModule, std::shared_ptr<PyModule>>(m, "XjxModule")
      .def_property_readonly("functions", [](const PyModule& mod) { return mod.functions; })
      .def_property_readonly("weights", [](const PyModule& mod) { return mod.def.weights; })
      .def_property_readonly("producer", [](const PyModule& mod) { return mod.def.producer; })
      .def_property_readonly("format_version", [](const PyModule& mod) { return mod.def.format_version; })
      .def_property_readonly("opset_version", [](const PyModule& mod) { return mod.def.opset_version; });

  m.def(
      "xjx_write",
      [](const py::list& functions, const std::vector<Array>& weights, const std::string& producer) {
        ModuleDef def;
        std::map<PyObject*, std::shared_ptr<const Graph>> graphs;  // (the list keeps each object alive)
        for (auto f : functions) def.functions.push_back(function_from_py(f, &graphs));
        def.weights = weights;
        def.producer = producer;
        std::string out;
        {
          py::gil_scoped_release release;
          out = write_module(def);
        }
        return py::bytes(out);
      },
      py::arg("functions"), py::arg("weights"), py::arg("producer"),
      "The .xjx bytes of functions given as (name, graph, inputs, outputs, weight indices, in_tree, out_tree) "
      "with specs (shape, dtype, weak).");
  m.def(
      "xjx_compile",
      [](const py::handle& function, const std::vector<Array>& weights) {
        FunctionDef f = function_from_py(function);
        py::gil_scoped_release release;
        return std::make_shared<LoadedFunction>(std::move(f), weights, std::numeric_limits<int64_t>::max());
      },
      py::arg("function"), py::arg("weights"),
      "Compiles a function given as xjx_write takes it (weight indices into `weights`), as a read one is.");
  m.def(
      "xjx_read",
      [](const py::buffer& data, bool verify_checksum, int64_t max_array_bytes) {
        auto [ptr, n] = contiguous_bytes(data, "xjx_read");
        py::gil_scoped_release release;
        return compiled(read_module_bytes(ptr, n, read_options(verify_checksum, max_array_bytes)), max_array_bytes);
      },
      py::arg("data"), py::arg("verify_checksum") = true, py::arg("max_array_bytes") = ReadOptions().max_array_bytes,
      "Reads and compiles an .xjx file held in memory (copied once into aligned memory). Raises ValueError.");
  m.def(
      "xjx_load",
      [](const std::string& path, bool verify_checksum, int64_t max_array_bytes, bool map_file) {
        py::gil_scoped_release release;
        return compiled(read_module_file(path, read_options(verify_checksum, max_array_bytes, map_file)), max_array_bytes);
      },
      py::arg("path"), py::arg("verify_checksum") = true, py::arg("max_array_bytes") = ReadOptions().max_array_bytes,
      py::arg("map_file") = false,
      "Reads an .xjx file into memory (map_file: maps it, the weights used in place), and compiles it. "
      "Raises ValueError.");
  m.def(
      "xjx_checksum",
      [](const py::buffer& data) {
        auto [ptr, n] = contiguous_bytes(data, "xjx_checksum");
        return checksum(ptr, n);
      },
      py::arg("data"), "XXH64 (seed 0) of the bytes: what an .xjx file's last 8 bytes hold of the rest.");
}
