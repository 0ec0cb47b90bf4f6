// The passes of the Stockham FFT (cpu/fft_plan.cpp): one pass of radix p maps
//   x[q + s (j + r m)], r < p   ->   y[q + s (p j + k)] = w^(j k) sum_r x[...] exp(-+2 pi i r k / p)
// for j < m, q < s, where w = exp(-+2 pi i / (p m)) (the twiddles tw[j (p - 1) + k - 1], stored
// for the forward sign: an inverse pass multiplies by their conjugates). The complex arithmetic is
// written out (std::complex's operators recover infinities in library calls).
#pragma once
#include <cstdint>

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

// One pass; Radix 0 is the generic odd radix `p` (at most 63) with its cos/sin table `cs`.
template <int Radix, bool Inv, typename T>
void stockham_pass(int p, int64_t s, int64_t m, const Cpx<T>* tw, const T* cs, const Cpx<T>* x, Cpx<T>* y) {
  if (Radix > 0) p = Radix;
  Cpx<T> a[64];
  auto butterfly = [&]() {
    if (Radix == 2) butterfly2<Inv>(a);
    else if (Radix == 4) butterfly4<Inv>(a);
    else butterfly_odd<Inv, Radix>(a, p, cs);
  };
  for (int64_t j = 0; j < m; ++j) {
    const Cpx<T>* w = tw + j * (p - 1);
    const Cpx<T>* xj = x + s * j;
    Cpx<T>* yj = y + s * p * j;
    for (int64_t q = 0; q < s; ++q) {
      for (int r = 0; r < p; ++r) a[r] = xj[q + s * m * r];
      butterfly();
      yj[q] = a[0];
      if (j == 0) {  // w^0 = 1: no rounding (and no 0 * inf)
        for (int k = 1; k < p; ++k) yj[q + s * k] = a[k];
      } else {
        for (int k = 1; k < p; ++k) yj[q + s * k] = mul<Inv>(a[k], w[k - 1]);
      }
    }
  }
}

}  // namespace xjax::fft
