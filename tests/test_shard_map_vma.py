"""shard_map with check_vma=True (the default): the body's values typed with the manual mesh axes
they vary over, as JAX types them, so make_jaxpr prints the body as JAX 0.10.2 does (`f32[2,2]{V:x}`,
the `pvary` equations JAX's tracing inserts, `psum_invariant`), residuals split over the axes they
vary over, and out_specs checked against the types with JAX's errors. The texts and errors were
recorded from JAX (XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu) running the
same programs. The values: the same with check_vma=True and False, eagerly and under jit."""
import re

import numpy as np

from isolated import run_isolated

_PRELUDE = """\
import numpy as np, xjax as jax, xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AxisType, PartitionSpec as P
"""

# The programs, as JAX ran them with VMA = True (the names the errors use: sm, A, B, C, mesh).
_PROGRAMS = """
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
A, B, C = jnp.arange(16.0).reshape(4, 4) / 8, jnp.arange(4.0).reshape(2, 2) / 4, jnp.arange(8.0).reshape(2, 4) / 8
sm = lambda f, i, o: jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, check_vma=VMA)
progs = {
  "mixed": (sm(lambda a, b: (lax.psum(a * 2 + b, "x"), jnp.sin(b)), (P("x", "y"), P()), (P(None, "y"), P())), (A, B)),
  "pmax_all_gather": (sm(lambda a: (lax.pmax(a, "y"), lax.all_gather(a, "x", tiled=True)), P("x", "y"),
                         (P("x"), P("x", "y"))), (A,)),
  "axis_index": (sm(lambda a: a + lax.axis_index("x"), P(), P("x")), (B,)),
  "ppermute": (sm(lambda a: lax.ppermute(a, "x", [(0, 1), (1, 0)]), P("x"), P("x")), (A,)),
  "psum_of_invariant": (sm(lambda a: lax.psum(a, "x"), P(), P()), (B,)),
  "where": (sm(lambda a, b: jnp.where(a > 0.5, a, b), (P("x"), P()), P("x")), (A, C)),
  "dot_tanh": (sm(lambda a, w: jnp.tanh(a @ w), (P("x"), P()), P("x")), (A, A)),
  "psum_scatter": (sm(lambda a: lax.psum_scatter(a, "y", tiled=True), P("x"), P("x", "y")), (A,)),
  "pmean": (sm(lambda a: lax.pmean(a, ("x", "y")), P("x", "y"), P()), (A,)),
  "jit_inside": (sm(jax.jit(lambda a, b: a * b), (P("x"), P()), P("x")), (A, C)),
  "in_jit": (jax.jit(sm(lambda a: a * 3.0, P("y"), P("y"))), (A,)),
}
fsb = sm(lambda a, b: lax.psum(jnp.sin(a) * b, "x"), (P("x"), P()), P())
extra = {
  "vmap": (jax.vmap(sm(lambda a: lax.psum(a * 2, "x"), P("x"), P())), (jnp.ones((3, 4, 4)),)),
  "jvp": (lambda a, b: jax.jvp(fsb, (a, b), (a, b)), (A, C)),
  "linearize": (lambda a, b: jax.linearize(fsb, a, b)[1](a, b), (A, C)),
}
progs.update(extra)
"""

_ERRORS = """
def err(f, *args):
    try:
        jax.make_jaxpr(f)(*args)
        return "no error"
    except ValueError as e:
        return str(e).split("\\n--------------------")[0]
errs = {
  "gather_replicated": err(sm(lambda a: lax.all_gather(a, "x", tiled=True), P("x", "y"), P(None, "y")), A),
  "two_outputs": err(sm(lambda a, b: (a * 2, b + lax.axis_index("y")), (P("x", "y"), P()), (P("x"), P())), A, B),
  "pmax_keeps_x": err(sm(lambda a: lax.pmax(a, "y"), P("x", "y"), P()), A),
  "psum_ok": err(sm(lambda a: lax.psum(a, "x") * 2, P("x", "y"), P(None, "y")), A),
}
"""

