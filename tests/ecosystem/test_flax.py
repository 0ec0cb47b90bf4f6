"""Flax runs unchanged on xjax (`install_as_jax`): a linen CNN with BatchNorm (its batch_stats a
mutable collection) and Dropout, trained with optax.adamw; an NNX model trained with nnx.Optimizer
under nnx.jit, in train() then eval() mode; a linen RNN built with nn.scan.

Each program runs in a fresh interpreter (install_as_jax is process-global). The references were
recorded by running the same program with JAX 0.10.2.
"""
import importlib.util
import json

import numpy as np
import pytest

from isolated import run_isolated

PRELUDE = "import xjax\nxjax.install_as_jax()\n"


def _needs(*libraries):
    for lib in libraries:
        if importlib.util.find_spec(lib) is None:
            pytest.skip(f"{lib} is not installed")


LINEN_PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        x = nn.Conv(8, (3, 3), use_bias=False)(x)  # BatchNorm follows: a bias would get a zero gradient
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(32)(x)
        x = nn.Dropout(0.25, deterministic=not train)(x)
        x = nn.gelu(x)
        return nn.Dense(3)(x)


rng = np.random.RandomState(0)
images = rng.randn(16, 8, 8, 1).astype(np.float32)
labels = rng.randint(0, 3, 16)

