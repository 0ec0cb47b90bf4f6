"""Transformed programs compute what JAX computes, checked numerically.

JAX's derivative rules reuse primal outputs (tanh's derivative is (g + g*y) * (1 - y)), so their
values follow the primal's bits: xjax lowers float32 tanh as XLA's CPU code computes it, which the
values recorded here from JAX 0.10.2 (bit patterns of float32 inputs and outputs) check. The
rewritten rules are checked against numerical derivatives (check_grads, float64), and the batching
rules against per-example loops.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads

X_BITS = [
    997317542, 1063612356, 3209857458, 3224043103, 3215890421, 3225314665, 1043907290, 1082173729, 3216835038,
    3220063018, 1069291887, 1065945964, 1050798738, 3224544861, 3182672164, 1074102155, 3229682539,
    3215964534, 3233186931, 3229063004, 3232812667, 3207892172, 3228785032, 1062229182, 1055966472,
    3205468190, 3237059554, 3218004906, 3189046962, 1051593448, 3230852254, 3216471311, 3225149484,
    3223014392, 1078702410, 3222998002, 3183988792, 1076481416, 3219135042, 3198915326, 977758033, 933511989,
    976617912, 965902603, 972915685, 3126209672, 3189348762, 970045207, 3117528855, 1090309325, 1090519040,
    1092091904, 3248488448, 228737632,
]

Y_BITS = [
    997317470, 1060562659, 3207407446, 3212677274, 3210778643, 3212749645, 1043777580, 1065342421, 3211173112,
    3212045152, 1063666887, 1061825139, 1050458593, 3212711105, 3182642021, 1064843528, 3212826322,
    3210812517, 3212836492, 3212822232, 3212836331, 3206255236, 3212820159, 1059844877, 1054897785,
    3204591960, 3212836855, 3211562689, 3188978631, 1051173521, 3212833408, 3211030506, 3212742514,
    3212577010, 1065295600, 3212574986, 3183947399, 1065187607, 3211854837, 3198512514, 977758029, 933511989,
    976617909, 965902603, 972915682, 3126209667, 3189273937, 970045204, 3117528852, 1065353212, 1065353216,
    1065353216, 3212836864, 228737632,
]

Y_BF16_BITS = [
    997326848, 1060569088, 3207397376, 3212705792, 3210805248, 3212771328, 1043791872, 1065353216, 3211198464,
    3212050432, 1063649280, 1061814272, 1050476544, 3212705792, 3182690304, 1064828928, 3212836864,
    3210805248, 3212836864, 3212836864, 3212836864, 3206283264, 3212836864, 1059848192, 1054932992,
    3204644864, 3212836864, 3211591680, 3188981760, 1051197440, 3212836864, 3211001856, 3212771328,
    3212574720, 1065287680, 3212574720, 3183935488, 1065156608, 3211853824, 3198550016, 977731584, 933494784,
    976617472, 965935104, 972947456, 3126198272, 3189309440, 970063872, 3117547520, 1065353216, 1065353216,
    1065353216, 3212836864, 228720640,
]


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32).tolist()


X = np.array(X_BITS, np.uint32).view(np.float32)


@pytest.mark.parametrize("jit", [False, True])
def test_float32_tanh_is_jax_bit_for_bit(jit):
    f = xjax.jit(jnp.tanh) if jit else jnp.tanh
    assert _bits(f(jnp.asarray(X))) == Y_BITS
    assert _bits(f(jnp.asarray(X).astype(jnp.bfloat16)).astype(jnp.float32)) == Y_BF16_BITS


def test_tanh_special_values():
    got = np.asarray(jnp.tanh(jnp.array([np.inf, -np.inf, np.nan, -0.0, 0.0], jnp.float32)))
    assert got[0] == 1 and got[1] == -1 and np.isnan(got[2])
    assert np.signbit(got[3]) and not np.signbit(got[4])


@pytest.fixture
def x64():
    prev = xjax.config.jax_enable_x64
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", prev)


RNG = np.random.default_rng(0)
M = RNG.uniform(-1.0, 1.0, (2, 3))
W3 = RNG.uniform(-1.0, 1.0, (3, 2))


def _scan_consts(w):
    c, ys = lax.scan(lambda c, x: (jnp.tanh(c * w + x), jnp.sin(c) * w), jnp.zeros(3), jnp.asarray(M))
    return jnp.sum(c) + jnp.sum(ys)


def _scan_reverse(w):
    c, _ = lax.scan(lambda c, x: (c * x + w, None), w, jnp.asarray(M[0]), reverse=True)
    return jnp.sum(c)


GRAD_CASES = {
    "softmax": lambda x: jnp.sum(xjax.nn.softmax(x, axis=1) * jnp.asarray(M)),
    "softmax_axis0": lambda x: jnp.sum(xjax.nn.softmax(x, axis=0) ** 2),
    "log_softmax": lambda x: jnp.sum(xjax.nn.log_softmax(x) * jnp.asarray(M)),
    "logsumexp": lambda x: jnp.sum(xjax.nn.logsumexp(x, axis=1)) + xjax.nn.logsumexp(x),
    "where": lambda x: jnp.sum(jnp.where(x > 0, x ** 2, jnp.sin(x))),
    "cumsum": lambda x: jnp.sum(jnp.cumsum(x, axis=1) ** 2),
    "max_keepdims_initial": lambda x: jnp.sum(jnp.max(x, axis=1, keepdims=True, initial=-5.0) * x),
    "sum_where": lambda x: jnp.sum(jnp.sum(x ** 2, axis=0, where=jnp.asarray(M) > 0)),
    "indexing": lambda x: jnp.sum(x[0] * x[:, 1][1]) + jnp.sum(x[None, 1, :, None] ** 3),
    "matmul_batch": lambda x: jnp.sum(jnp.tanh(x[None] @ jnp.ones((4, 3, 2)))),
    "dot_transposes": lambda x: jnp.sum(jnp.einsum("ij,jk->ki", x, jnp.asarray(W3)) ** 2),
    "jit_residuals": xjax.jit(lambda x: jnp.sum(jnp.sin(x) * x) + jnp.max(x) + jnp.sum(jnp.exp(x) * x)),
    "relu_mlp": lambda x: jnp.sum(xjax.nn.relu(x @ jnp.asarray(W3) - 0.1) ** 2),
    "sigmoid_tanh": lambda x: jnp.sum(xjax.nn.sigmoid(x) * jnp.tanh(x)),
    "pow_weak": lambda x: jnp.sum(jnp.abs(x) ** 1.5 + 2.0 ** x),
    "arange": lambda x: jnp.sum(x * jnp.arange(0.5, 3.5, 1.0)),
    "scan_consts": lambda x: _scan_consts(x[0]),
    "scan_reverse": lambda x: _scan_reverse(x[:, 0]),
    "split": lambda x: jnp.sum(jnp.split(x, [1, 2], axis=1)[1] ** 2) + jnp.sum(jnp.split(x, 2)[0] ** 3),
    "jacfwd_jacrev": lambda x: jnp.sum(xjax.jacfwd(jnp.sin)(x[0]) * xjax.jacrev(jnp.tanh)(x[1])),
    "vmap_inside": lambda x: jnp.sum(xjax.vmap(lambda r, s: jnp.dot(r, s) * r, in_axes=(0, None))(x, x[0])),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_rewritten_rules_match_numerical_derivatives(name, x64):
    x = jnp.asarray(M + 0.05)  # no ties, no zeros
    check_grads(GRAD_CASES[name], (x,), 2, modes=("fwd", "rev"))


def test_softmax_custom_jvp_option(x64):
    x = jnp.asarray(M)
    assert "custom_jvp_call" not in str(xjax.make_jaxpr(xjax.nn.softmax)(x))  # JAX's default
    prev = xjax.config._values["jax_softmax_custom_jvp"]
    xjax.config.update("jax_softmax_custom_jvp", True)
    try:
        check_grads(lambda v: jnp.sum(xjax.nn.softmax(v) * jnp.asarray(M)), (x,), 2, modes=("fwd", "rev"))
        assert "custom_jvp_call" in str(xjax.make_jaxpr(xjax.nn.softmax)(x))
    finally:
        xjax.config.update("jax_softmax_custom_jvp", prev)


X3 = RNG.uniform(-1.0, 1.0, (3, 4, 2)).astype(np.float32)
V2 = RNG.uniform(-1.0, 1.0, (2,)).astype(np.float32)

BATCH_CASES = [
    # (function, in_axes, args): JAX's batching rules (batch axis moved to the front, size-1 axes
    # for unmapped operands, NumPy-integer reduction axes) must give the per-example results.
    (lambda a, b: a + b, (1, None), (X3, V2)),
    (lambda a, b: a * b[0] - b[1], (2, None), (X3, V2)),
    (lambda a: jnp.sum(a, axis=0), 1, (X3,)),
    (lambda a: jnp.max(a, axis=1, keepdims=True), 2, (X3,)),
    (lambda a: jnp.argmax(a, axis=0), 1, (X3,)),
    (lambda a: jnp.cumsum(a, axis=1), 0, (X3,)),
    (lambda a: a.T.reshape(-1), 1, (X3,)),
    (lambda a: jnp.expand_dims(a, 0)[0, 1], 2, (X3,)),
    (lambda a: jnp.broadcast_to(a, (5, 3, 2)), 1, (X3,)),
    (lambda a: lax.squeeze(a[:1], (0,)), 0, (X3,)),
    (lambda a, b: jnp.where(a > 0, a, b), (1, None), (X3, V2)),
    (lambda a, b: a @ b, (0, None), (X3, V2)),
    (lambda a: xjax.nn.softmax(a) + xjax.nn.log_softmax(a, axis=0), 1, (X3,)),
    (lambda a: jnp.split(a, [1], axis=1)[1] * 2.0, 2, (X3,)),
]


@pytest.mark.parametrize("case", range(len(BATCH_CASES)))
def test_batching_rules_match_a_loop(case):
    fun, in_axes, args = BATCH_CASES[case]
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,)
    got = xjax.vmap(fun, in_axes=in_axes)(*args)
    n = next(a.shape[d] for a, d in zip(args, axes) if d is not None)
    rows = [fun(*[jnp.asarray(np.take(a, i, d)) if d is not None else jnp.asarray(a) for a, d in zip(args, axes)])
            for i in range(n)]
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(r) for r in rows]), rtol=1e-6, atol=1e-6)
