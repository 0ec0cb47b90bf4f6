"""Control flow: cond (lax.cond, lax.switch), while (lax.while_loop, lax.fori_loop), scan (lax.scan, lax.map).

The Python functions are traced to jaxprs once (branches, loop bodies); their closed-over values
become explicit operands, as in JAX, so the primitives are pure functions of their operands and
print as JAX prints them. Under jit they lower into the C++ graph (each primitive's jaxpr_lowering);
called eagerly they run as the jit of the one primitive, or, while the core lacks the
control-flow ops, as Python loops over compiled bodies. The primitives live in conditionals.py
and loops.py (the loops' differentiation and batching rules in loop_rules.py), their shared helpers
in control_flow_common.py.
"""
from xjax._src.lax.conditionals import cond, cond_p, switch  # noqa: F401
from xjax._src.lax.loops import fori_loop, map, scan, scan_p, while_loop, while_p  # noqa: F401,A004
