"""xjax.experimental.sparse (jax.experimental.sparse): sparse arrays are not implemented yet; the
names exist so that libraries import, and using them raises NotImplementedError."""


class BCOO:
    """JAX's batched-coordinate sparse array: not implemented in xjax yet."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("jax.experimental.sparse.BCOO: xjax has no sparse arrays yet")

    @classmethod
    def fromdense(cls, *args, **kwargs):
        cls()

    from_scipy_sparse = fromdense
