// CUDA generator of im2col for conv_general_dilated: the patches of the lhs as a matrix per
// group, so that the convolution is one (batched) GEMM on cuBLAS:
//   patches[g, (n, o...), (c, k...)] = lhs[batch(g, n), feature(g, c), tap k of window o...]   (0 on padding/holes)
//   result[(n, o...), g * Og + f] = sum over (c, k...) of patches[g, (n, o...), (c, k...)] *
//                                   rhs[g * Og + f, c, k...]
// with Og the rhs output features per group, o the output spatial position and k the window tap,
// both in the spec's spatial order (the rhs's (I, spatial...) flattening, after putting it in
// (O, I, spatial...) order). The result then goes to out_spec's layout. Groups are feature groups
// (feature(g, c) = g * C + c with C the lhs features per group, batch(g, n) = n) or batch groups
// (batch(g, n) = g * N + n with N the result's batch, feature(g, c) = c), as the CPU kernel reads
// them: batch group g is the g-th run of N lhs batch entries (a grouped convolution's weight
// gradient has these).
#include "core/cuda/generators.h"
#include "core/ops/window_dims.h"

namespace xjax::cuda {

std::string open_taps(const std::vector<WindowDim>& dims, const std::string& out_prefix, const std::string& src_prefix);
std::string close_taps(size_t n);

KernelPlan gen_im2col(const Types& in, const Attrs& attrs) {
  if (in.size() != 2) throw ValueError("[im2col] expects the lhs and rhs types of conv_general_dilated, got " + types_str(in));
  const Shape& lhs = in[0].shape;
  const ConvDims cd = conv_dims(lhs, in[1].shape, attrs);
  const DType dt = in[0].dtype;
  const int64_t fg = cd.feature_groups, bg = cd.batch_groups;  // at most one is > 1 (the shape rule)
  const int64_t G = fg * bg, N = lhs[size_t(cd.lhs_spec[0])] / bg, C = lhs[size_t(cd.lhs_spec[1])] / fg;
  Shape out_sp, win;
  for (const WindowDim& w : cd.spatial) {
    out_sp.push_back(w.out_size());
    win.push_back(w.window);
  }
  const int64_t P = numel(out_sp), K = numel(win);
  const Types out{{{G, N * P, C * K}, dt}};
  const int64_t n = G * N * P * C * K;
  KernelPlan p = start_plan(out, {n, numel(lhs)});
  if (n == 0) return p;
  const std::vector<int64_t> st = contiguous_strides(lhs);
  const size_t ns = cd.spatial.size();
  // Coordinates: g, b (batch), o<d> (output position), c (feature), k<d> (tap).
  Shape coords{G, N};
  for (int64_t o : out_sp) coords.push_back(o);
  coords.push_back(C);
  for (int64_t w : win) coords.push_back(w);
  std::string s = kernel_head("xjax_im2col", {in_param(dt, 0, true), out_param(dt, 0, true)});
  s += grid_stride_loop("i", n) + " {\n" + decompose(coords, "i", "x");
  std::string src = lit(0) + " + (x0 * " + lit(bg > 1 ? N : 0) + " + x1) * " + lit(st[size_t(cd.lhs_spec[0])]) +
                    " + (x0 * " + lit(fg > 1 ? C : 0) + " + x" + std::to_string(2 + ns) + ") * " +
                    lit(st[size_t(cd.lhs_spec[1])]);
  s += "bool inside = true;\n";
  for (size_t d = 0; d < ns; ++d) {
    const WindowDim& w = cd.spatial[d];
    const std::string o = "x" + std::to_string(2 + d), k = "x" + std::to_string(3 + ns + d), q = "q" + std::to_string(d);
    s += "const ix " + q + " = " + o + " * " + lit(w.stride) + " + " + k + " * " + lit(w.window_dilation) + " - " +
         lit(w.pad_lo) + ";\n";
    s += "inside = inside && " + q + " >= 0 && " + q + " < " + lit(WindowDim::dilated(w.size, w.base_dilation)) + " && " +
         q + " % " + lit(w.base_dilation) + " == 0;\n";
    src += " + (" + q + " / " + lit(w.base_dilation) + ") * " + lit(st[size_t(cd.lhs_spec[2 + d])]);
  }
  s += "out0[i] = inside ? in0[" + src + "] : (" + bits_type(dt) + ")0;\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch("xjax_im2col", n, {"in0", "out0"}));
  return p;
}

}  // namespace xjax::cuda
