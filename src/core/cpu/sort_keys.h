// Sort keys: every dtype maps to an unsigned integer of its width whose order is the sort order,
// and a stable LSD radix sort of (key, position) items.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"

namespace xjax {

template <typename T> struct KeyOf { using type = std::make_unsigned_t<T>; };
template <> struct KeyOf<bool> { using type = uint8_t; };
template <> struct KeyOf<float16> { using type = uint16_t; };
template <> struct KeyOf<bfloat16> { using type = uint16_t; };
template <> struct KeyOf<float> { using type = uint32_t; };
template <> struct KeyOf<double> { using type = uint64_t; };

// IEEE bits to an ordered key: NaNs (either sign) last; -0 before +0 unless equal_zeros.
template <typename U>
inline U float_bits_key(U bits, U inf_bits, bool equal_zeros) {
  const U sign = U(U(1) << (sizeof(U) * 8 - 1));
  const U mag = U(bits & U(~sign));
  if (mag > inf_bits) return U(~U(0));
  if (equal_zeros && mag == 0) bits = 0;
  return (bits & sign) ? U(~bits) : U(bits | sign);
}

// The ascending-order key of v. JAX's sort treats -0.0 and +0.0 as equal (equal_zeros);
// its top_k orders them.
template <typename T>
inline typename KeyOf<T>::type sort_key(T v, bool equal_zeros) {
  using K = typename KeyOf<T>::type;
  K bits;
  std::memcpy(&bits, &v, sizeof(K));
  if constexpr (std::is_same_v<T, bool>) {
    return K(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return K(bits ^ K(K(1) << (sizeof(K) * 8 - 1)));
  } else if constexpr (std::is_integral_v<T>) {
    return bits;
  } else if constexpr (std::is_same_v<T, float16>) {
    return float_bits_key<K>(bits, 0x7c00u, equal_zeros);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return float_bits_key<K>(bits, 0x7f80u, equal_zeros);
  } else if constexpr (std::is_same_v<T, float>) {
    return float_bits_key<K>(bits, 0x7f800000u, equal_zeros);
  } else {
    return float_bits_key<K>(bits, 0x7ff0000000000000ull, equal_zeros);
  }
}

template <typename K>
struct SortItem {
  K key;
  uint32_t pos;
};

// Sorts a[0, n) by key, stably; tmp has room for n items. Radix passes whose digit is the
// same for every item are skipped (e.g. the high bytes of small integers).
template <typename K>
void stable_sort_items(SortItem<K>* a, SortItem<K>* tmp, int64_t n) {
  if (n < 256) {
    std::stable_sort(a, a + n, [](const SortItem<K>& x, const SortItem<K>& y) { return x.key < y.key; });
    return;
  }
  constexpr int kPasses = int(sizeof(K));
  uint32_t hist[kPasses][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    const K k = a[i].key;
    for (int p = 0; p < kPasses; ++p) ++hist[p][(k >> (8 * p)) & 0xff];
  }
  SortItem<K>* src = a;
  SortItem<K>* dst = tmp;
  for (int p = 0; p < kPasses; ++p) {
    if (hist[p][(src[0].key >> (8 * p)) & 0xff] == uint32_t(n)) continue;
    uint32_t offset[256];
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      offset[d] = sum;
      sum += hist[p][d];
    }
    for (int64_t i = 0; i < n; ++i) dst[offset[(src[i].key >> (8 * p)) & 0xff]++] = src[i];
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(static_cast<void*>(a), src, size_t(n) * sizeof(SortItem<K>));
}

}  // namespace xjax
