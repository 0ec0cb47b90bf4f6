"""xjax.export: a battery of functions (the seed programs' functions, an MLP train step with grad and
adam, control flow, PRNG, vmap, grad) whose exported call and deserialized call return the same bits
as the jitted function; signatures, pytrees, errors, the Exporter and mapped files."""
import os

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax, optim, random
from xjax import export as jax_export
from xjax.export import Exporter, deserialize, deserialize_module, export, load, text_to_treedef


def _bits(tree):
    leaves = [random.key_data(x) if jax.dtypes.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key) else x
              for x in jax.tree_util.tree_leaves(tree)]  # (a typed key is a leaf: its bits are its data's)
    return [(str(np.asarray(x).dtype), np.shape(x), np.asarray(x).tobytes()) for x in leaves]


def assert_round_trip(fun, *args, **kwargs):
    """The jitted call, the Exported's call and the deserialized one give the same bits and structure."""
    jitted = fun if isinstance(fun, jax._src.jit.JitWrapped) else jax.jit(fun)
    want = jitted(*args, **kwargs)
    exp = export(jitted)(*args, **kwargs)
    got = exp.call(*args, **kwargs)
    back = deserialize(exp.serialize())
    again = back.call(*args, **kwargs)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    assert jax.tree_util.tree_structure(again) == jax.tree_util.tree_structure(want)
    assert _bits(got) == _bits(want)
    assert _bits(again) == _bits(want)
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert back.in_avals == exp.in_avals and back.out_avals == exp.out_avals
    return exp, back


# ---- the seed programs' functions -----------------------------------------------------------

def sum_of_squares(x):
    return jnp.sum(x ** 2)


def sum_squared_error(x, y):
    return jnp.sum((x - y) ** 2)


def squared_error_with_aux(x, y):
    return sum_squared_error(x, y), x - y


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def convolve(x, w):
    return jnp.array([jnp.dot(x[i - 1:i + 2], w) for i in range(1, len(x) - 1)])


def td_loss(theta, s_tm1, r_t, s_t):
    v_tm1 = jnp.tanh(jnp.dot(theta, s_tm1))
    target = r_t + jnp.tanh(jnp.dot(theta, s_t))
    return (lax.stop_gradient(target) - v_tm1) ** 2


X4 = jnp.asarray([1.0, 2.0, 3.0, 4.0])
Y4 = jnp.asarray([1.1, 2.1, 3.1, 4.1])
XS = jnp.stack([jnp.arange(5), jnp.arange(5) * 2])
WS = jnp.stack([jnp.array([2.0, 3.0, 4.0]), jnp.array([1.0, -1.0, 0.5])])

SEED_CASES = {
    "grad": (jax.grad(sum_of_squares), (X4,)),
    "grad_argnums": (jax.grad(sum_squared_error, argnums=(0, 1)), (X4, Y4)),
    "value_and_grad": (jax.value_and_grad(sum_squared_error), (X4, Y4)),
    "grad_has_aux": (jax.grad(squared_error_with_aux, has_aux=True), (X4, Y4)),
    "selu": (selu, (jnp.arange(1000),)),
    "selu_float": (selu, (jnp.linspace(-3.0, 3.0, 101),)),
    "vmap_convolve": (jax.vmap(convolve), (XS, WS)),
    "vmap_axes": (jax.vmap(convolve, in_axes=1, out_axes=1), (XS.T, WS.T)),
    "vmap_none": (jax.vmap(convolve, in_axes=[0, None]), (XS, WS[0])),
    "td_loss_grad": (jax.grad(td_loss), (jnp.array([0.1, -0.2, 0.3]), jnp.array([1.0, 2.0, 0.5]), 1.0,
                                         jnp.array([0.3, -1.0, 2.0]))),
    "random_normal": (lambda k: random.normal(k), (random.PRNGKey(42),)),
    "random_split": (lambda k: random.split(k), (random.PRNGKey(0),)),
}


@pytest.mark.parametrize("name", sorted(SEED_CASES))
def test_seed_functions_round_trip(name):
    fun, args = SEED_CASES[name]
    assert_round_trip(fun, *args)


