// Loops of threefry2x32 (its scalar definition: core/ops/scalar_ops.h), compiled per instruction set:
// the 20 rounds of 32-bit adds, shifts and xors vectorise across elements. With the key words
// given once (the fused engine's 0-d keys) they are read once instead of from filled tiles, and the
// counters are encrypted by blocks whose rounds interleave (threefry2x32_lanes), so that many
// vectors' chains of dependent rounds are in flight: 128 counters with AVX-512 (8 vectors of each
// word, 16 of its 32 registers), 64 elsewhere (with AVX2, 32 and 128 measured slower).
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

using scalar::u32;

// store(i, y0, y1) for each element's result words, under one key, kBlock counters at a time.
template <int kBlock, class Store>
[[gnu::always_inline]] inline void threefry_scalar_key(u32 k0, u32 k1, const u32* x0, const u32* x1, int64_t n,
                                                       Store store) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    u32 y0[kBlock], y1[kBlock];
    for (int j = 0; j < kBlock; ++j) y0[j] = x0[i + j], y1[j] = x1[i + j];
    scalar::threefry2x32_lanes(k0, k1, y0, y1);
    for (int j = 0; j < kBlock; ++j) store(i + j, y0[j], y1[j]);
  }
  for (; i < n; ++i) {
    u32 y0[1] = {x0[i]}, y1[1] = {x1[i]};
    scalar::threefry2x32_lanes(k0, k1, y0, y1);
    store(i, y0[0], y1[0]);
  }
}

// The op's value: both result words packed as (y0 << 32) | y1.
template <bool kScalarKey, int kBlock>
[[gnu::always_inline]] inline void threefry_body(const void* const* in, void* out, int64_t n) {
  const u32* k0 = arg<u32>(in, 0);
  const u32* k1 = arg<u32>(in, 1);
  const u32* x0 = arg<u32>(in, 2);
  const u32* x1 = arg<u32>(in, 3);
  uint64_t* o = static_cast<uint64_t*>(out);
  if constexpr (kScalarKey) {
    threefry_scalar_key<kBlock>(k0[0], k1[0], x0, x1, n,
                                [o](int64_t i, u32 y0, u32 y1) { o[i] = (uint64_t(y0) << 32) | y1; });
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = scalar::threefry2x32(k0[i], k1[i], x0[i], x1[i]);
  }
}

// The 32 random bits JAX draws per element: both result words xor-ed. The words stay 32-bit lanes
// (packing them into a uint64 first would cost a fifth of the loop in widening shuffles).
template <bool kScalarKey, int kBlock>
[[gnu::always_inline]] inline void threefry_xor_body(const void* const* in, void* out, int64_t n) {
  const u32* k0 = arg<u32>(in, 0);
  const u32* k1 = arg<u32>(in, 1);
  const u32* x0 = arg<u32>(in, 2);
  const u32* x1 = arg<u32>(in, 3);
  u32* o = static_cast<u32*>(out);
  if constexpr (kScalarKey) {
    threefry_scalar_key<kBlock>(k0[0], k1[0], x0, x1, n, [o](int64_t i, u32 y0, u32 y1) { o[i] = y0 ^ y1; });
  } else {
    for (int64_t i = 0; i < n; ++i) {
      u32 y0[1] = {x0[i]}, y1[1] = {x1[i]};
      scalar::threefry2x32_lanes(k0[i], k1[i], y0, y1);
      o[i] = y0[0] ^ y1[0];
    }
  }
}

template <bool kScalarKey>
XJAX_EW_CLONES void threefry(const void* const* in, void* out, int64_t n) {
  threefry_body<kScalarKey, 64>(in, out, n);
}
template <bool kScalarKey>
XJAX_EW_CLONES void threefry_xor(const void* const* in, void* out, int64_t n) {
  threefry_xor_body<kScalarKey, 64>(in, out, n);
}

// The loops under one key, with AVX-512 where the CPU has it.
#ifdef XJAX_HAS_TARGET_CLONES
__attribute__((target("avx512f"))) void threefry_wide(const void* const* in, void* out, int64_t n) {
  threefry_body<true, 128>(in, out, n);
}
__attribute__((target("avx512f"))) void threefry_xor_wide(const void* const* in, void* out, int64_t n) {
  threefry_xor_body<true, 128>(in, out, n);
}
ElementwiseLoop wide_if_avx512(ElementwiseLoop wide, ElementwiseLoop other) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? wide : other;
}
#else
constexpr ElementwiseLoop threefry_wide = threefry<true>, threefry_xor_wide = threefry_xor<true>;
ElementwiseLoop wide_if_avx512(ElementwiseLoop, ElementwiseLoop other) { return other; }
#endif

}  // namespace

ElementwiseLoop threefry_xor_loop(bool scalar_keys) {
  static const ElementwiseLoop one_key = wide_if_avx512(threefry_xor_wide, threefry_xor<true>);
  return scalar_keys ? one_key : threefry_xor<false>;
}

ElementwiseLoop threefry_loop(const std::vector<DType>& in, DType out, unsigned scalars) {
  if (in.size() != 4 || out != DType::UInt64) return nullptr;
  for (DType d : in)
    if (d != DType::UInt32) return nullptr;
  static const ElementwiseLoop one_key = wide_if_avx512(threefry_wide, threefry<true>);
  return (scalars & 3u) == 3u ? one_key : threefry<false>;
}

}  // namespace xjax::ew
