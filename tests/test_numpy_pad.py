"""jnp.pad's modes and keyword arguments against np.pad (float64), and JAX's own conventions where
they differ from NumPy's (a callable mode returns the row; unknown modes and keywords are refused)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp

MODES = [
    ("constant", {"constant_values": 3.5}), ("edge", {}), ("wrap", {}), ("empty", {}),
    ("linear_ramp", {}), ("linear_ramp", {"end_values": (1.0, -2.0)}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {"stat_length": (1, 3)}),
    ("median", {}), ("median", {"stat_length": 2}),
    ("reflect", {}), ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}), ("symmetric", {"reflect_type": "odd"}),
]


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       widths=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=3),
       mode=st.sampled_from(MODES), seed=st.integers(0, 2**16))
def test_pad_modes_against_numpy(shape, widths, mode, seed):
    name, kwargs = mode
    x = np.random.default_rng(seed).standard_normal(shape)
    pw = widths[:len(shape)]
    with xjax.enable_x64(True):
        got = np.asarray(jnp.pad(jnp.asarray(x), pw, mode=name, **kwargs))
    want = np.pad(x, pw, mode=name, **kwargs)
    assert got.shape == want.shape
    if name != "empty":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", [("mean", {}), ("median", {"stat_length": 3}), ("maximum", {})])
def test_pad_statistics_of_integers_round_to_the_type(name, kwargs):
    x = np.array([1, 2, 4, 8, 9], np.int32)
    got = jnp.pad(jnp.asarray(x), 3, mode=name, **kwargs)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.pad(x, 3, mode=name, **kwargs))


def test_pad_callable_mode_returns_each_row():
    def fill(row, width, axis, kwargs):  # JAX's convention: the padded row is returned, not written
        row = row.at[:width[0]].set(kwargs.get("value", 9.0))
        return row.at[row.shape[0] - width[1]:].set(-1.0 - axis)

    def fill_in_place(row, width, axis, kwargs):  # NumPy's
        row[:width[0]] = kwargs.get("value", 9.0)
        row[row.shape[0] - width[1]:] = -1.0 - axis

    x = np.arange(12.0).reshape(3, 4)
    got = jnp.pad(jnp.asarray(x), ((1, 2), (0, 1)), fill, value=4.0)
    np.testing.assert_array_equal(got, np.pad(x, ((1, 2), (0, 1)), fill_in_place, value=4.0))


def test_pad_refusals_as_jax():
    x = jnp.arange(4.0)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'bogus'"):
        jnp.pad(x, 1, mode="bogus")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(x, 1, mode="edge", constant_values=2)
    with pytest.raises(ValueError, match="stat_length of 0"):
        jnp.pad(x, 0, mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="reflect_type"):
        jnp.pad(x, 1, mode="reflect", reflect_type="sideways")
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        jnp.pad(jnp.zeros((0, 2)), 1, mode="reflect")
