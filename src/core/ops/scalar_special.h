// Part of the scalar op definitions (the rules are in scalar_ops.h): the special functions lgamma,
// digamma, igamma, igammac, igamma_grad_a, polygamma, zeta, bessel_i0e, bessel_i1e and
// regularized_incomplete_beta. Each computes in double (float32 rounds the result; the 16-bit
// formats then round again, to their format) with operands and result flushed as libm functions'
// are. Where JAX's values depend on the algorithm (iteration counts, branch points, which edge
// cases give NaN or inf) these follow XLA's, element by element. Compiled without contraction
// (-ffp-contract=off, nvcc --fmad=false), the CPU loops, the reference and generated code give the
// same bits; on a GPU the last bits differ where CUDA's libm does (exp, log, pow, tan, lgamma) and
// where an intermediate is subnormal (the CPU flushes it; CUDA's float64 does not).
//
// Host C++, nvcc and NVRTC compile this text, like its companions, but it is not part of
// scalar_source(): it is long, and only the generated sources that compute one of these functions
// carry it (scalar_special_source() in scalar_names.h), after scalar_source().
//
// The double algorithms use libm's exp, log, log1p, pow, tan, floor, nearbyint and fmod, and
// lgamma (glibc's lgamma_r on the host; CUDA's lgamma on a GPU, whose last bits differ).
#ifndef XJAX_SCALAR_SPECIAL_H
#define XJAX_SCALAR_SPECIAL_H

#ifndef XJAX_SCALAR_OPS_H
#include "core/ops/scalar_ops.h"
#endif

