// The scalar op definitions of the transcendental functions (src/core/ops/scalar_math.h through
// scalar_ops.h) compiled in loops for each instruction set the library's target clones are built
// for: AVX-512 (which brings FMA), AVX2 (no FMA), AVX2 + FMA (the special functions' clones) and
// baseline x86-64. Each loop runs vectorised over an array and once per element (the scalar code
// of the same compilation); every compilation the CPU can run must give the baseline's bits. Built
// without contraction (-ffp-contract=off), as the library's elementwise files are; run by
// tests/test_vecmath_bits.py and by ctest. Prints "compared N values" and exits 0 when all agree.
#include <xmmintrin.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/ops/scalar_ops.h"
#include "core/ops/scalar_xla_math.h"

namespace s = xjax::scalar;

// The functions, as the CPU loops compute them (flushed operands and results).
#define XJAX_UNARY_FUNCTIONS(X)                                                                        \
  X(exp, s::exp(x)) X(exp2, s::exp2(x)) X(expm1, s::expm1(x)) X(tanh, s::tanh(x)) X(logistic, s::logistic(x)) \
  X(log, s::log(x)) X(log1p, s::log1p(x)) X(sin, s::sin_main(x)) X(cos, s::cos_main(x)) X(tan, s::tan(x))      \
  X(erf_inv, s::erf_inv(x)) X(erf, s::erf(x)) X(erfc, s::erfc(x)) X(atan, s::atan(x)) X(asin, s::asin(x))      \
  X(acos, s::acos(x)) X(sinh, s::sinh(x)) X(cosh, s::cosh(x))
#define XJAX_BINARY_FUNCTIONS(X) X(pow, s::pow(x, y)) X(atan2, s::atan2(x, y))

// One loop per function, type and instruction set.
#define XJAX_LOOPS_FOR(suffix, attr)                                                                   \
  template <class T> struct Loops_##suffix {                                                           \
    XJAX_UNARY_FUNCTIONS(XJAX_UNARY_LOOP)                                                              \
    XJAX_BINARY_FUNCTIONS(XJAX_BINARY_LOOP)                                                            \
  };
#define XJAX_UNARY_LOOP(name, expr)                                                                    \
  __attribute__((noinline)) attr static void name(const T* a, const T*, T* o, long n) {                \
    for (long i = 0; i < n; ++i) {                                                                     \
      T x = a[i];                                                                                      \
      o[i] = expr;                                                                                     \
    }                                                                                                  \
  }
#define XJAX_BINARY_LOOP(name, expr)                                                                   \
  __attribute__((noinline)) attr static void name(const T* a, const T* b, T* o, long n) {              \
    for (long i = 0; i < n; ++i) {                                                                     \
      T x = a[i], y = b[i];                                                                            \
      o[i] = expr;                                                                                     \
    }                                                                                                  \
  }

#define attr __attribute__((target("avx512f")))
XJAX_LOOPS_FOR(avx512, attr)
#undef attr
#define attr __attribute__((target("avx2")))
XJAX_LOOPS_FOR(avx2, attr)
#undef attr
#define attr __attribute__((target("arch=x86-64-v3")))
XJAX_LOOPS_FOR(avx2_fma, attr)
#undef attr
#define attr
XJAX_LOOPS_FOR(baseline, attr)
#undef attr

using Loop = void (*)(const void*, const void*, void*, long);

struct Function {
  const char* name;
  Loop isa[4];  // baseline, avx2, avx2_fma, avx512
};

template <class T> std::vector<Function> functions() {
  std::vector<Function> f;
#define XJAX_ENTRY(name, expr)                                                                        \
  f.push_back({#name,                                                                                 \
               {reinterpret_cast<Loop>(&Loops_baseline<T>::name), reinterpret_cast<Loop>(&Loops_avx2<T>::name), \
                reinterpret_cast<Loop>(&Loops_avx2_fma<T>::name), reinterpret_cast<Loop>(&Loops_avx512<T>::name)}});
  XJAX_UNARY_FUNCTIONS(XJAX_ENTRY)
  XJAX_BINARY_FUNCTIONS(XJAX_ENTRY)
#undef XJAX_ENTRY
  return f;
}

// Operands: random bit patterns (every exponent), values in the functions' interesting ranges, and
// the edge cases.
template <class T> std::vector<T> operands(unsigned seed, long n) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::mt19937_64 rng(seed);
  std::vector<T> v = {T(0), -T(0), T(1), T(-1), T(0.5), T(1e-40), T(-1e-40), T(88.72), T(-87.4), T(709.7),
                      T(-745), T(3e5), T(-1e6), T(0.3466), T(0.875), T(0.55), T(20), T(-30), T(1e-8)};
  std::uniform_real_distribution<double> wide(-120.0, 120.0), narrow(-2.0, 2.0);
  while (long(v.size()) < n) {
    switch (v.size() % 3) {
      case 0: {
        U u = U(rng());
        T x;
        std::memcpy(&x, &u, sizeof x);
        v.push_back(x);
        break;
      }
      case 1: v.push_back(T(wide(rng))); break;
      default: v.push_back(T(narrow(rng))); break;
    }
  }
  return v;
}

template <class T> bool same(T a, T b) {
  if (a != a && b != b) return true;  // NaN: sign and payload unspecified
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T> long check(const char* type, bool has[4]) {
  const long n = 4099;  // a vector body and a tail on every width
  std::vector<T> a = operands<T>(1, n), b = operands<T>(2, n);
  std::vector<T> want(n), got(n);
  long compared = 0, failures = 0;
  const char* isa_names[4] = {"baseline", "avx2", "avx2+fma", "avx512"};
  for (const Function& f : functions<T>()) {
    f.isa[0](a.data(), b.data(), want.data(), n);
    for (int k = 0; k < 4; ++k) {
      if (!has[k]) continue;
      for (int one_by_one = 0; one_by_one < 2; ++one_by_one) {
        if (one_by_one) {
          for (long i = 0; i < n; ++i) f.isa[k](&a[i], &b[i], &got[i], 1);
        } else {
          f.isa[k](a.data(), b.data(), got.data(), n);
        }
        for (long i = 0; i < n; ++i, ++compared) {
          if (same(got[i], want[i])) continue;
          if (++failures <= 20)
            std::printf("%s %s %s%s: operand %.17g (%.17g): %.17g, baseline vectorised %.17g\n", f.name, type,
                        isa_names[k], one_by_one ? " one by one" : "", double(a[i]), double(b[i]), double(got[i]),
                        double(want[i]));
        }
      }
    }
  }
  return failures ? -failures : compared;
}

int main() {
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ and DAZ, as the kernels run
  __builtin_cpu_init();
  bool has[4] = {true, bool(__builtin_cpu_supports("avx2")),
                 __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
                 bool(__builtin_cpu_supports("avx512f"))};
  long f = check<float>("float32", has), d = check<double>("float64", has);
  if (f < 0 || d < 0) {
    std::printf("%ld mismatches\n", (f < 0 ? -f : 0) + (d < 0 ? -d : 0));
    return 1;
  }
  std::printf("compared %ld values (avx2 %d, avx2+fma %d, avx512 %d)\n", f + d, has[1], has[2], has[3]);
  return 0;
}
