"""xjax.interpreters.partial_eval (jax.interpreters.partial_eval).

xjax partially evaluates jaxprs (xjax._src.interpreters.partial_eval.partial_eval_jaxpr), not
JAX's partially known Python values: the names exist, so that libraries import, and fail by name
where they are called.
"""


def _missing(name):
    raise NotImplementedError(f"jax.interpreters.partial_eval.{name}: xjax does not implement JAX's partial "
                              f"evaluation of Python functions (trace with xjax.make_jaxpr instead)")


class PartialVal(tuple):
    """JAX's (abstract value, known value) pair."""

    @classmethod
    def known(cls, value):
        _missing("PartialVal")

    unknown = known


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    _missing(name)