def test_static_arguments_are_baked_in():
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    jitted = jax.jit(g, static_argnames=["n"])
    exp = export(jitted)(10, n=20)
    assert len(exp.in_avals) == 1 and exp.in_avals[0].weak_type
    back = deserialize(exp.serialize())
    assert _bits(back.call(10)) == _bits(exp.call(10)) == _bits(jitted(10, n=20))  # called without the static


# ---- the digits MLP train step (seed 4): grad, adam, pytrees of namedtuples ---------------

def _mlp_setup(sizes=(64, 32, 10)):
    key = random.PRNGKey(0)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = random.split(key)
        params.append({"w": random.normal(sub, (n_in, n_out)) * jnp.sqrt(2.0 / n_in), "b": jnp.zeros((n_out,))})
    rng = np.random.default_rng(0)
    x = rng.random((32, sizes[0]), dtype=np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], 32)]
    return params, jnp.asarray(x), jnp.asarray(y)


def _model(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def _loss(params, x, y):
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(_model(params, x)), axis=-1))


OPTIMIZER = optim.adam(learning_rate=1e-2)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return loss, optim.apply_updates(params, updates), opt_state


def test_mlp_train_step_round_trip_over_several_steps():
    params, x, y = _mlp_setup()
    opt_state = OPTIMIZER.init(params)
    exp, back = assert_round_trip(train_step, params, opt_state, x, y)
    # The state's namedtuples come back as the optimizer's own classes.
    assert back.in_tree == jax.tree_util.tree_structure(((params, opt_state, x, y), {}))
    a = b = (params, opt_state)
    for _ in range(5):
        la, *a = train_step(*a, x, y)
        lb, *b = back.call(*b, x, y)
        assert _bits((la, a)) == _bits((lb, b))
    assert float(lb) < float(_loss(params, x, y))


def test_mlp_predict_closes_over_weights():
    params, x, _ = _mlp_setup()
    predict = jax.jit(lambda x: jnp.argmax(_model(params, x), axis=-1))
    exp, back = assert_round_trip(predict, x)
    assert len(back._weights) == 4  # the weights are in the file, not arguments
    assert len(exp.in_avals) == 1


# ---- control flow, PRNG, vmap, grad --------------------------------------------------------

def _cond(p, x):
    return lax.cond(p > 0, lambda v: jnp.sin(v) * 2, lambda v: jnp.cos(v) - 1, x)


def _switch(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * v], x)


def _while(x):
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.5 + 0.25), (0, x))


def _fori(x):
    return lax.fori_loop(0, 7, lambda i, c: c * 0.9 + jnp.float32(i), x)


def _scan(xs):
    return lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(xs.shape[1:]), xs)


def _nested(x):
    def body(c):
        i, v = c
        v = lax.cond(i % 2 == 0, lambda u: u + 1.0, lambda u: u * 2.0, v)
        return i + 1, v
    return lax.while_loop(lambda c: c[0] < 5, body, (0, x))


def _prng(key, x):
    k1, k2 = random.split(key)
    noise = random.normal(k1, x.shape)
    mask = random.bernoulli(k2, 0.3, x.shape)
    return jnp.where(mask, x + noise, x), random.uniform(k2, (3,), minval=-1.0, maxval=2.0)


def _hessian(x):
    return jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v ** 3))(x)


def _per_example_grads(w, xs):
    return jax.vmap(jax.grad(lambda w, x: jnp.tanh(jnp.dot(w, x)) ** 2), in_axes=(None, 0))(w, xs)


V3 = jnp.array([0.5, -1.0, 2.0])
M23 = jnp.arange(6.0).reshape(2, 3) / 4