_JAX_TEXTS = {
    'mixed': "{ lambda ; a:f32[4,4] b:f32[2,2]. let\n    c:f32[2,4] d:f32[2,2] = shard_map[\n      check_vma=True\n      in_specs=(P('x', 'y'), P())\n      jaxpr={ lambda ; e:f32[2,2]{V:(x,y)} f:f32[2,2]. let\n          g:f32[]{V:(x,y)} = pvary[axes=('x', 'y')] 2.0:f32[]\n          h:f32[2,2]{V:(x,y)} = mul e g\n          i:f32[2,2]{V:(x,y)} = pvary[axes=('x', 'y')] f\n          j:f32[2,2]{V:(x,y)} = add h i\n          k:f32[2,2]{V:y} = psum_invariant[axes=('x',)] j\n          l:f32[2,2] = sin f\n        in (k, l) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(None, 'y'), P())\n    ] a b\n  in (c, d) }",
    'pmax_all_gather': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,2] c:f32[8,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x', 'y'),)\n      jaxpr={ lambda ; d:f32[2,2]{V:(x,y)}. let\n          e:f32[2,2]{V:x} = pmax[axes=('y',) axis_index_groups=None] d\n          f:f32[4,2]{V:(x,y)} = all_gather[\n            all_gather_dimension=0\n            axis_index_groups=None\n            axis_name=('x',)\n            axis_size=2\n            tiled=True\n          ] d\n        in (e, f) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',), P('x', 'y'))\n    ] a\n  in (b, c) }",
    'axis_index': "{ lambda ; a:f32[2,2]. let\n    b:f32[4,2] = shard_map[\n      check_vma=True\n      in_specs=(P(),)\n      jaxpr={ lambda ; c:f32[2,2]. let\n          d:i32[]{V:x} = axis_index[axis_name=x] \n          e:f32[]{V:x} = convert_element_type[new_dtype=float32 weak_type=False] d\n          f:f32[2,2]{V:x} = pvary[axes=('x',)] c\n          g:f32[2,2]{V:x} = add f e\n        in (g,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',),)\n    ] a\n  in (b,) }",
    'ppermute': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',),)\n      jaxpr={ lambda ; c:f32[2,4]{V:x}. let\n          d:f32[2,4]{V:x} = ppermute[axis_name=('x',) perm=((0, 1), (1, 0))] c\n        in (d,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',),)\n    ] a\n  in (b,) }",
    'psum_of_invariant': "{ lambda ; a:f32[2,2]. let\n    b:f32[2,2] = shard_map[\n      check_vma=True\n      in_specs=(P(),)\n      jaxpr={ lambda ; c:f32[2,2]. let\n          d:f32[2,2]{V:x} = pvary[axes=('x',)] c\n          e:f32[2,2] = psum_invariant[axes=('x',)] d\n        in (e,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(),)\n    ] a\n  in (b,) }",
    'where': "{ lambda ; a:f32[4,4] b:f32[2,4]. let\n    c:f32[4,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P())\n      jaxpr={ lambda ; d:f32[2,4]{V:x} e:f32[2,4]. let\n          f:f32[]{V:x} = pvary[axes=('x',)] 0.5:f32[]\n          g:bool[2,4]{V:x} = gt d f\n          h:f32[2,4]{V:x} = jit[\n            name=_where\n            jaxpr={ lambda ; g:bool[2,4]{V:x} d:f32[2,4]{V:x} e:f32[2,4]. let\n                i:f32[2,4]{V:x} = pvary[axes=('x',)] e\n                h:f32[2,4]{V:x} = select_n g i d\n              in (h,) }\n          ] g d e\n        in (h,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',),)\n    ] a b\n  in (c,) }",
    'dot_tanh': "{ lambda ; a:f32[4,4] b:f32[4,4]. let\n    c:f32[4,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P())\n      jaxpr={ lambda ; d:f32[2,4]{V:x} e:f32[4,4]. let\n          f:f32[4,4]{V:x} = pvary[axes=('x',)] e\n          g:f32[2,4]{V:x} = dot_general[\n            dimension_numbers=(([1], [0]), ([], []))\n            preferred_element_type=float32\n          ] d f\n          h:f32[2,4]{V:x} = tanh g\n        in (h,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',),)\n    ] a b\n  in (c,) }",
    'psum_scatter': "{ lambda ; a:f32[4,4]. let\n    b:f32[2,8] = shard_map[\n      check_vma=True\n      in_specs=(P('x',),)\n      jaxpr={ lambda ; c:f32[2,4]{V:x}. let\n          d:f32[2,4]{V:(x,y)} = pvary[axes=('y',)] c\n          e:f32[1,4]{V:(x,y)} = reduce_scatter[\n            axis_index_groups=None\n            axis_name=('y',)\n            axis_size=2\n            scatter_dimension=0\n            tiled=True\n          ] d\n        in (e,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x', 'y'),)\n    ] a\n  in (b,) }",
    'pmean': "{ lambda ; a:f32[4,4]. let\n    b:f32[2,2] = shard_map[\n      check_vma=True\n      in_specs=(P('x', 'y'),)\n      jaxpr={ lambda ; c:f32[2,2]{V:(x,y)}. let\n          d:f32[2,2] = psum_invariant[axes=('x', 'y')] c\n          e:f32[2,2] = div d 4.0:f32[]\n        in (e,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(),)\n    ] a\n  in (b,) }",
    'jit_inside': "{ lambda ; a:f32[4,4] b:f32[2,4]. let\n    c:f32[4,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P())\n      jaxpr={ lambda ; d:f32[2,4]{V:x} e:f32[2,4]. let\n          f:f32[2,4]{V:x} = jit[\n            name=<lambda>\n            jaxpr={ lambda ; d:f32[2,4]{V:x} e:f32[2,4]. let\n                g:f32[2,4]{V:x} = pvary[axes=('x',)] e\n                f:f32[2,4]{V:x} = mul d g\n              in (f,) }\n          ] d e\n        in (f,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',),)\n    ] a b\n  in (c,) }",
    'in_jit': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,4] = jit[\n      name=<lambda>\n      jaxpr={ lambda ; a:f32[4,4]. let\n          b:f32[4,4] = shard_map[\n            check_vma=True\n            in_specs=(P('y',),)\n            jaxpr={ lambda ; c:f32[2,4]{V:y}. let\n                d:f32[]{V:y} = pvary[axes=('y',)] 3.0:f32[]\n                e:f32[2,4]{V:y} = mul c d\n              in (e,) }\n            mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n            newly_manual_axes=frozenset({'x', 'y'})\n            out_specs=(P('y',),)\n          ] a\n        in (b,) }\n    ] a\n  in (b,) }",
    'vmap': "{ lambda ; a:f32[3,4,4]. let\n    b:f32[3,2,4] = shard_map[\n      check_vma=True\n      in_specs=(P(None, 'x'),)\n      jaxpr={ lambda ; c:f32[3,2,4]{V:x}. let\n          d:f32[]{V:x} = pvary[axes=('x',)] 2.0:f32[]\n          e:f32[3,2,4]{V:x} = mul c d\n          f:f32[3,2,4] = psum_invariant[axes=('x',)] e\n        in (f,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(None,),)\n    ] a\n  in (b,) }",
    'jvp': "let jaxpr = { lambda ; a:f32[2,4]{V:x} b:f32[2,4] c:f32[2,4]{V:x} d:f32[2,4]. let\n    e:f32[2,4]{V:x} = sin a\n    f:f32[2,4]{V:x} = cos a\n    g:f32[2,4]{V:x} = mul c f\n    h:f32[2,4]{V:x} = pvary[axes=('x',)] b\n    i:f32[2,4]{V:x} = pvary[axes=('x',)] d\n    j:f32[2,4]{V:x} = mul e h\n    k:f32[2,4]{V:x} = mul g h\n    l:f32[2,4]{V:x} = mul e i\n    m:f32[2,4]{V:x} = add_any k l\n    n:f32[2,4] = psum_invariant[axes=('x',)] j\n    o:f32[2,4] = psum_invariant[axes=('x',)] m\n  in (n, o) } in\n{ lambda ; p:f32[4,4] q:f32[2,4]. let\n    r:f32[2,4] s:f32[2,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P(), P('x',), P())\n      jaxpr=jaxpr\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(), P())\n    ] p q p q\n  in (r, s) }",
    'linearize': "{ lambda ; a:f32[4,4] b:f32[2,4]. let\n    c:f32[4,4] d:f32[4,4] e:f32[4,4] _:f32[2,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P())\n      jaxpr={ lambda ; f:f32[2,4]{V:x} g:f32[2,4]. let\n          h:f32[2,4]{V:x} = sin f\n          i:f32[2,4]{V:x} = cos f\n          j:f32[2,4]{V:x} = pvary[axes=('x',)] g\n          k:f32[2,4]{V:x} = mul h j\n          l:f32[2,4] = psum_invariant[axes=('x',)] k\n        in (i, j, h, l) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x',), P('x',), P('x',), P())\n    ] a b\n    m:f32[2,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x',), P('x',), P('x',), P('x',), P())\n      jaxpr={ lambda ; n:f32[2,4]{V:x} o:f32[2,4]{V:x} p:f32[2,4]{V:x} q:f32[2,4]{V:x}\n          r:f32[2,4]. let\n          s:f32[2,4]{V:x} = mul q n\n          t:f32[2,4]{V:x} = pvary[axes=('x',)] r\n          u:f32[2,4]{V:x} = mul s o\n          v:f32[2,4]{V:x} = mul p t\n          w:f32[2,4]{V:x} = add_any u v\n          x:f32[2,4] = psum_invariant[axes=('x',)] w\n        in (x,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(),)\n    ] c d e a b\n  in (m,) }",
}

