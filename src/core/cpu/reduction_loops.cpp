// The type-erased tables of reduction loops, one per (op, storage dtype).
#include "core/cpu/reduction_loops.h"

#include <stdexcept>

namespace xjax {

namespace {

// 16-bit floats are widened to float in stack tiles of this many values.
constexpr int64_t kWidenTile = 512;
// Segments shorter than this are folded by a plain loop rather than the lane loops.
constexpr int64_t kShortSegment = 32;

template <RedOp Op, typename T, typename C>
struct Erased {
  using R = Reducer<Op, C>;
  using Acc = typename R::Acc;
  static constexpr bool kWiden = !std::is_same<T, C>::value;

  static void init(void* acc, int64_t n) { std::fill_n(static_cast<Acc*>(acc), n, R::identity()); }
  static void fold(void* acc, const void* x, int64_t n) {
    Acc& a = *static_cast<Acc*>(acc);
    const T* xs = static_cast<const T*>(x);
    if constexpr (kWiden) {
      float tile[kWidenTile];
      for (int64_t i = 0; i < n; i += kWidenTile) {
        int64_t m = std::min(kWidenTile, n - i);
        widen_tile(xs + i, tile, m);
        R::fold(a, tile, m);
      }
    } else {
      R::fold(a, reinterpret_cast<const C*>(xs), n);
    }
  }
  static void fold_rows(void* acc, const void* x, int64_t n, int64_t rows, int64_t stride) {
    Acc* a = static_cast<Acc*>(acc);
    const T* xs = static_cast<const T*>(x);
    if constexpr (kWiden) {  // up to four rows at a time, widened into a stack tile
      constexpr int64_t w = kWidenTile / 4;
      float tile[kWidenTile];
      for (int64_t r = 0; r < rows; r += 4) {
        int64_t k = std::min<int64_t>(4, rows - r);
        for (int64_t i = 0; i < n; i += w) {
          int64_t m = std::min(w, n - i);
          for (int64_t q = 0; q < k; ++q) widen_tile(xs + (r + q) * stride + i, tile + q * w, m);
          R::fold_rows(a + i, tile, m, k, w);
        }
      }
    } else {
      R::fold_rows(a, reinterpret_cast<const C*>(xs), n, rows, stride);
    }
  }
  static void fold_segments(void* acc, const void* x, int64_t count, int64_t len, int64_t stride) {
    Acc* a = static_cast<Acc*>(acc);
    const T* xs = static_cast<const T*>(x);
    if (len >= kShortSegment) {
      for (int64_t i = 0; i < count; ++i) fold(a + i, xs + i * stride, len);
      return;
    }
    for (int64_t i = 0; i < count; ++i) {  // short segments: a plain loop beats the lanes' setup
      Acc v = a[i];
      const T* seg = xs + i * stride;
      for (int64_t k = 0; k < len; ++k) v = R::combine(v, Acc(C(seg[k])));
      a[i] = v;
    }
  }
  static void combine(void* acc, const void* other, int64_t n) {
    Acc* a = static_cast<Acc*>(acc);
    const Acc* b = static_cast<const Acc*>(other);
    for (int64_t j = 0; j < n; ++j) a[j] = R::combine(a[j], b[j]);
  }
  static void finish(void* out, const void* acc, int64_t n) {
    T* o = static_cast<T*>(out);
    const Acc* a = static_cast<const Acc*>(acc);
    for (int64_t j = 0; j < n; ++j) o[j] = T(R::finish(a[j]));
  }
  static ReduceLoops table() { return {sizeof(Acc), init, fold, fold_rows, fold_segments, combine, finish}; }
};

template <RedOp Op, typename T>
ReduceLoops make_loops() {
  if constexpr (std::is_same<T, bool>::value) {
    // max/min of 0/1 bytes are or/and; sum and prod are rejected by the shape rule.
    constexpr RedOp logical = Op == RedOp::Max ? RedOp::Or : Op == RedOp::Min ? RedOp::And : Op;
    if constexpr (logical == RedOp::And || logical == RedOp::Or || logical == RedOp::Xor)
      return Erased<logical, bool, bool>::table();
    else
      throw std::logic_error("bool sum/prod has no reduction loops");
  } else if constexpr (std::is_floating_point<typename ComputeOf<T>::type>::value &&
                       (Op == RedOp::And || Op == RedOp::Or || Op == RedOp::Xor)) {
    throw std::logic_error("floating-point bitwise reductions have no loops");
  } else {
    return Erased<Op, T, typename ComputeOf<T>::type>::table();
  }
}

template <RedOp Op>
const ReduceLoops& loops_for(DType dt) {
  static const ReduceLoops* tables = [] {
    static ReduceLoops t[kNumDTypes];
    for (int d = 0; d < kNumDTypes; ++d) {
      if (is_complex(DType(d))) {
        t[d] = complex_reduce_loops(Op, DType(d));
        continue;
      }
      try {
        t[d] = dispatch_dtype(DType(d), [](auto tag) { return make_loops<Op, decltype(tag)>(); });
      } catch (const std::logic_error&) {
        t[d] = ReduceLoops{};  // not an allowed (op, dtype) pair
      }
    }
    return t;
  }();
  const ReduceLoops& l = tables[int(dt)];
  if (!l.fold) throw std::logic_error(std::string("no reduction loops for dtype ") + dtype_name(dt));
  return l;
}

}  // namespace

const ReduceLoops& reduce_loops(RedOp op, DType dt) {
  switch (op) {
    case RedOp::Sum: return loops_for<RedOp::Sum>(dt);
    case RedOp::Prod: return loops_for<RedOp::Prod>(dt);
    case RedOp::Max: return loops_for<RedOp::Max>(dt);
    case RedOp::Min: return loops_for<RedOp::Min>(dt);
    case RedOp::And: return loops_for<RedOp::And>(dt);
    case RedOp::Or: return loops_for<RedOp::Or>(dt);
    case RedOp::Xor: return loops_for<RedOp::Xor>(dt);
  }
  throw std::logic_error("unknown reduction op");
}

}  // namespace xjax
