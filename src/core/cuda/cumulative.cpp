// CUDA generator of the scans along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp),
// forward or reversed: a thread per line, walking it in order as the CPU kernel does (so the
// float rounding is the same), neighbouring threads on neighbouring lines (coalesced when the axis
// is not innermost).
#include "core/cuda/generators.h"

namespace xjax::cuda {

namespace {

const char* kLogAddExp = R"(__device__ __forceinline__ float xjax_logaddexp(float a, float b) {
  if (a != a || b != b) return a + b;
  if (a == b) return a + 0.69314718055994530942f;
  const float m = a > b ? a : b, lo = a > b ? b : a;
  return m + log1pf(expf(lo - m));
}
__device__ __forceinline__ double xjax_logaddexp(double a, double b) {
  if (a != a || b != b) return a + b;
  if (a == b) return a + 0.69314718055994530942;
  const double m = a > b ? a : b, lo = a > b ? b : a;
  return m + log1p(exp(lo - m));
}
)";

}  // namespace

KernelPlan gen_cumulative(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[0].dtype;
  const Shape& x = in[0].shape;
  const size_t axis = size_t(attrs.get_int("axis"));
  const bool reverse = attrs.get_int_or("reverse", 0) != 0;
  const int64_t total = numel(x), n = x[axis];
  KernelPlan p = start_plan(out, {total});
  if (total == 0) return p;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  const int64_t lines = total / n;

  std::string acc, step;
  if (op == OpId::cumlogsumexp_) {
    p.source += kLogAddExp;
    acc = compute_type(dt);
    step = "xjax_logaddexp(acc, v)";
  } else {
    Combiner c = op == OpId::cumsum_ ? Combiner::Add
                 : op == OpId::cumprod_ ? Combiner::Mul
                 : op == OpId::cummax_ ? Combiner::Max
                 : Combiner::Min;
    acc = acc_type(c, dt);
    step = combine(c, "acc", "v");
  }
  const std::string name = "xjax_" + std::string(op_name(op));
  std::string s = kernel_head(name, {in_param(dt, 0), out_param(dt, 0)});
  s += grid_stride_loop("l", lines) + " {\n";
  s += "const ix base = (l / " + lit(inner) + ") * " + lit(n * inner) + " + l % " + lit(inner) + ";\n";
  s += "ix at = base + " + lit(reverse ? (n - 1) * inner : 0) + ";\n";
  s += acc + " acc = (" + acc + ")" + load(dt, "in0[at]") + ";\n";
  s += "out0[at] = " + store(dt, "acc") + ";\n";
  s += "for (ix k = 1; k < " + lit(n) + "; ++k) {\n";
  s += std::string("at ") + (reverse ? "-=" : "+=") + " " + lit(inner) + ";\n";
  s += "const " + acc + " v = (" + acc + ")" + load(dt, "in0[at]") + ";\n";
  s += "acc = " + step + ";\n";
  s += "out0[at] = " + store(dt, "acc") + ";\n}\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch(name, lines, {"in0", "out0"}));
  return p;
}

}  // namespace xjax::cuda
