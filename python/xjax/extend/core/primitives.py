"""xjax.extend.core.primitives (jax.extend.core.primitives): the primitives under JAX's names.

`call_p` and `closed_call_p` are JAX's call primitives; xjax never emits them (a call is inlined
or is a `jit`), so they have no rules: libraries compare equations against them.
"""
from xjax._src.core import Primitive as _Primitive
from xjax._src.jit import jit_p  # noqa: F401
from xjax._src.lax import *  # noqa: F401,F403

call_p = _Primitive("call", multiple_results=True)
closed_call_p = _Primitive("closed_call", multiple_results=True)
