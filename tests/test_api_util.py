"""jax.api_util: the helpers libraries use to trace Python functions through JAX's internal API
(Flax's nn.scan): flatten_fun(_nokwargs) over linear_util.WrappedFun, debug_info, shaped_abstractify."""
import numpy as np

import xjax
import xjax.numpy as jnp
from xjax import api_util, tree_util
from xjax.extend import linear_util as lu
from xjax.interpreters import partial_eval as pe


def test_flatten_fun_nokwargs_flattens_arguments_and_results():
    def f(a, bc):
        b, c = bc
        return {"s": a + b, "p": a * c}

    args = (jnp.float32(2.0), (jnp.float32(3.0), jnp.float32(4.0)))
    leaves, in_tree = tree_util.tree_flatten(args)
    g, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(f, debug_info=api_util.debug_info("test", f, args, {})),
                                               in_tree)
    out = g.call_wrapped(*leaves)
    assert tree_util.tree_unflatten(out_tree(), out) == {"p": 8.0, "s": 5.0}


def test_flatten_fun_takes_keyword_arguments():
    def f(a, *, scale):
        return [a * scale]

    leaves, in_tree = tree_util.tree_flatten(((jnp.arange(3.0),), {"scale": 2.0}))
    g, out_tree = api_util.flatten_fun(lu.wrap_init(f), in_tree)
    (out,) = g.call_wrapped(*leaves)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    assert out_tree() == tree_util.tree_structure([0])


def test_trace_to_jaxpr_nounits_through_flatten_fun():
    # Flax's nn.scan: which outputs depend on the (unknown) inputs, and the known ones' values.
    def body(x, w):
        return (x * w, w + 1.0)

    leaves, in_tree = tree_util.tree_flatten((jnp.ones(2), jnp.float32(3.0)))
    g, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(body), in_tree)
    pvals = [pe.PartialVal.unknown(api_util.shaped_abstractify(leaves[0])), pe.PartialVal.known(leaves[1])]
    _, out_pvals, _ = pe.trace_to_jaxpr_nounits(g, pvals)
    assert not out_pvals[0].is_known() and out_pvals[0].get_aval().shape == (2,)
    assert out_pvals[1].is_known() and float(out_pvals[1].get_known()) == 4.0


def test_debug_info_names_the_function():
    def loss(p, x):
        return p * x

    info = api_util.debug_info("jit", loss, (1.0, 2.0), {})
    assert info.traced_for == "jit" and "loss" in info.func_src_info and info.arg_names == ("args[0]", "args[1]")


def test_shaped_avals_accept_whole_layouts_only():
    aval = xjax.core.ShapedArray((2, 3), np.float32, sharding=xjax.typeof(jnp.ones((2, 3))).sharding)
    assert aval.shape == (2, 3)
