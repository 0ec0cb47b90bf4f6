// Plans of one-dimensional FFTs (cpu/fft_plan.h): factorisation, twiddles, Bluestein's chirp, the
// real transforms through half-length complex ones, and the bounded plan cache.
#include "core/cpu/fft_plan.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <list>
#include <mutex>
#include <utility>

#include "core/cpu/fft_passes.h"

namespace xjax::fft {

namespace {

constexpr int kMaxRadix = 61;  // larger prime factors go to Bluestein (a pass costs p per element)
constexpr double kTwoPi = 6.283185307179586476925286766559;

// exp(-2 pi i num / den) in double for 0 <= num < den, reduced to the first octant so that the
// argument of sin and cos is small and the result accurate to an ulp or so.
Cpx<double> unit_root(int64_t num, int64_t den) {
  // 8 num / den picks the octant; the remainder is the angle within it.
  const __int128 eight = __int128(num) * 8;
  const int64_t oct = int64_t(eight / den);
  const int64_t rem = int64_t(eight - __int128(oct) * den);  // angle - oct pi/4 = rem pi / (4 den)
  double c, s;
  if (oct % 2 == 0) {
    const double a = kTwoPi / 8 * (double(rem) / double(den));
    c = std::cos(a), s = std::sin(a);
  } else {  // measure from the next multiple of pi/4
    const double a = kTwoPi / 8 * (double(den - rem) / double(den));
    c = std::cos(a), s = std::sin(a);
  }
  // (cos, sin) of oct pi/4 + a (even oct) or (oct + 1) pi/4 - a (odd oct)
  double re, im;
  switch (oct) {
    case 0: re = c, im = s; break;
    case 1: re = s, im = c; break;
    case 2: re = -s, im = c; break;
    case 3: re = -c, im = s; break;
    case 4: re = -c, im = -s; break;
    case 5: re = -s, im = -c; break;
    case 6: re = s, im = -c; break;
    default: re = c, im = -s; break;
  }
  return {re, -im};
}

template <typename T>
Cpx<T> narrow(Cpx<double> z) { return {T(z.re), T(z.im)}; }

// The radices of n, or {} when a prime factor exceeds kMaxRadix: 4s first, then 2, 3, 5, the rest.
std::vector<int> factor(int64_t n) {
  std::vector<int> out;
  while (n % 4 == 0) out.push_back(4), n /= 4;
  if (n % 2 == 0) out.push_back(2), n /= 2;
  for (int p = 3; p <= kMaxRadix && n > 1; p += 2)
    while (n % p == 0) out.push_back(p), n /= p;
  if (n > 1) return {};
  return out;
}

int64_t next_pow2(int64_t n) {
  int64_t m = 1;
  while (m < n) m *= 2;
  return m;
}

}  // namespace

template <typename T>
Plan<T>::Plan(int64_t n) : n_(n) {
  if (n <= 1) return;
  const std::vector<int> radices = factor(n);
  if (radices.empty()) {  // Bluestein: a convolution with the chirp through a power-of-two FFT
    const int64_t m = next_pow2(2 * n - 1);
    sub_ = complex_plan<T>(m);
    chirp_.resize(size_t(n));
    std::vector<Cpx<double>> b(size_t(m), Cpx<double>{0, 0});
    for (int64_t k = 0; k < n; ++k) {
      // exp(-pi i k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n), exactly reduced in integers
      const int64_t k2 = int64_t((unsigned __int128)(k) * uint64_t(k) % uint64_t(2 * n));
      const Cpx<double> c = unit_root(k2, 2 * n);
      chirp_[size_t(k)] = narrow<T>(c);
      b[size_t(k)] = {c.re, -c.im};
      if (k > 0) b[size_t(m - k)] = {c.re, -c.im};
    }
    std::vector<Cpx<double>> scratch(size_t(complex_plan<double>(m)->scratch_size()));
    complex_plan<double>(m)->run(b.data(), false, scratch.data());
    filter_.resize(size_t(m));
    for (int64_t k = 0; k < m; ++k)
      filter_[size_t(k)] = narrow<T>({b[size_t(k)].re / double(m), b[size_t(k)].im / double(m)});
    return;
  }
  int64_t s = 1;
  for (int p : radices) {
    const int64_t m = n / (s * p);
    Stage st{p, s, m, twiddles_.size(), roots_.size()};
    for (int64_t j = 0; j < m; ++j)
      for (int k = 1; k < p; ++k)  // w^(j k) with w = exp(-2 pi i / (p m)) = exp(-2 pi i s / n)
        twiddles_.push_back(narrow<T>(unit_root(j * k * s % n, n)));
    if (p % 2 == 1)
      for (int t = 0; t < p; ++t) {
        const Cpx<double> z = unit_root(t, p);  // cos - i sin
        roots_.push_back(T(z.re));
        roots_.push_back(T(-z.im));
      }
    stages_.push_back(st);
    s *= p;
  }
}

template <typename T>
int64_t Plan<T>::scratch_size() const {
  if (sub_) return sub_->size() + sub_->scratch_size();
  return stages_.empty() ? 0 : n_;
}

template <typename T>
void Plan<T>::run(Cpx<T>* x, bool inverse, Cpx<T>* scratch) const {
  if (sub_) return run_bluestein(x, inverse, scratch);
  if (!stages_.empty()) run_stockham(x, 1, inverse, scratch);
}

template <typename T>
void Plan<T>::run_lanes(Cpx<T>* x, int64_t lanes, bool inverse, Cpx<T>* scratch) const {
  if (!stages_.empty()) run_stockham(x, lanes, inverse, scratch);
}

template <typename T>
void Plan<T>::run_stockham(Cpx<T>* x, int64_t lanes, bool inverse, Cpx<T>* scratch) const {
  // With interleaved lanes, (q, lane) ranges over q lanes + lane < s lanes: a pass of stride s lanes.
  Cpx<T>* src = x;
  Cpx<T>* dst = scratch;
  for (const Stage& st : stages_) {
    const Cpx<T>* tw = twiddles_.data() + st.twiddles;
    const T* cs = roots_.data() + st.roots;
    const int p = st.radix;
    if (inverse) {
      switch (p) {
        case 2: stockham_pass<2, true>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 3: stockham_pass<3, true>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 4: stockham_pass<4, true>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 5: stockham_pass<5, true>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        default: stockham_pass<0, true>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
      }
    } else {
      switch (p) {
        case 2: stockham_pass<2, false>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 3: stockham_pass<3, false>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 4: stockham_pass<4, false>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        case 5: stockham_pass<5, false>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
        default: stockham_pass<0, false>(p, st.stride * lanes, st.m, tw, cs, src, dst); break;
      }
    }
    std::swap(src, dst);
  }
  if (src != x) std::memcpy(static_cast<void*>(x), src, size_t(n_ * lanes) * sizeof(Cpx<T>));
}

template <typename T>
XJAX_ISA_CLONES void Plan<T>::run_bluestein(Cpx<T>* x, bool inverse, Cpx<T>* scratch) const {
  // X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), c_k = exp(-pi i k^2 / n); the inverse conjugates
  // its input and output around the forward transform.
  const int64_t m = sub_->size();
  Cpx<T>* a = scratch;
  for (int64_t k = 0; k < n_; ++k) {
    const Cpx<T> v = inverse ? Cpx<T>{x[k].re, -x[k].im} : x[k];
    a[k] = mul<false>(v, chirp_[size_t(k)]);
  }
  for (int64_t k = n_; k < m; ++k) a[k] = {T(0), T(0)};
  sub_->run(a, false, scratch + m);
  for (int64_t k = 0; k < m; ++k) a[k] = mul<false>(a[k], filter_[size_t(k)]);
  sub_->run(a, true, scratch + m);
  for (int64_t k = 0; k < n_; ++k) {
    const Cpx<T> v = mul<false>(a[k], chirp_[size_t(k)]);
    x[k] = inverse ? Cpx<T>{v.re, -v.im} : v;
  }
}

template <typename T>
RealPlan<T>::RealPlan(int64_t n) : n_(n) {
  if (n % 2 == 1 || n == 0) {
    complex_ = complex_plan<T>(n);
    return;
  }
  complex_ = complex_plan<T>(n / 2);
  for (int64_t k = 0; k <= n / 2; ++k) twiddles_.push_back(narrow<T>(unit_root(k, n)));
}

template <typename T>
int64_t RealPlan<T>::scratch_size() const {
  // with lanes, the complex plan's scratch is size() per lane
  return complex_->size() + std::max(complex_->scratch_size(), complex_->size());
}

template <typename T>
void RealPlan<T>::forward(const T* x, Cpx<T>* out, Cpx<T>* scratch) const {
  const int64_t n = n_;
  Cpx<T>* z = scratch;
  Cpx<T>* more = scratch + complex_->size();
  if (n % 2 == 1) {
    for (int64_t j = 0; j < n; ++j) z[j] = {x[j], T(0)};
    complex_->run(z, false, more);
    for (int64_t k = 0; k <= n / 2; ++k) out[k] = z[k];
    return;
  }
  // z_j = x_2j + i x_2j+1; with Z its transform (length h), E_k = (Z_k + conj Z_(h-k)) / 2 and
  // O_k = (Z_k - conj Z_(h-k)) / 2i are the transforms of the even and odd samples, and
  // X_k = E_k + exp(-2 pi i k / n) O_k.
  std::memcpy(static_cast<void*>(z), x, size_t(n) * sizeof(T));
  complex_->run(z, false, more);
  post_forward(z, 1, out);
}

template <typename T>
XJAX_ISA_CLONES void RealPlan<T>::post_forward(const Cpx<T>* z, int64_t lanes, Cpx<T>* out) const {
  const int64_t h = n_ / 2;
  const T half = T(0.5);
  // In tiles of kTile frequencies: the tile's values of every lane are gathered first (Z_k and
  // Z_(h-k)), then each lane's arithmetic runs over contiguous values into its contiguous row (it
  // vectorises; writing each value to its row from the lanes' loop measured 11% of an rfft2/irfft2
  // of 512 x 512). Each value's operations, so its bits, are those of one row alone.
  constexpr int64_t kTile = 16;
  Cpx<T> zk[kRealLanes][kTile], zr[kRealLanes][kTile];
  for (int64_t k0 = 0; k0 <= h; k0 += kTile) {
    const int64_t m = std::min(kTile, h + 1 - k0);
    for (int64_t j = 0; j < m; ++j) {
      const int64_t k = k0 + j;
      const Cpx<T>* zks = z + (k == h ? 0 : k) * lanes;
      const Cpx<T>* zrs = z + (k == 0 ? 0 : h - k) * lanes;
      for (int64_t c = 0; c < lanes; ++c) zk[c][j] = zks[c], zr[c][j] = zrs[c];
    }
    for (int64_t c = 0; c < lanes; ++c) {
      Cpx<T>* to = out + c * (h + 1) + k0;
      for (int64_t j = 0; j < m; ++j) {
        const Cpx<T> zc = {zr[c][j].re, -zr[c][j].im};
        const Cpx<T> e = scale(add(zk[c][j], zc), half);
        const Cpx<T> d = sub(zk[c][j], zc);
        const Cpx<T> o = {d.im * half, -d.re * half};
        to[j] = add(e, mul<false>(o, twiddles_[size_t(k0 + j)]));
      }
    }
  }
}

template <typename T>
XJAX_ISA_CLONES void RealPlan<T>::forward_rows(const T* x, Cpx<T>* out, int64_t rows, Cpx<T>* scratch) const {
  if (n_ % 2 == 1 || !complex_->has_lanes()) {
    for (int64_t r = 0; r < rows; ++r) forward(x + r * n_, out + r * (n_ / 2 + 1), scratch);
    return;
  }
  const int64_t h = n_ / 2;
  Cpx<T>* z = scratch;  // z[j lanes + c] = x_c[2j] + i x_c[2j+1]
  for (int64_t c = 0; c < rows; ++c)
    for (int64_t j = 0; j < h; ++j) z[j * rows + c] = {x[c * n_ + 2 * j], x[c * n_ + 2 * j + 1]};
  complex_->run_lanes(z, rows, false, scratch + h * rows);
  post_forward(z, rows, out);
}

template <typename T>
XJAX_ISA_CLONES void RealPlan<T>::inverse_rows(const Cpx<T>* in, T* x, int64_t rows, Cpx<T>* scratch) const {
  if (n_ % 2 == 1 || !complex_->has_lanes()) {
    for (int64_t r = 0; r < rows; ++r) inverse(in + r * (n_ / 2 + 1), x + r * n_, scratch);
    return;
  }
  const int64_t h = n_ / 2;
  Cpx<T>* z = scratch;
  pre_inverse(in, rows, z);
  complex_->run_lanes(z, rows, true, scratch + h * rows);
  for (int64_t c = 0; c < rows; ++c)
    for (int64_t j = 0; j < h; ++j) {
      x[c * n_ + 2 * j] = z[j * rows + c].re;
      x[c * n_ + 2 * j + 1] = z[j * rows + c].im;
    }
}

template <typename T>
void RealPlan<T>::inverse(const Cpx<T>* in, T* x, Cpx<T>* scratch) const {
  const int64_t n = n_;
  Cpx<T>* z = scratch;
  Cpx<T>* more = scratch + complex_->size();
  if (n % 2 == 1) {  // the Hermitian spectrum in full
    if (n == 0) return;
    z[0] = {in[0].re, T(0)};
    for (int64_t k = 1; k <= n / 2; ++k) {
      z[k] = in[k];
      z[n - k] = {in[k].re, -in[k].im};
    }
    complex_->run(z, true, more);
    for (int64_t j = 0; j < n; ++j) x[j] = z[j].re;
    return;
  }
  // The forward's steps undone: Z_k = (X_k + conj X_(h-k)) + i (X_k - conj X_(h-k)) exp(2 pi i k / n)
  // has the unnormalised inverse (length h) n (x_2j + i x_2j+1); k = 0 reads the real parts only.
  pre_inverse(in, 1, z);
  complex_->run(z, true, more);
  std::memcpy(static_cast<void*>(x), z, size_t(n) * sizeof(T));
}

template <typename T>
XJAX_ISA_CLONES void RealPlan<T>::pre_inverse(const Cpx<T>* in, int64_t lanes, Cpx<T>* z) const {
  const int64_t h = n_ / 2;
  // Each lane's row in tiles of kTile frequencies: the arithmetic runs over contiguous reads into
  // a tile (it vectorises), the tile then goes to its strided places among the lanes. (One loop
  // writing each value to its place did not vectorise: 17% of an rfft2/irfft2 of 512 x 512.)
  constexpr int64_t kTile = 16;
  Cpx<T> tile[kTile];
  for (int64_t c = 0; c < lanes; ++c) {
    const Cpx<T>* row = in + c * (h + 1);
    for (int64_t k0 = 0; k0 < h; k0 += kTile) {
      const int64_t m = std::min(kTile, h - k0);
      for (int64_t j = 0; j < m; ++j) {
        const int64_t k = k0 + j;
        const Cpx<T> xk = row[k], xr = {row[h - k].re, -row[h - k].im};
        const Cpx<T> e = add(xk, xr);
        const Cpx<T> o = mul<true>(sub(xk, xr), twiddles_[size_t(k)]);
        tile[j] = {e.re - o.im, e.im + o.re};  // e + i o
      }
      if (k0 == 0) {  // k = 0 reads the real parts only
        const Cpx<T> xk = {row[0].re, T(0)}, xr = {row[h].re, T(0)};
        const Cpx<T> e = add(xk, xr);
        const Cpx<T> o = mul<true>(sub(xk, xr), twiddles_[0]);
        tile[0] = {e.re - o.im, e.im + o.re};
      }
      for (int64_t j = 0; j < m; ++j) z[(k0 + j) * lanes + c] = tile[j];
    }
  }
}

namespace {

// A small LRU cache of plans keyed by length.
template <typename P>
class Cache {
 public:
  std::shared_ptr<const P> get(int64_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->first == n) {
          entries_.splice(entries_.begin(), entries_, it);
          return it->second;
        }
    }
    // Built outside the lock: a Bluestein plan asks the cache for its power-of-two plan.
    auto plan = std::make_shared<const P>(n);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == n) return it->second;  // another thread built it meanwhile
    entries_.emplace_front(n, plan);
    if (entries_.size() > kCachedPlans) entries_.pop_back();
    return plan;
  }

 private:
  std::mutex mu_;
  std::list<std::pair<int64_t, std::shared_ptr<const P>>> entries_;
};

}  // namespace

template <typename T>
std::shared_ptr<const Plan<T>> complex_plan(int64_t n) {
  static Cache<Plan<T>> cache;
  return cache.get(n);
}

template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n) {
  static Cache<RealPlan<T>> cache;
  return cache.get(n);
}

template class Plan<float>;
template class Plan<double>;
template class RealPlan<float>;
template class RealPlan<double>;
template std::shared_ptr<const Plan<float>> complex_plan<float>(int64_t);
template std::shared_ptr<const Plan<double>> complex_plan<double>(int64_t);
template std::shared_ptr<const RealPlan<float>> real_plan<float>(int64_t);
template std::shared_ptr<const RealPlan<double>> real_plan<double>(int64_t);

}  // namespace xjax::fft