_JAX_ERRORS = {
    'gather_replicated': "shard_map applied to the function '<lambda>' was given out_specs which require replication which can't be statically inferred given the mesh:\n\nThe mesh given has shape (2, 2) with corresponding axis names ('x', 'y').\n\nout_specs is P(None, 'y') which implies that the corresponding output value is replicated across mesh axis 'x', but could not infer replication over any axes\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, consider revising the corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False argument to `jax.shard_map`.",
    'two_outputs': "shard_map applied to the function '<lambda>' was given out_specs which require replication which can't be statically inferred given the mesh:\n\nThe mesh given has shape (2, 2) with corresponding axis names ('x', 'y').\n\n* out_specs[0] is P('x',) which implies that the corresponding output value is replicated across mesh axis 'y', but could not infer replication over any axes\n\n* out_specs[1] is P() which implies that the corresponding output value is only varying across mesh axes {} and not {y}, but it was inferred to be possibly varying over {y}\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, consider revising the corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False argument to `jax.shard_map`.",
    'pmax_keeps_x': "shard_map applied to the function '<lambda>' was given out_specs which require replication which can't be statically inferred given the mesh:\n\nThe mesh given has shape (2, 2) with corresponding axis names ('x', 'y').\n\nout_specs is P() which implies that the corresponding output value is only varying across mesh axes {} and not {x}, but it was inferred to be possibly varying over {x}\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, consider revising the corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False argument to `jax.shard_map`.",
    'psum_ok': 'no error',
}



