"""xjax.random samplers against values recorded from JAX (random_sampler_cases.py lists the calls):
bit for bit for uniform, normal and the integer samplers, to a few ulp for samplers computed
through transcendental functions; eagerly and under jit."""
import contextlib

import ml_dtypes
import numpy as np
import pytest

import xjax
from random_sampler_cases import CASES, SEEDS
from random_sampler_values import VALUES
from xjax import random


def decode(v):
    if isinstance(v, tuple) and len(v) == 3 and v[0] == "array":
        return np.array(v[1], dtype=ml_dtypes.bfloat16 if v[2] == "bfloat16" else v[2])
    return v


@contextlib.contextmanager
def x64(on):
    old = xjax.config.read("jax_enable_x64")
    xjax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        xjax.config.update("jax_enable_x64", old)


def _call(fn, seed, args, kwargs, jit):
    f = getattr(random, fn)
    args = [decode(a) for a in args]
    kwargs = {k: decode(v) for k, v in kwargs.items()}
    key = random.PRNGKey(seed)
    if not jit:
        return f(key, *args, **kwargs)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def g(key, *arr):
        full = list(args)
        for i, a in zip(arrays, arr):
            full[i] = a
        return f(key, *full, **kwargs)

    return xjax.jit(g)(key, *[args[i] for i in arrays])


def _needs_linalg(fn):
    return fn in ("multivariate_normal", "orthogonal")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sampler_matches_jax(case, jit):
    label, fn, args, kwargs, how, use_x64 = case
    with x64(use_x64):
        for seed in SEEDS:
            dtype, want = VALUES[(label, seed)]
            try:
                got = _call(fn, seed, args, kwargs, jit)
            except NotImplementedError as e:  # the linear algebra these need is another part's
                if _needs_linalg(fn) and "linalg" in str(e):
                    pytest.skip(str(e))
                raise
            got = np.asarray(got)
            want = np.array(want, dtype=ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
            assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
            if how == "exact":
                assert got.tobytes() == want.tobytes(), (label, seed, got, want)
            elif fn == "poisson":  # counts: rejection decisions compare lgamma values
                np.testing.assert_allclose(got, want, rtol=how, err_msg=f"{label} seed {seed}")
            else:
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=how,
                                           atol=how, err_msg=f"{label} seed {seed}")
