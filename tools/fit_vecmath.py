"""Fits the polynomial coefficients of src/core/ops/scalar_math.h (our own exp, log, tanh, ...).

Each polynomial is a weighted minimax fit (the Remez exchange algorithm over a dense grid) of a
function computed with Python's decimal module at 60 digits, its coefficients then rounded to the
target format one at a time, each later one refitted to absorb the rounding of those before
(so the rounded polynomial is close to the best one with representable coefficients). Prints
the coefficients as C++ hex-float literals and the fitted error bound.

    python tools/fit_vecmath.py            # every fit
    python tools/fit_vecmath.py exp_f32    # one
"""
import math
import struct
import sys
from decimal import Decimal as D, getcontext, localcontext

getcontext().prec = 80
PI = D("3.14159265358979323846264338327950288419716939937510582097494459")
LN2 = D(2).ln()


def d(x):
    return D(repr(x)) if isinstance(x, float) else D(x)


def solve(a, b):
    """Gaussian elimination with partial pivoting, in Decimal."""
    n = len(b)
    m = [row[:] + [bi] for row, bi in zip(a, b)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [D(0)] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def horner(c, t):
    s = D(0)
    for ci in reversed(c):
        s = s * t + ci
    return s


def remez(g, w, a, b, fixed, deg, grid=3000, iters=30):
    """Coefficients c[len(fixed)..deg] of P(t) = sum c_j t^j (c_j = fixed[j] for the first ones)
    minimising max |w(t) (P(t) - g(t))| over [a, b]; returns (coefficients, error). With m fixed
    ones, fits (g - fixed) / t^m by a full polynomial with weight w |t|^m: the exchange needs a
    full basis (t^m.. all vanish at 0)."""
    m = len(fixed)
    free = list(range(deg + 1 - m))
    n = len(free) + 1
    ts = [t for t in (a + (b - a) * D(i) / D(grid) for i in range(grid + 1)) if t != 0]
    grid = len(ts) - 1
    gv = [(g(t) - horner(fixed, t)) / t ** m for t in ts]
    wv = [w(t) * abs(t) ** m for t in ts]
    fv = [D(0) for t in ts]
    # initial reference: Chebyshev extrema mapped onto the grid
    ref = sorted({min(range(grid + 1), key=lambda i: abs(float(ts[i]) - (float(a) + float(b)) / 2 -
                                                            (float(b) - float(a)) / 2 * math.cos(math.pi * k / (n - 1))))
                  for k in range(n)})
    while len(ref) < n:
        ref = sorted(set(ref) | {(ref[-1] + grid) // 2})
    best = None
    for _ in range(iters):
        rows, rhs = [], []
        for k, i in enumerate(ref):
            t = ts[i]
            rows.append([t ** j for j in free] + [D((-1) ** k) / wv[i]])
            rhs.append(gv[i] - fv[i])
        sol = solve(rows, rhs)
        c = list(sol[:-1])
        err = [wv[i] * (horner(c, ts[i]) - gv[i]) for i in range(grid + 1)]
        emax = max(abs(e) for e in err)
        if best is None or emax < best[1]:
            best = (list(fixed) + c, emax)
        # local extrema, alternating in sign
        ext = []
        for i in range(grid + 1):
            left = err[i - 1] if i > 0 else None
            right = err[i + 1] if i < grid else None
            e = err[i]
            if (left is None or abs(e) >= abs(left)) and (right is None or abs(e) >= abs(right)):
                if ext and (err[ext[-1]] > 0) == (e > 0):
                    if abs(e) > abs(err[ext[-1]]):
                        ext[-1] = i
                else:
                    ext.append(i)
        while len(ext) > n:
            if abs(err[ext[0]]) < abs(err[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        if len(ext) < n or ext == ref:
            break
        ref = ext
    return best


def to_f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def rounded_fit(g, w, a, b, fixed, deg, fmt):
    """Fits, rounds the lowest free coefficient to fmt, refits the rest with it fixed, and so on."""
    rnd = (lambda x: d(to_f32(x))) if fmt == "f32" else (lambda x: d(float(x)))
    fixed = [rnd(c) for c in fixed]
    while len(fixed) <= deg:
        c, _ = remez(g, w, a, b, fixed, deg)
        fixed.append(rnd(c[len(fixed)]))
        if VERBOSE:
            print("  step", len(fixed), float(_), file=sys.stderr)
    return fixed, max_error(g, w, a, b, fixed)


def max_error(g, w, a, b, c, grid=20000):
    ts = (a + (b - a) * D(i) / D(grid) for i in range(grid + 1))
    return max(abs(w(t) * (horner(c, t) - g(t))) for t in ts if t != 0)


def _hex(v):
    h = float.hex(v)  # 0x1.5554940000000p-3: trailing zeros dropped
    m, e = h.split("p")
    return (m.rstrip("0").rstrip(".") if "." in m else m) + "p" + e


def lit(x, fmt):
    v = float(x)
    if fmt == "f32":
        return _hex(to_f32(v)) + "f"
    return _hex(v)


# ---- the functions, in Decimal ----------------------------------------------------------------

def expm1(x):
    if abs(x) < D("1e-3"):  # series: no cancellation
        s, term, k = D(0), x, 1
        while abs(term) > D("1e-70"):
            s += term
            k += 1
            term = term * x / k
        return s
    return x.exp() - 1


def tanh(x):
    e = expm1(2 * x)
    return e / (e + 2)


def atanh_series(s):
    """2 atanh(s) - 2s."""
    r, p, k = D(0), s ** 3, 3
    while abs(p) > D("1e-70"):
        r += 2 * p / k
        p *= s * s
        k += 2
    return r


def sin(x):
    s, term, k = D(0), x, 1
    while abs(term) > D("1e-70"):
        s += term
        term = -term * x * x / ((k + 1) * (k + 2))
        k += 2
    return s


def cos(x):
    s, term, k = D(0), D(1), 0
    while abs(term) > D("1e-70"):
        s += term
        term = -term * x * x / ((k + 1) * (k + 2))
        k += 2
    return s


def sqrt(x):
    return x.sqrt()


def atan(v):
    s, p, k = D(0), v, 1
    while abs(p) > D("1e-75"):
        s += p / k
        p = -p * v * v
        k += 2
    return s


def erf(x):
    """By its series, at 160 digits (terms grow to e^(x^2) before they shrink)."""
    with localcontext() as ctx:
        ctx.prec = 160
        s, term, n = D(0), x, 0
        while True:
            add = term / (2 * n + 1)
            s += add
            if abs(add) < D(10) ** -150 and n > 5:
                break
            n += 1
            term = -term * x * x / n
        return 2 / PI.sqrt() * s


def erfcx(x):
    with localcontext() as ctx:
        ctx.prec = 160
        return (x * x).exp() * (1 - erf(x))


# name: (fmt, g, w, a, b, fixed leading coefficients, degree, what)
HALF_LN2 = LN2 / 2 * D("1.0002")
S_MAX = (D(2).sqrt() - 1) / (D(2).sqrt() + 1) * D("1.0001")  # |s| for m in [sqrt(1/2), sqrt(2))


def exp_q(t):
    return (expm1(t) - t) / (t * t)


def exp_w(t):
    return abs(t * t / expm1(t))


def exp2_p(t):
    return expm1(t * LN2) / t


def exp2_w(t):
    return abs(t) / (t * LN2).exp()


def log_t(z):
    s = z.sqrt()
    return atanh_series(s) / (s * z)


def tanh_p(t):
    x = t.sqrt()
    return (tanh(x) - x) / (x * t)


def tanh_w(t):
    x = t.sqrt()
    return t * x / tanh(x)


def sin_p(t):
    x = t.sqrt()
    return (sin(x) - x) / (x * t)


def sin_w(t):
    x = t.sqrt()
    return t * x / sin(x)


def cos_p(t):
    return (cos(t.sqrt()) - 1 + t / 2) / (t * t)


def cos_w(t):
    return t * t / cos(t.sqrt())


def atan_p(t):
    v = t.sqrt()
    return (atan(v) - v) / (v * t)


def atan_w(t):
    v = t.sqrt()
    return t * v / atan(v)


def erf_p(t):
    x = t.sqrt()
    return erf(x) / x


def erfc_b(u):
    return erfcx(u + D("1.75"))


def erfc_c(t):
    x = 1 / t.sqrt()
    return x * erfcx(x)


FITS = {
    # e^r = 1 + r + r^2 Q(r) (and e^r - 1 = r + r^2 Q(r)), |r| <= ln2/2
    "exp_f32": ("f32", exp_q, exp_w, -HALF_LN2, HALF_LN2, [], 5, "Q(r) ~ (e^r - 1 - r) / r^2"),
    "exp_f64": ("f64", exp_q, exp_w, -HALF_LN2, HALF_LN2, [], 9, "Q(r) ~ (e^r - 1 - r) / r^2"),
    # 2^f = 1 + f P(f), |f| <= 1/2
    "exp2_f32": ("f32", exp2_p, exp2_w, D("-0.5"), D("0.5"), [], 5, "P(f) ~ (2^f - 1) / f"),
    "exp2_f64": ("f64", exp2_p, exp2_w, D("-0.5"), D("0.5"), [], 11, "P(f) ~ (2^f - 1) / f"),
    # log(1 + f) = 2 atanh(s) = 2s + s z T(z), s = f / (2 + f), z = s^2
    "log_f64": ("f64", log_t, lambda z: z, D(0), S_MAX * S_MAX, [], 7, "T(z) ~ (2 atanh(s) - 2s) / s^3"),
    # tanh(x) = x + x^3 P(x^2), |x| <= 0.88 (float32), 0.55 (float64)
    "tanh_f32": ("f32", tanh_p, tanh_w, D(0), D("0.7744"), [], 5, "P(t) ~ (tanh(x) - x) / x^3, t = x^2"),
    "tanh_f64": ("f64", tanh_p, tanh_w, D(0), D("0.3025"), [], 9, "P(t) ~ (tanh(x) - x) / x^3, t = x^2"),
    # sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4
    "sin_f64": ("f64", sin_p, sin_w, D(0), (PI / 4) ** 2 * D("1.001"), [], 5, "S(t) ~ (sin(r) - r) / r^3, t = r^2"),
    "cos_f64": ("f64", cos_p, cos_w, D(0), (PI / 4) ** 2 * D("1.001"), [], 5, "C(t) ~ (cos(r) - 1 + t/2) / t^2"),
    # the float32 functions computed in double need about 2^-35 (f64 format, low degrees)
    "sin_f32": ("f64", sin_p, sin_w, D(0), (PI / 4) ** 2 * D("1.001"), [], 3, "S(t) ~ (sin(r) - r) / r^3, t = r^2"),
    "cos_f32": ("f64", cos_p, cos_w, D(0), (PI / 4) ** 2 * D("1.001"), [], 3, "C(t) ~ (cos(r) - 1 + t/2) / t^2"),
    # atan(v) = v + v^3 A(v^2), |v| <= tan(pi/8)
    "atan_f32": ("f64", atan_p, atan_w, D(0), D("0.1717"), [], 6, "A(t) ~ (atan(v) - v) / v^3, t = v^2"),
    # erf(x) = x P(x^2), |x| < 1; erfc(x) = e^-x^2 B(x - 1.75) on [1, 2.5], e^-x^2 C(1/x^2) / x on [2.5, 10.1]
    "erf_f32": ("f64", erf_p, lambda t: D(1), D(0), D(1), [], 8, "P(t) ~ erf(x) / x, t = x^2"),
    "erfc_b_f32": ("f64", erfc_b, lambda u: 1 / erfc_b(u), D("-0.75"), D("0.75"), [], 11, "B(u) ~ e^x^2 erfc(x), u = x - 1.75"),
    "erfc_c_f32": ("f64", erfc_c, lambda t: 1 / erfc_c(t), D("0.0098"), D("0.16"), [], 9, "C(t) ~ x e^x^2 erfc(x), t = 1/x^2"),
}


VERBOSE = False


def main():
    global VERBOSE
    VERBOSE = "-v" in sys.argv
    names = [a for a in sys.argv[1:] if a != "-v"] or list(FITS)
    for name in names:
        fmt, g, w, a, b, fixed, deg, what = FITS[name]
        c, err = rounded_fit(g, w, a, b, [d(x) for x in fixed], deg, fmt)
        eps = 2.0 ** (-24 if fmt == "f32" else -53)
        print(f"// {name}: {what} on [{float(a):.6g}, {float(b):.6g}], weighted error {float(err):.3g}"
              f" ({float(err) / eps:.3g} u, u = 2^{-24 if fmt == 'f32' else -53})")
        print("  " + ", ".join(lit(x, fmt) for x in c))


if __name__ == "__main__":
    main()
