// The inner accumulation loops of the reductions, in a form a fused kernel can reuse: it folds
// tiles of values (in the compute type) into accumulators, combines partial accumulators from
// different tiles or threads, and finishes them into a result.
//
//   Reducer<Op, C>::Acc                      the accumulator type for tiles of C
//   Reducer<Op, C>::identity()               the value of an empty reduction
//   Reducer<Op, C>::fold(acc, x, n)          acc = op(acc, x[0], ..., x[n-1])
//   Reducer<Op, C>::fold_rows(acc, x, n, rows, stride)
//                                            acc[j] = op(acc[j], x[r*stride + j]) for r < rows, j < n:
//                                            rows folded into a vector (four at a time)
//   Reducer<Op, C>::combine(a, b)            op(a, b) for two partial accumulators
//   Reducer<Op, C>::finish(acc)              the result in the compute type C
//
// C is a compute type: bool, an integer type, float or double. Tiles of float16/bfloat16 are widened
// to float first (widen_tile). Choices: float sums add blocks in float lanes and the block totals in
// double (accurate for long sums); integer sums and products wrap (computed in unsigned); max/min
// propagate NaN; and/or/xor are bitwise on integers and work on the 0/1 bytes of bool (the kernels
// run bool max/min as or/and).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "core/ops/red_op.h"

namespace xjax {

namespace red {

// Independent partial results per tile: enough chains to fill the vector units, and a fixed
// order so that results do not depend on the instruction set.
constexpr int kLanes = 16;
// Float sums total this many elements in float lanes before adding the block to a double; max/min
// check blocks of this size for NaN.
constexpr int64_t kSumBlock = 2048;

// Integers wrap: add and multiply them as unsigned (no undefined overflow). bool stays bool.
template <typename C, bool = std::is_integral<C>::value && !std::is_same<C, bool>::value>
struct ArithOf { using type = C; };
template <typename C> struct ArithOf<C, true> { using type = std::make_unsigned_t<C>; };
template <typename C> using Arith = typename ArithOf<C>::type;

// Folds n values into kLanes partials with f, then the partials pairwise into one value.
template <typename L, typename C, typename F>
inline L fold_lanes(L init, const C* x, int64_t n, F f) {
  L p[kLanes];
  for (int j = 0; j < kLanes; ++j) p[j] = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) p[j] = f(p[j], L(x[i + j]));
  for (int j = 0; i < n; ++i, ++j) p[j] = f(p[j], L(x[i]));
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) p[j] = f(p[j], p[j + w]);
  return p[0];
}

// acc[j] = f(acc[j], merge of the rows' x[j]), for rows rows of n values `stride` apart. Four rows
// are merged per pass (in the lane type L) so the accumulators are read and written a quarter as
// often; the compiler vectorises the j loops.
template <typename Acc, typename L, typename C, typename Merge, typename Into>
inline void fold_rows_with(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride, Merge merge, Into into) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const C *a = x + r * stride, *b = a + stride, *c = b + stride, *d = c + stride;
    for (int64_t j = 0; j < n; ++j) acc[j] = into(acc[j], merge(merge(L(a[j]), L(b[j])), merge(L(c[j]), L(d[j]))));
  }
  for (; r < rows; ++r) {
    const C* a = x + r * stride;
    for (int64_t j = 0; j < n; ++j) acc[j] = into(acc[j], L(a[j]));
  }
}

// max/min that let a NaN through: once an accumulator is NaN no comparison replaces it. (Two
// selects: GCC vectorises this form, not one select on an or of comparisons.)
template <typename T> inline T max_nan(T a, T b) {
  T m = b > a ? b : a;
  return b != b ? b : m;
}
template <typename T> inline T min_nan(T a, T b) {
  T m = b < a ? b : a;
  return b != b ? b : m;
}

template <typename T> constexpr T lowest();
template <typename T> constexpr T highest();

// The max (Max) or min of n values, NaN if any is NaN. GCC does not vectorise selects over lane
// arrays, so this uses 16-byte vector types (a GCC/Clang extension), four of them for independent
// chains. A NaN-aware select costs more, so floats take a plain select plus a running sum that
// turns NaN when some value is NaN; only then (or when infinities of both signs meet) is the block
// redone exactly.
template <typename C> struct Vec16 { typedef C type __attribute__((vector_size(16))); };

