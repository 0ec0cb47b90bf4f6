"""xjax.core (jax.core): the tracing core's public names, as JAX 0.10 exports them.

More of JAX's `jax.core` surface lives in `xjax.extend.core`, as it does in JAX.
"""
from xjax._src.core import Primitive as _Primitive  # noqa: F401 - jax.extend.core re-exports it
from xjax._src.core import ShapedArray, Trace, Tracer, ensure_compile_time_eval  # noqa: F401
from xjax._src.jaxpr import eval_jaxpr  # noqa: F401
