"""The errors of tracing, as JAX names and words them (`xjax.errors`).

Each message ends with a pointer to JAX's error page; messages about a tracer say which
function was being traced and which arguments the value depends on (see `origin_msg` in
interpreters.partial_eval).
"""
import traceback

from xjax import _core

_ERROR_PAGE = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
    """Appends the link to the error's documentation, as JAX's errors do."""

    def __init__(self, message):
        super().__init__(f"{message}\nSee {_ERROR_PAGE}#jax.errors.{type(self).__name__}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    """A TypeError raised by JAX's machinery."""


class JAXIndexError(_JAXErrorMixin, IndexError):
    """An IndexError raised by JAX's machinery."""


def long_str(aval):
    """`float32[3,4]`, `float32[2]{V:x}`: an aval as JAX's error messages write it."""
    vma = getattr(aval, "vma", ())
    shown = "" if not vma else "{V:" + (vma[0] if len(vma) == 1 else f"({','.join(vma)})") + "}"
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]{shown}"


def _error_repr(tracer):
    return f"traced array with shape {long_str(tracer.aval)}"


def _origin(tracer):
    fn = getattr(tracer, "_origin_msg", None)
    return fn() if fn is not None else ""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where Python needs a concrete one."""

    def __init__(self, tracer, context=""):
        super().__init__("Abstract tracer value encountered where concrete value is expected: "
                         f"{_error_repr(tracer)}\n{context}{_origin(tracer)}\n")


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean mask indexing with a traced mask (its result shape would depend on the data)."""

    def __init__(self, tracer):
        super().__init__(f"Array boolean indices must be concrete; got {tracer}\n")


class TracerArrayConversionError(JAXTypeError):
    """A tracer was converted to a NumPy array (np.asarray, NumPy functions)."""

    def __init__(self, tracer):
        super().__init__("The numpy.ndarray conversion method __array__() was called on "
                         f"{_error_repr(tracer)}{_origin(tracer)}")


class TracerIntegerConversionError(JAXTypeError):
    """A tracer was used where Python needs an int (__index__: indexing lists, range)."""

    def __init__(self, tracer):
        super().__init__(f"The __index__() method was called on {_error_repr(tracer)}{_origin(tracer)}")


class TracerBoolConversionError(ConcretizationTypeError):
    """A tracer was used where Python needs True/False (if, while, and, or)."""

    def __init__(self, tracer):
        JAXTypeError.__init__(self, f"Attempted boolean conversion of {_error_repr(tracer)}.{_origin(tracer)}")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the function being transformed (saved to a global, returned by a side channel)."""

    def __init__(self, msg):
        super().__init__(msg)


# An error while a compiled program ran (a RuntimeError): a host callback's exception arrives as one,
# as in JAX. The core's class, so that callbacks run by compiled graphs raise it too.
JaxRuntimeError = _core.JaxRuntimeError


def callback_error(exc):
    """The JaxRuntimeError JAX raises for exception `exc` of a host callback: its message is the
    callback's traceback, ending in the exception's type and message (libraries look for those)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {text}")


class KeyReuseError(JAXTypeError):
    """A PRNG key was reused (only checked when jax_debug_key_reuse is on)."""


def escaped_tracer_error(tracer, detail=None):
    """The UnexpectedTracerError for a tracer used after its trace ended."""
    msg = ("Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a "
           f"reference to an intermediate value with type {long_str(tracer.aval)} wrapped in a "
           f"{type(tracer).__name__} to escape the scope of the transformation.\n"
           "JAX transformations require that functions explicitly return their outputs, and disallow saving "
           "intermediate values to global state.")
    dbg = getattr(tracer._trace, "debug_info", None)
    if dbg is not None:
        msg += f"\nThe function being traced when the value leaked was {dbg.func_src_info} traced for {dbg.traced_for}."
    msg += ("\nTo catch the leak earlier, try setting the environment variable JAX_CHECK_TRACER_LEAKS or using "
            "the `jax.checking_leaks` context manager.")
    if detail:
        msg += f"Detail: {detail}"
    return UnexpectedTracerError(msg)


def concretization_error(tracer, fname, suggest_astype=False):
    """The error of a Python conversion (`float(x)`, `x.item()`, ...) applied to a tracer."""
    context = f"The problem arose with the `{fname}` function. "
    if suggest_astype:
        context += (f"If trying to convert the data type of a value, try using `x.astype({fname})` "
                    f"or `jnp.array(x, {fname})` instead.")
    return ConcretizationTypeError(tracer, context)


class ShardingTypeError(Exception):
    """JAX's error for an operation whose result type over Explicit mesh axes is ambiguous or refused."""
