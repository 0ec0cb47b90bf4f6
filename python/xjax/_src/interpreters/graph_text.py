"""A readable listing of the C++ graph a jaxpr lowers to (what `Lowered.as_text()` shows)."""
from xjax import _core
from xjax._src.interpreters import graph_lowering as gl


class _RecordingGraph:
    """A `_core.Graph` that also writes each node it gets as a line of text."""

    def __init__(self):
        self._g = _core.Graph()
        self.params = []
        self.lines = []
        self.outputs = []

    def _name(self, ref):
        node, index = ref
        return f"%{node}" if index == 0 else f"%{node}#{index}"

    def _type(self, ref):
        shape, dtype = self._g.type(ref)
        return f"{dtype}[{','.join(str(d) for d in shape)}]"

    def parameter(self, shape, dtype):
        ref = self._g.parameter(shape, dtype)
        self.params.append(f"{self._name(ref)}: {self._type(ref)}")
        return ref

    def add(self, op, inputs, attrs):
        refs = self._g.add(op, inputs, attrs)
        self._record(op, inputs, attrs, refs)
        return refs

    def add_subgraph_op(self, op, inputs, attrs, subgraphs):
        refs = self._g.add_subgraph_op(op, inputs, attrs, [s._g for s in subgraphs])
        self._record(op, inputs, attrs, refs)
        for i, s in enumerate(subgraphs):
            self.lines.extend("  " + line for line in s.text(f"region{i}").splitlines())
        return refs

    def _record(self, op, inputs, attrs, refs):
        lhs = ", ".join(f"{self._name(r)}: {self._type(r)}" for r in refs)
        args = ", ".join(self._name(r) for r in inputs)
        attr = " {" + ", ".join(f"{k}={v}" for k, v in sorted(attrs.items())) + "}" if attrs else ""
        self.lines.append(f"{lhs} = {op}({args}){attr}" if refs else f"{op}({args}){attr}")

    def set_outputs(self, outs):
        self._g.set_outputs(outs)
        self.outputs = [f"{self._name(r)}: {self._type(r)}" for r in outs]

    def type(self, ref):
        return self._g.type(ref)

    def text(self, name):
        body = "".join(f"  {line}\n" for line in self.lines)
        return f"func @{name}({', '.join(self.params)}) {{\n{body}  return {', '.join(self.outputs)}\n}}\n"


def graph_text(closed, module_name):
    """The graph of a ClosedJaxpr as text: parameters (inputs, constants, then externals), ops, results."""
    jaxpr = closed.jaxpr
    g = _RecordingGraph()
    ins, const_refs, ext, _ = gl.graph_inputs(g, closed)
    lowerer = gl.GraphLowerer(g, ext)
    outs = lowerer.lower_jaxpr(jaxpr, const_refs, ins)
    g.set_outputs(outs)
    gl.unregister_callbacks(lowerer.callbacks)
    body = "".join("  " + line + "\n" for line in g.text("main").splitlines())
    return f"module @{module_name} {{\n{body}}}\n"
