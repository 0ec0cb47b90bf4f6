"""xjax.extend.linear_util (jax.extend.linear_util): WrappedFun and its transformations."""
from xjax._src.linear_util import (StoreException, WrappedFun, cache, merge_linear_aux,  # noqa: F401
                                   transformation, transformation2, transformation_with_aux,
                                   transformation_with_aux2, wrap_init)
