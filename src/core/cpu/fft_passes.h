// The passes of the Stockham FFT (cpu/fft_plan.cpp): one pass of radix p maps
//   x[q + s (j + r m)], r < p   ->   y[q + s (p j + k)] = w^(j k) sum_r x[...] exp(-+2 pi i r k / p)
// for j < m, q < s, where w = exp(-+2 pi i / (p m)) (the twiddles tw[j (p - 1) + k - 1], stored
// for the forward sign: an inverse pass multiplies by their conjugates). The complex arithmetic is
// written out (std::complex's operators recover infinities in library calls).
#pragma once
#include <cstdint>
#include <cstring>

#include "core/arch.h"
#include "core/cpu/fft_plan.h"

namespace xjax::fft {

template <typename T>
inline Cpx<T> add(Cpx<T> a, Cpx<T> b) { return {a.re + b.re, a.im + b.im}; }
template <typename T>
inline Cpx<T> sub(Cpx<T> a, Cpx<T> b) { return {a.re - b.re, a.im - b.im}; }
template <typename T>
inline Cpx<T> scale(Cpx<T> a, T s) { return {a.re * s, a.im * s}; }
// a w, or a conj(w) when Conj
template <bool Conj, typename T>
inline Cpx<T> mul(Cpx<T> a, Cpx<T> w) {
  if (Conj) return {a.re * w.re + a.im * w.im, a.im * w.re - a.re * w.im};
  return {a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re};
}
// a times -i (forward) or +i (inverse): the rotation of the transform's direction
template <bool Inv, typename T>
inline Cpx<T> rot(Cpx<T> a) {
  if (Inv) return {-a.im, a.re};
  return {a.im, -a.re};
}

// The butterflies on a[0..p): a[k] <- sum_r a[r] exp(-+2 pi i r k / p).
template <bool Inv, typename T>
inline void butterfly2(Cpx<T>* a) {
  const Cpx<T> t = a[0];
  a[0] = add(t, a[1]);
  a[1] = sub(t, a[1]);
}

template <bool Inv, typename T>
inline void butterfly4(Cpx<T>* a) {
  const Cpx<T> t0 = add(a[0], a[2]), t1 = sub(a[0], a[2]), t2 = add(a[1], a[3]), t3 = rot<Inv>(sub(a[1], a[3]));
  a[0] = add(t0, t2);
  a[2] = sub(t0, t2);
  a[1] = add(t1, t3);
  a[3] = sub(t1, t3);
}

// Odd radix p from the pairs r, p - r: with s_r = a_r + a_(p-r), d_r = a_r - a_(p-r),
//   a[k], a[p - k] = a_0 + sum_r s_r cos(2 pi r k / p)  -+  i sum_r d_r sin(2 pi r k / p)
// (cs: cos then sin of 2 pi t / p for t < p). P > 0 fixes p at compile time (3, 5).
template <bool Inv, int P, typename T>
inline void butterfly_odd(Cpx<T>* a, int p, const T* cs) {
  if (P > 0) p = P;
  const int h = p / 2;
  Cpx<T> s[32], d[32];
  Cpx<T> sum = a[0];
  for (int r = 1; r <= h; ++r) {
    s[r] = add(a[r], a[p - r]);
    d[r] = sub(a[r], a[p - r]);
    sum = add(sum, s[r]);
  }
  const Cpx<T> a0 = a[0];
  a[0] = sum;
  for (int k = 1; k <= h; ++k) {
    Cpx<T> c = a0, t = {T(0), T(0)};
    int idx = 0;
    for (int r = 1; r <= h; ++r) {
      idx += k;
      if (idx >= p) idx -= p;
      const T cr = cs[2 * idx], sr = cs[2 * idx + 1];
      c = {c.re + s[r].re * cr, c.im + s[r].im * cr};
      t = {t.re + d[r].re * sr, t.im + d[r].im * sr};
    }
    // -i t (forward) or +i t (inverse)
    const Cpx<T> it = rot<Inv>(t);
    a[k] = add(c, it);
    a[p - k] = sub(c, it);
  }
}

// Vectors of complex numbers (GCC vector extensions, 32 bytes: 4 complex64 or 2 complex128, pairs
// re, im as in memory) for the radix-2 and radix-4 passes, whose loop over q runs the same
// butterfly and twiddles over contiguous elements.
// (always inlined, so no vector crosses a call: GCC's note on the AVX calling convention is moot)
#pragma GCC diagnostic ignored "-Wpsabi"
template <typename T>
struct CVec;
template <>
struct CVec<float> {
  typedef float V __attribute__((vector_size(32)));
  typedef int32_t I __attribute__((vector_size(32)));
  static constexpr int kWidth = 4;
  [[gnu::always_inline]] static V swap(V v) { return __builtin_shuffle(v, I{1, 0, 3, 2, 5, 4, 7, 6}); }
  [[gnu::always_inline]] static V alt(float a, float b) { return V{a, b, a, b, a, b, a, b}; }
};
template <>
struct CVec<double> {
  typedef double V __attribute__((vector_size(32)));
  typedef int64_t I __attribute__((vector_size(32)));
  static constexpr int kWidth = 2;
  [[gnu::always_inline]] static V swap(V v) { return __builtin_shuffle(v, I{1, 0, 3, 2}); }
  [[gnu::always_inline]] static V alt(double a, double b) { return V{a, b, a, b}; }
};

template <typename T>
[[gnu::always_inline]] inline typename CVec<T>::V vload(const Cpx<T>* p) {
  typename CVec<T>::V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline void vstore(Cpx<T>* p, typename CVec<T>::V v) { std::memcpy(static_cast<void*>(p), &v, sizeof(v)); }

// Radix 2 or 4 over q in [0, s - s % width): the scalar butterflies' arithmetic, lane by lane
// (multiplying by +-1 is exact, so the bits are the scalar code's).
template <int Radix, bool Inv, typename T>
[[gnu::always_inline]] inline int64_t vector_butterflies(int64_t s, int64_t sm, const Cpx<T>* wk, bool twiddle, const Cpx<T>* xj, Cpx<T>* yj) {
  using C = CVec<T>;
  using V = typename C::V;
  const int64_t end = s - s % C::kWidth;
  // (re, im) w = re w.re - im w.im, re w.im + im w.re; conj(w) flips the signs of w.im
  const T sg = Inv ? T(1) : T(-1);
  V wr[Radix], wi[Radix];
  for (int k = 1; k < Radix; ++k) {
    wr[k] = C::alt(wk[k].re, wk[k].re);
    wi[k] = Inv ? C::alt(wk[k].im, -wk[k].im) : C::alt(-wk[k].im, wk[k].im);
  }
  const V rot = C::alt(-sg, sg);  // x -i (forward): (im, -re); x +i (inverse): (-im, re)
  for (int64_t q = 0; q < end; q += C::kWidth) {
    V b[Radix];
    if constexpr (Radix == 2) {
      const V a0 = vload(xj + q), a1 = vload(xj + q + sm);
      b[0] = a0 + a1;
      b[1] = a0 - a1;
    } else {
      const V a0 = vload(xj + q), a1 = vload(xj + q + sm), a2 = vload(xj + q + 2 * sm), a3 = vload(xj + q + 3 * sm);
      const V t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = C::swap(a1 - a3) * rot;
      b[0] = t0 + t2;
      b[2] = t0 - t2;
      b[1] = t1 + t3;
      b[3] = t1 - t3;
    }
    vstore(yj + q, b[0]);
    for (int k = 1; k < Radix; ++k)
      vstore(yj + q + s * k, twiddle ? b[k] * wr[k] + C::swap(b[k]) * wi[k] : b[k]);
  }
  return end;
}

// One pass; Radix 0 is the generic odd radix `p` (at most 63) with its cos/sin table `cs`.
template <int Radix, bool Inv, typename T>
XJAX_ISA_CLONES void stockham_pass(int p, int64_t s, int64_t m, const Cpx<T>* tw, const T* cs, const Cpx<T>* x, Cpx<T>* y) {
  if (Radix > 0) p = Radix;
  const int64_t sm = s * m;
  for (int64_t j = 0; j < m; ++j) {
    const Cpx<T>* xj = x + s * j;
    Cpx<T>* yj = y + s * p * j;
    const bool twiddle = j > 0;  // w^0 = 1: no multiplication (no rounding, and no 0 * inf)
    Cpx<T> wk[Radix > 0 ? Radix : 64];
    for (int k = 1; k < p; ++k) wk[k] = tw[j * (p - 1) + k - 1];
    int64_t q0 = 0;
    if constexpr (Radix == 2 || Radix == 4) q0 = vector_butterflies<Radix, Inv>(s, sm, wk, twiddle, xj, yj);
    for (int64_t q = q0; q < s; ++q) {
      Cpx<T> a[Radix > 0 ? Radix : 64];
      for (int r = 0; r < p; ++r) a[r] = xj[q + sm * r];
      if constexpr (Radix == 2) butterfly2<Inv>(a);
      else if constexpr (Radix == 4) butterfly4<Inv>(a);
      else butterfly_odd<Inv, Radix>(a, p, cs);
      yj[q] = a[0];
      for (int k = 1; k < p; ++k) yj[q + s * k] = twiddle ? mul<Inv>(a[k], wk[k]) : a[k];
    }
  }
}

}  // namespace xjax::fft
