"""xjax.random keys: PRNGKey / key, split, fold_in, bits bit for bit as JAX (both
jax_threefry_partitionable settings), typed keys, jit / vmap, eager cost, and bad keys."""
import contextlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from random_key_values import RECORDED, RECORDED_U64, SEEDS_X64
from xjax import random


@contextlib.contextmanager
def flag(name, value):
    old = xjax.config.read(name)
    xjax.config.update(name, value)
    try:
        yield
    finally:
        xjax.config.update(name, old)


def test_seed_example():
    key = random.PRNGKey(42)
    assert str(key) == "[ 0 42]" and key.dtype == np.uint32
    key, sub = random.split(key)
    assert str(key) == "[1832780943  270669613]" and str(sub) == "[  64467757 2916123636]"
    assert str(random.normal(sub)) == "0.60576403"


@pytest.mark.parametrize("seed,want", [(0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (2**31, [0, 2147483648]),
                                       (2**32 + 5, [0, 5]), (2**40 + 7, [0, 7]), (-2**40, [0, 0]),
                                       (np.uint32(7), [0, 7]), (np.int8(-5), [0, 4294967291])])
def test_prng_key_seeds_x32(seed, want):
    np.testing.assert_array_equal(random.PRNGKey(seed), np.array(want, np.uint32))


def test_prng_key_seeds_x64():
    with flag("jax_enable_x64", True):
        for seed, want in SEEDS_X64.items():
            np.testing.assert_array_equal(random.PRNGKey(seed), np.array(want, np.uint32), err_msg=str(seed))


@pytest.mark.parametrize("partitionable", [True, False])
def test_split_fold_in_bits_match_jax(partitionable):
    with flag("jax_threefry_partitionable", partitionable):
        for entry, want in RECORDED[partitionable].items():
            kind, seed, *rest = entry
            key = random.PRNGKey(seed)
            if kind == "split":
                got = random.split(key, rest[0])
            elif kind == "fold_in":
                got = random.fold_in(key, rest[0])
            else:
                got = random.bits(key, rest[1], rest[0])
                assert got.dtype == np.dtype(rest[0])
            np.testing.assert_array_equal(np.asarray(got), np.array(want), err_msg=str(entry))


@pytest.mark.parametrize("partitionable", [True, False])
def test_uint64_bits_match_jax(partitionable):
    with flag("jax_enable_x64", True), flag("jax_threefry_partitionable", partitionable):
        for (p, seed, shape), want in RECORDED_U64.items():
            if p != partitionable:
                continue
            got = random.bits(random.PRNGKey(seed), shape, np.uint64)
            assert got.dtype == np.uint64
            np.testing.assert_array_equal(np.asarray(got), np.array(want, np.uint64))


def test_flag_change_reaches_jitted_functions():
    f = xjax.jit(lambda k: random.split(k))
    key = random.PRNGKey(0)
    a = np.asarray(f(key))
    with flag("jax_threefry_partitionable", False):
        b = np.asarray(f(key))
    np.testing.assert_array_equal(a, RECORDED[True][("split", 0, 2)])
    np.testing.assert_array_equal(b, RECORDED[False][("split", 0, 2)])


def test_jit_and_vmap_give_the_eager_values():
    keys = random.split(random.PRNGKey(42), 4)
    eager = np.stack([np.asarray(random.split(k, 3)) for k in keys])
    np.testing.assert_array_equal(xjax.vmap(lambda k: random.split(k, 3))(keys), eager)
    np.testing.assert_array_equal(xjax.jit(xjax.vmap(lambda k: random.split(k, 3)))(keys), eager)
    folded = np.stack([np.asarray(random.fold_in(k, 9)) for k in keys])
    np.testing.assert_array_equal(xjax.vmap(lambda k: random.fold_in(k, 9))(keys), folded)
    data = jnp.arange(4, dtype=jnp.uint32)
    per = np.stack([np.asarray(random.fold_in(keys[0], i)) for i in range(4)])
    np.testing.assert_array_equal(xjax.vmap(lambda d: random.fold_in(keys[0], d))(data), per)
    bits = np.stack([np.asarray(random.bits(k, (2, 3), np.uint8)) for k in keys])
    np.testing.assert_array_equal(xjax.jit(xjax.vmap(lambda k: random.bits(k, (2, 3), np.uint8)))(keys), bits)
    one_each = np.stack([np.asarray(random.bits(k)) for k in keys])
    np.testing.assert_array_equal(xjax.vmap(lambda k: random.bits(k), in_axes=1)(keys.T), one_each)


def test_typed_keys():
    k = random.key(42)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[ 0 42]"
    assert k.shape == () and k.ndim == 0 and k.dtype.name == "key<fry>" and str(k.dtype) == "key<fry>"
    assert k.dtype == random.key_dtype() and k.dtype.itemsize == 8
    assert random.key_impl(k) == "threefry2x32" and random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    ks = random.split(k, 3)
    assert type(ks) is type(k) and ks.shape == (3,) and len(ks) == 3
    assert repr(ks).startswith("Array((3,), dtype=key<fry>) overlaying:\n[[1832780943  270669613]")
    np.testing.assert_array_equal(random.key_data(ks), random.split(random.PRNGKey(42), 3))
    np.testing.assert_array_equal(random.key_data(ks[1]), [64467757, 2916123636])
    a, b, c = ks
    np.testing.assert_array_equal(random.key_data(c), [2465931498, 255383827])
    assert bool(ks[0] == ks[0]) and not bool(ks[0] == ks[1]) and bool(ks[0] != ks[1])
    w = random.wrap_key_data(random.key_data(ks))
    assert w.shape == (3,) and bool(jnp.all(w == ks))
    np.testing.assert_array_equal(random.key_data(random.fold_in(k, 3)), random.fold_in(random.PRNGKey(42), 3))
    assert random.normal(ks[1]) == random.normal(random.split(random.PRNGKey(42), 3)[1])
    np.testing.assert_array_equal(random.key_data(random.clone(k)), [0, 42])
    assert ks.reshape(3, 1).shape == (3, 1) and ks.reshape((1, 3))[0, 2].shape == ()
    np.testing.assert_array_equal(random.key_data(ks.reshape(3, 1)[2, 0]), [2465931498, 255383827])
    with pytest.raises(TypeError, match="JAX array with PRNGKey dtype cannot be converted to a NumPy array"):
        np.asarray(k)
    with pytest.raises(TypeError, match="iteration over a 0-d key array"):
        iter(k)


def test_typed_keys_through_jit_and_vmap():
    k = random.key(7)
    out = xjax.jit(lambda k: random.split(k))(k)
    assert out.dtype.name == "key<fry>" and out.shape == (2,)
    np.testing.assert_array_equal(random.key_data(out), random.split(random.PRNGKey(7)))
    ks = random.split(k, 5)
    got = xjax.vmap(lambda k: random.normal(k, (2,)))(ks)
    want = np.stack([np.asarray(random.normal(kk, (2,))) for kk in ks])
    np.testing.assert_array_equal(got, want)
    subs = xjax.vmap(random.split)(ks)
    assert subs.shape == (5, 2) and subs.dtype.name == "key<fry>"


def test_eager_split_and_normal_reuse_cached_executables():
    from xjax._src.caches import cache_info

    key = random.PRNGKey(0)
    for _ in range(3):
        key, sub = random.split(key)
        random.normal(sub, (10,)).block_until_ready()
    before = (cache_info()["eager_executables"]["misses"], cache_info()["jaxpr_programs"]["misses"])
    for _ in range(20):
        key, sub = random.split(key)
        random.normal(sub, (10,)).block_until_ready()
    after = (cache_info()["eager_executables"]["misses"], cache_info()["jaxpr_programs"]["misses"])
    assert after == before  # nothing compiled in the loop


def _err(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value).split("\n")[0]


@pytest.mark.parametrize("fn,kind,first", [
    (lambda: random.split(5), TypeError, "JAX encountered invalid PRNG key data: expected key_data to have ndim, "
                                         "shape, and dtype attributes. Got 5"),
    (lambda: random.split([0, 1]), TypeError, "unexpected PRNG key type <class 'list'>"),
    (lambda: random.split(jnp.zeros(3, jnp.uint32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got shape=(3,) for impl="),
    (lambda: random.split(jnp.zeros(2, jnp.int32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=int32"),
    (lambda: random.split(jnp.zeros((), jnp.uint32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0"),
    (lambda: random.split(jnp.zeros((3, 2), jnp.uint32)), ValueError,
     "split accepts a single key, but was given a key array of shape (3, 2) != (). Use jax.vmap for batching."),
    (lambda: random.normal(random.split(random.key(0), 3)), ValueError,
     "normal accepts a single key, but was given a key array of shape (3,) != (). Use jax.vmap for batching."),
    (lambda: random.normal(random.PRNGKey(0), (3.0,)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (3.0,)."),
    (lambda: random.normal(random.PRNGKey(0), ("a",)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got ('a',)."),
    (lambda: random.normal(random.PRNGKey(0), dtype=jnp.int32), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int32"),
    (lambda: random.uniform(random.PRNGKey(0), dtype=jnp.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype, got int32"),
    (lambda: random.randint(random.PRNGKey(0), (3,), 0, 2, dtype=jnp.float32), TypeError,
     "randint only accepts integer dtypes, got float32"),
    (lambda: random.bits(random.PRNGKey(0), (2,), jnp.int32), ValueError,
     "dtype argument to `bits` must be an unsigned int dtype, got int32"),
    (lambda: random.fold_in(random.PRNGKey(0), jnp.arange(3)), TypeError,
     "fold_in accepts a scalar, but was given an array ofshape (3,) != (). Use jax.vmap for batching."),
    (lambda: random.key(jnp.zeros(3, jnp.int32)), TypeError,
     "key accepts a scalar seed, but was given an array of shape (3,) != (). Use jax.vmap for batching"),
    (lambda: random.key(random.key(0)), TypeError, "key accepts a scalar seed, but was given a PRNG key."),
    (lambda: random.PRNGKey(1.5), TypeError, "PRNG key seed must be an integer; got "),
    (lambda: random.wrap_key_data(jnp.zeros(3, jnp.uint32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got shape=(3,)"),
    (lambda: random.key(0, impl="nope"), ValueError, 'unrecognized PRNG implementation "nope". Did you mean one of: '
                                                     '"threefry2x32"?'),
])
def test_bad_keys_and_arguments(fn, kind, first):
    got_kind, got_first = _err(fn)
    assert got_kind is kind and got_first.startswith(first), (got_kind, got_first)


SEED_DIR = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "seed-programs"


@pytest.mark.skipif(not (SEED_DIR / "seed_002_jit.py").exists(), reason="../shared/seed-programs not present")
def test_seed_002_prng_and_init_mlp_params_print_exactly():
    """The PRNG section of seed_002 (keys, split, normal, init_mlp_params) prints JAX's output."""
    src = (SEED_DIR / "seed_002_jit.py").read_text()
    part = src[src.index("random = jax.random"):src.index("x = np.arange(5)\nw = np.array([2.0, 3.0, 4.0])\nn_devices")]
    prog = "import numpy as np\nimport xjax as jax\nimport xjax.numpy as jnp\n" + part
    package_root = str(pathlib.Path(xjax.__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", prog], env=dict(os.environ, PYTHONPATH=package_root),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = (SEED_DIR / "expected" / "seed_002_jit.txt").read_text()
    assert proc.stdout.startswith("[ 0 42]\n-0.028304616\n") and proc.stdout in expected, proc.stdout


K0 = random.PRNGKey(0)


@pytest.mark.parametrize("fn,kind,first", [
    (lambda: random.choice(K0, 5, (3,), p=jnp.array([0.1, 0.2, 0.3, 0.4])), ValueError,
     "p must be None or a 1D vector with the same size as a.shape[axis]. p has shape (4,) and a.shape[axis] is 5."),
    (lambda: random.choice(K0, 3, (5,), replace=False), ValueError,
     "Cannot take a larger sample (size 5) than population (size 3) when 'replace=False'"),
    (lambda: random.choice(K0, 3, 5), TypeError, "shape argument of jax.random.choice must be a sequence, got 5"),
    (lambda: random.choice(K0, 0, (2,)), ValueError, "a must be greater than 0 unless no samples are taken"),
    (lambda: random.choice(K0, jnp.zeros((2, 3)), (2,), axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: random.categorical(K0, jnp.zeros(3), replace=False, shape=(4,)), ValueError,
     "Number of samples without replacement (4) cannot exceed number of categories (3)."),
    (lambda: random.gamma(K0, 1.0, (2,), dtype=jnp.int32), ValueError,
     "dtype argument to `gamma` must be a float dtype, got int32"),
    (lambda: random.bernoulli(K0, 1, (2,)), TypeError, "bernoulli probability `p` must have a floating dtype, got int32."),
    (lambda: random.bernoulli(K0, 0.5, (2,), mode="mid"), ValueError, "got mode='mid', expected 'high' or 'low'"),
    (lambda: random.gumbel(K0, (2,), mode="mid"), ValueError, "Must provide valid mode for gumbel got: mid"),
    (lambda: random.multivariate_normal(K0, jnp.zeros(3), jnp.eye(2)), ValueError,
     "multivariate_normal requires cov.shape == (..., n, n) for n=3, but got cov.shape == (2, 2)."),
    (lambda: random.multivariate_normal(K0, jnp.zeros(3), jnp.eye(3), method="qr"), ValueError,
     "method must be one of {'svd', 'eigh', 'cholesky'}"),
    (lambda: random.dirichlet(K0, 1.0), ValueError, "dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0"),
    (lambda: random.truncated_normal(K0, jnp.zeros(2), jnp.ones(3)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
    (lambda: random.uniform(K0, (2, 3), minval=jnp.zeros(4)), TypeError, "mul got incompatible shapes for broadcasting"),
    (lambda: random.normal(K0, (2,), dtype=jnp.int8), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int8"),
    (lambda: random.permutation(K0, 2.5), TypeError, "x must be an integer or at least 1-dimensional"),
    (lambda: random.orthogonal(K0, 2.5), TypeError, "'float' object cannot be interpreted as an integer"),
    (lambda: random.ball(K0, 2.5), TypeError, "'float' object cannot be interpreted as an integer"),
])
def test_bad_sampler_arguments(fn, kind, first):
    got_kind, got_first = _err(fn)
    assert got_kind is kind and got_first.startswith(first), (got_kind, got_first)


def test_reversed_ranges_are_not_errors_as_in_jax():
    np.testing.assert_array_equal(random.uniform(K0, (3,), minval=2.0, maxval=1.0), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(random.randint(K0, (3,), 5, 2), [5, 5, 5])
