"""xjax.custom_derivatives: user-defined differentiation rules, under JAX's names."""
from xjax._src.custom_calls import custom_jvp_call_p, custom_lin_p, custom_vjp_call_p  # noqa: F401
from xjax._src.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, custom_vjp_primal_tree_values, zero_from_primal)
from xjax._src.custom_gradient import closure_convert, custom_gradient  # noqa: F401
