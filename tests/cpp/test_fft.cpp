// The FFT plans (cpu/fft_plan.h) against a naive DFT in long double: every length up to 70 (radix
// 2, 3, 4, 5, the generic odd radices and Bluestein for 67), a few larger ones, both directions,
// the real transforms, and lanes (several transforms side by side) giving the bits of one at a time.
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "check.h"
#include "core/cpu/fft_plan.h"

using namespace xjax;
using fft::Cpx;

namespace {

template <typename T>
double dft_error(const std::vector<Cpx<T>>& x, const std::vector<Cpx<T>>& y, bool inverse) {
  const int64_t n = int64_t(x.size());
  const long double pi = 3.141592653589793238462643383279502884L;
  double err = 0, norm = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::complex<long double> s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const long double a = (inverse ? 2 : -2) * pi * ((j * k) % n) / n;
      s += std::complex<long double>(x[j].re, x[j].im) * std::complex<long double>(std::cos(a), std::sin(a));
    }
    err = std::max(err, double(std::abs(s - std::complex<long double>(y[k].re, y[k].im))));
    norm = std::max(norm, double(std::abs(s)));
  }
  return norm > 0 ? err / norm : err;
}

template <typename T>
void check_lengths(double tol) {
  std::mt19937 rng(0);
  std::normal_distribution<double> dist;
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {97, 127, 128, 243, 360, 625, 1000, 1009}) lengths.push_back(n);
  for (int64_t n : lengths) {
    const auto plan = fft::complex_plan<T>(n);
    std::vector<Cpx<T>> x(static_cast<size_t>(n)), scratch(static_cast<size_t>(plan->scratch_size()));
    for (auto& v : x) v = {T(dist(rng)), T(dist(rng))};
    for (bool inverse : {false, true}) {
      std::vector<Cpx<T>> y = x;
      plan->run(y.data(), inverse, scratch.data());
      const double e = dft_error(x, y, inverse);
      if (e > tol) std::printf("length %lld inverse %d: error %g\n", (long long)n, int(inverse), e);
      CHECK(e <= tol);
    }
    // the real transforms: forward against the complex one, inverse back to n times the input
    const auto rplan = fft::real_plan<T>(n);
    std::vector<T> r(static_cast<size_t>(n)), back(static_cast<size_t>(n));
    std::vector<Cpx<T>> rx(static_cast<size_t>(n)), half(static_cast<size_t>(n / 2 + 1)), rs(static_cast<size_t>(rplan->scratch_size()));
    for (int64_t i = 0; i < n; ++i) r[i] = x[i].re, rx[i] = {x[i].re, T(0)};
    rplan->forward(r.data(), half.data(), rs.data());
    double e = dft_error(rx, [&] {
      std::vector<Cpx<T>> full(static_cast<size_t>(n));
      for (int64_t k = 0; k <= n / 2; ++k) full[k] = half[k];
      for (int64_t k = n / 2 + 1; k < n; ++k) full[k] = {half[n - k].re, -half[n - k].im};
      return full;
    }(), false);
    CHECK(e <= tol);
    rplan->inverse(half.data(), back.data(), rs.data());
    for (int64_t i = 0; i < n; ++i) CHECK(std::abs(back[i] / T(n) - r[i]) <= tol * 8);
    // lanes: three transforms side by side give each one's bits
    if (plan->has_lanes()) {
      std::vector<Cpx<T>> lanes(static_cast<size_t>(3 * n)), one = x, ls(static_cast<size_t>(3 * n));
      for (int64_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) lanes[size_t(i * 3 + c)] = x[size_t(i)];
      plan->run_lanes(lanes.data(), 3, false, ls.data());
      plan->run(one.data(), false, scratch.data());
      for (int64_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) CHECK(std::memcmp(&lanes[size_t(i * 3 + c)], &one[size_t(i)], sizeof(Cpx<T>)) == 0);
    }
  }
}

}  // namespace

int main() {
  check_lengths<double>(1e-14);
  check_lengths<float>(2e-6);
  return check_report();
}
