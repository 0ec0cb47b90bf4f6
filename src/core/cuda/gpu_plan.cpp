// gpu_plan: the CPU plan builder run with the CUDA fusion capabilities, then each step given its
// GPU form (see gpu_plan.h).
#include "core/cuda/gpu_plan.h"

#include "core/compiler/executable.h"
#include "core/compiler/fusion.h"
#include "core/compiler/passes.h"
#include "core/cuda/fused.h"
#include "core/cuda/kernel.h"

namespace xjax::cuda {

namespace {

// A fused kernel of one node reading its operands whole: fusion gives such a group the op's own
// (CPU) kernel, which the GPU does not have for elementwise ops; a lone reduction too runs as a fused
// kernel, whose tiling follows its (k0, r, k1) split. Operands of one element against a larger
// index space (select_n's and clamp's scalars) are fills.
FusedKernelSpec lone_node_spec(const Node& n, const Step& s, const Plan& p) {
  FusedKernelSpec spec;
  spec.inputs = s.inputs;
  spec.outputs = s.outputs;
  for (int v : s.inputs) spec.input_types.push_back(p.value_type[v]);
  spec.output_types = n.outputs;
  const bool reduction = op_info(n.op).kind == OpKind::Reduction;
  spec.n = numel(reduction ? spec.input_types[0].shape : n.outputs[0].shape);
  if (reduction) reduction_split(spec.input_types[0].shape, n.attrs.get_ints("axes"), spec.k0, spec.r, spec.k1);
  std::vector<int> slots;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const TypeInfo& t = spec.input_types[i];
    KernelLoad load;
    load.kind = numel(t.shape) == spec.n ? KernelLoad::Kind::Contiguous : KernelLoad::Kind::Fill;
    load.input = int(i);
    load.slot = spec.add_slot(t.dtype);
    spec.loads.push_back(load);
    slots.push_back(load.slot);
  }
  if (reduction) {
    KernelReduction red{RedOp{}, spec.input_types[0].dtype, slots[0], 0};
    reduction_op(n.op, red.op);
    spec.reductions.push_back(red);
    return spec;
  }
  KernelStep step;
  step.op = n.op;
  step.attrs = n.attrs;
  step.args = slots;
  for (const TypeInfo& t : spec.input_types) step.arg_dtypes.push_back(t.dtype);
  step.out_dtype = n.outputs[0].dtype;
  step.out = spec.add_slot(step.out_dtype);
  spec.steps.push_back(step);
  spec.stores.push_back(KernelStore{step.out, 0});
  return spec;
}

[[noreturn]] void no_route(const Node& n, const std::string& why) {
  throw NoKernelError(std::string("[cuda] no GPU kernel for op '") + op_name(n.op) + "' (" + why + ")");
}

GpuPlan convert(const Executable& exe);

GpuStep convert_step(const Step& s, const Graph& g, const Plan& p) {
  GpuStep out;
  out.inputs = s.inputs;
  out.outputs = s.outputs;
  out.attrs = s.attrs;
  const Node& n = g.nodes()[s.nodes.back()];
  out.op = op_name(n.op);
  std::vector<TypeInfo> in_types;
  for (int v : s.inputs) in_types.push_back(p.value_type[v]);
  switch (s.kind) {
    case Step::Kind::Fused:
      out.kind = GpuStep::Kind::Fused;
      out.kernel = fused_kernel(*s.spec);
      out.has_kernel = true;
      return out;
    case Step::Kind::Cond:
    case Step::Kind::While:
      out.kind = s.kind == Step::Kind::Cond ? GpuStep::Kind::Cond : GpuStep::Kind::While;
      for (const auto& sub : s.subs) out.subs.push_back(std::make_shared<const GpuPlan>(convert(*sub)));
      return out;
    case Step::Kind::Callback:
      out.kind = GpuStep::Kind::Callback;
      return out;
    case Step::Kind::View:  // a contiguous dynamic_slice: on the GPU, its kernel
    case Step::Kind::Kernel:
      break;
  }
  const OpKind kind = op_info(n.op).kind;
  if (kind == OpKind::Reduction && fusible(g, n, cuda_caps())) {
    out.kind = GpuStep::Kind::Fused;
    out.kernel = fused_kernel(lone_node_spec(n, s, p));
    out.has_kernel = true;
  } else if (is_library_op(n.op)) {
    out.kind = GpuStep::Kind::Library;
    if (n.op == OpId::conv_general_dilated_) {
      out.kernel = generate_kernel("im2col", in_types, n.attrs);
      out.has_kernel = true;
    }
  } else if (has_kernel(n.op)) {
    out.kind = GpuStep::Kind::Kernel;
    out.kernel = generate_kernel(n.op, in_types, n.attrs);
    out.has_kernel = true;
  } else if (kind == OpKind::Elementwise) {
    std::vector<DType> dts;
    for (const TypeInfo& t : in_types) dts.push_back(t.dtype);
    if (n.outputs.size() != 1 || !cuda_caps().can_fuse(n.op, dts, n.outputs[0].dtype, n.attrs))
      no_route(n, "it has no portable scalar definition for these dtypes " + types_str(in_types));
    out.kind = GpuStep::Kind::Fused;
    out.kernel = fused_kernel(lone_node_spec(n, s, p));
    out.has_kernel = true;
  } else {
    no_route(n, "no CUDA kernel and no CuPy library route");
  }
  return out;
}

GpuPlan convert(const Executable& exe) {
  const Plan& p = exe.plan();
  const Graph& g = exe.graph();
  GpuPlan out;
  out.value_type = p.value_type;
  out.outputs = p.outputs;
  out.param_types = exe.input_types();
  out.value_storage = p.value_storage;
  for (const Storage& st : p.storages) {
    GpuStorage gs{GpuStorage::Kind::Computed, -1};
    if (st.kind == Storage::Kind::Param) gs = {GpuStorage::Kind::Param, st.index};
    if (st.kind == Storage::Kind::Constant) gs = {GpuStorage::Kind::Constant, st.index};
    out.storages.push_back(gs);
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {  // `empty` values: nothing writes them
    const int st = g.nodes()[i].op == OpId::empty_ ? p.value_storage[p.value_base[i]] : -1;
    if (st >= 0) out.storages[st].kind = GpuStorage::Kind::Fresh;
  }
  out.constants = p.constants;
  for (const Step& s : p.steps) out.steps.push_back(convert_step(s, g, p));
  return out;
}

}  // namespace

bool is_library_op(OpId op) {
  // The linear-algebra ops run on cuSOLVER / cuBLAS through CuPy (backends/cuda_library.py), fft on cuFFT.
  return op == OpId::dot_general_ || op == OpId::dot_general_add_ || op == OpId::conv_general_dilated_ ||
         op == OpId::sort_ || op == OpId::top_k_ || op == OpId::fft_ || op_info(op).kind == OpKind::Linalg;
}

GpuPlan gpu_plan(const Graph& g) {
  refuse_float8(g);
  CompileOptions o = default_compile_options();
  o.caps = &cuda_caps();
  o.reuse_buffers = false;  // the executor gives every storage its own buffer from CuPy's pool (and the
                            // in-place decisions ask the CPU lowering, which CUDA plans skip)
  return convert(*compile(g, o));
}

}  // namespace xjax::cuda
