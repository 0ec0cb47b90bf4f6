// Loops of the special functions libm lacks or computes in single precision poorly: erf_inv,
// lgamma and digamma. float32 (and the 16-bit formats) are computed in float64 and rounded.
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

// For float32: two degree-9 fits, evaluated in float (relative error of the fits below 1.5e-8).
constexpr float kErfInv32Small[10] = {  // w in [0, 5]: t = (w - 2.5) / 2.5
    1.50140936f,     0.616600723f,     -0.026108686f,  -0.019574194f,  0.00852917636f,
    -0.000484349951f, -0.000845545939f, 0.000284075153f, 3.55313789e-05f, -3.33398093e-05f};
constexpr float kErfInv32Large[10] = {  // sqrt(w) in [2.2, 4.1]: t = (sqrt(w) - 3.15) / 0.95
    2.9834174f,      0.953858265f,     0.00601634302f, -0.00423194868f, 0.00282719767f,
    -0.00181122663f, 0.000932453563f, -0.000231867357f, -0.000103980895f, 7.22815055e-05f};

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

struct ErfInv32 {
  static float f(float y) {
    float a = std::fabs(y);
    float b = below_one(a);
    float w = -std::log((1.0f - b) * (1.0f + b));  // 1 - b is exact where it matters (b >= 0.5)
    float g = w < 5.0f ? horner(kErfInv32Small, (w - 2.5f) * 0.4f)
                       : horner(kErfInv32Large, (std::sqrt(w) - 3.15f) * (1.0f / 0.95f));
    return erf_inv_edges(y, a * g);
  }
};

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

ElementwiseLoop special_loop(OpId op, DType dt) {
  using ErfInv32F = Flushed<ErfInv32>;
  using ErfInv64F = Flushed<ErfInv64>;
  using Lgamma = Flushed<InDouble<lgamma_double>>;
  using Digamma = Flushed<InDouble<digamma_double>>;
  switch (op) {
    case OpId::erf_inv_: return float_loop<unary_vec<float, float, ErfInv32F>, unary_vec<double, double, ErfInv64F>, 1>(dt);
    case OpId::lgamma_: return float_loop<unary<float, float, Lgamma>, unary<double, double, Lgamma>, 1>(dt);
    case OpId::digamma_: return float_loop<unary<float, float, Digamma>, unary<double, double, Digamma>, 1>(dt);
    default: return nullptr;
  }
}

}  // namespace xjax::ew
