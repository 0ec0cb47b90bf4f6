"""xjax.core (jax.core): the tracing core's public names, as JAX 0.10 exports them.

More of JAX's `jax.core` surface lives in `xjax.extend.core`, as it does in JAX.
"""
from typing import Any as _Any, Union as _Union

from xjax._src.core import (AbstractValue, ShapedArray, Trace, Tracer, ensure_compile_time_eval,  # noqa: F401
                            eval_context, max_dim, min_dim)
from xjax._src.jaxpr import Literal as _Literal, Var as _Var, eval_jaxpr  # noqa: F401

Atom = _Union[_Var, _Literal]  # an equation's operand
ParamDict = dict[str, _Any]  # an equation's params
Value = _Any  # what eval_jaxpr's environment holds
