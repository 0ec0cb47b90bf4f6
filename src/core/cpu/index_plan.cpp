// Start offsets, window runs and transposes for the gather and scatter kernels.
#include "core/cpu/index_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/cpu/bytes16.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

template <typename I>
void starts_typed(const StartPlan& p, const I* idx, int64_t b0, int64_t b1, int64_t* out) {
  const int64_t K = p.depth, n = b1 - b0;
  const I* v = idx + b0 * K;
  if (K == 1) {  // the common case, kept simple enough to vectorise
    const int64_t hi = p.hi[0], stride = p.stride[0];
    if (p.clip) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t s = index_as_int64(v[j]);
        out[j] = (s < 0 ? 0 : s > hi ? hi : s) * stride;
      }
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t s = index_as_int64(v[j]);
        const bool in = uint64_t(s) <= uint64_t(hi);  // also rejects s < 0
        const int64_t safe = in ? s : 0;               // never multiply an unchecked value
        out[j] = in ? safe * stride : -1;
      }
    }
  } else {
    for (int64_t j = 0; j < n; ++j, v += K) {
      int64_t off = 0;
      bool ok = true;
      for (int64_t k = 0; k < K; ++k) {
        int64_t s = index_as_int64(v[k]);
        if (p.clip) {
          s = std::min(std::max(s, int64_t(0)), p.hi[k]);
        } else if (uint64_t(s) > uint64_t(p.hi[k])) {
          ok = false;
          s = 0;
        }
        off += s * p.stride[k];
      }
      out[j] = ok ? off : -1;
    }
  }
  // Batching dims: the batch coordinate steps through (b / div) % size without dividing.
  for (const auto& bd : p.batching) {
    int64_t r = b0 % bd.div, c = (b0 / bd.div) % bd.size;
    for (int64_t j = 0; j < n; ++j) {
      if (out[j] >= 0) out[j] += c * bd.stride;
      if (++r == bd.div) {
        r = 0;
        if (++c == bd.size) c = 0;
      }
    }
  }
}

}  // namespace

void compute_starts(const StartPlan& p, const Tensor& indices, int64_t b0, int64_t b1, int64_t* out) {
  if (p.none_fit) {
    std::fill(out, out + (b1 - b0), int64_t(-1));
    return;
  }
  dispatch_dtype(indices.dtype, [&](auto tag) {
    using I = decltype(tag);
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
      starts_typed<I>(p, static_cast<const I*>(indices.data), b0, b1, out);
  });
}

BlockPlan make_block_plan(const Shape& operand, const std::vector<int64_t>& window) {
  BlockPlan p;
  p.count = numel(window);
  if (p.count == 0) return p;
  std::vector<int64_t> strides = contiguous_strides(operand);
  int64_t d = int64_t(operand.size()) - 1;
  p.run = 1;
  while (d >= 0 && window[d] == operand[d]) p.run *= window[d--];  // full trailing dims are contiguous
  if (d >= 0) p.run *= window[d--];
  for (; d >= 0; --d) {
    if (window[d] == 1) continue;
    if (!p.size.empty() && strides[d] == p.stride.front() * p.size.front()) {
      p.size.front() *= window[d];  // merge with the dim inside it: one longer strided step
    } else {
      p.size.insert(p.size.begin(), window[d]);
      p.stride.insert(p.stride.begin(), strides[d]);
    }
  }
  p.span = p.run;
  for (size_t i = 0; i < p.size.size(); ++i) p.span += (p.size[i] - 1) * p.stride[i];
  return p;
}

namespace {

template <typename T>
void permute_typed(const T* src, const Shape& dst_shape, const std::vector<int64_t>& src_stride, T* dst) {
  const size_t nd = dst_shape.size();
  const int64_t inner = dst_shape[nd - 1], inner_stride = src_stride[nd - 1];
  const int64_t rows = numel(dst_shape) / inner;
  parallel_for(rows, std::max<int64_t>(1, 32768 / inner), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t off = 0, rest = r;
      for (size_t d = nd - 1; d-- > 0;) {
        off += (rest % dst_shape[d]) * src_stride[d];
        rest /= dst_shape[d];
      }
      T* o = dst + r * inner;
      for (int64_t j = 0; j < inner; ++j) o[j] = src[off + j * inner_stride];
    }
  });
}

}  // namespace

void permute_copy(const void* src, const Shape& src_shape, const std::vector<int64_t>& perm, void* dst, size_t esize) {
  const int64_t n = numel(src_shape);
  if (n == 0) return;
  if (src_shape.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  std::vector<int64_t> strides = contiguous_strides(src_shape);
  Shape dst_shape(perm.size());
  std::vector<int64_t> src_stride(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dst_shape[i] = src_shape[perm[i]];
    src_stride[i] = strides[perm[i]];
  }
  switch (esize) {
    case 1: permute_typed(static_cast<const uint8_t*>(src), dst_shape, src_stride, static_cast<uint8_t*>(dst)); break;
    case 2: permute_typed(static_cast<const uint16_t*>(src), dst_shape, src_stride, static_cast<uint16_t*>(dst)); break;
    case 4: permute_typed(static_cast<const uint32_t*>(src), dst_shape, src_stride, static_cast<uint32_t*>(dst)); break;
    case 8: permute_typed(static_cast<const uint64_t*>(src), dst_shape, src_stride, static_cast<uint64_t*>(dst)); break;
    default: permute_typed(static_cast<const Bytes16*>(src), dst_shape, src_stride, static_cast<Bytes16*>(dst)); break;
  }
}

void parallel_memcpy(void* dst, const void* src, size_t n) {
  constexpr int64_t kChunk = 1 << 18;
  int64_t chunks = int64_t((n + kChunk - 1) / kChunk);
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    size_t b = size_t(c0) * kChunk, e = std::min(n, size_t(c1) * kChunk);
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  });
}

}  // namespace xjax
