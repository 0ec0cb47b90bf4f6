"""xjax.api_util (jax.api_util): JAX's helpers for writing transformations over wrapped functions
are not part of xjax; the names exist so that libraries import, and raise where called."""


def _missing(name):
    def helper(*args, **kwargs):
        raise NotImplementedError(f"jax.api_util.{name}: xjax does not implement JAX's wrapped-function helpers "
                                  f"(trace with xjax.make_jaxpr instead)")

    helper.__name__ = name
    return helper


debug_info, flatten_fun, flatten_fun_nokwargs, shaped_abstractify = (
    _missing(n) for n in ("debug_info", "flatten_fun", "flatten_fun_nokwargs", "shaped_abstractify"))