template <bool Max, typename C> inline C extreme(const C* x, int64_t n) {
  using V = typename Vec16<C>::type;
  constexpr int64_t W = 16 / sizeof(C);
  constexpr bool kFloat = std::is_floating_point<C>::value;
  const C init = Max ? lowest<C>() : highest<C>();
  auto pick = [](auto a, auto b) { return Max ? (b > a ? b : a) : (b < a ? b : a); };
  if constexpr (!kFloat && sizeof(C) == 8) {
    return fold_lanes(init, x, n, pick);  // SSE2 has no 64-bit compare: scalar lanes are faster
  }
  V p[4], s[4];
  for (int k = 0; k < 4; ++k) p[k] = V{} + init, s[k] = V{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    for (int k = 0; k < 4; ++k) {
      V v;
      std::memcpy(&v, x + i + k * W, sizeof(V));
      p[k] = pick(p[k], v);
      if (kFloat) s[k] += v;
    }
  }
  C r = init, t = 0;
  for (int k = 0; k < 4; ++k)
    for (int64_t j = 0; j < W; ++j) r = pick(r, p[k][j]), t += kFloat ? s[k][j] : C(0);
  for (; i < n; ++i) r = pick(r, x[i]), t += kFloat ? x[i] : C(0);
  if (!kFloat || t == t) return r;
  return fold_lanes(init, x, n, Max ? max_nan<C> : min_nan<C>);
}

// Rows into a vector of max (Max) or min accumulators for floats: the same plain select plus
// NaN-probing sum as extreme(), vectorised over columns; when the probe turns NaN, the columns
// that hold a NaN are set to NaN afterwards (the plain select keeps a NaN accumulator as it is).
template <bool Max, typename C>
inline void extreme_rows(C* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
  using V = typename Vec16<C>::type;
  constexpr int64_t W = 16 / sizeof(C);
  auto pick = [](auto a, auto b) { return Max ? (b > a ? b : a) : (b < a ? b : a); };
  auto load = [](const C* p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
  };
  V probe = V{};
  C tail_probe = 0;
  for (int64_t r = 0; r < rows; r += 4) {
    const C* a = x + r * stride;
    int64_t k = std::min<int64_t>(4, rows - r);
    const C *b = k > 1 ? a + stride : a, *c = k > 2 ? a + 2 * stride : a, *d = k > 3 ? a + 3 * stride : a;
    int64_t j = 0;
    for (; j + W <= n; j += W) {
      V va = load(a + j), vb = load(b + j), vc = load(c + j), vd = load(d + j);
      V m = pick(pick(va, vb), pick(vc, vd));
      V old = load(acc + j);
      V out = pick(old, m);
      std::memcpy(acc + j, &out, sizeof(V));
      probe += (va + vb) + (vc + vd);
    }
    for (; j < n; ++j) {
      acc[j] = pick(acc[j], pick(pick(a[j], b[j]), pick(c[j], d[j])));
      tail_probe += (a[j] + b[j]) + (c[j] + d[j]);
    }
  }
  C t = tail_probe;
  for (int64_t j = 0; j < W; ++j) t += probe[j];
  if (t == t) return;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j)
      if (x[r * stride + j] != x[r * stride + j]) acc[j] = x[r * stride + j];
}

template <typename T> constexpr T lowest() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}
template <typename T> constexpr T highest() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::max();
}

}  // namespace red

template <RedOp Op, typename C> struct Reducer;