def run(code, threads="2"):
    return run_isolated(code, prelude=_PRELUDE, env={"XJAX_NUM_CPU_DEVICES": "4", "XJAX_NUM_THREADS": threads})


def test_jaxprs_print_as_jax_prints_them():
    out = run("VMA = True\n" + _PROGRAMS + """
for k, (f, args) in progs.items():
    print(repr(k), repr(str(jax.make_jaxpr(f)(*args))))
""")
    got = dict(line.split(" ", 1) for line in out.splitlines())
    assert sorted(got) == sorted(repr(k) for k in _JAX_TEXTS)
    for k, text in _JAX_TEXTS.items():
        assert eval(got[repr(k)]) == text, k


def test_out_specs_errors_as_jax_words_them():
    out = run("VMA = True\n" + _PROGRAMS + _ERRORS + """
for k, v in errs.items():
    print(repr(k), repr(v))
""")
    got = {k: eval(v) for k, v in (line.split(" ", 1) for line in out.splitlines())}
    assert got == {repr(k): v for k, v in _JAX_ERRORS.items()}


def test_values_do_not_depend_on_check_vma():
    # pvary is the identity on values and psum_invariant computes psum: each program gives the same
    # values with check_vma=False, and eagerly as under jit
    out = run("""
results = {}
for VMA in (True, False):
    exec(_PROGRAMS)
    for k, (f, args) in progs.items():
        results.setdefault(k, []).append([np.asarray(r) for r in jax.tree_util.tree_leaves(f(*args))])
        results[k].append([np.asarray(r) for r in jax.tree_util.tree_leaves(jax.jit(f)(*args))])
for k, (first, *rest) in results.items():
    for other in rest:
        for a, b in zip(first, other, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=k)
print(len(results))
""".replace("_PROGRAMS", repr(_PROGRAMS)))
    assert out.split() == [str(len(_JAX_TEXTS))]


