"""Integrals of jax.scipy.special for real arguments: Dawson's integral (dawsn), the Fresnel
integrals (fresnel) and the sine and cosine integrals (sici), from Cephes's rational
approximations (the coefficient tables of dawsn.c, fresnl.c and sici.c), with exact derivatives."""
import numpy as np

from xjax._src import dtypes, lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.numpy.util import promote_args_inexact
import xjax.numpy as jnp


def _real_only(name, x):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError(f"jax.scipy.special.{name}: complex arguments are not supported in xjax")


def _in_float(fn, x):
    """fn computed in float32 for half-precision x (the tables need 24 bits), cast back."""
    if x.dtype in (np.float32, np.float64):
        return fn(x)
    return tuple(r.astype(x.dtype) for r in fn(x.astype(np.float32)))


def _ratio(num, den, t):
    """num(t) / den(t), the coefficient tables (highest power first) in t's dtype."""
    return jnp.polyval(np.array(num, t.dtype), t) / jnp.polyval(np.array(den, t.dtype), t)


# ---- dawsn ---------------------------------------------------------------------------------------

# x P(x^2) / Q(x^2) on [0, 3.25); (1 + P(1/x^2) / (x^2 Q(1/x^2))) / (2x) on [3.25, 6.25) and beyond.
_DAWSN_AN = (1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08, 9.531517412544844e-07,
             3.078283098749132e-06, 0.00035251336852028877, -0.0008501498467244109, 0.04226182230055466,
             -0.09174803717734524, 1.0)
_DAWSN_AD = (2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08, 1.2725847827318697e-06,
             2.324902498207895e-05, 0.00032552474182605793, 0.003488058146571626, 0.027944853119882897,
             0.15887424196012057, 0.5749186294893204, 1.0)
_DAWSN_BN = (0.5089551564179009, -0.24475441814269785, 0.09415123353035344, -0.021871125514203903,
             0.003662076123295692, -0.0004232091144603888, 3.5964130479389666e-05, -2.1464035171996896e-06,
             9.100107800763914e-08, -2.4027452082825098e-09, 3.592333854409284e-11)
_DAWSN_BD = (1.0, -0.6318398698733682, 0.2367067882282487, -0.053180636700322324, 0.008480417185862954,
             -0.0009479967684866654, 7.810255929445524e-05, -4.558751532524426e-06, 1.8910035811142186e-07,
             -4.913246913319206e-09, 7.184664032357345e-11)
_DAWSN_CN = (-0.5905928605347732, 0.6292352427243688, -0.17285897538038814, 0.016483704782518965,
             -0.0004868276130204627)
_DAWSN_CD = (1.0, -2.698200571975449, 1.7327079904594784, -0.3937085822819395, 0.03442789240412334,
             -0.0009736552260409412)


def _dawsn_values(x):
    ax = jnp.abs(x)
    near = ax < 3.25
    middle = ax < 6.25
    small_x = jnp.where(near, ax, 1)
    value_near = small_x * _ratio(_DAWSN_AN, _DAWSN_AD, small_x * small_x)
    far_x = jnp.where(near, 4, ax)  # 1/x^2 stays finite; inf gives 0 through 1 / (2x)
    t = 1 / (far_x * far_x)
    tail = jnp.where(middle, _ratio(_DAWSN_BN, _DAWSN_BD, t), _ratio(_DAWSN_CN, _DAWSN_CD, t))
    value_far = 0.5 / far_x * (1 + t * tail)
    return (jnp.sign(x) * jnp.where(near, value_near, value_far),)


@custom_jvp
def _dawsn(x):
    return _in_float(_dawsn_values, x)[0]


_dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = promote_args_inexact("dawsn", x)
    _real_only("dawsn", x)
    return _dawsn(x)


# ---- fresnel -------------------------------------------------------------------------------------

# S = x^3 SN(x^4)/SD(x^4), C = x CN(x^4)/CD(x^4) for x^2 < 2.5625; beyond, the auxiliary functions
# f = 1 - u FN(u)/FD(u), g = t GN(u)/GD(u) with t = 1/(pi x^2), u = t^2.
_FRESNEL_SN = (-2991.8191940101983, 708840.0452577386, -62974148.62058625, 2548908805.7337637, -44297951805.96978,
               318016297876.5678)
