"""stax's combinators: serial and parallel composition of (init_fun, apply_fun) layers, and
shape_dependent (a layer built once the input shape is known).

Keys are split as JAX's stax splits them, so the same key gives the same parameters and the
same dropout masks."""
from xjax import random


def _unzip_layers(name, layers):
    for i, layer in enumerate(layers):
        if not (isinstance(layer, (tuple, list)) and len(layer) == 2 and all(map(callable, layer))):
            raise TypeError(f"{name}: layer {i} must be an (init_fun, apply_fun) pair, got {layer!r}.")
    return tuple(layer[0] for layer in layers), tuple(layer[1] for layer in layers)


def _layer_keys(rng, n):
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """The layers applied one after the other; params is a list with one entry per layer. A key
    passed as apply_fun(..., rng=key) is split into one per layer."""
    init_funs, apply_funs = _unzip_layers("serial", layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        if len(params) != len(apply_funs):
            raise ValueError(f"serial: got params for {len(params)} layers, the network has {len(apply_funs)}.")
        for fun, p, key in zip(apply_funs, params, _layer_keys(rng, len(apply_funs))):
            inputs = fun(p, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layers applied side by side: the input (and its shape) is a sequence with one entry per
    layer, and so are the outputs and params (often between FanOut and FanInSum/FanInConcat)."""
    init_funs, apply_funs = _unzip_layers("parallel", layers)
    n = len(layers)

    def _check(what, values):
        if len(values) != n:
            raise ValueError(f"parallel: expected {n} {what}, one per layer, got {len(values)}.")

    def init_fun(rng, input_shape):
        _check("input shapes", input_shape)
        results = [init(key, shape) for init, key, shape in zip(init_funs, random.split(rng, n), input_shape)]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        _check("inputs", inputs)
        _check("params", params)
        return [f(p, x, rng=key, **kwargs) for f, p, x, key in zip(apply_funs, params, inputs, _layer_keys(rng, n))]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer whose (init_fun, apply_fun) pair is make_layer(input_shape), made when the shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
