// The windowed kernels (conv_general_dilated, reduce_window_*, select_and_scatter_add) against
// naive loops, at sizes that split into many blocks and tap chunks over the thread pool: also the
// target of the sanitizer builds for these kernels. Exits non-zero on the first failure.
#include <cmath>
#include <cstdio>
#include <random>

#include "core/array.h"
#include "core/cpu/kernels.h"
#include "core/ops/ops.h"
#include "check.h"

using namespace xjax;

namespace {

Array random_array(const Shape& shape, std::mt19937& rng) {
  Array a = Array::empty(shape, DType::Float64);
  std::uniform_real_distribution<double> d(-2, 2);
  for (int64_t i = 0; i < a.size(); ++i) static_cast<double*>(a.data())[i] = d(rng);
  return a;
}

Array run(OpId op, const std::vector<Array>& in, const Attrs& attrs) {
  std::vector<TypeInfo> types;
  for (const Array& a : in) types.push_back({a.shape, a.dtype});
  const TypeInfo t = infer_types(op, types, attrs)[0];
  Array out = Array::empty(t.shape, t.dtype);
  std::vector<Tensor> ti, to{Tensor{out.data(), out.shape, out.dtype}};
  for (const Array& a : in) ti.push_back(Tensor{a.data(), a.shape, a.dtype});
  cpu_kernel(op)(ti, to, attrs);
  return out;
}

double at(const Array& a, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off = off * a.shape[i] + idx[i];
  return static_cast<const double*>(a.data())[off];
}

// Input position of tap k of output o along one dim, or -1 (padding, hole).
int64_t source(int64_t o, int64_t k, int64_t stride, int64_t lo, int64_t ldil, int64_t rdil, int64_t size) {
  const int64_t p = o * stride + k * rdil - lo;
  if (p < 0 || p % ldil || p / ldil >= size) return -1;
  return p / ldil;
}

// NCHW x OIHW convolution with feature groups, by its definition.
void test_conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw, int64_t groups,
               std::vector<int64_t> stride, std::vector<int64_t> pad, std::vector<int64_t> ldil,
               std::vector<int64_t> rdil, std::mt19937& rng) {
  Array x = random_array({n, c, h, w}, rng), k = random_array({o, c / groups, kh, kw}, rng);
  Attrs a;
  a.set("lhs_spec", std::vector<int64_t>{0, 1, 2, 3});
  a.set("rhs_spec", std::vector<int64_t>{0, 1, 2, 3});
  a.set("out_spec", std::vector<int64_t>{0, 1, 2, 3});
  a.set("window_strides", stride);
  a.set("padding", pad);
  a.set("lhs_dilation", ldil);
  a.set("rhs_dilation", rdil);
  a.set("feature_group_count", groups);
  Array y = run(OpId::conv_general_dilated_, {x, k}, a);
  const int64_t cg = c / groups, og = o / groups;
  double worst = 0;
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t f = 0; f < y.shape[1]; ++f)
      for (int64_t i = 0; i < y.shape[2]; ++i)
        for (int64_t j = 0; j < y.shape[3]; ++j) {
          double s = 0;
          const int64_t g = f / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t si = source(i, p, stride[0], pad[0], ldil[0], rdil[0], h);
                const int64_t sj = source(j, q, stride[1], pad[2], ldil[1], rdil[1], w);
                if (si >= 0 && sj >= 0) s += at(x, {b, g * cg + ci, si, sj}) * at(k, {f, ci, p, q});
              }
          worst = std::max(worst, std::fabs(s - at(y, {b, f, i, j})));
        }
  CHECK(worst < 1e-9);
}

// reduce_window_max / _sum over (N, H, W, C) with windows over H and W.
void test_reduce_window(OpId op, std::mt19937& rng) {
  Array x = random_array({3, 9, 8, 5}, rng);
  Attrs a;
  a.set("window_dimensions", std::vector<int64_t>{1, 3, 2, 1});
  a.set("window_strides", std::vector<int64_t>{1, 2, 1, 1});
  a.set("padding", std::vector<int64_t>{0, 0, 1, 2, 1, 0, 0, 0});
  a.set("window_dilation", std::vector<int64_t>{1, 1, 2, 1});
  Array y = run(op, {x}, a);
  const bool max = op == OpId::reduce_window_max_;
  double worst = 0;
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t i = 0; i < y.shape[1]; ++i)
      for (int64_t j = 0; j < y.shape[2]; ++j)
        for (int64_t c = 0; c < y.shape[3]; ++c) {
          double r = max ? -INFINITY : 0;
          for (int64_t p = 0; p < 3; ++p)
            for (int64_t q = 0; q < 2; ++q) {
              const int64_t si = source(i, p, 2, 1, 1, 1, 9), sj = source(j, q, 1, 1, 1, 2, 8);
              if (si < 0 || sj < 0) continue;
              const double v = at(x, {b, si, sj, c});
              r = max ? std::max(r, v) : r + v;
            }
          worst = std::max(worst, std::fabs(r - at(y, {b, i, j, c})));
        }
  CHECK(worst < 1e-12);
}

// Overlapping windows: every window adds its source at its first maximum.
void test_select_and_scatter_add(std::mt19937& rng) {
  Array x = random_array({40, 33}, rng), s = random_array({38, 16}, rng);
  Attrs a;
  a.set("window_dimensions", std::vector<int64_t>{3, 3});
  a.set("window_strides", std::vector<int64_t>{1, 2});
  a.set("padding", std::vector<int64_t>{0, 0, 0, 0});
  a.set("select_prim", std::string("ge"));
  Array y = run(OpId::select_and_scatter_add_, {s, x}, a);
  std::vector<double> want(size_t(x.size()), 0.0);
  for (int64_t i = 0; i < 38; ++i)
    for (int64_t j = 0; j < 16; ++j) {
      int64_t bi = i, bj = 2 * j;
      for (int64_t p = 0; p < 3; ++p)
        for (int64_t q = 0; q < 3; ++q)
          if (at(x, {i + p, 2 * j + q}) > at(x, {bi, bj})) bi = i + p, bj = 2 * j + q;
      want[size_t(bi * 33 + bj)] += at(s, {i, j});
    }
  double worst = 0;
  const double* got = static_cast<const double*>(y.data());
  for (int64_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(want[size_t(i)] - got[i]));
  CHECK(worst < 1e-12);
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  test_conv(2, 3, 7, 6, 4, 3, 2, 1, {1, 1}, {1, 1, 0, 1}, {1, 1}, {1, 1}, rng);
  test_conv(2, 4, 9, 8, 6, 3, 3, 2, {2, 1}, {-1, 2, 1, 1}, {1, 2}, {2, 1}, rng);
  test_conv(3, 16, 20, 20, 32, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, rng);  // many row blocks
  test_conv(2, 8, 6, 6, 4, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, rng);       // no im2col
  test_conv(64, 1, 28, 28, 2, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, rng);    // one channel
  // A kernel-gradient shape: few rows, long rows of taps, cut into chunks of partial sums.
  test_conv(4, 24, 30, 30, 8, 28, 28, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, rng);
  test_reduce_window(OpId::reduce_window_max_, rng);
  test_reduce_window(OpId::reduce_window_sum_, rng);
  test_select_and_scatter_add(rng);
  return check_report();
}