namespace xjax {
namespace scalar {
namespace special {  // the double algorithms (plain IEEE arithmetic: no flushing mode of their own)

constexpr double kEps = 0x1p-52;           // DBL_EPSILON
constexpr double kDenormMin = 0x1p-1074;   // the smallest subnormal double
constexpr double kLogMax = 709.782712893383996843;  // log(DBL_MAX): below -kLogMax, exp underflows
constexpr double kPi = 3.14159265358979323846;
// XLA's series has no iteration limit, and never ends where a + k == a (a beyond 2^53, where JAX
// hangs). Converging elements need ~10 sqrt(a) terms: past this many the result is NaN.
constexpr int kMaxSeriesTerms = 1 << 24;
constexpr int kMaxFractionTerms = 2000;  // XLA's limit

XJAX_HD inline double inf() { return infinity<double>(); }
XJAX_HD inline double nan() { return quiet_nan<double>(); }

// log |Gamma(x)|; +inf at the poles and at -inf.
XJAX_HD inline double lgamma(double x) {
#ifdef XJAX_SCALAR_CUDA
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);  // the reentrant form: lgamma writes the global signgam
#endif
}

// psi(x): reflection for x <= 0 (NaN at the poles 0, -1, -2, ..., as JAX), the recurrence up to
// x >= 10, then the asymptotic series ln x - 1/2x - sum B_2k / (2k x^2k).
XJAX_HD inline double digamma(double x) {
  if (x != x || x == inf()) return x;
  double result = 0.0;
  if (x <= 0.0) {
    if (x == libm::floor(x)) return nan();
    double r = x - libm::nearbyint(x);  // exact; tan(pi x) has period 1
    result = -kPi / libm::tan(kPi * r);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  double z = 1.0 / (x * x);
  double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + libm::log(x) - 0.5 / x - series;
}

// ---- the regularized incomplete gamma functions P(a, x) (igamma), Q(a, x) = 1 - P (igammac)
// and dP/da (igamma_grad_a): XLA's power series for x < max(1, a), else its continued fraction
// for Q (Cephes' igam/igamc, with the derivative carried along). XLA iterates every element of an
// array until the slowest converges, freezing converged ones; each element here stops at its own
// convergence, which is the same.
enum class Want { Value, DerivativeA };

// P(a, x) = ax / a * sum_k x^k / ((a + 1) ... (a + k)), ax = x^a e^-x / Gamma(a); with
// Want::DerivativeA, dP/da from the series' own derivative. `enabled` false: no terms summed.
XJAX_HD inline double igamma_series(double ax, double x, double a, bool enabled, Want want) {
  double r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
  for (int k = 0; enabled && k < kMaxSeriesTerms; ++k) {
    r += 1;
    dc_da = dc_da * (x / r) - (c * x) / (r * r);
    dans_da += dc_da;
    c *= x / r;
    ans += c;
    enabled = want == Want::Value ? c / ans > kEps : libm::fabs(dc_da / dans_da) > kEps;
  }
  if (enabled) return nan();  // out of terms: no answer rather than a wrong one
  if (want == Want::Value) return ans * ax / a;
  double dlogax_da = libm::log(x) - digamma(a + 1);
  return ax * (ans * dlogax_da + dans_da) / a;
}

// Q(a, x) = ax * (a continued fraction), with its derivative in a, for x >= max(1, a). The
// convergents p/q are rescaled when they grow past 1/eps.
XJAX_HD inline double igammac_fraction(double ax, double x, double a, bool enabled, Want want) {
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
    double t = nonzero ? libm::fabs((ans - r) / r) : 1.0;
    if (nonzero) ans = r;
    double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    double dans_new = nonzero ? (dpk - ans * dqk) / qk : dans;
    double change = nonzero ? libm::fabs(dans_new - dans) : 1.0;
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    dpkm2 = dpkm1, dqkm2 = dqkm1, dpkm1 = dpk, dqkm1 = dqk;
    if (libm::fabs(pk) > 1 / kEps) {
      pkm2 *= kEps, pkm1 *= kEps, qkm2 *= kEps, qkm1 *= kEps;
      dpkm2 *= kEps, dqkm2 *= kEps, dpkm1 *= kEps, dqkm1 *= kEps;
    }
    dans = dans_new;
    enabled = (want == Want::Value ? t : change) > kEps;
  }
  if (want == Want::Value) return ans * ax;
  double dlogax_da = libm::log(x) - digamma(a);
  return ax * (ans * dlogax_da + dans);
}

// log(x^a e^-x / Gamma(a)), the prefactor of both expansions.
XJAX_HD inline double log_ax(double a, double x) { return a * libm::log(x) - x - lgamma(a); }

XJAX_HD inline double igamma(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_inf = x == inf(), x_is_zero = x == 0;
  bool domain_error = x < 0 || a < 0 || (a == 0 && x_is_zero) || is_nan;
  bool use_fraction = x >= 1 && x > a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = libm::exp(log_prefactor);
  bool enabled = !(x_is_zero || domain_error || underflow || x_is_inf);
  double out = use_fraction ? 1 - igammac_fraction(ax, x, a, enabled, Want::Value)
                            : igamma_series(ax, x, a, enabled, Want::Value);
  if (x_is_zero) out = 0;
  if (x_is_inf) out = 1;
  return domain_error ? nan() : out;
}

XJAX_HD inline double igammac(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_inf = x == inf(), a_is_zero = a == 0;
  bool domain_error = x < 0 || a < 0 || (a_is_zero && x == 0) || is_nan;
  bool use_series = x < 1 || x < a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = libm::exp(log_prefactor);
  bool enabled = !(domain_error || underflow || x_is_inf || a_is_zero);
  double out = use_series ? 1 - igamma_series(ax, x, a, enabled, Want::Value)
                          : igammac_fraction(ax, x, a, enabled, Want::Value);
  if (x_is_inf || a_is_zero) out = 0;
  return domain_error ? nan() : out;
}

XJAX_HD inline double igamma_grad_a(double a, double x) {
  bool is_nan = a != a || x != x;
  bool x_is_zero = x == 0;
  bool domain_error = x < 0 || a <= 0;
  bool use_fraction = x > 1 && x > a;
  double log_prefactor = log_ax(a, x);
  bool underflow = log_prefactor < -kLogMax;
  double ax = libm::exp(log_prefactor);
  bool enabled = !(x_is_zero || domain_error || underflow || is_nan);
  double out = use_fraction ? -igammac_fraction(ax, x, a, enabled, Want::DerivativeA)
                            : igamma_series(ax, x, a, enabled, Want::DerivativeA);
  if (x_is_zero) out = 0;
  return domain_error || is_nan ? nan() : out;
}

// Hurwitz zeta, the sum over k >= 0 of (k + q)^-x: ten terms of the sum, then Euler-Maclaurin's
// correction with Bernoulli numbers up to B_24 (by Horner's rule, as XLA).
XJAX_HD inline double zeta(double x, double q) {
  // (2k)! / B_2k for k = 12, 11, ..., 1 (a local array: device code reads no host globals).
  const double coeffs[12] = {
      -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15, 1.1646782814350067249e14,
      -2.950130727918164224e12,  7.47242496e10,            -1.8924375803183791606e9,  47900160.0,
      -1209600.0,                30240.0,                  -720.0,                    12.0};
  double a = q, neg_power = 0;
  double initial_sum = libm::pow(q, -x);
  for (int i = 0; i < 9; ++i) {
    a += 1;
    neg_power = libm::pow(a, -x);
    initial_sum += neg_power;
  }
  a += 1;
  neg_power = libm::pow(a, -x);
  double s = initial_sum + neg_power * a / (x - 1);
  double a_inverse_square = 1 / (a * a);
  double horner = 0;
  for (int i = 0; i < 11; ++i) {
    double factor = (x + (22 - 2 * i)) * (x + (21 - 2 * i));
    horner = factor * (a_inverse_square * (horner + 1 / coeffs[i]));
  }
  s += neg_power * (0.5 + (x / a) * (1 / coeffs[11] + horner));
  // The sum alone where the correction is below the smallest double (XLA's test).
  double out = libm::fabs(neg_power) < libm::fabs(initial_sum) * kDenormMin ? initial_sum : s;
  if (x < 1) out = nan();
  bool q_nonpositive = q <= 0, x_is_int = x == libm::floor(x);
  if (q_nonpositive && !x_is_int) out = nan();  // (k + q)^-x is complex
  if (q_nonpositive && q == libm::floor(q))     // a pole: +inf only for even integer x
    out = x_is_int && libm::fmod(x, 2.0) == 0 ? inf() : nan();
  if (x == 1) out = inf();  // the harmonic series
  return out;
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for natural n >= 1, digamma for n = 0, else NaN.
XJAX_HD inline double polygamma(double n, double x) {
  if (n != libm::floor(n) || n < 0) return nan();  // also NaN n
  if (n == 0) return digamma(x);
  double sign = 2 * libm::fmod(n, 2.0) - 1;
  return sign * libm::exp(lgamma(n + 1)) * zeta(n + 1, x);
}

// ---- the exponentially scaled Bessel functions i0e and i1e: Cephes' Chebyshev expansions on
// [0, 8] and (8, inf), as XLA evaluates them in float64.

// Clenshaw's recurrence for sum' c_k T_k(x/2), coefficients from the highest order down (as
// arguments: device code reads no host arrays).
template <class... C>
XJAX_HD inline double chebyshev(double x, C... c) {
  double b0 = 0, b1 = 0, b2 = 0;
  ((b2 = b1, b1 = b0, b0 = x * b1 - b2 + c), ...);
  return 0.5 * (b0 - b2);
}

// Cephes' coefficients: i0e on [0, 8] in T_k(t = x/2 - 2), sqrt(x) i0e on (8, inf) in
// T_k(t = 32/x - 2).
XJAX_HD inline double i0e_near(double t) {
  return chebyshev(t, -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
                   1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
                   -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
                   9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
                   -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
                   1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
                   -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
                   1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
                   -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
                   1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1);
}
XJAX_HD inline double i0e_far(double t) {
  return chebyshev(t, -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
                   3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
                   1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
                   -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
                   7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
                   -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
                   3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
                   2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
                   8.04490411014108831608E-1);
}
// i1e / x on [0, 8] and sqrt(x) i1e on (8, inf), in the same variables.
XJAX_HD inline double i1e_near(double t) {
  return chebyshev(t, 2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
                   -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
                   3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
                   -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
                   9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
                   -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
                   4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
                   -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
                   2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
                   -1.76416518357834055153E-1, 2.52587186443633654823E-1);
}
XJAX_HD inline double i1e_far(double t) {
  return chebyshev(t, 7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
                   -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
                   -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
                   4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
                   -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
                   3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
                   -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
                   -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
                   7.78576235018280120474E-1);
}

XJAX_HD inline double bessel_i0e(double x) {
  double z = libm::fabs(x);
  return z <= 8 ? i0e_near(0.5 * z - 2) : i0e_far(32 / z - 2) / libm::sqrt(z);
}

XJAX_HD inline double bessel_i1e(double x) {
  double z = libm::fabs(x);
  double r = z <= 8 ? z * i1e_near(0.5 * z - 2) : i1e_far(32 / z - 2) / libm::sqrt(z);
  double sign = x > 0 ? 1.0 : (x < 0 ? -1.0 : x);  // NaN and signed zeros pass
  return sign * r;
}

// ---- the regularized incomplete beta function I_x(a, b): XLA's continued fraction by Lentz's
// method, with its edge cases.

// The partial numerators of the continued fraction for I_x(a, b) (DLMF 8.17.22), by iteration
// i >= 1 with m = (i - 1) / 2: 1 for i = 1, -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) for
// even i, m (b - m) x / ((a + 2m - 1)(a + 2m)) for odd i.
XJAX_HD inline double betainc_numerator(int iteration, double a, double b, double x) {
  if (iteration == 1) return 1;
  double m = double((iteration - 1) / 2);
  if (iteration % 2 == 0) {
    if (m == 0) return -(a + b) * x / (a + 1);  // what the general term gives, kept exact for tiny a
    return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
  }
  return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
}

// Lentz-Thompson-Barnett evaluation of 1 / (1 + d_2 / (1 + d_3 / ...)): XLA's 600 terms at most,
// stopping when a step changes the value by less than eps / 2. The partial denominators are 1
// (0 for the leading term, which `tiny` stands in for). XLA steps every element of an array until
// all have converged; each element stops at its own convergence here (the same to an ulp or so).
XJAX_HD inline double betainc_fraction(double a, double b, double x) {
  const double tiny = kEps / 2;
  double h = tiny, c = h, d = 0;
  for (int iteration = 1; iteration < 600; ++iteration) {
    double pn = betainc_numerator(iteration, a, b, x);
    c = 1 + pn / c;
    if (libm::fabs(c) < tiny) c = tiny;
    d = 1 + pn * d;
    if (libm::fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double delta = c * d;
    h *= delta;
    if (!(libm::fabs(delta - 1) >= tiny)) break;
  }
  return h;
}

XJAX_HD inline double betainc(double a, double b, double x) {
  bool a_is_zero = a == 0 || b == inf();  // the limits where all mass sits at 0 (a) or 1 (b)
  bool b_is_zero = b == 0 || a == inf();
  bool x_is_zero = x == 0, x_is_one = x == 1;
  bool is_nan = a != a || b != b || x != x;
  if (a < 0 || b < 0 || x < 0 || x > 1 || (a_is_zero && b_is_zero) || is_nan) return nan();
  if ((a_is_zero && !x_is_zero) || (b_is_zero && x_is_one)) return 1;
  if ((b_is_zero && !x_is_one) || (a_is_zero && x_is_zero)) return 0;
  // The fraction converges fast for x < (a + 1) / (a + b + 2); elsewhere I_x(a, b) = 1 - I_1-x(b, a).
  bool direct = x < (a + 1) / (a + b + 2);
  if (!direct) {
    double t = a;
    a = b, b = t, x = 1 - x;
  }
  double fraction = betainc_fraction(a, b, x);
  // x^a (1-x)^b / (a B(a, b)); for a below 2 * DBL_MIN, a Gamma(a) = Gamma(a + 1) -> 1.
  double lbeta_small_a = lgamma(b) - lgamma(a + b);
  double factor = a < 2 * min_normal<double>()
                      ? libm::exp(libm::log1p(-x) * b - lbeta_small_a)
                      : libm::exp(libm::log(x) * a + libm::log1p(-x) * b - (lgamma(a) + lbeta_small_a)) / a;
  double result = fraction * factor;
  return direct ? result : 1 - result;
}

}  // namespace special
}  // namespace scalar
}  // namespace xjax

XJAX_SCALAR_OPS_BEGIN

// ---- the ops, on float and double: operands and result flushed (as the libm functions'), the
// value computed in double.
#define XJAX_SCALAR_SPECIAL(name, fn, params, args)               \
  template <class T> XJAX_HD inline T name params {               \
    static_assert(is_float_v<T>, #name " takes float types");    \
    return flush_subnormal(T(special::fn args));                  \
  }
#define XJAX_SCALAR_D(x) double(flush_subnormal(x))
XJAX_SCALAR_SPECIAL(lgamma, lgamma, (T x), (XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(digamma, digamma, (T x), (XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(bessel_i0e, bessel_i0e, (T x), (XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(bessel_i1e, bessel_i1e, (T x), (XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(igamma, igamma, (T a, T x), (XJAX_SCALAR_D(a), XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(igammac, igammac, (T a, T x), (XJAX_SCALAR_D(a), XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(igamma_grad_a, igamma_grad_a, (T a, T x), (XJAX_SCALAR_D(a), XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(polygamma, polygamma, (T n, T x), (XJAX_SCALAR_D(n), XJAX_SCALAR_D(x)))
XJAX_SCALAR_SPECIAL(zeta, zeta, (T x, T q), (XJAX_SCALAR_D(x), XJAX_SCALAR_D(q)))
XJAX_SCALAR_SPECIAL(regularized_incomplete_beta, betainc, (T a, T b, T x),
                    (XJAX_SCALAR_D(a), XJAX_SCALAR_D(b), XJAX_SCALAR_D(x)))
#undef XJAX_SCALAR_D
#undef XJAX_SCALAR_SPECIAL

// The catalogue of these ops, as scalar_ops.h's lists: X(name, Domain).
#define XJAX_SCALAR_SPECIAL_UNARY_OPS(X) X(lgamma, Float) X(digamma, Float) X(bessel_i0e, Float) X(bessel_i1e, Float)
#define XJAX_SCALAR_SPECIAL_BINARY_OPS(X) \
  X(igamma, Float) X(igammac, Float) X(igamma_grad_a, Float) X(polygamma, Float) X(zeta, Float)
#define XJAX_SCALAR_SPECIAL_TERNARY_OPS(X) X(regularized_incomplete_beta, Float)

XJAX_SCALAR_OPS_END

#endif  // XJAX_SCALAR_SPECIAL_H