template <typename C> struct Reducer<RedOp::Sum, C> {
  using L = red::Arith<C>;
  using Acc = std::conditional_t<std::is_floating_point<C>::value, double, L>;
  static Acc identity() { return Acc(0); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static C finish(Acc a) { return C(a); }
  static void fold(Acc& acc, const C* x, int64_t n) {
    auto add = [](L a, L b) { return L(a + b); };
    if constexpr (!std::is_floating_point<C>::value) {
      acc = Acc(acc + red::fold_lanes(L(0), x, n, add));
    } else {
      for (int64_t i = 0; i < n; i += red::kSumBlock)
        acc += double(red::fold_lanes(L(0), x + i, std::min(red::kSumBlock, n - i), add));
    }
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
    red::fold_rows_with<Acc, L>(acc, x, n, rows, stride, [](L a, L b) { return L(a + b); },
                                [](Acc a, L b) { return Acc(a + Acc(b)); });
  }
};

template <typename C> struct Reducer<RedOp::Prod, C> {
  using Acc = red::Arith<C>;
  static Acc identity() { return Acc(1); }
  static Acc combine(Acc a, Acc b) { return Acc(a * b); }
  static C finish(Acc a) { return C(a); }
  static void fold(Acc& acc, const C* x, int64_t n) {
    acc = Acc(acc * red::fold_lanes(Acc(1), x, n, [](Acc a, Acc b) { return Acc(a * b); }));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
    auto mul = [](Acc a, Acc b) { return Acc(a * b); };
    red::fold_rows_with<Acc, Acc>(acc, x, n, rows, stride, mul, mul);
  }
};

template <typename C> struct Reducer<RedOp::Max, C> {
  using Acc = C;
  static Acc identity() { return red::lowest<C>(); }
  static Acc combine(Acc a, Acc b) { return red::max_nan(a, b); }
  static C finish(Acc a) { return a; }
  static void fold(Acc& acc, const C* x, int64_t n) {
    for (int64_t i = 0; i < n; i += red::kSumBlock)
      acc = red::max_nan(acc, red::extreme<true>(x + i, std::min(red::kSumBlock, n - i)));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
    if constexpr (std::is_floating_point<C>::value) {
      red::extreme_rows<true>(acc, x, n, rows, stride);
    } else {
      auto f = [](C a, C b) { return red::max_nan(a, b); };
      red::fold_rows_with<Acc, C>(acc, x, n, rows, stride, f, f);
    }
  }
};

template <typename C> struct Reducer<RedOp::Min, C> {
  using Acc = C;
  static Acc identity() { return red::highest<C>(); }
  static Acc combine(Acc a, Acc b) { return red::min_nan(a, b); }
  static C finish(Acc a) { return a; }
  static void fold(Acc& acc, const C* x, int64_t n) {
    for (int64_t i = 0; i < n; i += red::kSumBlock)
      acc = red::min_nan(acc, red::extreme<false>(x + i, std::min(red::kSumBlock, n - i)));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
    if constexpr (std::is_floating_point<C>::value) {
      red::extreme_rows<false>(acc, x, n, rows, stride);
    } else {
      auto f = [](C a, C b) { return red::min_nan(a, b); };
      red::fold_rows_with<Acc, C>(acc, x, n, rows, stride, f, f);
    }
  }
};

// Bitwise reductions: logical on bool (0/1 bytes), bitwise on integers.
template <RedOp Op, typename C> struct BitwiseReducer {
  using Acc = std::conditional_t<std::is_same<C, bool>::value, uint8_t, red::Arith<C>>;
  static Acc apply(Acc a, Acc b) {
    if (Op == RedOp::And) return Acc(a & b);
    if (Op == RedOp::Or) return Acc(a | b);
    return Acc(a ^ b);
  }
  static Acc identity() { return Op == RedOp::And ? Acc(std::is_same<C, bool>::value ? 1 : ~Acc(0)) : Acc(0); }
  static Acc combine(Acc a, Acc b) { return apply(a, b); }
  static C finish(Acc a) { return C(a); }
  static void fold(Acc& acc, const C* x, int64_t n) {
    acc = apply(acc, red::fold_lanes(identity(), reinterpret_cast<const Acc*>(x), n, apply));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n, int64_t rows, int64_t stride) {
    red::fold_rows_with<Acc, Acc>(acc, reinterpret_cast<const Acc*>(x), n, rows, stride, apply, apply);
  }
};
template <typename C> struct Reducer<RedOp::And, C> : BitwiseReducer<RedOp::And, C> {};
template <typename C> struct Reducer<RedOp::Or, C> : BitwiseReducer<RedOp::Or, C> {};
template <typename C> struct Reducer<RedOp::Xor, C> : BitwiseReducer<RedOp::Xor, C> {};

// Widens 16-bit floats to float without branches, so that the loop vectorises.
inline void widen_tile(const float16* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t h = x[i].bits;
    uint32_t em = (h & 0x7fffu) << 13;
    float f;
    std::memcpy(&f, &em, 4);
    f *= 0x1p112f;  // rebias the exponent; exact for normals and subnormals
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u = em >= (0x7c00u << 13) ? (em | 0x7f800000u) : u;  // inf and NaN keep their payload
    u |= (h & 0x8000u) << 16;
    std::memcpy(&y[i], &u, 4);
  }
}
inline void widen_tile(const bfloat16* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = uint32_t(x[i].bits) << 16;
    std::memcpy(&y[i], &u, 4);
  }
}

// The loops above behind plain function pointers, one set per (op, storage dtype): the
// reduction driver is written once against this table. Accumulators are opaque acc_size bytes.
struct ReduceLoops {
  size_t acc_size;
  void (*init)(void* acc, int64_t n);                          // acc[j] = identity
  void (*fold)(void* acc, const void* x, int64_t n);           // one accumulator, contiguous x
  void (*fold_rows)(void* acc, const void* x, int64_t n, int64_t rows, int64_t stride);  // rows into acc[n]
  // acc[i] = op(acc[i], x[i*stride], ..., x[i*stride + len-1]) for i < count
  void (*fold_segments)(void* acc, const void* x, int64_t count, int64_t len, int64_t stride);
  void (*combine)(void* acc, const void* other, int64_t n);    // acc[j] = op(acc[j], other[j])
  void (*finish)(void* out, const void* acc, int64_t n);       // out[j] = result, storage dtype
};
// The loops for op on dtype dt; the shape rule has already checked that the pair is allowed.
// Tiles are in the storage type (16-bit floats are widened inside). A fused kernel whose tiles are
// already in the compute type takes the table of that type (Float32 for float16/bfloat16 results)
// and converts the finished values when it stores them.
const ReduceLoops& reduce_loops(RedOp op, DType dt);
// The loops of complex64 / complex128 (reduction_complex.cpp): sum and prod; empty for the others.
ReduceLoops complex_reduce_loops(RedOp op, DType dt);

}  // namespace xjax
