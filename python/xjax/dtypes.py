"""xjax.dtypes (jax.dtypes): JAX's dtypes, their promotion, and the extended dtypes (PRNG keys)."""
from xjax._src.autodiff import float0  # noqa: F401
from xjax._src.dtypes import (ExtendedDType, bfloat16, canonicalize_dtype, extended, prng_key,  # noqa: F401
                              result_type)
from xjax._src.numpy.dtype_api import finfo, iinfo, issubdtype  # noqa: F401
