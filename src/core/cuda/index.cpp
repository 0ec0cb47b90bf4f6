// CUDA generators of gather and scatter(_add/_mul/_min/_max). The dimension numbers are
// normalised as the CPU kernels do (core/ops/index_starts.h: make_start_plan gives each index
// component's operand stride and largest in-bounds start, and the batching dims' strides).
// - gather: a thread per result element: its batch coordinates pick an index vector, its offset
//   coordinates a place in the window; an out-of-bounds window (mode fill) gives the fill value.
// - scatter: the result starts as a copy of the operand; then a thread per update element
//   combines it in with an atomic read-modify-write (a CAS loop, any element width). For plain
//   scatter, where duplicates must resolve as on the CPU (the last window in index order wins),
//   a first pass records per result element the largest window that writes it, a second lets
//   only that window write.
#include <algorithm>

#include "core/cuda/generators.h"
#include "core/ops/index_starts.h"

namespace xjax::cuda {

namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Statements: `ok` and `start` (the flat operand offset of window b's origin) from the indices
// (in1), as compute_starts does on the CPU.
std::string start_code(const StartPlan& sp, DType index_dtype) {
  std::string s = "bool ok = true;\ni64 start = 0;\n";
  for (int64_t k = 0; k < sp.depth; ++k) {
    const std::string raw = "in1[(i64)b * " + std::to_string(sp.depth) + "LL + " + std::to_string(k) + "LL]";
    const std::string hi = std::to_string(sp.hi[size_t(k)]) + "LL";
    s += "{ ";
    if (is_unsigned(index_dtype))  // saturate: such a start is out of bounds anyway
      s += "const u64 u = (u64)" + raw + "; i64 v = u > 9223372036854775807ULL ? 9223372036854775807LL : (i64)u;";
    else
      s += "i64 v = (i64)" + raw + ";";
    if (sp.clip) s += " v = v < 0 ? 0 : v > " + hi + " ? " + hi + " : v;";
    else s += " if (v < 0 || v > " + hi + ") { ok = false; v = 0; }";
    s += " start += v * " + std::to_string(sp.stride[size_t(k)]) + "LL; }\n";
  }
  for (const auto& bd : sp.batching)
    s += "start += (((i64)b / " + std::to_string(bd.div) + "LL) % " + std::to_string(bd.size) + "LL) * " +
         std::to_string(bd.stride) + "LL;\n";
  if (sp.none_fit) s += "ok = false;\n";
  return s;
}

// The flat index over `dims_shape` of the coordinates c<j> for j in `dims` (in order).
std::string flat_of(const std::vector<int64_t>& dims, const Shape& shape) {
  std::string s = lit(0);
  for (int64_t j : dims) s = "(" + s + ") * " + lit(shape[size_t(j)]) + " + c" + std::to_string(j);
  return s;
}

}  // namespace

KernelPlan gen_gather(const Types& in, const Types& out, const Attrs& attrs) {
  const Shape& operand = in[0].shape;
  const Shape& indices = in[1].shape;
  const Shape& result = out[0].shape;
  const DType dt = out[0].dtype;
  const int64_t n = numel(result);
  KernelPlan p = start_plan(out, {n, numel(operand), numel(indices)});
  if (n == 0) return p;
  GatherDims d = gather_dims(OpId::gather_, attrs);
  const IndexMode mode = d.mode == IndexMode::Fill ? IndexMode::Fill : IndexMode::Clip;
  StartPlan sp = make_start_plan(operand, indices, d.start_index_map, d.slice_sizes, d.operand_batching_dims,
                                 d.start_indices_batching_dims, mode);
  std::vector<int64_t> st = contiguous_strides(operand);
  std::vector<int64_t> batch_dims;  // result dims that are not offset dims: the indices' batch dims
  for (int64_t i = 0; i < int64_t(result.size()); ++i)
    if (!contains(d.offset_dims, i)) batch_dims.push_back(i);
  std::string within = "const i64 within = 0";
  size_t next = 0;
  for (int64_t i = 0; i < int64_t(operand.size()); ++i) {
    if (contains(d.collapsed_slice_dims, i) || contains(d.operand_batching_dims, i)) continue;
    within += " + (i64)c" + std::to_string(d.offset_dims[next++]) + " * " + std::to_string(st[size_t(i)]) + "LL";
  }
  const std::string fill = std::to_string(fill_bits(attrs, dt)) + "ULL";
  std::string s = kernel_head("xjax_gather", {in_param(dt, 0, true), in_param(in[1].dtype, 1), out_param(dt, 0, true)});
  s += grid_stride_loop("i", n) + " {\n" + decompose(result, "i", "c");
  s += "const ix b = " + flat_of(batch_dims, result) + ";\n";
  s += start_code(sp, in[1].dtype) + within + ";\n";
  s += "out0[i] = ok ? in0[start + within] : (" + bits_type(dt) + ")" + fill + ";\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch("xjax_gather", n, {"in0", "in1", "out0"}));
  return p;
}

KernelPlan gen_scatter(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const Shape& operand = in[0].shape;
  const Shape& indices = in[1].shape;
  const Shape& updates = in[2].shape;
  const DType dt = out[0].dtype;
  const int64_t n = numel(operand), nu = numel(updates);
  KernelPlan p = start_plan(out, {n, nu, numel(indices)});
  if (n == 0) return p;
  const std::string name = "xjax_" + std::string(op_name(op));
  const bool set = op == OpId::scatter_;
  ScatterDims d = scatter_dims(op, attrs);
  std::vector<int64_t> window = scatter_window_sizes(d, operand, updates);
  StartPlan sp = make_start_plan(operand, indices, d.scatter_dims_to_operand_dims, window, d.operand_batching_dims,
                                 d.scatter_indices_batching_dims, d.mode);
  const bool wide_winner = sp.batches > (int64_t(1) << 31) - 1;
  const std::string W = wide_winner ? "long long" : "int";

  // Launch 1: the copy of the operand (and, for scatter, the winners set to -1).
  std::vector<std::string> p1{in_param(dt, 0, true), out_param(dt, 0, true)}, n1{"in0", "out0"};
  if (set) {
    p1.push_back(W + "* __restrict__ tmp0");
    n1.push_back("tmp0");
    p.scratch_bytes.push_back(n * (wide_winner ? 8 : 4));
  }
  p.source += kernel_head(name + "_copy", p1) + grid_stride_loop("i", n) + " {\nout0[i] = in0[i];" +
              (set ? " tmp0[i] = -1;" : "") + "\n}\n}\n";
  p.launches.push_back(grid_stride_launch(name + "_copy", n, n1));
  if (nu == 0 || sp.none_fit) return p;

  // Each update element's target: `ok` and `at`, from its coordinates u0...
  std::vector<int64_t> st = contiguous_strides(operand), batch_dims;
  for (int64_t i = 0; i < int64_t(updates.size()); ++i)
    if (!contains(d.update_window_dims, i)) batch_dims.push_back(i);
  std::string within = "0";
  size_t next = 0;
  for (int64_t i = 0; i < int64_t(operand.size()); ++i) {
    if (contains(d.inserted_window_dims, i) || contains(d.operand_batching_dims, i)) continue;
    within += " + (i64)c" + std::to_string(d.update_window_dims[next++]) + " * " + std::to_string(st[size_t(i)]) + "LL";
  }
  const std::string target = decompose(updates, "i", "c") + "const ix b = " + flat_of(batch_dims, updates) + ";\n" +
                             start_code(sp, in[1].dtype) + "const ix at = (ix)(start + " + within + ");\n";
  const std::vector<std::string> upd_params{in_param(in[1].dtype, 1), in_param(dt, 2, set)};

  if (set) {
    std::vector<std::string> p2 = upd_params;
    p2.push_back(W + "* __restrict__ tmp0");
    p.source += kernel_head(name + "_claim", p2) + grid_stride_loop("i", nu) + " {\n" + target +
                "if (ok) atomicMax(&tmp0[at], (" + W + ")b);\n}\n}\n";
    p.launches.push_back(grid_stride_launch(name + "_claim", nu, {"in1", "in2", "tmp0"}));
    std::vector<std::string> p3 = upd_params;
    p3.push_back("const " + W + "* __restrict__ tmp0");
    p3.push_back(out_param(dt, 0, true));
    p.source += kernel_head(name + "_write", p3) + grid_stride_loop("i", nu) + " {\n" + target +
                "if (ok && tmp0[at] == (" + W + ")b) out0[at] = in2[i];\n}\n}\n";
    p.launches.push_back(grid_stride_launch(name + "_write", nu, {"in1", "in2", "tmp0", "out0"}));
    return p;
  }

  const Combiner c = op == OpId::scatter_add_   ? Combiner::Add
                     : op == OpId::scatter_mul_ ? Combiner::Mul
                     : op == OpId::scatter_min_ ? Combiner::Min
                                                : Combiner::Max;
  const std::string S = storage_type(dt), A = acc_type(c, dt);
  p.source += "struct xjax_update {\n  " + S + " v;\n  __device__ __forceinline__ " + S + " operator()(" + S +
              " old) const {\n    const " + A + " a = (" + A + ")" + load(dt, "old") + ", u = (" + A + ")" + load(dt, "v") +
              ";\n    return " + store(dt, combine(c, "a", "u")) + ";\n  }\n};\n";
  std::vector<std::string> p2 = upd_params;
  p2.push_back(out_param(dt, 0));
  p.source += kernel_head(name, p2) + grid_stride_loop("i", nu) + " {\n" + target +
              "if (ok) { xjax_update f; f.v = in2[i]; atomic_rmw(&out0[at], f); }\n}\n}\n";
  p.launches.push_back(grid_stride_launch(name, nu, {"in1", "in2", "out0"}));
  return p;
}

}  // namespace xjax::cuda
