// CUDA generators of the windowed ops: reduce_window_sum/max/min, select_and_gather_add (the
// tangent at each window's max/min) and select_and_scatter_add (max-pool's gradient). A thread per
// result element walks its window's taps in window order, as the CPU kernels do, so sums round the
// same way. select_and_scatter_add is written as a gather: a thread per operand element visits
// the windows that contain it and adds the source value of those that select it (no atomics, the
// same order of additions as the CPU).
#include "core/cuda/generators.h"
#include "core/ops/window_dims.h"

namespace xjax::cuda {

std::string open_taps(const std::vector<WindowDim>& dims, const std::string& out_prefix, const std::string& src_prefix) {
  std::string s;
  for (size_t d = 0; d < dims.size(); ++d) {
    const WindowDim& w = dims[d];
    const std::string k = "k" + std::to_string(d), q = "q" + std::to_string(d);
    const std::string src = src_prefix + std::to_string(d);
    s += "for (ix " + k + " = 0; " + k + " < " + lit(w.window) + "; ++" + k + ") {\n";
    s += "const ix " + q + " = " + out_prefix + std::to_string(d) + " * " + lit(w.stride) + " + " + k + " * " +
         lit(w.window_dilation) + " - " + lit(w.pad_lo) + ";\n";
    s += "if (" + q + " < 0 || " + q + " >= " + lit(WindowDim::dilated(w.size, w.base_dilation)) + " || " + q + " % " +
         lit(w.base_dilation) + " != 0) continue;\n";
    s += "const ix " + src + " = " + q + " / " + lit(w.base_dilation) + ";\n";
  }
  return s;
}

std::string close_taps(size_t n) { return std::string(n, '}') + "\n"; }

namespace {

std::vector<WindowDim> dims_of(OpId op, const Shape& x, const Attrs& attrs) {
  return window_dims(op, x, attrs.get_ints("window_dimensions"), attrs, {"base_dilation", "window_dilation"}, "");
}

// sum of <prefix>d * stride_d over the operand's dims.
std::string flat_offset(const Shape& x, const std::string& prefix) {
  std::vector<int64_t> st = contiguous_strides(x);
  std::string s = lit(0);
  for (size_t d = 0; d < x.size(); ++d) s += " + " + prefix + std::to_string(d) + " * " + lit(st[d]);
  return s;
}

// The accumulator of the windowed ops (window.cpp's AccOf): the compute type (float for 16-bit
// floats; integer sums wrap in the scalar definitions' add).
std::string window_acc(DType dt, bool sum) { return acc_type(sum ? Combiner::Add : Combiner::Max, dt); }

}  // namespace

KernelPlan gen_reduce_window(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[0].dtype;
  const Shape& x = in[0].shape;
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n, numel(x)});
  if (n == 0) return p;
  const auto dims = dims_of(op, x, attrs);
  const Combiner c = op == OpId::reduce_window_sum_ ? Combiner::Add
                     : op == OpId::reduce_window_max_ ? Combiner::Max
                                                      : Combiner::Min;
  const std::string A = window_acc(dt, c == Combiner::Add);
  const std::string name = "xjax_" + std::string(op_name(op));
  std::string s = kernel_head(name, {in_param(dt, 0), out_param(dt, 0)});
  s += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c");
  s += A + " acc = " + identity(c, dt) + ";\n";
  s += open_taps(dims, "c", "s");
  s += "const " + A + " v = (" + A + ")" + load(dt, "in0[" + flat_offset(x, "s") + "]") + ";\n";
  s += "acc = " + combine(c, "acc", "v") + ";\n" + close_taps(dims.size());
  s += "out0[i] = " + store(dt, "acc") + ";\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch(name, n, {"in0", "out0"}));
  return p;
}