def test_the_mixed_program_against_numpy():
    out = run("""
VMA = True
exec(_PROGRAMS)
f, (a, b) = progs["mixed"]
s, t = f(a, b)
a_np, b_np = np.asarray(a), np.asarray(b)
blocks = [[a_np[2 * i:2 * i + 2, 2 * j:2 * j + 2] * 2 + b_np for j in range(2)] for i in range(2)]
np.testing.assert_allclose(np.asarray(s), np.block([[blocks[0][j] + blocks[1][j] for j in range(2)]]), rtol=1e-6)
np.testing.assert_allclose(np.asarray(t), np.sin(b_np), rtol=1e-6)
print("ok")
""".replace("_PROGRAMS", repr(_PROGRAMS)))
    assert out.split() == ["ok"]


# Control flow, JAX's *_like and pcast in check_vma bodies: a loop's carry and cond's branches must agree
# in their types' axes (JAX's errors and hint), a varying predicate makes cond's results vary, zeros_like
# varies as its operand does.
_PROGRAMS2 = """meshX = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
xs = jnp.arange(8.0).reshape(4, 2) / 8
smX = lambda f, i, o: jax.shard_map(f, mesh=meshX, in_specs=i, out_specs=o)
texts2 = {
  "cond_varying_predicate": (smX(lambda a: lax.cond(a.sum() > 0, lambda: a[0], lambda: jnp.zeros_like(a[0])[::-1] * 0),
                                 P("X"), P("X")), (xs,)),
  "zeros_like_varies": (smX(lambda a: jnp.zeros_like(a) + 1.0, P("X"), P("X")), (xs,)),
  "pcast": (smX(lambda a, b: a * lax.pcast(b, "X", to="varying"), (P("X"), P()), P("X")), (xs, xs[:2])),
  "loop_carry_pcast": (smX(lambda a: lax.fori_loop(0, 3, lambda i, c: c + a, lax.pcast(jnp.zeros((2, 2)), "X", to="varying")),
                           P("X"), P("X")), (xs,)),
}
def type_error(f, *args):
    try:
        jax.make_jaxpr(f)(*args)
        return "no error"
    except (TypeError, ValueError) as e:
        return type(e).__name__ + ": " + str(e).split("\\n--------------------")[0]
errors2 = {
  "loop_carry": type_error(smX(lambda a: lax.fori_loop(0, 3, lambda i, c: c + a, jnp.zeros((2,))), P("X"), P("X")), xs),
  "scan_carry": type_error(smX(lambda a: lax.scan(lambda c, x: (c + x, c * 2), jnp.zeros((2,)), a), P("X"), P("X")), xs),
  "cond_branches": type_error(smX(lambda a, b: lax.cond(b.sum() > 0, lambda: a[0], lambda: b[0]), (P("X"), P()), P("X")),
                              xs, xs[:2]),
  "pcast_twice": type_error(smX(lambda a: lax.pcast(a, "X", to="varying"), P("X"), P("X")), xs),
}
"""

