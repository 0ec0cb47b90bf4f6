"""Lowering a primitive by a Python function of its operands (JAX's `mlir.lower_fun`): the function
is traced at each equation's types and the jaxpr it gives is lowered in the equation's place."""
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jaxpr import params_key


class PythonLowering:
    """fun(*operands, **params), traced once per (operand types, params)."""

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results
        self._jaxprs = {}

    def __call__(self, *args, **params):
        out = self.fun(*args, **params)
        return list(out) if self.multiple_results else [out]

    def jaxpr(self, avals, params):
        key = (tuple(avals), params_key(params))
        closed = self._jaxprs.get(key)
        if closed is None:
            closed = self._jaxprs[key] = pe.trace_to_jaxpr(lambda *xs: self(*xs, **params), list(avals))
        return closed

    def lower(self, lowerer, eqn, ins):
        return lowerer.lower_closed_jaxpr(self.jaxpr([a.aval for a in eqn.invars], eqn.params), ins)

    def install(self, primitive):
        """Makes this the primitive's lowering, and its eager impl when it has none (JAX computes a
        primitive eagerly by compiling its lowering)."""
        primitive.def_rules(jaxpr_lowering=self.lower, can_lower=lambda params: True)
        if primitive.impl is None:
            fun = self.fun
            primitive.impl = fun