TRANSFORM_CASES = {
    "cond_true": (_cond, (1.0, V3)),
    "cond_false": (_cond, (-1.0, V3)),
    "switch": (_switch, (jnp.int32(2), V3)),
    "while": (_while, (V3,)),
    "fori": (_fori, (V3,)),
    "scan": (_scan, (M23,)),
    "nested_cond_in_while": (_nested, (V3,)),
    "prng": (_prng, (random.PRNGKey(7), jnp.arange(8.0))),
    "hessian": (_hessian, (V3,)),
    "vmap_grad": (_per_example_grads, (V3, jnp.ones((4, 3)) * jnp.arange(4.0)[:, None])),
    "grad_of_scan": (jax.grad(lambda xs: jnp.sum(_scan(xs)[1] ** 2)), (M23,)),
    "jacfwd_while": (jax.jacfwd(lambda x: _while(x)[1]), (V3,)),
    "int8_bool": (lambda a, b: jnp.where(b, a * 3, -a), (jnp.arange(-4, 4, dtype=jnp.int8),
                                                       jnp.arange(8) % 3 == 0)),
    "bfloat16": (lambda a: jnp.exp(a) + a, (jnp.linspace(-1, 1, 9).astype(jnp.bfloat16),)),
    "float16": (lambda a: jnp.sqrt(a) * a, (jnp.linspace(0, 4, 9).astype(jnp.float16),)),
    "repeated_and_input_outputs": (lambda a: (a, a * 2, a * 2, a), (V3,)),
    "no_inputs": (lambda: jnp.arange(4) * 3, ()),
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_CASES))
def test_transformed_functions_round_trip(name):
    fun, args = TRANSFORM_CASES[name]
    assert_round_trip(fun, *args)


# ---- signatures ----------------------------------------------------------------------------

def test_exported_signature_and_shape_dtype_structs():
    def f(x, y, *, scale):
        return {"sum": x + y * scale, "parts": (x, y)}

    exp = export(jax.jit(f))(jax.ShapeDtypeStruct((2, 3), jnp.float32), jnp.ones((2, 3), jnp.int32), scale=2.0)
    assert exp.fun_name == "f"
    assert str(exp.in_tree) == "PyTreeDef(((*, *), {'scale': *}))"
    assert str(exp.out_tree) == "PyTreeDef({'parts': (*, *), 'sum': *})"
    assert [a.str_short() for a in exp.in_avals] == ["f32[2,3]", "i32[2,3]", "f32[]"]
    assert [a.weak_type for a in exp.in_avals] == [False, False, True]
    assert [a.str_short() for a in exp.out_avals] == ["f32[2,3]", "i32[2,3]", "f32[2,3]"]
    out = deserialize(exp.serialize()).call(jnp.ones((2, 3)), jnp.ones((2, 3), jnp.int32), scale=0.5)
    np.testing.assert_array_equal(out["sum"], np.full((2, 3), 1.5, np.float32))


def test_call_checks_arguments():
    exp = export(jax.jit(lambda x, y: x + y))(jnp.ones(3), jnp.ones(3))
    back = deserialize(exp.serialize())
    with pytest.raises(ValueError, match=r"argument 1 is f32\[4\], the exported function takes f32\[3\]"):
        back.call(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match=r"argument 0 is i32\[3\]"):
        back.call(jnp.ones(3, jnp.int32), jnp.ones(3))
    with pytest.raises(TypeError, match="structure"):
        back.call(jnp.ones(3))
    np.testing.assert_array_equal(back.call(np.ones(3, np.float32), np.arange(3.0)), [1.0, 2.0, 3.0])


def test_stored_graph_is_not_optimised():
    exp = export(jax.jit(lambda x: (x * 1.0 + 0.0) * 2.0))(jnp.ones(3))
    text = deserialize(exp.serialize()).graph_text()
    assert "mul" in text and "add" in text  # x * 1 + 0 is simplified only when compiled


