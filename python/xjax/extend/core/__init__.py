"""xjax.extend.core (jax.extend.core): primitives and the tracing state, for libraries."""
import weakref

from xjax._src.core import Primitive, current_trace  # noqa: F401


class Effect:
    """The base class of side effects a primitive may declare (JAX's name; xjax tracks none yet)."""


class OpaqueTraceState:
    """Which trace is current, comparable with == and nothing else (libraries check that a value is
    used under the trace it was made in)."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace):
        self._trace_ref = weakref.ref(trace)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self):
        return hash(self._trace_ref)


def get_opaque_trace_state(convention=None):
    """The current trace, opaquely: equal states mean the same trace is current."""
    del convention  # JAX's argument names the caller; the state is the same for all
    return OpaqueTraceState(current_trace())


from xjax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var  # noqa: F401,E402
from xjax.extend.core import primitives  # noqa: F401,E402