_FRESNEL_SD = (1.0, 281.3762688899943, 45584.78108065326, 5173438.887700964, 419320245.8981112,
               22441179564.534092, 607366389490.0846)
_FRESNEL_CN = (-4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651, 0.018884331939670384,
               -0.20552590095501388, 1.0)
_FRESNEL_CD = (3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07, 1.2226278902417902e-05,
               0.0008680295429417843, 0.04121420907221998, 1.0)
_FRESNEL_FN = (0.4215435550436775, 0.1434079197807589, 0.011522095507358577, 0.000345017939782574,
               4.6361374928786735e-06, 3.055689837902576e-08, 1.0230451416490724e-10, 1.7201074326816183e-13,
               1.3428327623306275e-16, 3.763297112699879e-20)
_FRESNEL_FD = (1.0, 0.7515863983533789, 0.11688892585919138, 0.0064405152650885865, 0.00015593440916415301,
               1.8462756734893055e-06, 1.1269922476399903e-08, 3.6014002958937136e-11, 5.887545336215784e-14,
               4.5200143407412973e-17, 1.2544323709001127e-20)
_FRESNEL_GN = (0.5044420736433832, 0.1971028335255234, 0.018764858409257526, 0.0006840793809153931,
               1.1513882611188428e-05, 9.828524436884223e-08, 4.4534441586175015e-10, 1.0826804113902088e-12,
               1.375554606332618e-15, 8.363544356306774e-19, 1.8695871016278324e-22)
_FRESNEL_GD = (1.0, 1.4749575992512833, 0.33774898912002, 0.02536037414203388, 0.0008146791071843061,
               1.2754507566772912e-05, 1.0431458965757199e-07, 4.6068072814652043e-10, 1.1027321506624028e-12,
               1.3879653125957886e-15, 8.391588162831187e-19, 1.8695871016278324e-22)


def _sin_cos_half_pi_square(x):
    """sin(pi x^2 / 2) and cos(pi x^2 / 2) without the rounding of x^2 at large x: with
    x = 2m + s (s = x mod 2, exact), x^2 / 2 = s (x - s/2) mod 2, reduced to r in [-1/2, 1/2]."""
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    phase = jnp.fmod(s * (x - s / 2), 2.0)  # in [0, 2)
    turns = jnp.round(phase)
    r = phase - turns  # in [-1/2, 1/2]
    sign = jnp.where(turns == 1, -1.0, 1.0).astype(x.dtype)
    sin = sign * jnp.sin(np.pi * r)
    cos = sign * jnp.sin(np.pi * (0.5 - jnp.abs(r)))  # cos(pi r), exact zeros at r = +-1/2
    return sin, cos


def _fresnel_values(x):
    ax = jnp.abs(x)
    x2 = ax * ax
    small = x2 < 2.5625
    t4 = x2 * x2
    s_small = ax * x2 * _ratio(_FRESNEL_SN, _FRESNEL_SD, t4)
    c_small = ax * _ratio(_FRESNEL_CN, _FRESNEL_CD, t4)
    sin, cos = _sin_cos_half_pi_square(ax)
    big = jnp.where(small | jnp.isinf(ax), 2, ax)
    t = 1 / (np.pi * big * big)
    u = t * t
    f = 1 - u * _ratio(_FRESNEL_FN, _FRESNEL_FD, u)
    g = t * _ratio(_FRESNEL_GN, _FRESNEL_GD, u)
    # Past 36974 f = 1 and g = 0 to working precision (Cephes's cut).
    f = jnp.where(ax > 36974.0, 1, f)
    g = jnp.where(ax > 36974.0, 0, g)
    c_large = 0.5 + (f * sin - g * cos) / (np.pi * big)
    s_large = 0.5 - (f * cos + g * sin) / (np.pi * big)
    s = jnp.where(jnp.isinf(ax), 0.5, jnp.where(small, s_small, s_large))
    c = jnp.where(jnp.isinf(ax), 0.5, jnp.where(small, c_small, c_large))
    negative = x < 0
    return jnp.where(negative, -s, s), jnp.where(negative, -c, c)


