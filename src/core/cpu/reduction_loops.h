// The inner accumulation loops of the reductions, in a form a fused kernel can reuse: it folds
// tiles of values (in the compute type) into accumulators, combines partial accumulators from
// different tiles or threads, and finishes them into a result.
//
//   Reducer<Op, C>::Acc                      the accumulator type for tiles of C
//   Reducer<Op, C>::identity()               the value of an empty reduction
//   Reducer<Op, C>::fold(acc, x, n)          acc = op(acc, x[0], ..., x[n-1])
//   Reducer<Op, C>::fold_rows(acc, x, n)     acc[j] = op(acc[j], x[j]) for j < n (a row into a vector)
//   Reducer<Op, C>::combine(a, b)            op(a, b) for two partial accumulators
//   Reducer<Op, C>::finish(acc)              the result in the compute type C
//
// C is a compute type: bool, an integer type, float or double. Tiles of float16/bfloat16 are widened
// to float first (widen_tile). Choices: float sums add blocks in float lanes and the block totals in
// double (accurate for long sums); integer sums and products wrap (computed in unsigned); max/min
// propagate NaN; bool max/min/sum-like logical ops work on the 0/1 bytes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype.h"

namespace xjax {

enum class RedOp : uint8_t { Sum, Prod, Max, Min, And, Or, Xor };

namespace red {

// Independent partial results per tile: enough chains to fill the vector units, and a fixed
// order so that results do not depend on the instruction set.
constexpr int kLanes = 16;
// Float sums total this many elements in float lanes before adding the block to a double.
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

// max/min that let a NaN through: once an accumulator is NaN no comparison replaces it.
template <typename T> inline T max_nan(T a, T b) { return (b > a || b != b) ? b : a; }
template <typename T> inline T min_nan(T a, T b) { return (b < a || b != b) ? b : a; }

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
    if (!std::is_floating_point<C>::value) {
      acc = Acc(acc + red::fold_lanes(L(0), x, n, add));
      return;
    }
    for (int64_t i = 0; i < n; i += red::kSumBlock)
      acc += double(red::fold_lanes(L(0), x + i, std::min(red::kSumBlock, n - i), add));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = Acc(acc[j] + Acc(L(x[j])));
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
  static void fold_rows(Acc* acc, const C* x, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = Acc(acc[j] * Acc(x[j]));
  }
};

template <typename C> struct Reducer<RedOp::Max, C> {
  using Acc = C;
  static Acc identity() { return red::lowest<C>(); }
  static Acc combine(Acc a, Acc b) { return red::max_nan(a, b); }
  static C finish(Acc a) { return a; }
  static void fold(Acc& acc, const C* x, int64_t n) {
    acc = red::max_nan(acc, red::fold_lanes(identity(), x, n, red::max_nan<C>));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = red::max_nan(acc[j], x[j]);
  }
};

template <typename C> struct Reducer<RedOp::Min, C> {
  using Acc = C;
  static Acc identity() { return red::highest<C>(); }
  static Acc combine(Acc a, Acc b) { return red::min_nan(a, b); }
  static C finish(Acc a) { return a; }
  static void fold(Acc& acc, const C* x, int64_t n) {
    acc = red::min_nan(acc, red::fold_lanes(identity(), x, n, red::min_nan<C>));
  }
  static void fold_rows(Acc* acc, const C* x, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = red::min_nan(acc[j], x[j]);
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
  static void fold_rows(Acc* acc, const C* x, int64_t n) {
    const Acc* y = reinterpret_cast<const Acc*>(x);
    for (int64_t j = 0; j < n; ++j) acc[j] = apply(acc[j], y[j]);
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
  void (*fold_rows)(void* acc, const void* x, int64_t n);      // acc[j] = op(acc[j], x[j])
  void (*combine)(void* acc, const void* other, int64_t n);    // acc[j] = op(acc[j], other[j])
  void (*finish)(void* out, const void* acc, int64_t n);       // out[j] = result, storage dtype
};
// The loops for op on dtype dt; the shape rule has already checked that the pair is allowed.
const ReduceLoops& reduce_loops(RedOp op, DType dt);

}  // namespace xjax
