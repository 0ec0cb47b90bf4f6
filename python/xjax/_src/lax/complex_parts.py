"""The complex-number primitives: real, imag, conj and complex(re, im), each with its rules.

As in JAX: real and imag take complex operands and give their float parts; conj takes float or
complex operands and gives a complex result; complex takes two float32 or float64 operands (lax
broadcasting). All four are linear: their transposes are JAX's (real's cotangent becomes the real
part of a complex one, imag's the negated imaginary part, complex's splits into real(t) and
imag(-t)), which gives JAX's convention for gradients of real functions of complex inputs.
"""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import ad, batching
from xjax._src.lax.base import asarray, define_primitive, scalars_like
from xjax._src.lax.elementwise import broadcast_shapes, broadcasting_lowering, neg

__all__ = ["real", "imag", "conj", "complex", "real_p", "imag_p", "conj_p", "complex_p"]


def _part_eval(name):
    def abstract_eval(x):
        if not dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of "
                            "complexfloating.")
        return core.ShapedArray(x.shape, dtypes.complex_part_dtype(x.dtype), x.weak_type)

    return abstract_eval


def _check_complex_elements(name, dtype):
    if dtype not in (dtypes.float32, dtypes.float64) and not (name == "conj" and dtypes.is_complex(dtype)):
        accepted = "complexfloating, float32, float64" if name == "conj" else "float32, float64"
        raise TypeError(f"{name} does not accept dtype {dtype.name}. Accepted dtypes are subtypes of {accepted}.")


def _conj_eval(x, *, input_dtype):
    _check_complex_elements("conj", x.dtype)
    out = x.dtype if dtypes.is_complex(x.dtype) else dtypes.complex_dtype_of(x.dtype)
    return core.ShapedArray(x.shape, out, x.weak_type)


def _complex_eval(x, y):
    if x.dtype != y.dtype:
        raise TypeError(f"lax.complex requires arguments to have the same dtypes, got {x.dtype.name}, "
                        f"{y.dtype.name}.")
    _check_complex_elements("complex", x.dtype)
    shape = broadcast_shapes("complex", [x.shape, y.shape])
    return core.ShapedArray(shape, dtypes.complex_dtype_of(x.dtype), x.weak_type and y.weak_type)


def _conj_lowering(ctx, x, *, input_dtype):
    out = ctx.avals_out[0].dtype
    if not dtypes.is_complex(ctx.avals_in[0].dtype):  # the conjugate of a real number is itself
        return ctx.op("convert_element_type", x, new_dtype=out)
    return ctx.op("conj", x)


real_p = define_primitive("real", _part_eval("real"))
imag_p = define_primitive("imag", _part_eval("imag"))
conj_p = define_primitive("conj", _conj_eval)
conj_p.lowering = _conj_lowering
complex_p = define_primitive("complex", _complex_eval)
complex_p.lowering = broadcasting_lowering("complex")


def real(x):
    """The real part of a complex array (float32 for complex64)."""
    return real_p.bind(asarray(x))


def imag(x):
    """The imaginary part of a complex array."""
    return imag_p.bind(asarray(x))


def conj(x):
    """The complex conjugate (a complex result, also for a float operand)."""
    x = asarray(x)
    return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


def complex(x, y):  # noqa: A001 - lax's name
    """x + i y from float32 or float64 parts of one dtype."""
    return complex_p.bind(*scalars_like((x, y)))


def _zeros_of(t):
    return asarray(np.zeros((), core.get_aval(t).dtype))


def _aval_of(x):
    return x.aval if ad.is_undefined(x) else core.get_aval(x)


def _real_transpose(t, x):
    return [complex(t, _zeros_of(t))]


def _imag_transpose(t, x):
    return [complex(_zeros_of(t), neg(t))]


def _conj_transpose(t, x, *, input_dtype):
    return [conj(t) if dtypes.is_complex(input_dtype) else real(t)]


def _complex_transpose(t, x, y):
    return [ad.unbroadcast(real(t), _aval_of(x)), ad.unbroadcast(imag(neg(t)), _aval_of(y))]


def _skip_zero(rule):
    def transpose(t, *args, **params):
        if type(t) is ad.Zero:
            return [None] * len(args)
        return rule(t, *args, **params)

    return transpose


ad.deflinear(real_p, _skip_zero(_real_transpose))
ad.deflinear(imag_p, _skip_zero(_imag_transpose))
ad.deflinear(conj_p, _skip_zero(_conj_transpose))
ad.deflinear(complex_p, _skip_zero(_complex_transpose))
for _p in (real_p, imag_p, conj_p):
    batching.defvectorized(_p)
batching.defbroadcasting(complex_p)
