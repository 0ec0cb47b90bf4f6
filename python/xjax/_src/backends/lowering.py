"""Lowering primitives to the C++ graph: the rules' context and the one-primitive compile."""
import numpy as np

from xjax import _core


class LoweringContext:
    """What a lowering rule sees: the graph being built and the avals of the current equation."""

    __slots__ = ("graph", "avals_in", "avals_out")

    def __init__(self, graph, avals_in=(), avals_out=()):
        self.graph = graph
        self.avals_in = avals_in
        self.avals_out = avals_out

    def op(self, name, *inputs, **attrs):
        """Adds C++ op `name` and returns its result values."""
        return self.graph.add(name, list(inputs), {k: self.attr(v) for k, v in attrs.items() if v is not None})

    @staticmethod
    def attr(v):
        """A param value as a C++ attribute: dtypes by name, bools as ints, sequences as int lists."""
        return _attr(v)


def _attr(v):
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (tuple, list)):
        return [int(e) for e in v]
    return v


def abstract_eval(prim, avals_in, params):
    out = prim.rule("abstract_eval")(*avals_in, **params)
    return list(out) if prim.multiple_results else [out]


def single_primitive_graph(prim, avals_in, params):
    """The graph holding one primitive over parameters of avals_in; returns (graph, output avals)."""
    avals_out = abstract_eval(prim, avals_in, params)
    graph = _core.Graph()
    inputs = [graph.parameter(a.shape, a.dtype.name) for a in avals_in]
    ctx = LoweringContext(graph, avals_in, avals_out)
    outs = prim.rule("lowering")(ctx, *inputs, **params)
    graph.set_outputs(list(outs))
    return graph, avals_out


def lower_single_primitive(prim, avals_in, params):
    """Compiles a graph holding one primitive; returns (Executable, output avals)."""
    graph, avals_out = single_primitive_graph(prim, avals_in, params)
    exe = _core.compile(graph)
    got = exe.output_types
    want = [(a.shape, a.dtype.name) for a in avals_out]
    if [(tuple(s), d) for s, d in got] != want:
        raise AssertionError(f"internal error: {prim.name} lowering produced {got}, abstract eval said {want}")
    return exe, avals_out
