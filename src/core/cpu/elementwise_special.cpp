// Loops of the special functions libm lacks or computes in single precision poorly: erf_inv,
// lgamma, digamma and fma; and XLA's float32 log and log1p. lgamma and digamma of float32 (and the 16-bit formats) are computed in
// float64 and rounded; float32 erf_inv is XLA's, for JAX's bits.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cpu/elementwise_impl.h"
#include "core/cpu/elementwise_vecmath.h"

namespace xjax::ew {
namespace {

// erf_inv(y) = y * g(w) with w = -log(1 - y^2), g smooth in w (and in sqrt(w) for large w).
// Fitted (least squares at Chebyshev nodes, against scipy.special.erfinv) as polynomials in a
// variable t in [-1, 1]. For float64 three degree-10 fits (relative error below 1.5e-9 for
// |y| < 1) give the start of a Newton step.
constexpr double kErfInvSmall[11] = {  // w in [0, 4]: t = (w - 2) / 2
    1.3772152115390548,     0.49953614312797578,    -0.0078725759436573395, -0.013537295522546382,
    0.003455025878173017,   0.00024322462932270772, -0.00031206021641778687, 3.9135826675972038e-05,
    1.7872733655109497e-05, -5.1150468057889201e-06, -4.5502900146439417e-07};
constexpr double kErfInvMid[11] = {  // sqrt(w) in [2, 3.5]: t = (sqrt(w) - 2.75) / 0.75
    2.5832938084701893,     0.74631423664906271,    0.010099101945901308,   -0.0067566674091555637,
    0.0036391963433129015,  -0.0013380346755237306, 0.00017032971777637023, 0.00013117447388126912,
    -7.7266161536268318e-05, 2.5959106303800368e-06, 7.2444788200457267e-06};
constexpr double kErfInvTail[11] = {  // sqrt(w) in [3.5, 6.1]: t = (sqrt(w) - 4.8) / 1.3
    4.6478426077273962,     1.3134257974704633,     1.7311707786055647e-05, -0.00062465237384680362,
    0.00028158802252107836, -9.8729571355533641e-05, 3.137419356454154e-05, -5.1452160848171087e-06,
    1.0625597038606929e-06, -5.6836034080369888e-06, 3.357425259601266e-06};

template <class T, int N>
inline T horner(const T (&c)[N], T t) {
  T p = c[N - 1];
  for (int k = N - 2; k >= 0; --k) p = p * t + c[k];
  return p;
}

// min(a, largest value below 1) for a >= 0 or NaN, as an integer min of the bit patterns (NaN and
// inf have larger ones). Keeps arguments <= 0 and NaN away from log, on which libmvec takes a slow
// path; the results for a >= 1 are replaced anyway. (A float select would be folded into the log.)
template <class T>
inline T below_one(T a) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kBelowOne = sizeof(T) == 4 ? U(0x3f7fffffu) : U(0x3fefffffffffffffull);
  U u;
  std::memcpy(&u, &a, sizeof(T));
  u = u < kBelowOne ? u : kBelowOne;
  std::memcpy(&a, &u, sizeof(T));
  return a;
}

// erf_inv(a) for a in [0, 1) to ~1.5e-9 relative; other a give garbage the callers replace.
inline double erf_inv_estimate(double a) {
  a = below_one(a);
  double w = -std::log((1.0 - a) * (1.0 + a));
  double s = std::sqrt(w);
  double g = w < 4.0 ? horner(kErfInvSmall, (w - 2.0) * 0.5)
                     : (w < 12.25 ? horner(kErfInvMid, (s - 2.75) * (1.0 / 0.75))
                                  : horner(kErfInvTail, (s - 4.8) * (1.0 / 1.3)));
  return a * g;
}

template <class T>
inline T erf_inv_edges(T y, T r) {
  T a = std::fabs(y);
  if (a == T(1)) r = std::numeric_limits<T>::infinity();
  if (!(a <= T(1))) r = std::numeric_limits<T>::quiet_NaN();
  return std::copysign(r, y);
}

// float32 erf_inv as JAX computes it on CPU (XLA's ErfInv32: Giles' "Approximating the erfinv
// function" on w = -log1p(-y^2)), bit for bit, so that random.normal gives JAX's samples. That
// takes XLA's own log1p and log too (Cephes rational and polynomial), with multiply-adds fused
// exactly where XLA's code fuses them: the file is compiled with -ffp-contract=off and every
// fused one is an explicit fma.
constexpr float kGilesSmall[9] = {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
                                  -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f};  // w < 5
constexpr float kGilesLarge[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                                  -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f};  // w >= 5
constexpr float kLogP[9] = {7.0376836292E-2f, -1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f, 1.4249322787E-1f,
                            -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLog1pNum[7] = {4.5270000862445199635215E-5f, 4.9854102823193375972212E-1f, 6.5787325942061044846969E0f,
                                2.9911919328553073277375E1f, 6.0949667980987787057556E1f, 5.7112963590585538103336E1f,
                                2.0039553499201281259648E1f};
constexpr float kLog1pDen[7] = {1.0f, 1.5062909083469192043167E1f, 8.3047565967967209469434E1f, 2.2176239823732856465394E2f,
                                3.0909872225312059774938E2f, 2.1642788614495947685003E2f, 6.0118660497603843919306E1f};

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// XLA's float32 log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-8 polynomial.
// Branch-free (selects), so that loops over it vectorise.
inline float log_xla(float x) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float xc = x > 1.17549435e-38f ? x : 1.17549435e-38f;  // NaN and small values: fixed up below
  uint32_t u;
  std::memcpy(&u, &xc, 4);
  float e = float(int32_t(u >> 23) - 0x7e);
  float m = bits_to_float((u & 0x807fffffu) | 0x3f000000u);  // in [0.5, 1)
  bool below = m < 0.707106781186547524f;
  float add = below ? m : 0.0f;
  m = m - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  m = m + add;
  float x2 = m * m, x3 = x2 * m;
  float y = std::fma(m, kLogP[0], kLogP[1]), y1 = std::fma(m, kLogP[3], kLogP[4]), y2 = std::fma(m, kLogP[6], kLogP[7]);
  y = std::fma(y, m, kLogP[2]);
  y1 = std::fma(y1, m, kLogP[5]);
  y2 = std::fma(y2, m, kLogP[8]);
  y = std::fma(y, x3, y1);
  y = std::fma(y, x3, y2);
  y = std::fma(y, x3, e * -2.12194440e-4f);
  m = m - 0.5f * x2;
  m = m + y;
  m = m + e * 0.693359375f;
  m = x == 0.0f ? -kInf : m;
  m = x == kInf ? kInf : m;
  return x >= 0.0f ? m : std::numeric_limits<float>::quiet_NaN();
}

template <int N>
inline float horner_fma(const float (&c)[N], float x) {
  float p = c[0];
#pragma GCC unroll 16
  for (int i = 1; i < N; ++i) p = std::fma(p, x, c[i]);
  return p;
}

// XLA's float32 log1p: a Cephes rational for |x| < sqrt(2) - 1, else log(1 + x).
inline float log1p_xla(float x) {
  float large = log_xla(x + 1.0f);
  float xs = x * x;
  // The Horner sums start from 0 * x + c[0] in XLA: the same value, c[0].
  float small = x + std::fma(-0.5f, xs, (x * xs) * (horner_fma(kLog1pNum, x) / horner_fma(kLog1pDen, x)));
  return std::fabs(x) < 0.41421356237309504880f ? small : large;
}

struct LogXla {
  static float f(float x) { return log_xla(x); }
};
struct Log1pXla {
  static float f(float x) { return log1p_xla(x); }
};

struct ErfInv32 {
  static float f(float y) {
    float w = -log1p_xla(-y * y);
    bool lt = w < 5.0f;
    float t = lt ? w - 2.5f : std::sqrt(w) - 3.0f;
    float p = lt ? horner_fma(kGilesSmall, t) : horner_fma(kGilesLarge, t);
    return std::fabs(y) == 1.0f ? y * std::numeric_limits<float>::infinity() : p * y;
  }
};

// Loops with fused multiply-adds are compiled for CPUs that have them (x86-64-v3: AVX2 + FMA);
// elsewhere std::fma is libm's, slower but the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(XJAX_NO_CLONES)
#define XJAX_FMA_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define XJAX_FMA_CLONES
#endif

template <class Op>
XJAX_FMA_CLONES void unary_fma(const void* const* in, void* out, int64_t n) {
  const float* a = arg<float>(in, 0);
  float* o = static_cast<float*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}

struct ErfInv64 {  // one Newton step on erf(x) = a takes the estimate to full precision
  static double f(double y) {
    double a = std::fabs(y);
    // Below 1e-8 the series sqrt(pi)/2 (a + pi/12 a^3 + ...) is exact to rounding; the Newton
    // residual there would be subnormal, which kernels flush to zero (float_env.h).
    if (a < 1e-8) return erf_inv_edges(y, a * 0.88622692545275801);
    double x = erf_inv_estimate(a);
    // Near a = 1 the residual comes from erfc, against the exact 1 - a (a >= 0.5: no rounding).
    double residual = a <= 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    x -= residual / (1.1283791670955126 * std::exp(-x * x));  // erf'(x) = 2/sqrt(pi) e^(-x^2)
    return erf_inv_edges(y, x);
  }
};

// fma(a, b, c): one rounding (explicit, so the same on every clone).
template <class T>
XJAX_FMA_CLONES void fma_loop(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  const T* c = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = std::fma(a[i], b[i], c[i]);
}

double lgamma_double(double x) {
  int sign;
  return ::lgamma_r(x, &sign);  // the reentrant form: lgamma writes the global signgam
}

// digamma: reflection for x <= 0 (NaN at the poles, as JAX), the recurrence up to x >= 10, then
// the asymptotic series ln x - 1/2x - sum B_2k / (2k x^2k).
double digamma_double(double x) {
  if (x != x || x == std::numeric_limits<double>::infinity()) return x;
  double result = 0.0;
  if (x <= 0.0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    constexpr double kPi = 3.14159265358979323846;
    double r = x - std::nearbyint(x);  // exact; tan(pi x) has period 1
    result = -kPi / std::tan(kPi * r);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  double z = 1.0 / (x * x);
  double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + std::log(x) - 0.5 / x - series;
}

template <double (*F)(double)>
struct InDouble {
  template <class T> static T f(T x) { return T(F(double(x))); }
};

}  // namespace

// float32 log and log1p are XLA's too (the functions erf_inv builds on): JAX's bits for the
// samplers built on them (exponential, gumbel, logistic, poisson, ...). float64 keeps libm's.
ElementwiseLoop xla_log_loop(OpId op, DType dt) {
  if (dt == DType::Float64) return nullptr;
  switch (op) {
    case OpId::log_: return float_loop<unary_fma<Flushed<LogXla>>, nullptr, 1>(dt);
    case OpId::log1p_: return float_loop<unary_fma<Flushed<Log1pXla>>, nullptr, 1>(dt);
    default: return nullptr;
  }
}

ElementwiseLoop special_loop(OpId op, DType dt) {
  using ErfInv32F = Flushed<ErfInv32>;
  using ErfInv64F = Flushed<ErfInv64>;
  using Lgamma = Flushed<InDouble<lgamma_double>>;
  using Digamma = Flushed<InDouble<digamma_double>>;
  switch (op) {
    case OpId::erf_inv_: return float_loop<unary_fma<ErfInv32F>, unary_vec<double, double, ErfInv64F>, 1>(dt);
    case OpId::fma_: return float_loop<fma_loop<float>, fma_loop<double>, 3>(dt);
    case OpId::lgamma_: return float_loop<unary<float, float, Lgamma>, unary<double, double, Lgamma>, 1>(dt);
    case OpId::digamma_: return float_loop<unary<float, float, Digamma>, unary<double, double, Digamma>, 1>(dt);
    default: return nullptr;
  }
}

}  // namespace xjax::ew