KernelPlan gen_select_and_gather_add(const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[1].dtype;
  const Shape& x = in[1].shape;
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n, numel(x)});
  if (n == 0) return p;
  const auto dims = dims_of(OpId::select_and_gather_add_, x, attrs);
  const bool ge = attrs.get_str("select_prim") == "ge";
  const std::string A = window_acc(dt, false);
  // Selection from the identity (as reduce_window's init): a tap is taken unless the best so far
  // is >= it ("ge") or <= it ("le").
  std::string s = kernel_head("xjax_select_and_gather_add", {in_param(dt, 0), in_param(dt, 1), out_param(dt, 0)});
  s += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c");
  s += A + " best = " + identity(ge ? Combiner::Max : Combiner::Min, dt) + ";\nix sel = -1;\n";
  s += open_taps(dims, "c", "s");
  s += "const ix at = " + flat_offset(x, "s") + ";\n";
  s += "const " + A + " v = (" + A + ")" + load(dt, "in1[at]") + ";\n";
  s += std::string("if (!xjax::scalar::") + (ge ? "ge" : "le") + "(best, v)) { best = v; sel = at; }\n" + close_taps(dims.size());
  s += "out0[i] = sel < 0 ? " + store(dt, "0") + " : in0[sel];\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch("xjax_select_and_gather_add", n, {"in0", "in1", "out0"}));
  return p;
}

KernelPlan gen_select_and_scatter_add(const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[1].dtype;
  const Shape& x = in[1].shape;
  const Shape& src = in[0].shape;
  const int64_t n = numel(x);
  KernelPlan p = start_plan(out, {n, numel(src)});
  if (n == 0) return p;
  const auto dims = dims_of(OpId::select_and_scatter_add_, x, attrs);  // no dilations
  const bool ge = attrs.get_str("select_prim") == "ge";
  const std::string A = window_acc(dt, false), Sum = window_acc(dt, true);
  std::string s = kernel_head("xjax_select_and_scatter_add", {in_param(dt, 0), in_param(dt, 1), out_param(dt, 0)});
  s += grid_stride_loop("i", n) + " {\n" + decompose(x, "i", "e");
  s += Sum + " acc = 0;\nbool any = false;\n";
  // The windows o along each dim whose taps cover e: o * stride - pad_lo <= e <= that + window - 1.
  for (size_t d = 0; d < dims.size(); ++d) {
    const WindowDim& w = dims[d];
    const std::string o = "o" + std::to_string(d), e = "e" + std::to_string(d);
    const std::string num = "(" + e + " + " + lit(w.pad_lo) + ")";
    s += "ix " + o + "_lo = " + num + " - " + lit(w.window - 1) + ";\n";
    s += o + "_lo = " + o + "_lo <= 0 ? 0 : (" + o + "_lo + " + lit(w.stride - 1) + ") / " + lit(w.stride) + ";\n";
    s += "const ix " + o + "_hi = " + num + " < 0 ? -1 : " + num + " / " + lit(w.stride) + ";\n";
    s += "for (ix " + o + " = " + o + "_lo; " + o + " <= " + o + "_hi && " + o + " < " + lit(w.out_size()) + "; ++" + o +
         ") {\n";
  }
  // The window's selection: the first valid tap, replaced by any later one it is not >= (or <=).
  s += A + " best = 0;\nix sel = -1;\n";
  s += open_taps(dims, "o", "s");
  s += "const ix at = " + flat_offset(x, "s") + ";\n";
  s += "const " + A + " v = (" + A + ")" + load(dt, "in1[at]") + ";\n";
  s += std::string("if (sel < 0 || !xjax::scalar::") + (ge ? "ge" : "le") + "(best, v)) { best = v; sel = at; }\n" +
       close_taps(dims.size());
  s += "if (sel == i) {\nconst " + Sum + " v = (" + Sum + ")" + load(dt, "in0[" + flat_offset(src, "o") + "]") + ";\n";
  s += "acc = any ? " + combine(Combiner::Add, "acc", "v") + " : v;\nany = true;\n}\n";
  s += close_taps(dims.size());
  s += "out0[i] = " + store(dt, "acc") + ";\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch("xjax_select_and_scatter_add", n, {"in0", "in1", "out0"}));
  return p;
}

}  // namespace xjax::cuda