@custom_jvp
def _fresnel(x):
    return _in_float(_fresnel_values, x)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    sin, cos = _sin_cos_half_pi_square(x)
    return _fresnel(x), (sin * x_dot, cos * x_dot)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt."""
    (x,) = promote_args_inexact("fresnel", x)
    _real_only("fresnel", x)
    return _fresnel(x)


# ---- sici ----------------------------------------------------------------------------------------

# For |x| <= 4: Si = x SN(x^2)/SD(x^2), Ci = gamma + log x + x^2 CN(x^2)/CD(x^2). Beyond, the
# auxiliary functions f and g in z = 1/x^2, one pair of tables for (4, 8], one past 8.
_SICI_SN = (-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06, 0.0009769454381704354,
            -0.04134703162294066, 1.0)
_SICI_SD = (2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07, 9.964121220438756e-05,
            0.01420852393261499, 1.0)
_SICI_CN = (2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06, -0.0004740072068734079,
            0.028915965260755523, -1.0)
_SICI_CD = (4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06, 0.00031744202477503275,
            0.051002805623644606, 4.0)
_SICI_FN4 = (4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304, 0.006810201324725182,
             0.00010893658065032867, 5.489002234213736e-07)
_SICI_FD4 = (1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499,
             0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07)
_SICI_GN4 = (0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691,
             0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06, 7.825790407440903e-09)
_SICI_GD4 = (1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888, 0.006223963454417684,
             0.0001732210814741771, 2.0265918208634397e-06, 7.825792189335346e-09)
_SICI_FN8 = (0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244,
             0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08, 9.41779576128513e-11,
             9.70507110881952e-14)
_SICI_FD8 = (1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129, 0.00035869648188185157,
             4.924350643178815e-06, 3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14)
_SICI_GN8 = (0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479,
             3.4894116550227946e-05, 3.471311670841167e-07, 1.7040445278204452e-09, 3.859459254302766e-12,
             3.1404009894636335e-15)
_SICI_GD8 = (1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258, 0.0019028442667439953,
             3.684755044425611e-05, 3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12,
             3.1404009894636335e-15)


def _sici_values(x):
    ax = jnp.abs(x)
    near = ax <= 4
    xn = jnp.where(near & (ax > 0), ax, 1)
    t = xn * xn
    si_near = xn * _ratio(_SICI_SN, _SICI_SD, t)
    ci_near = np.euler_gamma + jnp.log(xn) + t * _ratio(_SICI_CN, _SICI_CD, t)
    xf = jnp.where(near | jnp.isinf(ax), 5, ax)
    z = 1 / (xf * xf)
    below_8 = xf <= 8
    f = jnp.where(below_8, _ratio(_SICI_FN4, _SICI_FD4, z), _ratio(_SICI_FN8, _SICI_FD8, z)) / xf
    g = z * jnp.where(below_8, _ratio(_SICI_GN4, _SICI_GD4, z), _ratio(_SICI_GN8, _SICI_GD8, z))
    # Past 1e9 f = 1/x and g = 0 to working precision (Cephes's cut).
    f = jnp.where(xf > 1e9, 1 / xf, f)
    g = jnp.where(xf > 1e9, 0, g)
    sin, cos = jnp.sin(xf), jnp.cos(xf)
    si_far = np.pi / 2 - f * cos - g * sin
    ci_far = f * sin - g * cos
    si = jnp.where(near, jnp.where(ax == 0, 0, si_near), jnp.where(jnp.isinf(ax), np.pi / 2, si_far))
    ci = jnp.where(near, jnp.where(ax == 0, -np.inf, ci_near), jnp.where(jnp.isinf(ax), 0, ci_far))
    # Ci of a negative x is Ci(|x|), the real part of its principal value, as in JAX.
    return (jnp.sign(x) * si).astype(x.dtype), jnp.where(x == -np.inf, np.nan, ci).astype(x.dtype)


@custom_jvp
def _sici(x):
    return _in_float(_sici_values, x)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    safe = jnp.where(x == 0, 1, x)
    return _sici(x), (jnp.where(x == 0, 1, jnp.sin(safe) / safe) * x_dot, jnp.cos(x) / x * x_dot)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): int_0^x sin(t)/t dt and
    gamma + log|x| + int_0^x (cos(t) - 1)/t dt."""
    (x,) = promote_args_inexact("sici", x)
    _real_only("sici", x)
    return _sici(x)
