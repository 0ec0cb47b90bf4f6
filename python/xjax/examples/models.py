"""The main job's models (a small CNN and an MLP), written against a JAX-like module so the benchmark can run
the very same definitions on JAX: pass `xjax` (or `jax`) as `jax`.

A model is a pair of functions: `init(key, image_shape, num_classes) -> params` and
`apply(params, images) -> logits`, where images are NHWC float32.
"""
from typing import Callable, NamedTuple


class Model(NamedTuple):
    init: Callable
    apply: Callable


def _dense(jax, key, n_in, n_out):
    w = jax.nn.initializers.he_normal()(key, (n_in, n_out))
    return {"w": w, "b": jax.numpy.zeros((n_out,))}


def _max_pool(jax, x):
    """2x2 max-pooling with stride 2 over H and W (NHWC); odd edges are padded, as "SAME" does."""
    return jax.lax.reduce_window(x, -jax.numpy.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")


def cnn(jax, channels=(32, 64)):
    """conv3x3-relu-maxpool twice, then a dense layer to the logits."""
    jnp = jax.numpy
    dn = ("NHWC", "HWIO", "NHWC")

    def init(key, image_shape, num_classes):
        height, width, c_in = image_shape
        params = {}
        keys = jax.random.split(key, len(channels) + 1)
        for i, c_out in enumerate(channels):
            w = jax.nn.initializers.he_normal()(keys[i], (3, 3, c_in, c_out))
            params[f"conv{i}"] = {"w": w, "b": jnp.zeros((c_out,))}
            c_in = c_out
            height, width = (height + 1) // 2, (width + 1) // 2
        params["dense"] = _dense(jax, keys[-1], height * width * c_in, num_classes)
        return params

    def apply(params, x):
        for i in range(len(channels)):
            layer = params[f"conv{i}"]
            x = jax.lax.conv_general_dilated(x, layer["w"], (1, 1), "SAME", dimension_numbers=dn)
            x = _max_pool(jax, jax.nn.relu(x + layer["b"]))
        x = x.reshape(x.shape[0], -1)
        return x @ params["dense"]["w"] + params["dense"]["b"]

    return Model(init, apply)


def mlp(jax, hidden=(256, 128)):
    """Flattened pixels through relu hidden layers to the logits."""
    def init(key, image_shape, num_classes):
        sizes = [image_shape[0] * image_shape[1] * image_shape[2], *hidden, num_classes]
        keys = jax.random.split(key, len(sizes) - 1)
        return [_dense(jax, k, n_in, n_out) for k, n_in, n_out in zip(keys, sizes[:-1], sizes[1:])]

    def apply(params, x):
        x = x.reshape(x.shape[0], -1)
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]

    return Model(init, apply)


MODELS = {"cnn": cnn, "mlp": mlp}