_JAX_TEXTS2 = {
    'cond_varying_predicate': "{ lambda ; a:f32[4,2]. let\n    b:f32[4] = shard_map[\n      check_vma=True\n      in_specs=(P('X',),)\n      jaxpr={ lambda ; c:f32[2,2]{V:X}. let\n          d:f32[]{V:X} = reduce_sum[axes=(0, 1) out_sharding=None] c\n          e:f32[]{V:X} = pvary[axes=('X',)] 0.0:f32[]\n          f:bool[]{V:X} = gt d e\n          g:i32[]{V:X} = convert_element_type[new_dtype=int32 weak_type=False] f\n          h:f32[2]{V:X} = cond[\n            branches=(\n              { lambda ; i:f32[2,2]{V:X}. let\n                  j:f32[1,2]{V:X} = slice[\n                    limit_indices=(1, 2)\n                    start_indices=(0, 0)\n                    strides=None\n                  ] i\n                  k:f32[2]{V:X} = squeeze[dimensions=(0,)] j\n                  l:f32[2] = broadcast_in_dim 0.0:f32[]\n                  m:f32[2]{V:X} = pvary[axes=('X',)] l\n                  n:f32[2]{V:X} = rev[dimensions=(0,)] m\n                  o:f32[]{V:X} = pvary[axes=('X',)] 0.0:f32[]\n                  p:f32[2]{V:X} = mul n o\n                in (p,) }\n              { lambda ; q:f32[2,2]{V:X}. let\n                  r:f32[1,2]{V:X} = slice[\n                    limit_indices=(1, 2)\n                    start_indices=(0, 0)\n                    strides=None\n                  ] q\n                  s:f32[2]{V:X} = squeeze[dimensions=(0,)] r\n                in (s,) }\n            )\n          ] g c\n        in (h,) }\n      mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'X', 'Y'})\n      out_specs=(P('X',),)\n    ] a\n  in (b,) }",
    'zeros_like_varies': "{ lambda ; a:f32[4,2]. let\n    b:f32[4,2] = shard_map[\n      check_vma=True\n      in_specs=(P('X',),)\n      jaxpr={ lambda ; c:f32[2,2]{V:X}. let\n          d:f32[2,2] = broadcast_in_dim 0.0:f32[]\n          e:f32[2,2]{V:X} = pvary[axes=('X',)] d\n          f:f32[]{V:X} = pvary[axes=('X',)] 1.0:f32[]\n          g:f32[2,2]{V:X} = add e f\n        in (g,) }\n      mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'X', 'Y'})\n      out_specs=(P('X',),)\n    ] a\n  in (b,) }",
    'pcast': "{ lambda ; a:f32[4,2] b:f32[2,2]. let\n    c:f32[4,2] = shard_map[\n      check_vma=True\n      in_specs=(P('X',), P())\n      jaxpr={ lambda ; d:f32[2,2]{V:X} e:f32[2,2]. let\n          f:f32[2,2]{V:X} = pvary[axes=('X',)] e\n          g:f32[2,2]{V:X} = mul d f\n        in (g,) }\n      mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'X', 'Y'})\n      out_specs=(P('X',),)\n    ] a b\n  in (c,) }",
    'loop_carry_pcast': "{ lambda ; a:f32[4,2]. let\n    b:f32[4,2] = shard_map[\n      check_vma=True\n      in_specs=(P('X',),)\n      jaxpr={ lambda ; c:f32[2,2]{V:X}. let\n          d:f32[2,2] = broadcast_in_dim 0.0:f32[]\n          e:f32[2,2]{V:X} = pvary[axes=('X',)] d\n          f:i32[] g:f32[2,2]{V:X} = scan[\n            jaxpr={ lambda ; h:f32[2,2]{V:X} i:i32[] j:f32[2,2]{V:X}. let\n                k:i32[] = add i 1:i32[]\n                l:f32[2,2]{V:X} = add j h\n              in (k, l) }\n            length=3\n            num_carry=2\n            num_consts=1\n            reverse=False\n            unroll=1\n          ] c 0:i32[] e\n        in (g,) }\n      mesh=Mesh('X': 2, 'Y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'X', 'Y'})\n      out_specs=(P('X',),)\n    ] a\n  in (b,) }",
}

