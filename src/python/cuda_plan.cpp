// Bindings of the GPU plan (src/core/cuda/gpu_plan.h), what the Python CUDA executor runs:
// conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/compiler/callbacks.h"
#include "core/cuda/gpu_plan.h"

namespace py = pybind11;
using namespace xjax;

// cuda.cpp's conversions.
py::dict plan_to_py(const cuda::KernelPlan& p);
py::tuple type_py(const TypeInfo& t);
py::dict attrs_py(const Attrs& attrs);

namespace {

const char* step_kind(cuda::GpuStep::Kind k) {
  switch (k) {
    case cuda::GpuStep::Kind::Fused: return "fused";
    case cuda::GpuStep::Kind::Kernel: return "kernel";
    case cuda::GpuStep::Kind::Library: return "library";
    case cuda::GpuStep::Kind::Cond: return "cond";
    case cuda::GpuStep::Kind::While: return "while";
    case cuda::GpuStep::Kind::Callback: return "callback";
  }
  return "?";
}

py::dict gpu_plan_to_py(const cuda::GpuPlan& p) {
  py::list values, storages, constants, params, steps;
  for (const TypeInfo& t : p.value_type) values.append(type_py(t));
  for (const cuda::GpuStorage& s : p.storages) {
    const char* kind = s.kind == cuda::GpuStorage::Kind::Param      ? "param"
                       : s.kind == cuda::GpuStorage::Kind::Constant ? "constant"
                       : s.kind == cuda::GpuStorage::Kind::Fresh    ? "fresh"
                                                                    : "computed";
    storages.append(py::make_tuple(kind, s.index));
  }
  for (const Array& c : p.constants)
    constants.append(py::make_tuple(type_py({c.shape, c.dtype}),
                                    py::bytes(static_cast<const char*>(c.data()), c.nbytes())));
  for (const TypeInfo& t : p.param_types) params.append(type_py(t));
  for (const cuda::GpuStep& s : p.steps) {
    py::dict d;
    d["kind"] = step_kind(s.kind);
    d["op"] = s.op;
    d["attrs"] = attrs_py(s.attrs);
    d["inputs"] = s.inputs;
    d["outputs"] = s.outputs;
    d["kernel"] = s.has_kernel ? py::object(plan_to_py(s.kernel)) : py::object(py::none());
    py::list subs;
    for (const auto& sub : s.subs) subs.append(gpu_plan_to_py(*sub));
    d["subs"] = subs;
    steps.append(d);
  }
  py::dict d;
  d["values"] = values;
  d["storage"] = p.value_storage;
  d["storages"] = storages;
  d["constants"] = constants;
  d["params"] = params;
  d["steps"] = steps;
  d["outputs"] = p.outputs;
  return d;
}

}  // namespace

void init_cuda_plan(py::module_& m) {
  m.def(
      "cuda_plan", [](const Graph& g) { return gpu_plan_to_py(cuda::gpu_plan(g)); }, py::arg("graph"),
      "The GPU plan of a graph (compiled with CUDA fusion): dict(values=[(shape, dtype)] per value, "
      "storage=[storage id or -1] per value, storages=[('param'|'constant'|'fresh'|'computed', index)], "
      "constants=[((shape, dtype), bytes)], params=[(shape, dtype)], outputs=[value ids], steps=[dict(kind="
      "'fused'|'kernel'|'library'|'cond'|'while'|'callback', op, attrs, inputs, outputs, kernel (a cuda_kernel "
      "dict or None), subs=[plans])]). NotImplementedError names an op without a GPU route.");
  m.def(
      "call_callback",
      [](int64_t id, const std::vector<Array>& args) { call_callback(id, args); }, py::arg("callback_id"),
      py::arg("args"), "Calls host callback callback_id with host Arrays (what a GPU plan's callback step does).");
}
