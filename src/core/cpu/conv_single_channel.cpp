// One-channel 1-D convolutions with long windows (jnp.convolve, jnp.correlate) as a product of
// blocks. With one input and one output feature, im2col's product is a matrix-vector one over a
// copy of the input per tap (n x m elements). Instead the outputs go in blocks of B:
//
//   out[i*B + j] = sum_{K < T*B} xp[i*B + K] * W[K][j],   W[K][j] = w[K - j] (0 outside the window),
//
// over the zero-padded input xp, with T = ceil((m + B - 1) / B). Row i of the left operand is
// xp[i*B, i*B + T*B): the rows overlap and are read in place, so nothing is copied, and the
// product is an (outputs / B) x (m + B) x B GEMM on the built-in kernels. Rows go to tasks in
// fixed chunks, so the result does not depend on the number of threads.
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/cpu/conv_blocks.h"
#include "core/cpu/contraction_gemm.h"
#include "core/thread_pool.h"

namespace xjax::conv {

namespace {

constexpr int64_t kBlock = 64;        // outputs per row of the product (its n)
constexpr int64_t kMinWindow = 64;    // shorter windows: im2col's copy is small, the general path wins
constexpr int64_t kRowsPerTask = 256;

}  // namespace

template <typename C>
bool conv_single_channel(const Geometry& g, const C* x, const C* w, C* out) {
  if (g.sp.size() != 1 || g.groups != 1 || g.batch_groups || g.cg != 1 || g.og != 1) return false;
  const WindowDim& d = g.sp[0];
  if (d.stride != 1 || d.base_dilation != 1 || d.window_dilation != 1 || d.window < kMinWindow) return false;
  const int64_t m = d.window, n_out = g.out_sp[0], b = kBlock;
  if (n_out < b) return false;
  const int64_t taps = (m + b - 1 + b - 1) / b, k = taps * b, rows = (n_out + b - 1) / b;
  // W[K][j] = w[K - j]: the window shifted by j in column j.
  std::unique_ptr<C[]> wm(new C[size_t(k * b)]());
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < b; ++j)
      if (kk - j >= 0 && kk - j < m) wm[size_t(kk * b + j)] = w[kk - j];
  const int64_t span = (rows - 1) * b + k;  // the padded input the rows read
  std::unique_ptr<C[]> xp(new C[size_t(span)]);
  std::unique_ptr<C[]> res(new C[size_t(rows * b)]);
  for (int64_t batch = 0; batch < g.batch_out; ++batch) {
    const C* src = x + batch * g.lhs_batch_stride;
    for (int64_t t = 0; t < span; ++t) {
      const int64_t s = t - d.pad_lo;
      xp[size_t(t)] = s >= 0 && s < d.size ? src[s * g.lhs_sp_strides[0]] : C(0);
    }
    const int64_t chunks = (rows + kRowsPerTask - 1) / kRowsPerTask;
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t r0 = c * kRowsPerTask, r1 = std::min(rows, r0 + kRowsPerTask);
        contraction::matmul_serial<C>(r1 - r0, b, k, contraction::Mat<C>{xp.get() + r0 * b, b, 1},
                                      contraction::Mat<C>{wm.get(), b, 1}, res.get() + r0 * b);
      }
    });
    std::memcpy(out + batch * n_out, res.get(), size_t(n_out) * sizeof(C));
  }
  return true;
}

template bool conv_single_channel<float>(const Geometry&, const float*, const float*, float*);
template bool conv_single_channel<double>(const Geometry&, const double*, const double*, double*);
template bool conv_single_channel<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*, uint32_t*);
template bool conv_single_channel<uint64_t>(const Geometry&, const uint64_t*, const uint64_t*, uint64_t*);

}  // namespace xjax::conv