model = CNN()
variables = model.init(jax.random.PRNGKey(0), images, train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.adamw(1e-2, weight_decay=1e-3)
opt_state = tx.init(params)


@jax.jit
def train_step(params, batch_stats, opt_state, key):
    def loss_fn(params):
        logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, images, train=True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


losses = []
key = jax.random.PRNGKey(1)
for step in range(5):
    key, sub = jax.random.split(key)
    params, batch_stats, opt_state, loss = train_step(params, batch_stats, opt_state, sub)
    losses.append(float(loss))

eval_logits = model.apply({"params": params, "batch_stats": batch_stats}, images[:2], train=False)
print(json.dumps({"losses": losses,
                  "bn_mean": np.asarray(batch_stats["BatchNorm_0"]["mean"]).tolist(),
                  "dense_bias": np.asarray(params["Dense_1"]["bias"]).tolist(),
                  "eval_logits": np.asarray(eval_logits).tolist()}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_LINEN = {
    "losses": [1.2198776006698608, 0.9737365245819092, 0.892748236656189, 0.7965853214263916, 0.7071949243545532],
    "bn_mean": [-0.016426675021648407, -0.008346501737833023, -0.001003867364488542, 0.008698823861777782,
                0.02566521428525448, -0.007128213532269001, 0.012899777851998806, 0.006285620387643576],
    "dense_bias": [0.00700416648760438, -0.0011438258225098252, -0.000783231167588383],
    "eval_logits": [[-0.3387737572193146, -0.5021374225616455, 1.3866353034973145],
                    [0.9471665620803833, -0.466663122177124, -0.4504018723964691]],
}


def test_linen_cnn_batchnorm_dropout_adamw():
    _needs("flax", "optax")
    out = json.loads(run_isolated(LINEN_PROGRAM, PRELUDE, timeout=300))
    # The dropout masks are JAX's (the same threefry bits), so training follows JAX's to rounding.
    for name, want in JAX_LINEN.items():
        np.testing.assert_allclose(out[name], want, rtol=1e-4, atol=1e-6, err_msg=name)


NNX_PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear1 = nnx.Linear(4, 16, use_bias=False, rngs=rngs)  # BatchNorm follows: a bias would get a zero gradient
        self.bn = nnx.BatchNorm(16, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.linear2 = nnx.Linear(16, 3, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.bn(self.linear1(x)))
        return self.linear2(self.dropout(x))


rng = np.random.RandomState(0)
x = rng.randn(32, 4).astype(np.float32)
labels = rng.randint(0, 3, 32)

model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(1e-2, weight_decay=1e-3), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x, labels):
    def loss_fn(model):
        logits = model(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


model.train()
losses = [float(train_step(model, optimizer, x, labels)) for _ in range(5)]
model.eval()
eval_logits = model(x[:2])
print(json.dumps({"losses": losses, "bn_mean": np.asarray(model.bn.mean[...]).tolist(),
                  "bias2": np.asarray(model.linear2.bias[...]).tolist(),
                  "eval_logits": np.asarray(eval_logits).tolist(), "step": int(optimizer.step[...])}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_NNX = {
    "losses": [1.2849068641662598, 1.3096674680709839, 1.2211273908615112, 1.1954584121704102, 1.1045780181884766],
    "bn_mean": [0.08265822380781174, -0.03315575793385506, -0.12450715154409409, 0.09358421713113785,
                0.028898393735289574, 0.11384951323270798, 0.16105076670646667, -0.07049888372421265,
                0.14947208762168884, -0.13417324423789978, 0.05332183837890625, 0.02377016469836235,
                -0.023112354800105095, 0.04625396057963371, 0.04219145327806473, 0.00417870469391346],
    "bias2": [-0.0471230112016201, -0.04714873805642128, 0.0497061088681221],
    "eval_logits": [[0.39785733819007874, 0.6213560700416565, -2.4645984172821045],
                    [-0.11075088381767273, 0.33463412523269653, -0.42590567469596863]],
}


def test_nnx_optimizer_jit_train_eval():
    _needs("flax", "optax")
    out = json.loads(run_isolated(NNX_PROGRAM, PRELUDE, timeout=300))
    assert out.pop("step") == 5  # nnx.Optimizer counted its updates
    # Dropout draws from nnx.Rngs' typed keys as JAX's; eval() turns it and BatchNorm's batch
    # statistics off, so eval logits use the running averages the training steps left.
    for name, want in JAX_NNX.items():
        np.testing.assert_allclose(out[name], want, rtol=1e-4, atol=1e-6, err_msg=name)


SCAN_PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import flax.linen as nn


class Cell(nn.Module):
    @nn.compact
    def __call__(self, carry, x):
        h = nn.tanh(nn.Dense(6)(jnp.concatenate([carry, x], -1)))
        return h, nn.Dense(1)(h)


class RNN(nn.Module):
    @nn.compact
    def __call__(self, xs):
        scan = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False}, in_axes=1, out_axes=1)
        return scan()(jnp.zeros((xs.shape[0], 6)), xs)[1]


rng = np.random.RandomState(0)
xs = rng.randn(4, 7, 3).astype(np.float32)
ys = np.cumsum(xs[..., :1], axis=1).astype(np.float32)
model = RNN()
params = model.init(jax.random.PRNGKey(0), xs)


@jax.jit
def step(params):
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, xs) - ys) ** 2))(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss


losses = []
for _ in range(5):
    params, loss = step(params)
    losses.append(float(loss))
print(json.dumps({"losses": losses, "bias": np.asarray(params["params"]["ScanCell_0"]["Dense_1"]["bias"]).tolist()}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_SCAN = {"losses": [13.258477210998535, 10.870981216430664, 8.736865043640137, 5.489441394805908, 2.0487308502197266],
            "bias": [0.25552985072135925]}


def test_linen_scan_rnn_trains():
    # nn.scan traces its body through JAX's internal API (api_util.flatten_fun_nokwargs,
    # linear_util.wrap_init, partial_eval.trace_to_jaxpr_nounits) and checks jax.version.
    _needs("flax")
    out = json.loads(run_isolated(SCAN_PROGRAM, PRELUDE, timeout=300))
    for name, want in JAX_SCAN.items():
        np.testing.assert_allclose(out[name], want, rtol=1e-5, err_msg=name)


def test_linen_lazy_init_gives_init_params():
    # lazy_init traces the module through jax.api_util and partial_eval, computing only the params.
    _needs("flax")
    out = run_isolated("""
        import numpy as np
        import jax, jax.numpy as jnp
        import flax.linen as nn
        m = nn.Dense(3)
        lazy = m.lazy_init(jax.random.PRNGKey(0), jax.ShapeDtypeStruct((2, 4), jnp.float32))
        full = m.init(jax.random.PRNGKey(0), jnp.ones((2, 4)))
        same = jax.tree.map(lambda a, b: bool(np.array_equal(a, b)), lazy, full)
        print(jax.tree.map(jnp.shape, lazy), all(jax.tree.leaves(same)))
        """, PRELUDE)
    assert out.strip() == "{'params': {'bias': (3,), 'kernel': (4, 3)}} True"


NNX_VMAP_PROGRAM = '''
import json
import numpy as np
import jax
from flax import nnx


@nnx.vmap(in_axes=0, out_axes=0)
def make_ensemble(rngs):
    return nnx.Linear(3, 4, rngs=rngs)


@nnx.vmap(in_axes=(0, None), out_axes=0)
def forward(model, x):
    return model(x)


class Noisy(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(self.linear(x))


@nnx.split_rngs(splits=3)
@nnx.vmap(in_axes=(0,), out_axes=0)
def make_noisy(rngs):
    return Noisy(rngs)


@nnx.vmap(in_axes=-1)
def uniform_grid(rngs):  # a negative axis counts on the keys' own shape (2, 3), not their data's
    return nnx.vmap(lambda r: r.uniform(()))(rngs)


x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
ensemble = make_ensemble(nnx.Rngs(0).split(5))
noisy = make_noisy(nnx.Rngs(params=1, dropout=2))
rng_keys = jax.tree.leaves(nnx.state(nnx.Rngs(0), nnx.RngKey))
print(json.dumps({
    "kernel_row0": np.asarray(ensemble.kernel[...][:, 0]).tolist(),
    "out": np.asarray(forward(ensemble, x)).tolist(),
    "noisy_out": np.asarray(forward(noisy, x)).tolist(),
    "uniform_grid": np.asarray(uniform_grid(nnx.Rngs(5).split((2, 3)))).tolist(),
    "rng_key_leaves": [[str(k.dtype), list(k.shape)] for k in rng_keys],
    "noisy_key_types": sorted({str(jax.typeof(k)) for k in jax.tree.leaves(nnx.state(noisy))
                                   if jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)}),
}))
'''

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_NNX_VMAP = {
    'kernel_row0': [[-0.875064492225647, -0.21994341909885406, -0.10107405483722687, -0.4856868088245392],
         [-1.1619449853897095, 0.606938898563385, -0.22360342741012573, -1.0730558633804321],
         [-0.9973184466362, -0.40253666043281555, 0.6365656852722168, -0.44716548919677734],
         [-0.0958610251545906, -0.2718213200569153, -0.0361073799431324, -0.6213123202323914],
         [0.05359598994255066, 0.01981789991259575, 0.05567704886198044, -0.3311004042625427]],
    'out': [[[0.01817084476351738, -0.22553445398807526, -0.18554145097732544, -0.1994810253381729],
          [-0.5364701747894287, -0.81163489818573, -0.44113868474960327, -0.9010127782821655]],
         [[0.04480496048927307, -0.14333149790763855, -0.8198426961898804, -0.4103546738624573],
          [-0.990636944770813, 0.04300243780016899, -2.557785987854004, -1.9062204360961914]],
         [[-0.2938731610774994, -0.6221886277198792, -0.25730088353157043, 0.10969524830579758],
          [-1.336134672164917, -2.17805814743042, -0.4187222421169281, 0.09197714179754257]],
         [[0.31108036637306213, -0.39659860730171204, 0.6536962985992432, -0.04557838290929794],
          [0.667400598526001, -1.283954381942749, 2.083709955215454, -0.6001594066619873]],
         [[-0.27011916041374207, 0.016079604625701904, 0.37008240818977356, 0.02236161381006241],
          [-0.6405544281005859, -0.21354243159294128, 0.8502418994903564, -0.027864806354045868]]],
    'noisy_out': [[[0.0, 0.0], [-2.28918194770813, -1.6282724142074585]], [[0.0, 1.0879366397857666], [0.0, 0.0]],
         [[0.5870245695114136, -1.0447756052017212], [0.0, -1.5613493919372559]]],
    'uniform_grid': [[0.9435330629348755, 0.6388580799102783], [0.15989089012145996, 0.7638676166534424],
         [0.4331388473510742, 0.8113596439361572]],
    'rng_key_leaves': [['key<fry>', []]],
    'noisy_key_types': ['key<fry>[3]'],
}


def test_nnx_vmap_ensembles_over_rngs_keys():
    # nnx.Rngs holds typed keys, which are pytree leaves as in JAX: nnx.vmap maps them along their
    # own axes (in_axes=-1 on keys of shape (2, 3) is their axis 1), splits them per member and
    # gives each member of the ensemble JAX's parameters and dropout masks.
    _needs("flax")
    out = json.loads(run_isolated(NNX_VMAP_PROGRAM, PRELUDE, timeout=300))
    for name in ("rng_key_leaves", "noisy_key_types"):
        assert out[name] == JAX_NNX_VMAP[name], name
    for name in ("kernel_row0", "out", "noisy_out", "uniform_grid"):
        np.testing.assert_allclose(out[name], JAX_NNX_VMAP[name], rtol=1e-5, atol=1e-6, err_msg=name)


NNX_SHARDED_PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


class MLP(nnx.Module):  # Megatron's split: w1 by columns, w2 by rows, over the "model" axis
    def __init__(self, rngs):
        init = nnx.initializers.lecun_normal()
        self.w1 = nnx.Param(nnx.with_partitioning(init, (None, "model"))(rngs.params(), (8, 16)))
        self.b1 = nnx.Param(jnp.zeros(16), sharding=("model",))
        self.w2 = nnx.Param(nnx.with_partitioning(init, ("model", None))(rngs.params(), (16, 4)))

    def __call__(self, x):
        return jnp.tanh(x @ self.w1[...] + self.b1[...]) @ self.w2[...]


def train(mesh):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(32, 8)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=(32, 4)).astype(np.float32))
    model = MLP(nnx.Rngs(0))
    state = nnx.state(model)
    specs = nnx.get_partition_spec(state)
    nnx.update(model, jax.tree.map(lambda v, s: jax.device_put(v, NamedSharding(mesh, s)), state, specs))
    placed = [str(getattr(v[...].sharding, "spec", None)) for v in (model.w1, model.b1, model.w2)]
    x, y = (jax.device_put(v, NamedSharding(mesh, P("data"))) for v in (x, y))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
        optimizer.update(model, grads)
        return loss
    losses = [float(step(model, optimizer, x, y)) for _ in range(5)]
    trained = [str(getattr(v[...].sharding, "spec", None)) for v in (model.w1, model.b1, model.w2)]
    return losses, placed, trained


out = {}
for name, shape in [("one", (1, 1)), ("sharded", (2, 2))]:
    mesh = jax.make_mesh(shape, ("data", "model"), axis_types=(AxisType.Auto,) * 2, devices=jax.devices()[:shape[0] * shape[1]])
    with jax.set_mesh(mesh):
        out[name] = train(mesh)
print(json.dumps(out))
"""

# Recorded from JAX 0.10.2 (XLA_FLAGS=--xla_force_host_platform_device_count=4, the same program): the
# one-device losses, and the parameters' specs after the jitted steps on the 2x2 mesh.
JAX_NNX_SHARDED_LOSSES = [1.3389545679092407, 1.259185552597046, 1.1927688121795654, 1.136989951133728,
                          1.0897572040557861]
JAX_NNX_TRAINED_SPECS = ["P(None, 'model')", "P('model',)", "P('model',)"]


def test_nnx_with_partitioning_over_a_mesh():
    # nnx.with_partitioning places each parameter over the mesh set by jax.set_mesh (through
    # with_sharding_constraint over the mesh's abstract form); nnx.jit partitions the train step over
    # them (partition.py), whose losses are one device's and whose parameters stay split as JAX's.
    _needs("flax", "optax")
    out = json.loads(run_isolated(NNX_SHARDED_PROGRAM, PRELUDE, timeout=300, env={"XJAX_NUM_CPU_DEVICES": "4"}))
    assert out["sharded"][1] == ["P(None, 'model')", "P('model',)", "P('model', None)"]
    assert out["sharded"][2] == JAX_NNX_TRAINED_SPECS
    np.testing.assert_allclose(out["one"][0], JAX_NNX_SHARDED_LOSSES, rtol=2e-6)
    np.testing.assert_allclose(out["sharded"][0], out["one"][0], rtol=2e-6)