_JAX_ERRORS2 = {
    'loop_carry': "TypeError: scan body function carry input and carry output must have equal types, but they differ:\n\nThe input carry component loop_carry[1] has type float32[2] but the corresponding output carry component has type float32[2,2]{V:X}, so the shapes do not match, and the manual axis types do not match.\n\nThis might be fixed by applying `jax.lax.pcast(..., ('X',), to='varying')`, to the initial carry value corresponding to the input carry component loop_carry[1].\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\nRevise the function so that all output types match the corresponding input types.",
    'scan_carry': "TypeError: scan body function carry input and carry output must have equal types, but they differ:\n\nThe input carry c has type float32[2] but the corresponding output carry component has type float32[2]{V:X}, so the manual axis types do not match.\n\nThis might be fixed by applying `jax.lax.pcast(..., ('X',), to='varying')`, to the initial carry value corresponding to the input carry c.\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\nRevise the function so that all output types match the corresponding input types.",
    'cond_branches': "TypeError: cond branches must have equal output types but they differ.\n\ntrue_fun is <lambda> at <string>:21\nfalse_fun is <lambda> at <string>:21\n\nThe output of true_fun has type float32[2]{V:X} but the corresponding output of false_fun has type float32[2], so the manual axis types do not match.\n\nThis might be fixed by applying `jax.lax.pcast(..., (), to='varying')` to the output of true_fun.\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\nRevise true_fun and/or false_fun so that all output types match.",
    'pcast_twice': "ValueError: Unsupported pcast from=varying, to='varying'",
}



def test_control_flow_and_pcast_print_and_fail_as_jax():
    out = run(_PROGRAMS2 + """
for k, (f, a) in texts2.items():
    print(repr(k), repr(str(jax.make_jaxpr(f)(*a))))
for k, v in errors2.items():
    print(repr(k), repr(v))
""")
    lineno = lambda text: re.sub(r"at <string>:\d+", "at <string>:N", text)  # noqa: E731 (where the lambdas are)
    got = {eval(k): lineno(eval(v)) for k, v in (line.split(" ", 1) for line in out.splitlines())}
    assert got == {k: lineno(v) for k, v in {**_JAX_TEXTS2, **_JAX_ERRORS2}.items()}


