"""xjax.numpy on tracers: every function works from abstract values alone (shape/dtype/weak type), as it
must under jit, grad and vmap. A minimal recording trace stands in for the transformations here."""
import numpy as np
import pytest

import xjax.numpy as jnp
from xjax._src import core


class _Tracer(core.Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace, aval):
        self._trace = trace
        self._aval = aval

    @property
    def aval(self):
        return self._aval

    def __repr__(self):
        return f"Traced<{self._aval}>"


class _RecordingTrace(core.Trace):
    """Abstract evaluation only: each primitive gives tracers of its output avals, and is recorded."""

    def __init__(self):
        self.prims = []

    def process_primitive(self, primitive, args, params):
        avals = [core.get_aval(a) for a in args]
        out = primitive.rule("abstract_eval")(*avals, **params)
        self.prims.append(primitive.name)
        if primitive.multiple_results:
            return [_Tracer(self, a) for a in out]
        return _Tracer(self, out)


def trace(fn, *avals):
    """(output avals, primitive names) of fn applied to tracers of the given avals."""
    t = _RecordingTrace()
    args = [_Tracer(t, core.ShapedArray(s, np.dtype(d), w)) for s, d, w in avals]
    with core.set_current_trace(t):
        out = fn(*args)
    leaves = out if isinstance(out, (tuple, list)) else [out]
    return [core.get_aval(o) for o in leaves], t.prims


F = ((3, 4), "float32", False)
I = ((3, 4), "int32", False)
V = ((4,), "float32", False)
WS = ((), "float32", True)

CASES = [
    (lambda x: x * 2 + 1, [F], [((3, 4), "float32", False)]),
    (lambda x: x * 2.5, [I], [((3, 4), "float32", True)]),
    (lambda x: jnp.sin(x) / jnp.sum(x, axis=0), [F], [((3, 4), "float32", False)]),
    (lambda x, y: x @ y, [F, V], [((3,), "float32", False)]),
    (lambda x: jnp.where(x > 0, x, 0.0), [F], [((3, 4), "float32", False)]),
    (lambda x: x[1:, ::-1][:, None, 0], [F], [((2, 1), "float32", False)]),
    (lambda x, i: x[i], [F, ((), "int32", False)], [((4,), "float32", False)]),
    (lambda x, i: x[:, i], [F, ((2,), "int32", False)], [((3, 2), "float32", False)]),
    (lambda x, i: x.at[i].add(1.0), [F, ((2,), "int32", False)], [((3, 4), "float32", False)]),
    (lambda x: x.at[0, 1:3].set(0.0), [F], [((3, 4), "float32", False)]),
    (lambda x: jnp.mean(x, axis=-1, keepdims=True), [F], [((3, 1), "float32", False)]),
    (lambda x: jnp.var(x, axis=0), [I], [((4,), "float32", False)]),
    (lambda x: jnp.argmax(x, axis=1), [F], [((3,), "int32", False)]),
    (lambda x: jnp.reshape(x, (-1,)), [F], [((12,), "float32", False)]),
    (lambda x: jnp.concatenate([x, x], axis=1), [F], [((3, 8), "float32", False)]),
    (lambda x: jnp.stack([x, x]), [F], [((2, 3, 4), "float32", False)]),
    (lambda x: jnp.einsum("ij,kj->ik", x, x), [F], [((3, 3), "float32", False)]),
    (lambda x: jnp.sort(x, axis=0), [F], [((3, 4), "float32", False)]),
    (lambda x: jnp.argsort(x), [F], [((3, 4), "int32", False)]),
    (lambda x: jnp.cumsum(x, axis=1), [I], [((3, 4), "int32", False)]),
    (lambda x: jnp.clip(x, 0, 1), [F], [((3, 4), "float32", False)]),
    (lambda x: jnp.linalg.norm(x, axis=1), [F], [((3,), "float32", False)]),
    (lambda x: jnp.take(x, jnp.asarray([0, 2]), axis=1), [F], [((3, 2), "float32", False)]),
    (lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), [F], [((3, 4), "float32", False)]),
    (lambda x: jnp.median(x, axis=0), [F], [((4,), "float32", False)]),
    (lambda x: jnp.pad(x, 1, mode="edge"), [F], [((5, 6), "float32", False)]),
    (lambda x: jnp.roll(x, 1, axis=1), [F], [((3, 4), "float32", False)]),
    (lambda x, s: jnp.roll(x, s, axis=1), [F, ((), "int32", False)], [((3, 4), "float32", False)]),
    (lambda x: jnp.tile(x, 2), [V], [((8,), "float32", False)]),
    (lambda x: jnp.repeat(x, 2, axis=0), [F], [((6, 4), "float32", False)]),
    (lambda x: jnp.nonzero(x, size=3)[0], [V], [((3,), "int32", False)]),
    (lambda x: jnp.unique(x, size=2), [V], [((2,), "float32", False)]),
    (lambda x: jnp.searchsorted(x, 0.5), [V], [((), "int32", False)]),
    (lambda x: jnp.floor_divide(x, 3), [I], [((3, 4), "int32", False)]),
    (lambda x: x ** 2, [WS], [((), "float32", True)]),
    (lambda x: jnp.array([x, x * 2]), [WS], [((2,), "float32", False)]),
    (lambda x: jnp.convolve(x, x), [V], [((7,), "float32", False)]),
    (lambda x: jnp.triu(x), [F], [((3, 4), "float32", False)]),
    (lambda x: jnp.diagonal(x), [F], [((3,), "float32", False)]),
    (lambda x: jnp.isclose(x, 1.0), [F], [((3, 4), "bool", False)]),
    (lambda x: list(x)[2], [F], [((4,), "float32", False)]),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_traces_abstractly(k):
    fn, avals, want = CASES[k]
    got, _ = trace(fn, *avals)
    assert [(tuple(a.shape), a.dtype.name, a.weak_type) for a in got] == [(s, d, w) for s, d, w in want]


def test_tiny_ops_bind_one_primitive():
    _, prims = trace(lambda x, y: x * y, V, V)
    assert prims == ["mul"]
    _, prims = trace(lambda x: x + 1.0, V)
    assert prims == ["add"]
    _, prims = trace(lambda x: x[1], F)
    assert prims == ["slice", "squeeze"]  # as JAX


def test_concrete_values_required_raise_clearly():
    with pytest.raises(IndexError, match="Array boolean indices must be concrete"):
        trace(lambda x: x[x > 0], V)
    with pytest.raises(TypeError, match="size argument of jnp.nonzero must be statically specified"):
        trace(lambda x: jnp.nonzero(x), V)
    with pytest.raises(TypeError, match="__array__"):
        trace(lambda x: np.asarray(x), V)
    with pytest.raises(TypeError, match="boolean conversion of traced array"):
        trace(lambda x: 1 if x.sum() > 0 else 0, V)
