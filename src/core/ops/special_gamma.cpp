// The gamma family: lgamma, digamma, the regularized incomplete gamma functions and their
// derivative in a, polygamma and Hurwitz zeta. The incomplete gamma functions run XLA's power
// series and continued fraction (Cephes' igam/igamc, with the derivative carried along), zeta
// XLA's Euler-Maclaurin sum: the same branch points and edge cases as JAX's. XLA iterates every
// element of an array until the slowest converges, freezing converged ones; each element here
// stops at its own convergence, which is the same.
#include <cmath>
#include <limits>

#include "core/ops/special_functions.h"

namespace xjax::special {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLogMax = 709.782712893383996843;  // log(DBL_MAX): below -kLogMax, exp underflows
constexpr double kPi = 3.14159265358979323846;
// XLA's series has no iteration limit, and never ends where a + k == a (a beyond 2^53, where JAX
// hangs). Converging elements need ~10 sqrt(a) terms: past this many the result is NaN.
constexpr int kMaxSeriesTerms = 1 << 24;
constexpr int kMaxFractionTerms = 2000;  // XLA's limit

enum class Want { Value, DerivativeA };

// P(a, x) = ax / a * sum_k x^k / ((a + 1) ... (a + k)), ax = x^a e^-x / Gamma(a); with
// Want::DerivativeA, dP/da from the series' own derivative. `enabled` false: no terms summed.
double igamma_series(double ax, double x, double a, bool enabled, Want want) {
  double r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
  for (int k = 0; enabled && k < kMaxSeriesTerms; ++k) {
    r += 1;
    dc_da = dc_da * (x / r) - (c * x) / (r * r);
    dans_da += dc_da;
    c *= x / r;
    ans += c;
    enabled = want == Want::Value ? c / ans > kEps : std::fabs(dc_da / dans_da) > kEps;
  }
  if (enabled) return kNaN;  // out of terms: no answer rather than a wrong one
  if (want == Want::Value) return ans * ax / a;
  double dlogax_da = std::log(x) - digamma(a + 1);
  return ax * (ans * dlogax_da + dans_da) / a;
}

// Q(a, x) = ax * (a continued fraction), with its derivative in a, for x >= max(1, a). The
// convergents p/q are rescaled when they grow past 1/eps.
double igammac_fraction(double ax, double x, double a, bool enabled, Want want) {
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double ans = pkm1 / qkm1;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double dans = (dpkm1 - ans * dqkm1) / qkm1;
  while (enabled && c < kMaxFractionTerms) {
    c += 1;
    y += 1;
    z += 2;
    double yc = y * c;
    double pk = pkm1 * z - pkm2 * yc;
    double qk = qkm1 * z - qkm2 * yc;
    bool nonzero = qk != 0;
    double r = pk / qk;
    double t = nonzero ? std::fabs((ans - r) / r) : 1.0;
    if (nonzero) ans = r;
    double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    double dans_new = nonzero ? (dpk - ans * dqk) / qk : dans;
    double change = nonzero ? std::fabs(dans_new - dans) : 1.0;
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    dpkm2 = dpkm1, dqkm2 = dqkm1, dpkm1 = dpk, dqkm1 = dqk;
    if (std::fabs(pk) > 1 / kEps) {
      pkm2 *= kEps, pkm1 *= kEps, qkm2 *= kEps, qkm1 *= kEps;
      dpkm2 *= kEps, dqkm2 *= kEps, dpkm1 *= kEps, dqkm1 *= kEps;
    }
    dans = dans_new;
    enabled = (want == Want::Value ? t : change) > kEps;
  }
  if (want == Want::Value) return ans * ax;
  double dlogax_da = std::log(x) - digamma(a);
  return ax * (ans * dlogax_da + dans);
}

// log(x^a e^-x / Gamma(a)), the prefactor of both expansions.
double log_ax(double a, double x) { return a * std::log(x) - x - special::lgamma(a); }

}  // namespace

double lgamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);  // the reentrant form: lgamma writes the global signgam
}

