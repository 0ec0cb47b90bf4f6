"""The compile and trace caches in one place: their sizes (a debug helper), limits, and clearing.

- eager_executables: one-primitive executables of eager dispatch, by (primitive, params, types);
- jaxpr_programs: compiled jaxprs by structure (jit entries, eager control flow), with the
  number of graph compilations so far;
- control_flow_traces: functions given to control flow whose traces are kept.
Both executable caches are bounded (least recently used entries go first).
"""
from xjax._src import jit_cache
from xjax._src.backends import cpu
from xjax._src.interpreters import graph_lowering
from xjax._src.lax import control_flow_common


def cache_info():
    """{cache name: {size, maxsize, hits, misses, evictions, ...}} for the runtime's caches."""
    return {
        "eager_executables": cpu.cache_info(),
        "jaxpr_programs": graph_lowering.cache_info(),
        "control_flow_traces": {"size": len(control_flow_common._traces)},
    }


def set_cache_limits(eager_executables=None, jaxpr_programs=None):
    """Sets the maximum number of entries of the bounded caches (None leaves one as it is)."""
    if eager_executables is not None:
        cpu._executables.resize(eager_executables)
    if jaxpr_programs is not None:
        graph_lowering._programs.resize(jaxpr_programs)


def clear_caches():
    """Drops every compiled executable and cached trace (jit's too): later calls compile again."""
    cpu.clear_cache()
    graph_lowering.clear_cache()
    control_flow_common.clear_trace_cache()
    jit_cache.clear_all_caches()
