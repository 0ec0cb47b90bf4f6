"""make_jaxpr prints jaxprs as JAX 0.10 does, byte for byte (expected text recorded from JAX).

Each case is a small program (source run with jax = xjax) and the jaxpr JAX printed for it:
literals, constvars, dropped results, line breaking, params, nested and shared jit jaxprs, and
the jaxprs of each control-flow primitive and of debug.print.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

CASES = {
    'seed_mul_add': (
        '\ndef fn(x, y):\n    return x * y + 2\nargs = (3.0, 4.0)\n',
        '{ lambda ; a:f32[] b:f32[]. let' "\n"
        '    c:f32[] = mul a b' "\n"
        '    d:f32[] = add c 2.0:f32[]' "\n"
        '  in (d,) }',
    ),
    'seed_log2': (
        '\ndef fn(x):\n    return jnp.log(x) / jnp.log(2.0)\nargs = (3.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = log a' "\n"
        '    c:f32[] = log 2.0:f32[]' "\n"
        '    d:f32[] = div b c' "\n"
        '  in (d,) }',
    ),
    'seed_identity': (
        '\ndef fn(x):\n    return x if x.ndim <= 2 else x ** 2\nargs = (jnp.array([1, 2, 3]),)\n',
        '{ lambda ; a:i32[3]. let  in (a,) }',
    ),
    'no_args': (
        '\ndef fn():\n    return jnp.arange(5)\nargs = ()\n',
        '{ lambda ; . let' "\n"
        '    a:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] ' "\n"
        '  in (a,) }',
    ),
    'constvar': (
        '\nc = jnp.arange(3.0)\ndef fn(x):\n    return x + c\nargs = (jnp.ones(3),)\n',
        '{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }',
    ),
    'literal_outputs': (
        '\ndef fn(x):\n    return x, 2, 3.5, True\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let  in (a, 2:i32[], 3.5:f32[], True:bool[]) }',
    ),
    'dropvar': (
        '\ndef fn(x):\n    return (jnp.sin(x), x)[1]\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let _:f32[] = sin a in (a,) }',
    ),
    'many_invars': (
        '\ndef fn(*a):\n    return a[0]\nargs = tuple(range(30))\n',
        '{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] i:i32[]' "\n"
        '    j:i32[] k:i32[] l:i32[] m:i32[] n:i32[] o:i32[] p:i32[] q:i32[] r:i32[] s:i32[]' "\n"
        '    t:i32[] u:i32[] v:i32[] w:i32[] x:i32[] y:i32[] z:i32[] ba:i32[] bb:i32[] bc:i32[]' "\n"
        '    bd:i32[]. let' "\n"
        '    ' "\n"
        '  in (a,) }',
    ),
    'long_eqn_breaks': (
        '\ndef fn(x, y):\n    return lax.dot_general(x, y, (((1,), (0,)), ((), ())))\nargs = (jnp.ones((128, 256)), jnp.ones((256, 512)))\n',
        '{ lambda ; a:f32[128,256] b:f32[256,512]. let' "\n"
        '    c:f32[128,512] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b' "\n"
        '  in (c,) }',
    ),
    'just_over_80': (
        '\ndef fn(x):\n    return lax.cumprod(x, 1)\nargs = (jnp.ones((2, 3)),)\n',
        '{ lambda ; a:f32[2,3]. let' "\n"
        '    b:f32[2,3] = cumprod[axis=1 reverse=False] a' "\n"
        '  in (b,) }',
    ),
    'strong_literals': (
        '\ndef fn(x):\n    return 1.05 * (1.67 * jnp.exp(x) - 1.67), x > 0\nargs = (jnp.arange(4.0),)\n',
        '{ lambda ; a:f32[4]. let' "\n"
        '    b:f32[4] = exp a' "\n"
        '    c:f32[4] = mul 1.6699999570846558:f32[] b' "\n"
        '    d:f32[4] = sub c 1.6699999570846558:f32[]' "\n"
        '    e:f32[4] = mul 1.0499999523162842:f32[] d' "\n"
        '    f:bool[4] = gt a 0.0:f32[]' "\n"
        '  in (e, f) }',
    ),
    'weak_literal_digits': (
        '\ndef fn(x):\n    return x + 1e-7, x * 1e20, x - 100000000.0\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = add a 1e-07:f32[]' "\n"
        '    c:f32[] = mul a 1e+20:f32[]' "\n"
        '    d:f32[] = sub a 100000000.0:f32[]' "\n"
        '  in (b, c, d) }',
    ),
    'int_and_bool_literals': (
        '\ndef fn(x, b):\n    return x * 2 + 1, b & True\nargs = (3, True)\n',
        '{ lambda ; a:i32[] b:bool[]. let' "\n"
        '    c:i32[] = mul a 2:i32[]' "\n"
        '    d:i32[] = add c 1:i32[]' "\n"
        '    e:bool[] = and b True:bool[]' "\n"
        '  in (d, e) }',
    ),
    'params_shown': (
        '\ndef fn(x):\n    y = lax.broadcast_in_dim(x, (4, 2, 3), (1, 2))\n    z = lax.reduce_max(y, (0,))\n    w = lax.convert_element_type(z, jnp.int32)\n    return lax.transpose(w, (1, 0)), jnp.zeros(3), lax.top_k(x, 2)\nargs = (jnp.ones((2, 3)),)\n',
        '{ lambda ; a:f32[2,3]. let' "\n"
        '    b:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a' "\n"
        '    c:f32[2,3] = reduce_max[axes=(0,)] b' "\n"
        '    d:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] c' "\n"
        '    e:i32[3,2] = transpose[permutation=(1, 0)] d' "\n"
        '    f:f32[3] = broadcast_in_dim 0.0:f32[]' "\n"
        '    g:f32[2,2] h:i32[2,2] = top_k[axis=1 k=2] a' "\n"
        '  in (e, f, g, h) }',
    ),
    'dot_general': (
        '\ndef fn(x, y):\n    return lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))\nargs = (jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)))\n',
        '{ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let' "\n"
        '    c:f32[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b' "\n"
        '  in (c,) }',
    ),
    'scatter_add': (
        '\ndef fn(x, i, u):\n    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),\n                                     scatter_dims_to_operand_dims=(0,))\n    return lax.scatter_add(x, i, u, dn)\nargs = (jnp.ones((2, 3)), jnp.array([[1], [0]]), jnp.ones((2, 3)))\n',
        '{ lambda ; a:f32[2,3] b:i32[2,1] c:f32[2,3]. let' "\n"
        '    d:f32[2,3] = scatter-add[' "\n"
        '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())' "\n"
        '      indices_are_sorted=False' "\n"
        '      mode=GatherScatterMode.FILL_OR_DROP' "\n"
        '      unique_indices=False' "\n"
        '      update_consts=()' "\n"
        '      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g,) }' "\n"
        '    ] a b c' "\n"
        '  in (d,) }',
    ),
    'nested_jit': (
        '\n@jax.jit\ndef inner(x):\n    return x + 1\ndef fn(x):\n    return inner(x) * 2\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = jit[' "\n"
        '      name=inner' "\n"
        '      jaxpr={ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }' "\n"
        '    ] a' "\n"
        '    c:f32[] = mul b 2.0:f32[]' "\n"
        '  in (c,) }',
    ),
    'nested_jit_shared': (
        '\nc = jnp.array([3.0, 4.0])\n@jax.jit\ndef inner(x):\n    return x * c\ndef fn(x):\n    return inner(x) + inner(x)\nargs = (jnp.ones(2),)\n',
        'let inner = { lambda a:f32[2]; b:f32[2]. let c:f32[2] = mul b a in (c,) } in' "\n"
        '{ lambda ; d:f32[2]. let' "\n"
        '    e:f32[2] = jit[name=inner jaxpr=inner] d' "\n"
        '    f:f32[2] = jit[name=inner jaxpr=inner] d' "\n"
        '    g:f32[2] = add e f' "\n"
        '  in (g,) }',
    ),
    'nested_jit_long': (
        '\n@jax.jit\ndef big(x):\n    for _ in range(11):\n        x = x * 2.0\n    return x\ndef fn(x):\n    return big(x) + 1\nargs = (1.0,)\n',
        'let big = { lambda ; a:f32[]. let' "\n"
        '    b:f32[] = mul a 2.0:f32[]' "\n"
        '    c:f32[] = mul b 2.0:f32[]' "\n"
        '    d:f32[] = mul c 2.0:f32[]' "\n"
        '    e:f32[] = mul d 2.0:f32[]' "\n"
        '    f:f32[] = mul e 2.0:f32[]' "\n"
        '    g:f32[] = mul f 2.0:f32[]' "\n"
        '    h:f32[] = mul g 2.0:f32[]' "\n"
        '    i:f32[] = mul h 2.0:f32[]' "\n"
        '    j:f32[] = mul i 2.0:f32[]' "\n"
        '    k:f32[] = mul j 2.0:f32[]' "\n"
        '    l:f32[] = mul k 2.0:f32[]' "\n"
        '  in (l,) } in' "\n"
        '{ lambda ; m:f32[]. let' "\n"
        '    n:f32[] = jit[name=big jaxpr=big] m' "\n"
        '    o:f32[] = add n 1.0:f32[]' "\n"
        '  in (o,) }',
    ),
    'nested_jit_closure': (
        '\ndef fn(x):\n    y = jnp.sin(x)\n    return jax.jit(lambda z: z + y)(x)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = sin a' "\n"
        '    c:f32[] = jit[' "\n"
        '      name=<lambda>' "\n"
        '      jaxpr={ lambda ; b:f32[] a:f32[]. let c:f32[] = add a b in (c,) }' "\n"
        '    ] b a' "\n"
        '  in (c,) }',
    ),
    'jit_of_jit': (
        '\ndef outer(x):\n    y = jnp.sin(x)\n    return jax.jit(lambda z: z * y)(x)\nfn = jax.jit(outer)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = jit[' "\n"
        '      name=outer' "\n"
        '      jaxpr={ lambda ; a:f32[]. let' "\n"
        '          c:f32[] = sin a' "\n"
        '          b:f32[] = jit[' "\n"
        '            name=<lambda>' "\n"
        '            jaxpr={ lambda ; c:f32[] a:f32[]. let b:f32[] = mul a c in (b,) }' "\n"
        '          ] c a' "\n"
        '        in (b,) }' "\n"
        '    ] a' "\n"
        '  in (b,) }',
    ),
    'nested_jit_donate': (
        '\ninner = jax.jit(lambda x, y: x * y, donate_argnums=0)\ndef fn(x):\n    return inner(x, x)\nargs = (jnp.ones(3),)\n',
        '{ lambda ; a:f32[3]. let' "\n"
        '    b:f32[3] = jit[' "\n"
        '      name=<lambda>' "\n"
        '      donated_invars=(True, False)' "\n"
        '      jaxpr={ lambda ; a:f32[3] c:f32[3]. let b:f32[3] = mul a c in (b,) }' "\n"
        '    ] a a' "\n"
        '  in (b,) }',
    ),
    'cond': (
        '\ndef fn(x):\n    return lax.cond(x > 0, lambda y: y + 1, lambda y: y - 1, x)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:bool[] = gt a 0.0:f32[]' "\n"
        '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b' "\n"
        '    d:f32[] = cond[' "\n"
        '      branches=(' "\n"
        '        { lambda ; e:f32[]. let f:f32[] = sub e 1.0:f32[] in (f,) }' "\n"
        '        { lambda ; g:f32[]. let h:f32[] = add g 1.0:f32[] in (h,) }' "\n"
        '      )' "\n"
        '    ] c a' "\n"
        '  in (d,) }',
    ),
    'cond_consts': (
        '\nc = jnp.array([3.0, 4.0])\ndef fn(p, x, z):\n    return lax.cond(p, lambda y: y * c, lambda y: y * c + z, z)\nargs = (True, 1.0, jnp.ones(2))\n',
        '{ lambda a:f32[2]; b:bool[] c:f32[] d:f32[2]. let' "\n"
        '    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b' "\n"
        '    f:f32[2] = cond[' "\n"
        '      branches=(' "\n"
        '        { lambda ; g:f32[2] h:f32[2] i:f32[2]. let' "\n"
        '            j:f32[2] = mul i g' "\n"
        '            k:f32[2] = add j h' "\n"
        '          in (k,) }' "\n"
        '        { lambda ; l:f32[2] m:f32[2] n:f32[2]. let o:f32[2] = mul n l in (o,) }' "\n"
        '      )' "\n"
        '    ] e a d d' "\n"
        '  in (f,) }',
    ),
    'cond_concrete_pred': (
        '\ndef fn(x):\n    return lax.cond(3, lambda a: a, lambda a: -a, x)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[] = cond[' "\n"
        '      branches=(' "\n"
        '        { lambda ; c:f32[]. let d:f32[] = neg c in (d,) }' "\n"
        '        { lambda ; e:f32[]. let  in (e,) }' "\n"
        '      )' "\n"
        '    ] 1:i32[] a' "\n"
        '  in (b,) }',
    ),
    'cond_multiple_outputs': (
        '\ndef fn(x):\n    return lax.cond(x > 0, lambda a, b: (a, b), lambda a, b: (b, a), x, 2.0)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:bool[] = gt a 0.0:f32[]' "\n"
        '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b' "\n"
        '    d:f32[] e:f32[] = cond[' "\n"
        '      branches=(' "\n"
        '        { lambda ; f:f32[] g:f32[]. let  in (g, f) }' "\n"
        '        { lambda ; h:f32[] i:f32[]. let  in (h, i) }' "\n"
        '      )' "\n"
        '    ] c a 2.0:f32[]' "\n"
        '  in (d, e) }',
    ),
    'switch': (
        '\ndef fn(x, i):\n    return lax.switch(i, [lambda a: a, lambda a: -a, lambda a: a * 2], x)\nargs = (1.0, 3)\n',
        '{ lambda ; a:f32[] b:i32[]. let' "\n"
        '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b' "\n"
        '    d:i32[] = clamp 0:i32[] c 2:i32[]' "\n"
        '    e:f32[] = cond[' "\n"
        '      branches=(' "\n"
        '        { lambda ; f:f32[]. let  in (f,) }' "\n"
        '        { lambda ; g:f32[]. let h:f32[] = neg g in (h,) }' "\n"
        '        { lambda ; i:f32[]. let j:f32[] = mul i 2.0:f32[] in (j,) }' "\n"
        '      )' "\n"
        '    ] d a' "\n"
        '  in (e,) }',
    ),
    'while': (
        '\ndef fn(x):\n    return lax.while_loop(lambda c: c < 10, lambda c: c + 1, x)\nargs = (1,)\n',
        '{ lambda ; a:i32[]. let' "\n"
        '    b:i32[] = while[' "\n"
        '      body_jaxpr={ lambda ; c:i32[]. let d:i32[] = add c 1:i32[] in (d,) }' "\n"
        '      body_nconsts=0' "\n"
        '      cond_jaxpr={ lambda ; e:i32[]. let f:bool[] = lt e 10:i32[] in (f,) }' "\n"
        '      cond_nconsts=0' "\n"
        '    ] a' "\n"
        '  in (b,) }',
    ),
    'while_consts': (
        '\nc1 = jnp.array([3.0, 4.0])\ndef fn(x, z):\n    return lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1, c[1] * c1), (0.0, z))\nargs = (1.0, jnp.ones(2))\n',
        '{ lambda a:f32[2]; b:f32[] c:f32[2]. let' "\n"
        '    d:f32[] e:f32[2] = while[' "\n"
        '      body_jaxpr={ lambda ; f:f32[2] g:f32[] h:f32[2]. let' "\n"
        '          i:f32[] = add g 1.0:f32[]' "\n"
        '          j:f32[2] = mul h f' "\n"
        '        in (i, j) }' "\n"
        '      body_nconsts=1' "\n"
        '      cond_jaxpr={ lambda ; k:f32[] l:f32[] m:f32[2]. let' "\n"
        '          n:bool[] = lt l k' "\n"
        '        in (n,) }' "\n"
        '      cond_nconsts=1' "\n"
        '    ] b a 0.0:f32[] c' "\n"
        '  in (d, e) }',
    ),
    'fori_scan': (
        '\ndef fn(x):\n    return lax.fori_loop(0, 10, lambda i, c: c + i, x)\nargs = (1,)\n',
        '{ lambda ; a:i32[]. let' "\n"
        '    _:i32[] b:i32[] = scan[' "\n"
        '      jaxpr={ lambda ; c:i32[] d:i32[]. let' "\n"
        '          e:i32[] = add c 1:i32[]' "\n"
        '          f:i32[] = add d c' "\n"
        '        in (e, f) }' "\n"
        '      length=10' "\n"
        '      num_carry=2' "\n"
        '      num_consts=0' "\n"
        '      reverse=False' "\n"
        '      unroll=1' "\n"
        '    ] 0:i32[] a' "\n"
        '  in (b,) }',
    ),
    'fori_while': (
        '\ndef fn(n, x):\n    return lax.fori_loop(0, n, lambda i, c: c + i, x)\nargs = (3, 1.0)\n',
        '{ lambda ; a:i32[] b:f32[]. let' "\n"
        '    _:i32[] _:i32[] c:f32[] = while[' "\n"
        '      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let' "\n"
        '          g:i32[] = add d 1:i32[]' "\n"
        '          h:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d' "\n"
        '          i:f32[] = add f h' "\n"
        '        in (g, e, i) }' "\n"
        '      body_nconsts=0' "\n"
        '      cond_jaxpr={ lambda ; j:i32[] k:i32[] l:f32[]. let' "\n"
        '          m:bool[] = lt j k' "\n"
        '        in (m,) }' "\n"
        '      cond_nconsts=0' "\n"
        '    ] 0:i32[] a b' "\n"
        '  in (c,) }',
    ),
    'fori_unroll': (
        '\ndef fn(x):\n    return lax.fori_loop(0, 3, lambda i, c: c + i, x, unroll=True)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    _:i32[] b:f32[] = scan[' "\n"
        '      jaxpr={ lambda ; c:i32[] d:f32[]. let' "\n"
        '          e:i32[] = add c 1:i32[]' "\n"
        '          f:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c' "\n"
        '          g:f32[] = add d f' "\n"
        '        in (e, g) }' "\n"
        '      length=3' "\n"
        '      num_carry=2' "\n"
        '      num_consts=0' "\n"
        '      reverse=False' "\n"
        '      unroll=3' "\n"
        '    ] 0:i32[] a' "\n"
        '  in (b,) }',
    ),
    'scan': (
        '\ndef fn(c0, x):\n    return lax.scan(lambda c, a: (c + a, c * a), c0, x)\nargs = (jnp.zeros(()), jnp.ones(3))\n',
        '{ lambda ; a:f32[] b:f32[3]. let' "\n"
        '    c:f32[] d:f32[3] = scan[' "\n"
        '      jaxpr={ lambda ; e:f32[] f:f32[]. let' "\n"
        '          g:f32[] = add e f' "\n"
        '          h:f32[] = mul e f' "\n"
        '        in (g, h) }' "\n"
        '      length=3' "\n"
        '      num_carry=1' "\n"
        '      num_consts=0' "\n"
        '      reverse=False' "\n"
        '      unroll=1' "\n"
        '    ] a b' "\n"
        '  in (c, d) }',
    ),
    'scan_reverse_no_ys': (
        '\ndef fn(c0, x):\n    return lax.scan(lambda c, a: (c * a, None), c0, x, reverse=True)\nargs = (jnp.ones(()), jnp.ones(3))\n',
        '{ lambda ; a:f32[] b:f32[3]. let' "\n"
        '    c:f32[] = scan[' "\n"
        '      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = mul d e in (f,) }' "\n"
        '      length=3' "\n"
        '      num_carry=1' "\n"
        '      num_consts=0' "\n"
        '      reverse=True' "\n"
        '      unroll=1' "\n"
        '    ] a b' "\n"
        '  in (c,) }',
    ),
    'scan_forwarded_carry': (
        '\ndef fn(x):\n    return lax.scan(lambda c, a: (c, c), x, None, length=4)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:f32[4] = scan[' "\n"
        '      jaxpr={ lambda ; c:f32[]. let  in (c,) }' "\n"
        '      length=4' "\n"
        '      num_carry=0' "\n"
        '      num_consts=1' "\n"
        '      reverse=False' "\n"
        '      unroll=1' "\n"
        '    ] a' "\n"
        '  in (a, b) }',
    ),
    'scan_consts': (
        '\nc1 = jnp.array([1.0, 2.0])\ndef fn(z):\n    return lax.scan(lambda c, a: (c * a, c1 * a), z, jnp.ones((3, 2)))\nargs = (jnp.ones(2),)\n',
        '{ lambda a:f32[2]; b:f32[2]. let' "\n"
        '    c:f32[3,2] = broadcast_in_dim 1.0:f32[]' "\n"
        '    d:f32[2] e:f32[3,2] = scan[' "\n"
        '      jaxpr={ lambda ; f:f32[2] g:f32[2] h:f32[2]. let' "\n"
        '          i:f32[2] = mul g h' "\n"
        '          j:f32[2] = mul f h' "\n"
        '        in (i, j) }' "\n"
        '      length=3' "\n"
        '      num_carry=1' "\n"
        '      num_consts=1' "\n"
        '      reverse=False' "\n"
        '      unroll=1' "\n"
        '    ] a b c' "\n"
        '  in (d, e) }',
    ),
    'map': (
        '\ndef fn(x):\n    return lax.map(lambda a: a * 2, x)\nargs = (jnp.ones(3),)\n',
        '{ lambda ; a:f32[3]. let' "\n"
        '    b:f32[3] = scan[' "\n"
        '      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }' "\n"
        '      length=3' "\n"
        '      num_carry=0' "\n"
        '      num_consts=0' "\n"
        '      reverse=False' "\n"
        '      unroll=1' "\n"
        '    ] a' "\n"
        '  in (b,) }',
    ),
    'select': (
        '\ndef fn(x):\n    return lax.select(x > 0, x, -x)\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    b:bool[] = gt a 0.0:f32[]' "\n"
        '    c:f32[] = neg a' "\n"
        '    d:f32[] = select_n b c a' "\n"
        '  in (d,) }',
    ),
    'debug_print': (
        '\ndef fn(x):\n    jax.debug.print("x = {}", x)\n    jax.debug.print("y = {y} {z}", y=x * 2, z=3)\n    return x + 1\nargs = (1.0,)\n',
        '{ lambda ; a:f32[]. let' "\n"
        '    debug_print[' "\n"
        '      fmt=x = {}' "\n"
        '      has_placeholders=True' "\n"
        '      in_tree=PyTreeDef(((*,), {}))' "\n"
        '      logging_record=None' "\n"
        "      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))" "\n"
        '      ordered=False' "\n"
        '      partitioned=False' "\n"
        '      static_args=()' "\n"
        '    ] a' "\n"
        '    b:f32[] = mul a 2.0:f32[]' "\n"
        '    debug_print[' "\n"
        '      fmt=y = {y} {z}' "\n"
        '      has_placeholders=True' "\n"
        "      in_tree=PyTreeDef(((), {'y': *, 'z': *}))" "\n"
        '      logging_record=None' "\n"
        "      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))" "\n"
        '      ordered=False' "\n"
        '      partitioned=False' "\n"
        '      static_args=()' "\n"
        '    ] b 3:i32[]' "\n"
        '    c:f32[] = add a 1.0:f32[]' "\n"
        '  in (c,) }',
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_matches_jax(name):
    src, expected = CASES[name]
    ns = dict(jax=jax, jnp=jnp, lax=lax, np=np)
    exec(src, ns)
    assert str(jax.make_jaxpr(ns["fn"])(*ns["args"])) == expected


def test_closed_jaxpr_api():
    c = jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda x: (x + c, x * 2))(jnp.ones(3))
    assert [a.shape for a in closed.in_avals] == [(3,)]
    assert [a.shape for a in closed.out_avals] == [(3,), (3,)]
    assert len(closed.consts) == 1 and np.array_equal(np.asarray(closed.consts[0]), [0.0, 1.0, 2.0])
    assert [e.primitive.name for e in closed.eqns] == ["add", "mul"]
    assert repr(closed) == str(closed.jaxpr)


def test_make_jaxpr_static_argnums_and_return_shape():
    closed, shape = jax.make_jaxpr(lambda x, n: x * n, static_argnums=1, return_shape=True)(jnp.ones(2), 3)
    assert str(closed) == "{ lambda ; a:f32[2]. let b:f32[2] = mul a 3.0:f32[] in (b,) }"
    assert shape.shape == (2,) and shape.dtype == jnp.float32


def test_make_jaxpr_accepts_shape_dtype_structs():
    spec = jax.ShapeDtypeStruct((2, 3), jnp.int32)
    assert str(jax.make_jaxpr(lambda x: x.T)(spec)) == (
        "{ lambda ; a:i32[2,3]. let\n    b:i32[3,2] = transpose[permutation=(1, 0)] a\n  in (b,) }")


def test_pytree_arguments_flatten_in_order():
    tree = {"a": (jnp.ones(()), jnp.ones(())), "b": jnp.ones(2)}
    text = str(jax.make_jaxpr(lambda d: d["b"] - d["a"][1])(tree))
    assert text == "{ lambda ; a:f32[] b:f32[] c:f32[2]. let d:f32[2] = sub c b in (d,) }"
