// float32 erf_inv's loop (random.normal draws through it). XLA's erf_inv starts from
// log1p(-y^2), and log1p is one of two formulas per element (a rational with a division near 0,
// log(1 + x) elsewhere): a vectorised loop computes both for every lane and keeps one. With
// AVX-512, each block of elements computes the rational (about 2 in 3 of a normal draw's elements
// need it) for every lane, and splits off two lists (compressed): the main range's elements away
// from 0, which need log(1 + x), and the rest (the tail, NaN: the whole function). Each list runs
// its own formula over full vectors, and the values go back to their places (expanded) over the
// rational's. Every element computes exactly the scalar definition's operations
// (scalar_xla_math.h), so its bits do not depend on where it sits. Elsewhere: blocks of 64 in the
// main range (unary_ranged).
#include "core/cpu/elementwise_impl.h"

#if defined(XJAX_ARCH_X86_64) && defined(__GNUC__)
#define XJAX_ERF_INV_AVX512 1
#include <immintrin.h>
#endif

namespace xjax::ew {
namespace {

using ErfInvLoop = void (*)(const void* const*, void*, int64_t);

#ifdef XJAX_ERF_INV_AVX512
#define XJAX_AVX512 __attribute__((target("avx512f")))

constexpr int kBlock = 256;  // measured: 64 and 1024 are slower
constexpr int kVectors = kBlock / 16;
enum Kind : int32_t { kNear0, kFar, kRest };

// Elements of one kind, compressed, and which lanes of each vector they came from. One vector of
// slack: the formulas run over whole vectors.
struct List {
  alignas(64) float v[kBlock + 16];
  __mmask16 lanes[kVectors];
  int size = 0;

  // The number of values to compute: whole vectors, the slack zeros.
  XJAX_AVX512 int padded() {
    _mm512_storeu_ps(v + size, _mm512_setzero_ps());
    return (size + 15) & ~15;
  }
};

// Appends x's lanes m to l (count: l's size, kept in a register: the store may alias it).
XJAX_AVX512 inline void push(List& l, int& count, int vec, __mmask16 m, __m512 x) {
  l.lanes[vec] = m;
  _mm512_storeu_ps(l.v + count, _mm512_maskz_compress_ps(m, x));
  count += __builtin_popcount(m);
}

// Puts the list's values back into the lanes they came from (over `into`'s other lanes).
XJAX_AVX512 __m512 unpack(const List& l, int vec, int& taken, __m512 into) {
  __m512 r = _mm512_mask_expand_ps(into, l.lanes[vec], _mm512_loadu_ps(l.v + taken));
  taken += __builtin_popcount(l.lanes[vec]);
  return r;
}

// o[0:m] = erf_inv(y[0:m]), m <= kBlock (o may be y).
XJAX_AVX512 void erf_inv_block(const float* y, float* o, int m) {
  alignas(64) float x[kBlock];  // log1p's operand
  alignas(64) int32_t kind[kBlock];
  for (int i = 0; i < m; ++i) {
    x[i] = scalar::erf_inv_log1p_arg(scalar::flush_subnormal(y[i]));
    kind[i] = !scalar::erf_inv_main_range(y[i]) ? kRest : scalar::log1p_xla_is_near0(x[i]) ? kNear0 : kFar;
  }
  const int vectors = (m + 15) / 16;
  for (int i = m; i < vectors * 16; ++i) x[i] = 0.0f, kind[i] = kNear0;
  List far, rest;
  int nf = 0, nr = 0;
  for (int v = 0; v < vectors; ++v) {
    const __m512i k = _mm512_load_si512(kind + 16 * v);
    const __m512 xv = _mm512_load_ps(x + 16 * v);
    push(far, nf, v, _mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(kFar)), xv);
    const __mmask16 r = _mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(kRest));
    rest.lanes[v] = r;
    if (r) push(rest, nr, v, r, _mm512_maskz_loadu_ps(r, y + 16 * v));  // (rare: 1 in 250 in a normal draw)
  }
  far.size = nf, rest.size = nr;
  // log1p(x) of the main range's elements: the rational for every lane (cheaper than moving the
  // lanes that need it: the compresses and expands cost more than the formula), then log(1 + x)
  // over it where that is the formula.
  alignas(64) float l[kBlock];
  for (int i = 0; i < vectors * 16; ++i) l[i] = scalar::log1p_xla_near0(x[i]);
  for (int i = 0, e = far.padded(); i < e; ++i) far.v[i] = scalar::log1p_xla_far(far.v[i]);
  for (int i = 0, e = rest.padded(); i < e; ++i) rest.v[i] = scalar::erf_inv(rest.v[i]);
  for (int v = 0, b = 0; v < vectors; ++v)
    _mm512_store_ps(l + 16 * v, unpack(far, v, b, _mm512_load_ps(l + 16 * v)));
  for (int i = 0; i < m; ++i) o[i] = scalar::erf_inv_main_of(scalar::flush_subnormal(y[i]), l[i]);
  if (rest.size == 0) return;
  for (int v = 0, c = 0; v < vectors; ++v) {
    if (!rest.lanes[v]) continue;
    _mm512_mask_storeu_ps(o + 16 * v, rest.lanes[v], unpack(rest, v, c, _mm512_setzero_ps()));
  }
}

XJAX_AVX512 void erf_inv_split(const void* const* in, void* out, int64_t n) {
  const float* y = arg<float>(in, 0);
  float* o = static_cast<float*>(out);
  for (int64_t s = 0; s < n; s += kBlock) erf_inv_block(y + s, o + s, int(std::min<int64_t>(kBlock, n - s)));
}

ErfInvLoop pick() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return erf_inv_split;
  return unary_ranged<float, op::ErfInvRanged, 64>;
}
#else
ErfInvLoop pick() { return unary_ranged<float, op::ErfInvRanged, 64>; }
#endif

}  // namespace

void erf_inv_f32(const void* const* in, void* out, int64_t n) {
  static const ErfInvLoop loop = pick();
  loop(in, out, n);
}

}  // namespace xjax::ew
