// The scalar definitions of the special-function ops (lgamma, digamma, the incomplete gamma and
// beta functions, polygamma, Hurwitz zeta, scaled Bessel functions), in double precision. The
// CPU loops of every float dtype call these (float32 and the 16-bit formats round the double
// result). Where JAX's values depend on the algorithm (iteration counts, branch points, which
// edge cases give NaN or inf) these follow XLA's algorithms, element by element.
#pragma once

namespace xjax::special {

double lgamma(double x);   // log |Gamma(x)|; +inf at the poles and at -inf
double digamma(double x);  // psi(x); NaN at the poles 0, -1, -2, ...

// Regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x) = 1 - P (igammac), and
// dP/da (igamma_grad_a): a power series for x < max(1, a), else a continued fraction for Q.
double igamma(double a, double x);
double igammac(double a, double x);
double igamma_grad_a(double a, double x);

double polygamma(double n, double x);  // psi^(n)(x) for natural n (NaN otherwise)
double zeta(double x, double q);       // Hurwitz zeta: sum over k >= 0 of (k + q)^-x

double bessel_i0e(double x);  // exp(-|x|) I0(x)
double bessel_i1e(double x);  // exp(-|x|) I1(x)

// The regularized incomplete beta function I_x(a, b), by a continued fraction (Lentz's method).
double betainc(double a, double b, double x);

}  // namespace xjax::special
