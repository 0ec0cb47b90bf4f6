"""Programs whose loop bodies once crashed the executor, each run in its own process.

A loop body's plan writes in place over the carried buffers it is handed; a value written over
another that already lived in such a buffer got no buffer at all (a null output pointer).
"""
import json

import numpy as np
import pytest

from isolated import run_isolated

PRELUDE = """
import json
import numpy as onp
import xjax as jax
import xjax.numpy as jnp
from xjax import lax

def show(*values):
    print(json.dumps([onp.asarray(v).tolist() for v in values]))
"""


def run(code):
    return [np.asarray(v) for v in json.loads(run_isolated(code, PRELUDE).strip().splitlines()[-1])]


def test_hmm_em_from_jaxs_examples():
    pi, a, b = run("""
        def log_normalizer(params, seq):
            pi, A, B = map(jnp.exp, params)
            def marginalize(carry, obs):
                alpha, logprob = carry
                alpha = jnp.dot(alpha, A) * B[:, obs]
                return (alpha / alpha.sum(), logprob + jnp.log(alpha.sum())), None
            (_, logprob), _ = lax.scan(marginalize, (pi, 0.), seq)
            return logprob

        @jax.jit
        def EM(params, seq, num_steps):
            def update(i, params):
                return [x / x.sum(-1, keepdims=True) for x in jax.grad(log_normalizer)(params, seq)]
            return lax.fori_loop(0, num_steps, update, params)

        show(*EM([jnp.zeros(4), jnp.zeros((4, 4)), jnp.zeros((4, 3))], jnp.asarray(onp.arange(5) % 3), 2))
        """)
    # JAX 0.10.2: pi and A uniform, each row of B [0.39999998 0.4 0.2]
    np.testing.assert_allclose(pi, np.full(4, 0.25), rtol=1e-6)
    np.testing.assert_allclose(a, np.full((4, 4), 0.25), rtol=1e-6)
    np.testing.assert_allclose(b, np.tile([0.4, 0.4, 0.2], (4, 1)), rtol=1e-6)


def test_log_softmax_in_a_scan_body():
    (got,) = run("""
        def body(c, _):
            v = jax.nn.log_softmax(c)
            return jnp.tanh(v) + jnp.sum(v), None
        show(jax.jit(lambda a: lax.scan(body, a, None, length=2)[0])(jnp.ones(2)))
        """)
    c = np.ones(2)
    for _ in range(2):
        v = c - np.log(np.sum(np.exp(c)))
        c = np.tanh(v) + v.sum()
    np.testing.assert_allclose(got, c, rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_values_chained_over_a_carried_buffer(jit):
    (got,) = run(f"""
        def body(c, _):
            u = c + 1.0
            v = u * jnp.sum(u)
            return v * jnp.sum(v), None
        f = lambda a: lax.scan(body, a, None, length=1)[0]
        show(({jit} and jax.jit(f) or f)(jnp.ones(2)))
        """)
    np.testing.assert_array_equal(got, [128.0, 128.0])  # JAX: [128. 128.]


def test_zero_sized_dynamic_update_slice_in_fori_loop():
    got = run("""
        def f(x):
            upd = lambda i, c: lax.dynamic_update_slice(c, jnp.zeros((0,)), (i,)) * 2.0
            return lax.fori_loop(0, 3, upd, x)
        def g(x):
            upd = lambda i, c: lax.dynamic_update_slice(c, jnp.zeros((0, 2)), (i, 0)) + 1
            return lax.fori_loop(0, 3, upd, x)
        empty = lax.fori_loop(0, 3, lambda i, c: lax.dynamic_update_slice(c, c[:0], (i,)), jnp.ones(0))
        show(f(jnp.ones(4)), jax.jit(f)(jnp.ones(4)), g(jnp.ones((4, 2))), empty)
        """)
    np.testing.assert_array_equal(got[0], np.full(4, 8.0))
    np.testing.assert_array_equal(got[1], np.full(4, 8.0))
    np.testing.assert_array_equal(got[2], np.full((4, 2), 4.0))
    assert got[3].size == 0
