// The CPU kernel of fft (semantics: ops/fft.h): one-dimensional transforms along each axis of
// fft_lengths (cpu/fft_plan.h), rows of the last axis in place, the other axes through blocks of
// columns gathered into contiguous rows. Every transform is computed by one thread the same way
// whatever the pool's size, so the bits do not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cpu/fft_passes.h"
#include "core/cpu/fft_plan.h"
#include "core/cpu/kernels.h"
#include "core/ops/fft.h"
#include "core/ops/op_attrs.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using fft::Cpx;

constexpr int64_t kColumns = 16;          // columns of a strided axis transformed together
constexpr int64_t kRowLanes = 8;            // rows of the last axis transformed together
constexpr int64_t kTaskElements = 1 << 14;  // about this many elements per task of the pool

// The complex transform of every line along `axis` of data[shape], in place; an inverse one
// is scaled by 1 / length.
template <typename T>
void transform_axis(Cpx<T>* data, const Shape& shape, size_t axis, bool inverse) {
  const int64_t len = shape[axis];
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  if (len <= 1 || outer * inner == 0) return;  // length 1: the identity, scaled by 1
  const auto plan = fft::complex_plan<T>(len);
  const T scale = inverse ? T(1.0 / double(len)) : T(1);
  if (inner == 1 && plan->has_lanes() && outer > 1) {
    // Rows side by side as the plan's lanes, kRowLanes at a time: every pass then runs over
    // contiguous lanes (the bits are those of one row at a time).
    const int64_t blocks = (outer + kRowLanes - 1) / kRowLanes;
    parallel_for(blocks, std::max<int64_t>(1, kTaskElements / (len * kRowLanes)), [&](int64_t b, int64_t e) {
      std::vector<Cpx<T>> lanes(size_t(len * kRowLanes)), scratch(size_t(len * kRowLanes));
      for (int64_t t = b; t < e; ++t) {
        Cpx<T>* base = data + t * kRowLanes * len;
        const int64_t rows = std::min(kRowLanes, outer - t * kRowLanes);
        for (int64_t c = 0; c < rows; ++c)
          for (int64_t i = 0; i < len; ++i) lanes[size_t(i * rows + c)] = base[c * len + i];
        plan->run_lanes(lanes.data(), rows, inverse, scratch.data());
        for (int64_t c = 0; c < rows; ++c)
          for (int64_t i = 0; i < len; ++i)
            base[c * len + i] = inverse ? fft::scale(lanes[size_t(i * rows + c)], scale) : lanes[size_t(i * rows + c)];
      }
    });
    return;
  }
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kTaskElements / len), [&](int64_t b, int64_t e) {
      std::vector<Cpx<T>> scratch(size_t(plan->scratch_size()));
      for (int64_t r = b; r < e; ++r) {
        Cpx<T>* row = data + r * len;
        plan->run(row, inverse, scratch.data());
        if (inverse)
          for (int64_t i = 0; i < len; ++i) row[i] = fft::scale(row[i], scale);
      }
    });
    return;
  }
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  parallel_for(outer * blocks, std::max<int64_t>(1, kTaskElements / (len * kColumns)), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> rows(size_t(len * kColumns)), scratch(size_t(plan->scratch_size() * kColumns));
    for (int64_t t = b; t < e; ++t) {
      Cpx<T>* base = data + (t / blocks) * len * inner + (t % blocks) * kColumns;
      const int64_t cols = std::min(kColumns, inner - (t % blocks) * kColumns);
      if (plan->has_lanes()) {  // the columns side by side as the plan's lanes
        for (int64_t i = 0; i < len; ++i)
          std::memcpy(static_cast<void*>(rows.data() + i * cols), base + i * inner, size_t(cols) * sizeof(Cpx<T>));
        plan->run_lanes(rows.data(), cols, inverse, scratch.data());
        for (int64_t i = 0; i < len; ++i)
          for (int64_t c = 0; c < cols; ++c)
            base[i * inner + c] = inverse ? fft::scale(rows[size_t(i * cols + c)], scale) : rows[size_t(i * cols + c)];
        continue;
      }
      for (int64_t i = 0; i < len; ++i)
        for (int64_t c = 0; c < cols; ++c) rows[size_t(c * len + i)] = base[i * inner + c];
      for (int64_t c = 0; c < cols; ++c) plan->run(rows.data() + c * len, inverse, scratch.data());
      for (int64_t i = 0; i < len; ++i)
        for (int64_t c = 0; c < cols; ++c)
          base[i * inner + c] = inverse ? fft::scale(rows[size_t(c * len + i)], scale) : rows[size_t(c * len + i)];
    }
  });
}

