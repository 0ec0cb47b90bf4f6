"""Typed PRNG keys are pytree leaves, as in JAX, and every transformation carries them: tree_util,
jit, vmap (axes on the key's own shape), grad, scan / fori_loop / while_loop / cond / switch,
eval_shape with key ShapeDtypeStructs, custom_vjp / custom_jvp, checkpoint, device_put, export.

The recorded numbers come from JAX 0.10.2 running the same programs (threefry gives the same bits)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import xjax as jax
import xjax.numpy as jnp
from xjax import lax, random

KEY = random.key(42)
KEY_DTYPE = KEY.dtype


def data(keys):
    return np.asarray(random.key_data(keys))


def assert_same_keys(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(data(a), data(b))


# ---- tree_util -------------------------------------------------------------------------------------

def test_a_key_is_one_leaf():
    leaves = jax.tree_util.tree_leaves(KEY)
    assert len(leaves) == 1 and leaves[0] is KEY
    assert jax.tree_util.tree_structure(KEY) == jax.tree_util.tree_structure(0)


def test_keys_in_containers_are_leaves():
    keys = random.split(KEY, 3)
    tree = {"a": KEY, "b": [jnp.ones(2), keys], "c": (None, 1.0)}
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    assert [type(x).__name__ for x in leaves] == ["PRNGKeyArray", "Array", "PRNGKeyArray", "float"]
    assert treedef == jax.tree_util.tree_structure({"a": 0, "b": [0, 0], "c": (None, 0)})
    shapes = jax.tree.map(lambda x: np.shape(x), tree)
    assert shapes == {"a": (), "b": [(2,), (3,)], "c": (None, ())}
    assert_same_keys(jax.tree_util.tree_unflatten(treedef, leaves)["b"][1], keys)


# ---- jit --------------------------------------------------------------------------------------------

def test_jit_takes_and_returns_keys():
    out = jax.jit(lambda k, x: random.normal(k, (3,)) * x)(KEY, 2.0)
    np.testing.assert_array_equal(out, np.float32([-0.05660923197865486, 0.9342637062072754, 0.5914059281349182]))
    split = jax.jit(random.split)(KEY)
    assert split.dtype == KEY_DTYPE and split.shape == (2,)
    np.testing.assert_array_equal(data(split), [[1832780943, 270669613], [64467757, 2916123636]])


def test_jit_caches_by_key_type_and_shape():
    traces = []

    @jax.jit
    def f(k):
        traces.append(jax.typeof(k))
        return k

    f(KEY)
    f(random.key(7))  # same type: no new trace
    f(random.split(KEY, 2))
    f(random.key_data(KEY))  # its data, uint32[2], is another type
    assert [(t.shape, str(t.dtype)) for t in traces] == [((), "key<fry>"), ((2,), "key<fry>"), ((2,), "uint32")]


def test_jit_closure_static_and_donated_keys():
    assert_same_keys(jax.jit(lambda: random.fold_in(KEY, 3))(), random.fold_in(KEY, 3))
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(lambda k: k, static_argnums=0)(KEY)
    key = random.key(5)
    want = random.split(key)
    assert_same_keys(jax.jit(random.split, donate_argnums=0)(key), want)


# ---- vmap -------------------------------------------------------------------------------------------

def test_vmap_over_split_keys_gives_jax_numbers():
    out = jax.vmap(random.normal)(random.split(KEY, 3))
    np.testing.assert_array_equal(out, np.float32([0.07592553645372391, 0.6057640314102173, 0.4323064982891083]))


def test_vmap_negative_axes_count_on_the_key_shape():
    keys = random.split(KEY, (2, 3))
    out = jax.vmap(jax.vmap(random.uniform), in_axes=-1)(keys)  # axis -1 of shape (2, 3): 3 examples
    np.testing.assert_array_equal(out, np.float32([[0.5302608013153076, 0.38901209831237793],
                                                   [0.7276642322540283, 0.7437396049499512],
                                                   [0.6672406196594238, 0.41425955295562744]]))
    split = jax.vmap(random.split, out_axes=-1)(random.split(KEY, 4))
    assert split.shape == (2, 4) and split.dtype == KEY_DTYPE
    np.testing.assert_array_equal(data(split)[:, 0], [[1012194634, 3152801799], [1705926158, 899080142]])
    np.testing.assert_array_equal(data(split)[1, 3], [1914800406, 1741898942])


def test_vmap_axis_out_of_range_names_the_key_rank():
    with pytest.raises(ValueError, match="rank should be at least 2, but is only 1"):
        jax.vmap(lambda k: k, in_axes=1)(random.split(KEY, 3))


@settings(max_examples=40)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_vmap_moves_key_axes_as_numpy_moves_them(shape, draw):
    keys = random.split(KEY, tuple(shape))
    n = len(shape)
    in_axis = draw.draw(st.integers(-n, n - 1))
    out_axis = draw.draw(st.integers(-n, n - 1))
    moved = jax.vmap(lambda k: k, in_axes=in_axis, out_axes=out_axis)(keys)
    want = np.moveaxis(data(keys), in_axis % n, out_axis % n)
    assert moved.dtype == KEY_DTYPE
    np.testing.assert_array_equal(data(moved), want)


def test_vmap_prefix_axes_over_a_tree_with_keys():
    keys, xs = random.split(KEY, 3), jnp.arange(3.0)
    out = jax.vmap(lambda t: t["x"] * random.normal(t["k"]), in_axes=({"k": 0, "x": 0},))({"k": keys, "x": xs})
    np.testing.assert_allclose(out, xs * np.float32([0.07592553645372391, 0.6057640314102173, 0.4323064982891083]))


# ---- differentiation --------------------------------------------------------------------------------

def _noisy_sum(x, k):
    return jnp.sum(x * random.normal(k, x.shape))


GRAD = np.float32([-0.02830461598932743, 0.4671318531036377, 0.2957029640674591])


def test_grad_with_a_key_argument():
    np.testing.assert_array_equal(jax.grad(_noisy_sum)(jnp.arange(3.0), KEY), GRAD)


def test_grad_with_respect_to_a_key_is_refused_unless_allow_int():
    with pytest.raises(TypeError, match="requires real- or complex-valued inputs .* but got key<fry>"):
        jax.grad(_noisy_sum, argnums=1)(jnp.arange(3.0), KEY)
    gx, gk = jax.grad(_noisy_sum, argnums=(0, 1), allow_int=True)(jnp.arange(3.0), random.split(KEY, 3)[0])
    assert gk.dtype == jax.dtypes.float0 and gk.shape == ()
    keys = random.split(KEY, 3)
    params = {"k": keys, "x": jnp.ones(3)}
    _, g = jax.value_and_grad(lambda p: jnp.sum(p["x"] * random.normal(p["k"][0], (3,))), allow_int=True)(params)
    assert g["k"].dtype == jax.dtypes.float0 and g["k"].shape == (3,)


def test_jvp_of_a_key_function():
    out, tangent = jax.jvp(random.split, (KEY,), (np.zeros((), jax.dtypes.float0),))
    assert_same_keys(out, random.split(KEY))
    assert tangent.dtype == jax.dtypes.float0 and tangent.shape == (2,)


def test_custom_vjp_and_custom_jvp_with_key_arguments():
    @jax.custom_vjp
    def noisy(x, key):
        return x * random.normal(key)

    noisy.defvjp(lambda x, key: (noisy(x, key), key), lambda key, g: (g * 2 * random.normal(key), None))
    np.testing.assert_array_equal(jax.grad(noisy)(3.0, KEY), np.float32(-0.05660923197865486))
    per_key = jax.vmap(jax.grad(noisy), in_axes=(None, 0))(3.0, random.split(KEY, 3))
    np.testing.assert_array_equal(per_key, np.float32([0.15185107290744781, 1.2115280628204346, 0.8646129965782166]))

    @jax.custom_jvp
    def scaled(x, key):
        return x * random.uniform(key)

    scaled.defjvp(lambda p, t: (scaled(*p), t[0] * 10.0))
    assert float(jax.grad(scaled)(3.0, KEY)) == 10.0


def test_key_outputs_of_custom_jvp_and_vjp_have_float0_tangents():
    k = random.key(1)

    @jax.custom_jvp
    def f(x, key):
        return x * 2, random.split(key)[0]

    f.defjvp(lambda p, t: (f(*p), (t[0] * 2, np.zeros((), jax.dtypes.float0))))
    (_, key_out), (dx, dkey) = jax.jvp(f, (1.0, k), (1.0, np.zeros((), jax.dtypes.float0)))
    assert_same_keys(key_out, random.split(k)[0])
    assert float(dx) == 2.0 and dkey.dtype == jax.dtypes.float0 and dkey.shape == ()
    _, pullback = jax.vjp(lambda x, k: (x * random.normal(k), random.split(k)), 1.0, k)
    gx, gk = pullback((1.0, np.zeros((2,), jax.dtypes.float0)))
    np.testing.assert_array_equal(gx, np.float32(-0.15443718))
    assert gk.dtype == jax.dtypes.float0 and gk.shape == ()


def test_jacobians_and_lax_map_with_keys():
    k, x = random.key(1), jnp.arange(3.0)
    np.testing.assert_array_equal(jax.jacrev(lambda x, k: x * random.normal(k, (3,)))(x, k)[0],
                                  np.float32([-0.15443718, 0, 0]))
    np.testing.assert_array_equal(jax.hessian(lambda x, k: jnp.sum(x ** 2 * random.normal(k, (3,))))(x, k)[2],
                                  np.float32([0, 0, -0.27196097]))
    np.testing.assert_array_equal(lax.map(random.normal, random.split(k, 5), batch_size=2),
                                  np.float32([0.53193736, -0.24392003, 0.1453535, -1.0126554, 0.44914985]))


def test_checkpoint_with_a_key_argument():
    np.testing.assert_array_equal(jax.grad(jax.checkpoint(_noisy_sum))(jnp.arange(3.0), KEY), GRAD)
    np.testing.assert_array_equal(jax.jit(jax.checkpoint(_noisy_sum))(jnp.arange(3.0), KEY),
                                  _noisy_sum(jnp.arange(3.0), KEY))


# ---- control flow -----------------------------------------------------------------------------------

def test_scan_carries_keys_and_takes_keys_as_xs():
    def body(c, x):
        key, s = c
        key, sub = random.split(key)
        return (key, s + x * random.normal(sub)), random.uniform(sub)

    (key, s), ys = lax.scan(body, (KEY, 0.0), jnp.arange(4.0))
    assert key.dtype == KEY_DTYPE
    np.testing.assert_array_equal(data(key), [2852371275, 1535037118])
    np.testing.assert_array_equal(s, np.float32(1.0194787979125977))
    np.testing.assert_array_equal(ys, np.float32([0.7276642322540283, 0.41648638248443604, 0.3464590311050415,
                                                  0.7496498823165894]))
    total, _ = lax.scan(lambda c, k: (c + random.normal(k), None), 0.0, random.split(KEY, 5))
    np.testing.assert_array_equal(total, np.float32(1.4870190620422363))
    _, keys_out = lax.scan(lambda c, k: (c, random.fold_in(k, 1)), 0, random.split(KEY, 3))
    assert_same_keys(keys_out, jax.vmap(lambda k: random.fold_in(k, 1))(random.split(KEY, 3)))


def test_fori_and_while_loops_carry_keys():
    out = lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), KEY)
    np.testing.assert_array_equal(data(out), [4179084902, 2188378661])

    def body(c):
        a, b = random.split(c[0])
        return a, random.uniform(b)

    key, u = lax.while_loop(lambda c: c[1] < 0.9, body, (KEY, 0.0))
    assert key.dtype == KEY_DTYPE
    np.testing.assert_array_equal(u, np.float32(0.9216766357421875))


def test_cond_and_switch_with_keys():
    out = lax.cond(True, lambda k: random.normal(k), lambda k: -random.normal(k), KEY)
    np.testing.assert_array_equal(out, np.float32(-0.02830461598932743))
    picked = lax.switch(1, [lambda k: k, lambda k: random.fold_in(k, 7)], KEY)
    np.testing.assert_array_equal(data(picked), [2547012911, 1371500959])
    with pytest.raises(TypeError):  # a key and its raw data are different types
        lax.cond(True, lambda k: k, lambda k: random.key_data(k), KEY)


# ---- shapes, placement, export ----------------------------------------------------------------------

def test_eval_shape_with_key_shape_dtype_structs():
    out = jax.eval_shape(lambda: random.split(KEY, 3))
    assert out == jax.ShapeDtypeStruct((3,), KEY_DTYPE)
    assert repr(out) == "ShapeDtypeStruct(shape=(3,), dtype=key<fry>)"
    spec = jax.ShapeDtypeStruct((4,), KEY_DTYPE)
    got = jax.eval_shape(lambda ks: (jax.vmap(random.normal)(ks), ks[0]), spec)
    assert got == (jax.ShapeDtypeStruct((4,), jnp.float32), jax.ShapeDtypeStruct((), KEY_DTYPE))
    assert jax.eval_shape(random.normal, jax.typeof(KEY)) == jax.ShapeDtypeStruct((), jnp.float32)
    split = jax.jit(random.split).eval_shape(jax.ShapeDtypeStruct((), KEY_DTYPE))
    assert split == jax.ShapeDtypeStruct((2,), KEY_DTYPE)


def test_typeof_and_printing():
    keys = random.split(KEY, (2, 3))
    assert str(jax.typeof(keys)) == "key<fry>[2,3]" and keys.shape == (2, 3) and keys.dtype == KEY_DTYPE
    assert repr(KEY).startswith("Array((), dtype=key<fry>) overlaying:")


def test_device_put_and_get_keep_keys():
    put = jax.device_put({"k": KEY})
    assert_same_keys(put["k"], KEY)
    assert_same_keys(jax.device_get(KEY), KEY)
    assert_same_keys(lax.stop_gradient(KEY), KEY)


def test_export_round_trips_keys():
    exp = jax.export.export(jax.jit(lambda k: (random.normal(k, (2,)), random.split(k))))(KEY)
    back = jax.export.deserialize(exp.serialize())
    for e in (exp, back):
        normal, keys = e.call(KEY)
        np.testing.assert_array_equal(normal, random.normal(KEY, (2,)))
        assert_same_keys(keys, random.split(KEY))


def test_where_and_astype_on_keys():
    # optax's MultiSteps maps jnp.astype(jnp.where(emit, new, old), old.dtype) over its state, keys included
    a, b = random.split(KEY, 2), random.split(random.key(1), 2)
    picked = jnp.where(jnp.array([False, True]), a, b)
    np.testing.assert_array_equal(data(picked), np.stack([data(b)[0], data(a)[1]]))
    assert_same_keys(jax.jit(lambda c: jnp.where(c, a, b[0]))(True), a)
    assert_same_keys(jnp.astype(a, a.dtype), a)
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to float32"):
        jnp.astype(KEY, jnp.float32)
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.where(True, KEY, 1.0)