def test_gradients_inside_and_of_bodies_as_jax():
    # JAX's check_vma=True transposes (pvary <-> psum_invariant): the gradient of a value the same on every
    # device of an axis is summed over it. Values recorded from JAX 0.10.2 (the same programs).
    out = run(_PROGRAMS2 + """
def body(a, w):
    return jax.grad(lambda w: lax.psum(jnp.sum(a @ w), "Y") ** 2)(w)
ws = jnp.ones((2, 4)) * 0.5
print(np.asarray(smX(body, (P("X"), P(None, "Y")), P("X", "Y"))(xs, ws))[:, 0].tolist())
w3 = jnp.ones((2, 3)) * 0.25
inner = smX(lambda a, w: jax.grad(lambda w: jnp.sum(jnp.tanh(a @ w)))(w), (P("X"), P()), P())
loss = lambda w, x: smX(lambda w, x: lax.psum(jnp.sum(jnp.tanh(x @ w)), "X"), (P(), P("X")), P())(w, x)
for g in (inner(xs, w3), jax.jit(inner)(xs, w3), jax.grad(loss)(w3, xs), jax.jit(jax.grad(loss))(w3, xs)):
    print(np.asarray(g).tolist())
rng = np.random.default_rng(0)
w = jnp.asarray(rng.normal(size=(3, 2)).astype(np.float32))
xb = jnp.asarray(rng.normal(size=(8, 3)).astype(np.float32))
yb = jnp.asarray(rng.normal(size=(8, 2)).astype(np.float32))

@jax.jit
def step(w, x, y):  # data parallel as JAX's docs write it: value_and_grad in the body, pmean
    def local(w, x, y):
        l, g = jax.value_and_grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
        return lax.pmean(l, "X"), lax.pmean(g, "X")
    l, g = smX(local, (P(), P("X"), P("X")), (P(), P()))(w, x, y)
    return w - 0.1 * g, l
losses = []
for _ in range(3):
    w, l = step(w, xb, yb)
    losses.append(float(l))
print(losses)
print(np.asarray(w).tolist())
""")
    got = [np.array(eval(line)) for line in out.splitlines()]
    want = [[14.5, 18.0, 14.5, 18.0], *[[[1.345107, 1.345107, 1.345107], [1.814038, 1.814038, 1.814038]]] * 4,
            [0.779042, 0.747258, 0.726214], [[0.0173, 0.01985], [0.62274, 0.12779], [-0.52691, 0.2765]]]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5)


def test_check_grads_x64_through_pvary_and_psum_invariant():
    out = run("""
from xjax.test_util import check_grads
jax.config.update("jax_enable_x64", True)
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
f = jax.shard_map(lambda a, w: lax.psum(jnp.sin(a @ w) * w[0], "x"), mesh=mesh, in_specs=(P("x", "y"), P("y")),
                  out_specs=P(None, "y"))
g = jax.shard_map(lambda a, w: jax.grad(lambda w: jnp.sum(jnp.cos(a @ w)) ** 2)(w), mesh=mesh,
                  in_specs=(P("x"), P()), out_specs=P())
a = jnp.linspace(-1, 1, 16).reshape(4, 4)
w = jnp.linspace(0.2, 0.9, 16).reshape(4, 4)
check_grads(f, (a, w), order=2, modes=["fwd", "rev"])
check_grads(g, (a, w), order=1, modes=["fwd", "rev"])
print("ok")
""")
    assert out.split() == ["ok"]


def test_types_print_as_jax_prints_them():
    # jax.typeof and ShapedArray's str and repr, recorded from JAX 0.10.2: inside a check_vma body with
    # the varying axes, and a plain and a weakly typed one
    out = run("""
from xjax.core import ShapedArray
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
def f(a):
    print(jax.typeof(a), repr(jax.typeof(a)), str(jax.typeof(a * 2)))
    return a
jax.make_jaxpr(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(jnp.ones((4, 4)))
a, w = ShapedArray((2, 4), jnp.float32), ShapedArray((), jnp.float32, weak_type=True)
print(repr(a), str(a), repr(w), str(w), repr(jax.typeof(jnp.ones(3))), jax.typeof(jnp.ones(3)))
""")
    assert out.splitlines() == [
        "float32[2,4]{V:x} ShapedArray(float32[2,4]{V:x}) float32[2,4]{V:x}",
        "ShapedArray(float32[2,4]) float32[2,4] ShapedArray(float32[], weak_type=True) ~float32[] "
        "ShapedArray(float32[3]) float32[3]"]
