"""The few array operations that the rules of this package apply themselves: broadcasting and
reshaping tangents and batched values, moving batch axes, summing cotangents.

They are lax's functions, and lax sits above the interpreters: lax installs them here when it is
imported (lax/__init__.py), so that this package imports nothing from the layers above it (JAX's
lax fills ad_util's tables in the same way)."""


class ArrayOps:
    """lax's functions under their lax names (add_any: the sum of two tangents, add_any_p), and
    pvary_p, the primitive a jaxpr trace inserts before an operand varying over too few manual axes."""

    __slots__ = ("add_any", "broadcast_in_dim", "expand_dims", "reduce_sum", "reshape", "squeeze", "transpose",
                 "pvary_p")


ops = ArrayOps()


def install(**functions):
    """Called once by lax with every function of ArrayOps."""
    for name, fn in functions.items():
        setattr(ops, name, fn)  # (__slots__ refuses a name ArrayOps does not list)
