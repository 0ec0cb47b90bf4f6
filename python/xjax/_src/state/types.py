"""The types of mutable array references, under JAX's names (`jax._src.state.types`).

xjax has no mutable references yet: no value is a Ref and no abstract value an AbstractRef, so
`isinstance` checks against them (which libraries make to find references) answer False, truly.
"""


class AbstractRef:
    """The abstract value of a mutable array reference."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("mutable array references (jax.Ref) are not implemented in xjax yet")


class Ref:
    """A mutable array reference (jax.Ref / jax.experimental.MutableArray)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("mutable array references (jax.Ref) are not implemented in xjax yet")