// Reflection for x <= 0 (NaN at the poles, as JAX), the recurrence up to x >= 10, then the
// asymptotic series ln x - 1/2x - sum B_2k / (2k x^2k).
double digamma(double x) {
  if (x != x || x == kInf) return x;
  double result = 0.0;
  if (x <= 0.0) {
    if (x == std::floor(x)) return kNaN;
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

double igamma(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_inf = x == kInf, x_is_zero = x == 0;
  bool domain_error = x < 0 || a < 0 || (a == 0 && x_is_zero) || is_nan;
  bool use_fraction = x >= 1 && x > a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = std::exp(log_prefactor);
  bool enabled = !(x_is_zero || domain_error || underflow || x_is_inf);
  double out = use_fraction ? 1 - igammac_fraction(ax, x, a, enabled, Want::Value)
                            : igamma_series(ax, x, a, enabled, Want::Value);
  if (x_is_zero) out = 0;
  if (x_is_inf) out = 1;
  return domain_error ? kNaN : out;
}

double igammac(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_inf = x == kInf, a_is_zero = a == 0;
  bool domain_error = x < 0 || a < 0 || (a_is_zero && x == 0) || is_nan;
  bool use_series = x < 1 || x < a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = std::exp(log_prefactor);
  bool enabled = !(domain_error || underflow || x_is_inf || a_is_zero);
  double out = use_series ? 1 - igamma_series(ax, x, a, enabled, Want::Value)
                          : igammac_fraction(ax, x, a, enabled, Want::Value);
  if (x_is_inf || a_is_zero) out = 0;
  return domain_error ? kNaN : out;
}

double igamma_grad_a(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_zero = x == 0;
  bool domain_error = x < 0 || a <= 0;
  bool use_fraction = x > 1 && x > a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = std::exp(log_prefactor);
  bool enabled = !(x_is_zero || domain_error || underflow || is_nan);
  double out = use_fraction ? -igammac_fraction(ax, x, a, enabled, Want::DerivativeA)
                            : igamma_series(ax, x, a, enabled, Want::DerivativeA);
  if (x_is_zero) out = 0;
  return domain_error || is_nan ? kNaN : out;
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for n = 0.
double polygamma(double n, double x) {
  if (n != std::floor(n) || n < 0) return kNaN;  // also NaN n
  if (n == 0) return digamma(x);
  double sign = 2 * std::fmod(n, 2.0) - 1;
  return sign * std::exp(special::lgamma(n + 1)) * zeta(n + 1, x);
}

// Ten terms of the sum, then Euler-Maclaurin's correction with Bernoulli numbers up to B_24
// (by Horner's rule, as XLA).
double zeta(double x, double q) {
  // (2k)! / B_2k for k = 12, 11, ..., 1.
  static constexpr double kCoeffs[12] = {
      -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15, 1.1646782814350067249e14,
      -2.950130727918164224e12,  7.47242496e10,            -1.8924375803183791606e9,  47900160.0,
      -1209600.0,                30240.0,                  -720.0,                    12.0};
  double a = q, neg_power = 0;
  double initial_sum = std::pow(q, -x);
  for (int i = 0; i < 9; ++i) {
    a += 1;
    neg_power = std::pow(a, -x);
    initial_sum += neg_power;
  }
  a += 1;
  neg_power = std::pow(a, -x);
  double s = initial_sum + neg_power * a / (x - 1);
  double a_inverse_square = 1 / (a * a);
  double horner = 0;
  for (int i = 0; i < 11; ++i) {
    double factor = (x + (22 - 2 * i)) * (x + (21 - 2 * i));
    horner = factor * (a_inverse_square * (horner + 1 / kCoeffs[i]));
  }
  s += neg_power * (0.5 + (x / a) * (1 / kCoeffs[11] + horner));
  // The sum alone where the correction is below the smallest double (XLA's test).
  double out = std::fabs(neg_power) < std::fabs(initial_sum) * std::numeric_limits<double>::denorm_min() ? initial_sum : s;
  if (x < 1) out = kNaN;
  bool q_nonpositive = q <= 0, x_is_int = x == std::floor(x);
  if (q_nonpositive && !x_is_int) out = kNaN;  // (k + q)^-x is complex
  if (q_nonpositive && q == std::floor(q))      // a pole: +inf only for even integer x
    out = x_is_int && std::fmod(x, 2.0) == 0 ? kInf : kNaN;
  if (x == 1) out = kInf;  // the harmonic series
  return out;
}

}  // namespace xjax::special
