// Bindings of the CUDA source generators (src/core/cuda): conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.h"
#include "core/cuda/kernel.h"

namespace py = pybind11;
using namespace xjax;

namespace {

py::tuple dim3_to_py(const cuda::Dim3& d) { return py::make_tuple(d.x, d.y, d.z); }

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
}
