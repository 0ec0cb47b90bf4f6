// Loops of the special functions libm lacks or computes in single precision poorly: erf_inv, fma,
// and the functions of core/ops/special_functions.h (lgamma, digamma, igamma, zeta, ...: float32
// and the 16-bit formats computed in float64 and rounded); and XLA's float32 log and log1p.
// float32 erf_inv is XLA's, for JAX's bits.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cpu/elementwise_impl.h"
#include "core/cpu/elementwise_vecmath.h"
#include "core/ops/special_functions.h"

namespace xjax::ew {
namespace {

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

template <class Op, class T = float>
XJAX_FMA_CLONES void unary_fma(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}

// float64 erf_inv as XLA's ErfInv64: Giles' double-precision fits in three ranges of
// w = -log1p(-y^2), on XLA's float64 log1p (the Cephes rational near 0, else libm's log(1 + x)).
constexpr double kGiles64Small[23] = {  // w < 6.25: t = w - 3.125
    -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,  1.115787767802518096e-17,
    -1.333171662854620906e-16,  2.0972767875968561637e-17,  6.6376381343583238325e-15,  -4.0545662729752068639e-14,
    -8.1519341976054721522e-14, 2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07,
    -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352,   -0.00074070253416626697512,
    -0.0060336708714301490533,  0.24015818242558961693,     1.6536545626831027356};
constexpr double kGiles64Mid[19] = {  // w < 16: t = sqrt(w) - 3.25
    2.2137376921775787049e-09,  9.0756561938885390979e-08,  -2.7517406297064545428e-07, 1.8239629214389227755e-08,
    1.5027403968909827627e-06,  -4.013867526981545969e-06,  2.9234449089955446044e-06,  1.2475304481671778723e-05,
    -4.7318229009055733981e-05, 6.8284851459573175448e-05,  2.4031110387097893999e-05,  -0.0003550375203628474796,
    0.00095328937973738049703,  -0.0016882755560235047313,  0.0024914420961078508066,   -0.0037512085075692412107,
    0.005370914553590063617,    1.0052589676941592334,      3.0838856104922207635};
constexpr double kGiles64Tail[17] = {  // t = sqrt(w) - 5
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,  -3.7894654401267369937e-09,
    7.6157012080783393804e-09,  -1.4960026627149240478e-08, 2.9147953450901080826e-08,  -6.7711997758452339498e-08,
    2.2900482228026654717e-07,  -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
    7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977,
    4.8499064014085844221};
constexpr double kLog1pNum64[7] = {4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
                                   2.9911919328553073277375E1,  6.0949667980987787057556E1,  5.7112963590585538103336E1,
                                   2.0039553499201281259648E1};
constexpr double kLog1pDen64[7] = {1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
                                   3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1};

// libm's scalar log: a vectorised loop would call libmvec's, which rounds differently from XLA's.
__attribute__((noinline)) double libm_log(double x) { return std::log(x); }

template <int N>
inline double horner_fma64(const double (&c)[N], double x) {
  double p = c[0];
  for (int i = 1; i < N; ++i) p = std::fma(p, x, c[i]);
  return p;
}

inline double log1p_xla64(double x) {
  if (!(std::fabs(x) < 0.41421356237309504880)) return libm_log(x + 1.0);
  double xs = x * x;
  return x + std::fma(-0.5, xs, (x * xs) * (horner_fma64(kLog1pNum64, x) / horner_fma64(kLog1pDen64, x)));
}

struct Log1pXla64 {
  static double f(double x) { return log1p_xla64(x); }
};

struct ErfInv64 {
  static double f(double y) {
    double w = -log1p_xla64(-y * y);
    bool lt625 = w < 6.25, lt16 = w < 16.0;
    double t = lt625 ? w - 3.125 : std::sqrt(w) - (lt16 ? 3.25 : 5.0);
    const double* c = lt625 ? kGiles64Small : (lt16 ? kGiles64Mid : kGiles64Tail);
    int n = lt625 ? 23 : (lt16 ? 19 : 17);
    double p = c[0];
    for (int i = 1; i < n; ++i) p = std::fma(p, t, c[i]);
    return std::fabs(y) == 1.0 ? y * std::numeric_limits<double>::infinity() : p * y;
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

// The special functions of special_functions.h over float operands: computed in double (float32
// rounds the result), subnormal operands and results flushed to zero as XLA's CPU code does.
template <class T, double (*F)(double)>
void special1(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = flush_subnormal(T(F(double(flush_subnormal(a[i])))));
}
template <class T, double (*F)(double, double)>
void special2(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = flush_subnormal(T(F(double(flush_subnormal(a[i])), double(flush_subnormal(b[i])))));
}
template <class T, double (*F)(double, double, double)>
void special3(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  const T* c = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = flush_subnormal(
        T(F(double(flush_subnormal(a[i])), double(flush_subnormal(b[i])), double(flush_subnormal(c[i])))));
}
template <double (*F)(double)>
ElementwiseLoop special_unary(DType dt) { return float_loop<special1<float, F>, special1<double, F>, 1>(dt); }
template <double (*F)(double, double)>
ElementwiseLoop special_binary(DType dt) { return float_loop<special2<float, F>, special2<double, F>, 2>(dt); }
template <double (*F)(double, double, double)>
ElementwiseLoop special_ternary(DType dt) { return float_loop<special3<float, F>, special3<double, F>, 3>(dt); }

}  // namespace

// float32 log and log1p are XLA's too (the functions erf_inv builds on): JAX's bits for the
// samplers built on them (exponential, gumbel, logistic, poisson, ...); float64 log1p too (float64
// log keeps libmvec's vector loop, faster than XLA's scalar libm calls, to an ulp or so).
ElementwiseLoop xla_log_loop(OpId op, DType dt) {
  if (dt == DType::Float64) return op == OpId::log1p_ ? unary_fma<Flushed<Log1pXla64>, double> : nullptr;
  switch (op) {
    case OpId::log_: return float_loop<unary_fma<Flushed<LogXla>>, nullptr, 1>(dt);
    case OpId::log1p_: return float_loop<unary_fma<Flushed<Log1pXla>>, nullptr, 1>(dt);
    default: return nullptr;
  }
}

ElementwiseLoop special_loop(OpId op, DType dt) {
  using ErfInv32F = Flushed<ErfInv32>;
  using ErfInv64F = Flushed<ErfInv64>;
  switch (op) {
    case OpId::erf_inv_: return float_loop<unary_fma<ErfInv32F>, unary_fma<ErfInv64F, double>, 1>(dt);
    case OpId::fma_: return float_loop<fma_loop<float>, fma_loop<double>, 3>(dt);
    case OpId::lgamma_: return special_unary<special::lgamma>(dt);
    case OpId::digamma_: return special_unary<special::digamma>(dt);
    case OpId::igamma_: return special_binary<special::igamma>(dt);
    case OpId::igammac_: return special_binary<special::igammac>(dt);
    case OpId::igamma_grad_a_: return special_binary<special::igamma_grad_a>(dt);
    case OpId::polygamma_: return special_binary<special::polygamma>(dt);
    case OpId::zeta_: return special_binary<special::zeta>(dt);
    case OpId::bessel_i0e_: return special_unary<special::bessel_i0e>(dt);
    case OpId::bessel_i1e_: return special_unary<special::bessel_i1e>(dt);
    case OpId::regularized_incomplete_beta_: return special_ternary<special::betainc>(dt);
    default: return nullptr;
  }
}

}  // namespace xjax::ew
