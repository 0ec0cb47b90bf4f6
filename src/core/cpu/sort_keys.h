// Sort keys: every dtype maps to an unsigned integer of its width whose order is the sort order,
// and a stable LSD radix sort of (key, position) items.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"

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

// A complex key orders lexicographically (JAX's and XLA's comparator): it is two float keys, its
// real part and then its imaginary part (offsets in the re, im pair, most significant first), each
// in its float type's order above (NaN last, -0 == +0).
constexpr int kComplexKeyParts[2] = {0, 1};

// Runs f(begin, end) over [0, n): across threads when `parallel`, else inline without building
// a std::function (sorting many short rows goes through here for every row).
template <typename F>
void for_range(bool parallel, int64_t n, int64_t grain, F&& f) {
  if (parallel && n >= 2 * grain) parallel_for(n, grain, f);
  else f(int64_t(0), n);
}

template <typename K>
struct SortItem {
  K key;
  uint32_t pos;
};

// Sorts a[0, n) by key, stably; tmp has room for n items. LSD radix on bytes; a pass whose
// digit is the same for every item is skipped (e.g. the high bytes of small integers).
// With `parallel`, large inputs are split into stripes that are counted and scattered on
// several threads; ordering the destinations by (digit, stripe) keeps the sort stable.
template <typename K>
void stable_sort_items(SortItem<K>* a, SortItem<K>* tmp, int64_t n, bool parallel) {
  if (n <= 16) {  // insertion sort: stable, and no allocation for tiny rows
    for (int64_t i = 1; i < n; ++i) {
      const SortItem<K> v = a[i];
      int64_t j = i - 1;
      for (; j >= 0 && a[j].key > v.key; --j) a[j + 1] = a[j];
      a[j + 1] = v;
    }
    return;
  }
  if (n < 256) {
    std::stable_sort(a, a + n, [](const SortItem<K>& x, const SortItem<K>& y) { return x.key < y.key; });
    return;
  }
  constexpr int kPasses = int(sizeof(K));
  const int64_t stripes =
      parallel ? std::max<int64_t>(1, std::min<int64_t>(ThreadPool::current().size(), n >> 17)) : 1;
  auto stripe_begin = [&](int64_t t) { return n * t / stripes; };
  // count[p][t]: the digit histogram of pass p in stripe t. With one stripe, all passes are
  // counted in one read; with several, stripe contents change between passes.
  std::vector<std::array<uint32_t, 256>> count(size_t(kPasses * stripes));
  auto hist = [&](int p, int64_t t) -> std::array<uint32_t, 256>& { return count[size_t(p * stripes + t)]; };
  for (auto& c : count) c.fill(0);
  if (stripes == 1) {
    for (int64_t i = 0; i < n; ++i) {
      const K k = a[i].key;
      for (int p = 0; p < kPasses; ++p) ++hist(p, 0)[(k >> (8 * p)) & 0xff];
    }
  }
  SortItem<K>* src = a;
  SortItem<K>* dst = tmp;
  for (int p = 0; p < kPasses; ++p) {
    const int shift = 8 * p;
    if (stripes > 1) {
      for_range(true, stripes, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
          for (int64_t i = stripe_begin(t); i < stripe_begin(t + 1); ++i) ++hist(p, t)[(src[i].key >> shift) & 0xff];
      });
    }
    uint32_t first_digit = 0;
    for (int64_t t = 0; t < stripes; ++t) first_digit += hist(p, t)[(src[0].key >> shift) & 0xff];
    if (first_digit == uint32_t(n)) continue;  // one digit value only: nothing moves
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d)
      for (int64_t t = 0; t < stripes; ++t) {
        const uint32_t c = hist(p, t)[d];
        hist(p, t)[d] = sum;
        sum += c;
      }
    for_range(stripes > 1, stripes, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        std::array<uint32_t, 256>& offset = hist(p, t);
        for (int64_t i = stripe_begin(t); i < stripe_begin(t + 1); ++i) dst[offset[(src[i].key >> shift) & 0xff]++] = src[i];
      }
    });
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(static_cast<void*>(a), src, size_t(n) * sizeof(SortItem<K>));
}

}  // namespace xjax
