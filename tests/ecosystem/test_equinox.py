"""Equinox with `jax` aliased to xjax: an eqx.nn.MLP trained with filter_jit and
filter_value_and_grad (plain SGD through eqx.apply_updates), filter_jvp, an eqx.filter_custom_jvp, a primitive
defined through jax.extend with its rules registered in jax.interpreters' tables, eqx.tree_at, and
Equinox's own primitives (unvmap_any, lowered by mlir.lower_fun) under jit and vmap. The program
runs in a fresh interpreter (install_as_jax() is process-global) and is compared with what the same
program prints under JAX 0.10.2."""
import importlib.util
import json

import numpy as np
import pytest

from isolated import run_isolated

pytestmark = pytest.mark.skipif(importlib.util.find_spec("equinox") is None, reason="equinox is not installed")

PRELUDE = """
import xjax
xjax.install_as_jax()
"""

PROGRAM = """
import jax, jax.numpy as jnp, numpy as np
import equinox as eqx

key = jax.random.PRNGKey(0)
mkey, dkey = jax.random.split(key)
model = eqx.nn.MLP(in_size=2, out_size=1, width_size=8, depth=2, activation=jnp.tanh, key=mkey)
x = jax.random.normal(dkey, (16, 2))
y = jnp.sin(x[:, :1]) + 0.5 * x[:, 1:]

@eqx.filter_custom_jvp
def softclip(v):
    return jnp.tanh(v) * 2.0

@softclip.def_jvp
def softclip_jvp(primals, tangents):
    (v,), (tv,) = primals, tangents
    out = softclip(v)
    return out, 2.0 * (1 - jnp.tanh(v) ** 2) * tv

# A primitive defined through jax.extend: softsign(v) = v / (1 + |v|), rules registered in JAX's tables.
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

softsign_p = Primitive("softsign")
def _softsign_impl(v):
    return v / (1 + jnp.abs(v))
softsign_p.def_impl(_softsign_impl)
softsign_p.def_abstract_eval(lambda a: jax.core.ShapedArray(a.shape, a.dtype))
ad.defjvp(softsign_p, lambda t, v: t / (1 + jnp.abs(v)) ** 2)
batching.primitive_batchers[softsign_p] = lambda args, dims: (softsign_p.bind(*args), dims[0])
mlir.register_lowering(softsign_p, mlir.lower_fun(_softsign_impl, multiple_results=False))

def loss(model, x, y):
    pred = jax.vmap(lambda xi: softsign_p.bind(model(xi)))(x)
    return jnp.mean((softclip(pred) - y) ** 2)

@eqx.filter_jit
def step(model, x, y):
    l, g = eqx.filter_value_and_grad(loss)(model, x, y)
    model = eqx.apply_updates(model, jax.tree.map(lambda gp: -0.1 * gp, g))
    return model, l

out = {"losses": []}
for i in range(5):
    model, l = step(model, x, y)
    out["losses"].append(float(l))
out["w0"] = np.asarray(model.layers[0].weight).ravel()[:6].tolist()
out["b2"] = np.asarray(model.layers[-1].bias).tolist()
# tree_at: replace the last bias, then evaluate
model2 = eqx.tree_at(lambda m: m.layers[-1].bias, model, jnp.array([0.25]))
out["loss_tree_at"] = float(eqx.filter_jit(loss)(model2, x, y))
out["bias_replaced"] = np.asarray(model2.layers[-1].bias).tolist()
any_above = eqx.filter_jit(jax.vmap(lambda v, t: eqx.internal.unvmap_any(v > t), in_axes=(0, None)))
out["any_unvmap"] = [bool(any_above(x[:, 0], t)[0]) for t in (0.5, 9.0)]
_, jvp_out = eqx.filter_jvp(lambda v: model(v), (x[0],), (jnp.ones(2),))
out["filter_jvp"] = np.asarray(jvp_out).tolist()
out["n_params"] = sum(p.size for p in jax.tree.leaves(eqx.filter(model, eqx.is_array)))
import json
print(json.dumps(out))
"""


def test_mlp_training_custom_jvp_extend_primitive_tree_at():
    out = json.loads(run_isolated(PROGRAM, PRELUDE, timeout=300).splitlines()[-1])
    # Recorded from JAX 0.10.2 (equinox 0.13.8): the same program with the real jax.
    want = {"losses": [0.7416402101516724, 0.5316605567932129, 0.4064122438430786, 0.32859283685684204,
                       0.27682948112487793],
            "w0": [-0.6321908235549927, -0.22226260602474213, -0.1646059900522232, -0.47996410727500916,
                   0.22271233797073364, -0.13662438094615936],
            "b2": [-0.2721977233886719], "loss_tree_at": 0.6671437621116638, "bias_replaced": [0.25],
            "any_unvmap": [True, False], "filter_jvp": [0.15458263456821442], "n_params": 105}
    # float32 training: the two runtimes may round a few operations differently in the last place
    for name in ("losses", "w0", "b2", "loss_tree_at", "bias_replaced", "filter_jvp"):
        np.testing.assert_allclose(out[name], want[name], rtol=1e-5, atol=1e-7, err_msg=name)
    assert out["any_unvmap"] == want["any_unvmap"]
    assert out["n_params"] == want["n_params"]


ERRORS_PROGRAM = """
import json
import jax, jax.numpy as jnp
import equinox as eqx

def check(x):
    return eqx.error_if(x, x < 0, "x must be non-negative")

def outcome(fn, *args):
    try:
        return ["ok", jnp.asarray(fn(*args)).tolist()]
    except Exception as e:
        return ["raised", "x must be non-negative" in str(e), isinstance(e, eqx.EquinoxRuntimeError)]

out = {}
out["filter_jit_ok"] = outcome(eqx.filter_jit(check), jnp.array(1.5))
out["filter_jit_bad"] = outcome(eqx.filter_jit(check), jnp.array(-1.5))
out["jit_bad"] = outcome(jax.jit(check), jnp.array(-1.5))
out["vmap_one_bad"] = outcome(eqx.filter_jit(jax.vmap(check)), jnp.array([1.0, -2.0, 3.0]))
out["vmap_ok"] = outcome(eqx.filter_jit(jax.vmap(check)), jnp.array([1.0, 2.0]))
out["grad_ok"] = outcome(eqx.filter_jit(jax.grad(lambda v: check(v) ** 2)), jnp.array(3.0))
out["branched"] = outcome(eqx.filter_jit(lambda v: eqx.branched_error_if(v, v > 10, jnp.where(v > 100, 1, 0),
                                                                         ["big", "huge"])), jnp.array(5.0))
print(json.dumps(out))
"""


def test_error_if_raises_equinox_runtime_errors():
    """eqx.error_if's runtime check: under filter_jit a failed check is an EquinoxRuntimeError (Equinox
    recognises its callback's exception inside jax.errors.JaxRuntimeError), under jax.jit the
    JaxRuntimeError itself; vmap and grad pass through."""
    out = json.loads(run_isolated(ERRORS_PROGRAM, PRELUDE, timeout=300).splitlines()[-1])
    # Recorded from JAX 0.10.2 (equinox 0.13.8).
    want = {"filter_jit_ok": ["ok", 1.5], "filter_jit_bad": ["raised", True, True], "jit_bad": ["raised", True, False],
            "vmap_one_bad": ["raised", True, True], "vmap_ok": ["ok", [1.0, 2.0]], "grad_ok": ["ok", 6.0],
            "branched": ["ok", 5.0]}
    assert out == want
