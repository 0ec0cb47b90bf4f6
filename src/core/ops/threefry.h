// The scalar definition of threefry2x32 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011): the Threefry-2x32 block cipher with 20 rounds, as JAX uses it. The
// reference interpreter and the CPU loops both call this function; written with plain 32-bit
// operations so that a loop over it vectorises.
#pragma once
#include <cstdint>

namespace xjax {

namespace threefry_detail {
inline uint32_t rotl(uint32_t v, unsigned r) { return (v << r) | (v >> (32u - r)); }

// One round of the mix: add, rotate, xor.
#define XJAX_THREEFRY_ROUND(r) \
  x0 += x1;                    \
  x1 = rotl(x1, r);            \
  x1 ^= x0;
}  // namespace threefry_detail

// Encrypts the counter (x0, x1) under the key (k0, k1); returns the two result words packed as
// (y0 << 32) | y1, so that an op with one result carries both.
inline uint64_t threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  using threefry_detail::rotl;
  const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;  // the key schedule's parity word
  x0 += k0;
  x1 += k1;
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  x0 += k1;
  x1 += k2 + 1u;
  XJAX_THREEFRY_ROUND(17) XJAX_THREEFRY_ROUND(29) XJAX_THREEFRY_ROUND(16) XJAX_THREEFRY_ROUND(24)
  x0 += k2;
  x1 += k0 + 2u;
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  x0 += k0;
  x1 += k1 + 3u;
  XJAX_THREEFRY_ROUND(17) XJAX_THREEFRY_ROUND(29) XJAX_THREEFRY_ROUND(16) XJAX_THREEFRY_ROUND(24)
  x0 += k1;
  x1 += k2 + 4u;
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  x0 += k2;
  x1 += k0 + 5u;
  return (uint64_t(x0) << 32) | x1;
}
#undef XJAX_THREEFRY_ROUND

}  // namespace xjax