def test_pytree_text_notation():
    from xjax.export import treedef_to_text

    tree = jax.tree_util.tree_structure(({"b": [1, None], "a": (2,)}, OPTIMIZER.init({"w": jnp.ones(2)})))
    text = treedef_to_text(tree)
    assert text.startswith('{"tuple":[{"dict":[["a",{"tuple":["*"]}],["b",["*",null]]]}')
    assert text_to_treedef(text) == tree
    with pytest.raises(ValueError, match="cannot be read"):
        text_to_treedef('{"tuple": 3}')
    with pytest.raises(ValueError, match="cannot be read"):
        text_to_treedef("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="cannot be read"):
        text_to_treedef('{"namedtuple": "m:P", "fields": ["not an identifier"], "children": ["*"]}')


def test_namedtuples_are_stored_by_their_registered_name():
    import collections

    Pair = collections.namedtuple("Pair", ["a", "b"])
    exp = export(jax.jit(lambda p: Pair(p.b, p.a * 2)))(Pair(jnp.ones(2), jnp.zeros(3)))
    assert exp.call(Pair(jnp.ones(2), jnp.zeros(3))).b.shape == (2,)  # no registration needed to call it
    with pytest.raises(ValueError, match="unregistered type .*Pair.*register_namedtuple_serialization"):
        exp.serialize()
    jax_export.register_namedtuple_serialization(Pair, serialized_name="tests.Pair")
    blob = exp.serialize()
    assert b"tests.Pair" in blob and b"test_export" not in blob  # the name, never a module path
    out = deserialize(blob).call(Pair(jnp.ones(2), jnp.zeros(3)))
    assert type(out) is Pair and out.b.shape == (2,)
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        jax_export.register_namedtuple_serialization(Pair, serialized_name="tests.Pair2")
    with pytest.raises(ValueError, match="register_pytree_node_serialization"):
        jax_export.register_namedtuple_serialization(dict, serialized_name="tests.dict")


def test_custom_pytree_nodes_are_stored_by_their_registered_name():
    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, v, scale):
            self.v, self.scale = v, scale

        def tree_flatten(self):
            return (self.v,), self.scale

        @classmethod
        def tree_unflatten(cls, scale, children):
            return cls(children[0], scale)

    exp = export(jax.jit(lambda b: Box(b.v * b.scale, b.scale)))(Box(jnp.ones(2), 3.0))
    with pytest.raises(ValueError, match="unregistered type .*Box"):
        exp.serialize()
    jax_export.register_pytree_node_serialization(Box, serialized_name="tests.Box",
                                                  serialize_auxdata=lambda s: str(s).encode(),
                                                  deserialize_auxdata=lambda b: float(b.decode()))
    out = deserialize(exp.serialize()).call(Box(jnp.ones(2), 3.0))
    assert type(out) is Box and out.scale == 3.0
    np.testing.assert_array_equal(out.v, [3.0, 3.0])


def test_a_file_never_chooses_a_module_to_import():
    import sys

    # A structure naming a module (the notation of files from before registrations) is refused
    # without importing it: `this` prints the Zen of Python when imported.
    sys.modules.pop("this", None)
    with pytest.raises(ValueError, match="unregistered type `this:Zen`"):
        text_to_treedef('{"namedtuple": "this:Zen", "fields": ["a"], "children": ["*"]}')
    assert "this" not in sys.modules
    with pytest.raises(ValueError, match="unregistered type `os.system`"):
        text_to_treedef('{"custom": "os.system", "auxdata": "", "children": []}')


# ---- refusals ------------------------------------------------------------------------------

def test_debug_print_is_refused_naming_primitive_and_line():
    def f(x):
        jax.debug.print("x = {}", x)  # LINE-OF-PRINT
        return x + 1

    line = next(i for i, text in enumerate(open(__file__), 1) if "LINE-OF-PRINT" in text and "jax.debug" in text)
    with pytest.raises(ValueError, match=rf"calls debug_print at .*test_export.py:{line} \(in f\)"):
        export(jax.jit(f))(jnp.ones(2))


def test_debug_callback_under_grad_and_cond_is_refused():
    def f(x):
        def branch(v):
            jax.debug.callback(lambda a: None, v)
            return v * 2
        return lax.cond(x[0] > 0, branch, lambda v: v, x)

    with pytest.raises(ValueError, match=r"calls debug_callback at .*test_export.py:\d+ \(in branch\)"):
        export(jax.jit(jax.grad(lambda x: jnp.sum(f(x)))))(jnp.ones(2))


def test_typed_keys_round_trip():
    exp, back = assert_round_trip(lambda k: (random.normal(k, (3,)), random.split(k)), random.key(3))
    assert "prng_key" in jax.export.treedef_to_text(back.out_tree)


# ---- several functions, weights stored once, mapped files ---------------------------------