// Real transforms of the rows of the last axis (n reals <-> n / 2 + 1 coefficients), in blocks of
// kRealLanes rows.
template <typename T>
void real_rows(const T* x, Cpx<T>* out, int64_t rows, int64_t n) {
  const auto plan = fft::real_plan<T>(n);
  const int64_t h = n / 2 + 1, lanes = fft::RealPlan<T>::kRealLanes;
  const int64_t blocks = (rows + lanes - 1) / lanes;
  parallel_for(blocks, std::max<int64_t>(1, kTaskElements / (n * lanes)), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> scratch(size_t(plan->rows_scratch_size()));
    for (int64_t t = b; t < e; ++t)
      plan->forward_rows(x + t * lanes * n, out + t * lanes * h, std::min(lanes, rows - t * lanes), scratch.data());
  });
}

template <typename T>
void inverse_real_rows(const Cpx<T>* in, T* x, int64_t rows, int64_t n) {
  const auto plan = fft::real_plan<T>(n);
  const int64_t h = n / 2 + 1, lanes = fft::RealPlan<T>::kRealLanes;
  const int64_t blocks = (rows + lanes - 1) / lanes;
  const T scale = T(1.0 / double(n));
  parallel_for(blocks, std::max<int64_t>(1, kTaskElements / (n * lanes)), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> scratch(size_t(plan->rows_scratch_size()));
    for (int64_t t = b; t < e; ++t) {
      const int64_t count = std::min(lanes, rows - t * lanes);
      T* out = x + t * lanes * n;
      plan->inverse_rows(in + t * lanes * h, out, count, scratch.data());
      for (int64_t i = 0; i < count * n; ++i) out[i] *= scale;
    }
  });
}

template <typename T>
void fft_typed(const Tensor& in, const Tensor& out, FftType type, size_t k) {
  const size_t rank = out.shape.size();
  Cpx<T>* y = static_cast<Cpx<T>*>(out.data);
  switch (type) {
    case FftType::Fft:
    case FftType::Ifft:
      std::memcpy(out.data, in.data, size_t(out.size()) * sizeof(Cpx<T>));
      for (size_t a = rank - k; a < rank; ++a) transform_axis(y, out.shape, a, type == FftType::Ifft);
      return;
    case FftType::Rfft: {
      const int64_t n = in.shape.back();
      real_rows(in.as<T>(), y, in.size() / n, n);
      for (size_t a = rank - k; a + 1 < rank; ++a) transform_axis(y, out.shape, a, false);
      return;
    }
    case FftType::Irfft: {
      const int64_t n = out.shape.back();
      const Cpx<T>* src = static_cast<const Cpx<T>*>(in.data);
      std::vector<Cpx<T>> tmp;
      if (k > 1) {  // the outer axes first, on a copy (the operand is not ours to change)
        tmp.assign(src, src + in.size());
        for (size_t a = rank - k; a + 1 < rank; ++a) transform_axis(tmp.data(), in.shape, a, true);
        src = tmp.data();
      }
      inverse_real_rows(src, out.as<T>(), out.size() / n, n);
      return;
    }
  }
}

void fft_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const FftType type = fft_type_attr(attrs);
  const std::vector<int64_t>& lengths = ints_attr(OpId::fft_, attrs, "fft_lengths");
  const Tensor& y = out[0];
  if (y.size() == 0) return;
  // A transform over no samples is zero (an RFFT of length 0 still has its one coefficient).
  if (std::find(lengths.begin(), lengths.end(), int64_t(0)) != lengths.end()) {
    std::memset(y.data, 0, size_t(y.size()) * itemsize(y.dtype));
    return;
  }
  const DType real = is_complex(in[0].dtype) ? (in[0].dtype == DType::Complex64 ? DType::Float32 : DType::Float64)
                                             : in[0].dtype;
  if (real == DType::Float32)
    fft_typed<float>(in[0], y, type, lengths.size());
  else
    fft_typed<double>(in[0], y, type, lengths.size());
}

}  // namespace

void register_fft_cpu(CpuKernelTable& t) { t.set_cpu(OpId::fft_, fft_cpu); }

}  // namespace xjax
