// Loops of threefry2x32 (its scalar definition: core/ops/scalar_ops.h), compiled per instruction set:
// the 20 rounds of 32-bit adds, shifts and xors vectorise across elements. With the key words
// given once (the fused engine's 0-d keys) they are read once instead of from filled tiles.
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

template <bool kScalarKey>
XJAX_EW_CLONES void threefry(const void* const* in, void* out, int64_t n) {
  const uint32_t* k0 = arg<uint32_t>(in, 0);
  const uint32_t* k1 = arg<uint32_t>(in, 1);
  const uint32_t* x0 = arg<uint32_t>(in, 2);
  const uint32_t* x1 = arg<uint32_t>(in, 3);
  uint64_t* o = static_cast<uint64_t*>(out);
  if constexpr (kScalarKey) {
    const uint32_t a = k0[0], b = k1[0];
    for (int64_t i = 0; i < n; ++i) o[i] = scalar::threefry2x32(a, b, x0[i], x1[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = scalar::threefry2x32(k0[i], k1[i], x0[i], x1[i]);
  }
}

// The 32 random bits JAX draws per element: both result words xor-ed (the packed word is never stored).
template <bool kScalarKey>
XJAX_EW_CLONES void threefry_xor(const void* const* in, void* out, int64_t n) {
  const uint32_t* k0 = arg<uint32_t>(in, 0);
  const uint32_t* k1 = arg<uint32_t>(in, 1);
  const uint32_t* x0 = arg<uint32_t>(in, 2);
  const uint32_t* x1 = arg<uint32_t>(in, 3);
  uint32_t* o = static_cast<uint32_t*>(out);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = scalar::threefry2x32(kScalarKey ? k0[0] : k0[i], kScalarKey ? k1[0] : k1[i], x0[i], x1[i]);
    o[i] = uint32_t(r >> 32) ^ uint32_t(r);
  }
}

}  // namespace

ElementwiseLoop threefry_xor_loop(bool scalar_keys) { return scalar_keys ? threefry_xor<true> : threefry_xor<false>; }

ElementwiseLoop threefry_loop(const std::vector<DType>& in, DType out, unsigned scalars) {
  if (in.size() != 4 || out != DType::UInt64) return nullptr;
  for (DType d : in)
    if (d != DType::UInt32) return nullptr;
  return (scalars & 3u) == 3u ? threefry<true> : threefry<false>;
}

}  // namespace xjax::ew