def test_exporter_several_functions_and_signatures(tmp_path):
    w = jnp.asarray(np.random.default_rng(1).random((256, 256), dtype=np.float32))  # 256 KB

    def predict(x):
        return jnp.tanh(x @ w)

    def score(x):
        return jnp.sum(x @ w)

    path = tmp_path / "model.xjx"
    with jax.export.exporter(path) as ex:
        ex.add(predict, jax.ShapeDtypeStruct((1, 256), jnp.float32))
        ex.add(predict, jax.ShapeDtypeStruct((4, 256), jnp.float32))
        ex.add(score, jax.ShapeDtypeStruct((2, 256), jnp.float32), name="score")
        with pytest.raises(ValueError, match="already has a signature"):
            ex.add(predict, jax.ShapeDtypeStruct((1, 256), jnp.float32))
    size = os.path.getsize(path)
    assert 256 * 1024 < size < 300 * 1024  # the weight once
    mod = load(path)
    assert mod.names == ("predict", "score")
    assert [e.in_avals[0].shape for e in mod.signatures("predict")] == [(1, 256), (4, 256)]
    x4 = jnp.ones((4, 256)) / 256
    assert _bits(mod.call("predict", x4)) == _bits(jax.jit(predict)(x4))
    assert _bits(mod["score"].call(x4[:2])) == _bits(jax.jit(score)(x4[:2]))
    with pytest.raises(ValueError, match="no signature takes these arguments"):
        mod.call("predict", jnp.ones((3, 256)))
    with pytest.raises(ValueError, match="has 2 signatures"):
        mod["predict"]
    with pytest.raises(KeyError, match="no function 'train'"):
        mod.signatures("train")
    with pytest.raises(ValueError, match="holds 3 functions"):
        deserialize(path.read_bytes())
    assert mod.producer == f"xjax {jax.__version__}" and mod.format_version == 1


def test_mlx_style_exporter_of_one_function(tmp_path):
    path = tmp_path / "f.xjx"
    with jax.export.exporter(path, jnp.tanh) as ex:
        ex(jnp.ones(3))
        ex(jnp.ones((2, 2), jnp.float32))
    mod = load(path)
    assert mod.names == ("tanh",)
    np.testing.assert_array_equal(mod.call("tanh", jnp.zeros((2, 2))), np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match="no function was given"):
        Exporter()(jnp.ones(2))


def test_weights_are_shared_by_content_and_file_reloads_identically(tmp_path):
    w1 = jnp.ones((64, 64))
    w2 = jnp.ones((64, 64))  # another array with the same bytes
    ex = Exporter()
    ex.add(lambda x: x @ w1, jnp.ones((1, 64)), name="a")
    ex.add(lambda x: x @ w2 + 1, jnp.ones((1, 64)), name="b")
    blob = ex.serialize()
    assert len(blob) < 64 * 64 * 4 * 1.5
    mod = deserialize_module(blob)
    assert len(mod._module.weights) == 1
    path = tmp_path / "m.xjx"
    ex.save(path)
    assert path.read_bytes() == blob


def test_version_and_corruption_errors_from_python():
    blob = bytearray(export(jax.jit(jnp.sin))(jnp.ones(3)).serialize())
    bad = bytearray(blob)
    bad[8] = 2
    with pytest.raises(ValueError, match="format version 2, this reader reads version 1"):
        deserialize(bytes(bad))
    bad = bytearray(blob)
    bad[12] = 7
    with pytest.raises(ValueError, match="needs opset 7"):
        deserialize(bytes(bad))
    with pytest.raises(ValueError, match="truncated"):
        deserialize(bytes(blob[:-3]))
    bad = bytearray(blob)
    bad[70] ^= 4
    with pytest.raises(ValueError, match="checksum mismatch"):
        deserialize(bytes(bad))
    with pytest.raises(ValueError, match="not an .xjx file"):
        deserialize(b"PK\x03\x04" + bytes(100))


def test_exported_call_inside_jit_is_refused_clearly():
    exp = export(jax.jit(jnp.cos))(jnp.ones(2))
    with pytest.raises(TypeError, match="tracer"):
        jax.jit(exp.call)(jnp.ones(2))


def test_serialize_twice_is_deterministic():
    params, x, y = _mlp_setup()
    exp = export(train_step)(params, OPTIMIZER.init(params), x, y)
    assert exp.serialize() == exp.serialize()
    back = deserialize(exp.serialize())
    assert back.serialize() == exp.serialize()


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)


def test_float64_and_int64_round_trip(x64):
    x = jnp.linspace(-2.0, 2.0, 7)
    assert x.dtype == jnp.float64
    assert_round_trip(lambda v, n: (jnp.sinh(v) * n, jnp.cumsum(jnp.arange(7) * n)), x, jnp.int64(5))
