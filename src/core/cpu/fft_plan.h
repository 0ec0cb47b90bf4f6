// Plans of one-dimensional FFTs: the factorisation of a length and its twiddles, computed once
// (in double, then rounded to the working precision) and shared through a bounded cache.
//   Plan<T>:     complex transforms of any length. Lengths whose prime factors are all <= 61 run
//                as a mixed-radix Stockham FFT (radix 4, 2, 3, 5 butterflies, a generic odd radix
//                for the other primes); the others by Bluestein's chirp-z algorithm through a
//                power-of-two transform.
//   RealPlan<T>: real <-> half-spectrum transforms; an even length runs as a complex transform
//                of half the length, an odd one as a complex transform of the full length.
// Transforms are unnormalised (the kernel scales the inverse ones) and do not allocate: callers
// hand in scratch_size() elements of scratch. Plans are immutable once built, so threads share them.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace xjax::fft {

template <typename T>
struct Cpx {
  T re, im;
};

template <typename T>
class Plan {
 public:
  explicit Plan(int64_t n);
  int64_t size() const { return n_; }
  int64_t scratch_size() const;
  // x[k] <- sum_j x[j] exp(-+2 pi i j k / n) (the sign + when inverse).
  void run(Cpx<T>* x, bool inverse, Cpx<T>* scratch) const;
  // Mixed-radix plans only: `lanes` transforms at once, element i of transform c at x[i lanes + c]
  // (the passes then run over contiguous lanes); scratch: size() * lanes elements.
  bool has_lanes() const { return !sub_; }
  void run_lanes(Cpx<T>* x, int64_t lanes, bool inverse, Cpx<T>* scratch) const;

 private:
  struct Stage {
    int radix;
    int64_t stride, m;  // the stage maps x[q + s (j + r m)] to y[q + s (radix j + k)]
    size_t twiddles;    // offset in twiddles_: m x (radix - 1) values w^(j k)
    size_t roots;       // generic radix: offset in roots_ of cos, sin (2 pi t / radix), t < radix
  };
  void run_stockham(Cpx<T>* x, int64_t lanes, bool inverse, Cpx<T>* scratch) const;
  void run_bluestein(Cpx<T>* x, bool inverse, Cpx<T>* scratch) const;

  int64_t n_;
  std::vector<Stage> stages_;
  std::vector<Cpx<T>> twiddles_;
  std::vector<T> roots_;
  // Bluestein: the power-of-two plan, the chirp exp(-pi i k^2 / n) and the transformed filter / m.
  std::shared_ptr<const Plan<T>> sub_;
  std::vector<Cpx<T>> chirp_, filter_;
};

template <typename T>
class RealPlan {
 public:
  explicit RealPlan(int64_t n);
  int64_t scratch_size() const;
  // n reals -> the n / 2 + 1 first coefficients of their transform.
  void forward(const T* x, Cpx<T>* out, Cpx<T>* scratch) const;
  // `rows` (<= kRealLanes) contiguous rows at once, as lanes of the complex plan where it has them.
  void forward_rows(const T* x, Cpx<T>* out, int64_t rows, Cpx<T>* scratch) const;
  // n / 2 + 1 coefficients of a Hermitian spectrum -> n reals, unnormalised (n times the inverse).
  // The imaginary parts of the zero and Nyquist frequencies are ignored, as pocketfft and XLA do.
  void inverse(const Cpx<T>* in, T* x, Cpx<T>* scratch) const;
  void inverse_rows(const Cpx<T>* in, T* x, int64_t rows, Cpx<T>* scratch) const;
  static constexpr int64_t kRealLanes = 8;
  int64_t rows_scratch_size() const { return scratch_size() * kRealLanes; }

 private:
  void post_forward(const Cpx<T>* z, int64_t lanes, Cpx<T>* out) const;
  void pre_inverse(const Cpx<T>* in, int64_t lanes, Cpx<T>* z) const;
  int64_t n_;
  std::shared_ptr<const Plan<T>> complex_;  // of n / 2 (n even) or n (n odd)
  std::vector<Cpx<T>> twiddles_;            // n even: exp(-2 pi i k / n), k <= n / 2
};

// The cached plans (at most kCachedPlans per kind and precision; the least recently used goes).
constexpr size_t kCachedPlans = 32;
template <typename T>
std::shared_ptr<const Plan<T>> complex_plan(int64_t n);
template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n);

}  // namespace xjax::fft
