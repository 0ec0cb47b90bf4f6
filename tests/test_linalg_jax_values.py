"""jnp.linalg and xjax.scipy.linalg against values recorded from JAX (tests/jax_linalg_values.py) for the
cases in tests/linalg_cases.py: singular and non-finite matrices (infs/NaNs, no exception), integer
inputs (promoted to float32), empty matrices, and options whose conventions NumPy does not share."""
import warnings

import numpy as np
import pytest

import linalg_cases
import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as sl
from jax_linalg_values import VALUES

ENV = dict(vars(linalg_cases), jnp=jnp, sl=sl, jax=xjax, np=np)


@pytest.mark.parametrize("label, expr, how", linalg_cases.CASES, ids=[c[0] for c in linalg_cases.CASES])
def test_matches_jax(label, expr, how):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from NumPy: every value is computed by the core
        got = eval(expr, ENV)
    got = got if isinstance(got, tuple) else (got,)
    want = VALUES[label]
    assert len(got) == len(want), label
    compare_abs = isinstance(how, tuple)
    rtol = how[1] if compare_abs else how
    for g, (dtype, shape, values) in zip(got, want):
        g = np.asarray(g)
        assert (str(g.dtype), list(g.shape)) == (dtype, shape), label
        w = np.array(values, dtype=dtype).reshape(shape)
        if compare_abs:
            g, w = np.abs(g), np.abs(w)
        if rtol == 0:
            np.testing.assert_array_equal(g, w, err_msg=label)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=label)
