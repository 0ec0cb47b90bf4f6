// Bindings of the CUDA source generators (src/core/cuda): conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.h"
#include "core/cuda/fused.h"
#include "core/cuda/fused_graph.h"
#include "core/cuda/kernel.h"

namespace py = pybind11;
using namespace xjax;

void init_cuda_plan(py::module_& m);  // cuda_plan.cpp

namespace {

py::tuple dim3_to_py(const cuda::Dim3& d) { return py::make_tuple(d.x, d.y, d.z); }

}  // namespace

// (also cuda_plan.cpp's)
py::dict plan_to_py(const cuda::KernelPlan& p) {
  py::list launches, outputs;
  for (const cuda::Launch& l : p.launches) {
    py::dict d;
    d["name"] = l.name;
    d["grid"] = dim3_to_py(l.grid);
    d["block"] = dim3_to_py(l.block);
    d["shared"] = l.shared_bytes;
    d["params"] = l.params;
    launches.append(d);
  }
  for (const TypeInfo& t : p.outputs) outputs.append(py::make_tuple(py::tuple(py::cast(t.shape)), dtype_name(t.dtype)));
  py::dict d;
  d["source"] = p.source;
  d["launches"] = launches;
  d["scratch"] = p.scratch_bytes;
  d["outputs"] = outputs;
  return d;
}

// (type_py, attrs_py: also cuda_plan.cpp's)
py::tuple type_py(const TypeInfo& t) { return py::make_tuple(py::tuple(py::cast(t.shape)), dtype_name(t.dtype)); }

py::dict attrs_py(const Attrs& attrs) {
  py::dict d;
  for (const auto& [name, v] : attrs.items()) {
    if (name == "data") d["data"] = py::bytes(std::get<std::string>(v));  // a constant's elements
    else d[py::str(name)] = std::visit([](const auto& x) { return py::cast(x); }, v);
  }
  return d;
}

namespace {

py::dict graph_kernels_to_py(const cuda::GraphKernels& k) {
  py::list groups, types;
  for (const cuda::GraphGroup& gg : k.groups) {
    py::dict d;
    d["fused"] = gg.fused;
    d["inputs"] = gg.inputs;
    d["outputs"] = gg.outputs;
    if (gg.fused) {
      d["plan"] = plan_to_py(gg.plan);
      d["spec"] = gg.description;
    } else {
      const Node& n = k.graph.nodes()[gg.node];
      d["op"] = op_name(n.op);
      d["attrs"] = attrs_py(n.attrs);
    }
    groups.append(d);
  }
  for (const TypeInfo& t : k.value_types) types.append(type_py(t));
  py::dict constants;
  for (const auto& [v, bytes] : k.constants) constants[py::int_(v)] = py::bytes(bytes);
  py::dict d;
  d["groups"] = groups;
  d["parameters"] = k.parameters;
  d["outputs"] = k.outputs;
  d["constants"] = constants;
  d["value_types"] = types;
  return d;
}

}  // namespace

void init_cuda(py::module_& m) {
  py::register_local_exception<cuda::NoKernelError>(m, "NoGpuKernelError", PyExc_NotImplementedError);
  m.def(
      "cuda_kernel",
      [](const std::string& op, const py::list& inputs, const py::dict& attrs) {
        std::vector<TypeInfo> in;
        for (auto h : inputs) in.push_back(type_from_py(h));
        return plan_to_py(cuda::generate_kernel(op, in, attrs_from_py(attrs)));
      },
      py::arg("op"), py::arg("input_types"), py::arg("attrs"),
      "CUDA C for one op outside fused groups: dict(source, launches=[dict(name, grid, block, shared, params)], "
      "scratch=[bytes], outputs=[(shape, dtype)]). params name buffers: inI, outI, tmpI (scratch, uninitialised). "
      "op may also be 'im2col' (conv_general_dilated's lhs patches, for a cuBLAS GEMM).");
  m.def("cuda_has_kernel", [](const std::string& op) { return cuda::has_kernel(op_from_name(op)); }, py::arg("op"));
  m.def(
      "cuda_fused_kernels", [](const Graph& g) { return graph_kernels_to_py(cuda::fused_graph_kernels(g)); },
      py::arg("graph"),
      "The graph compiled for CUDA up to its kernels (default passes, fusion with CUDA's capabilities): "
      "dict(groups=[dict(fused, inputs, outputs: value ids; fused: plan (as cuda_kernel's), spec (text); "
      "else op, attrs)], parameters, outputs (value ids), constants={value id: bytes}, value_types=[(shape, dtype)]). "
      "Fused sources start with cuda_fused_source_prefix().");
  m.def("cuda_fused_source_prefix", &cuda::fused_source_prefix,
        "The scalar op definitions every fused kernel source starts with.");
  init_cuda_plan(m);
}
