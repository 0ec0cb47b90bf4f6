"""stax's layers with parameters or shape changes: Dense, GeneralConv, GeneralConvTranspose,
BatchNorm, elementwise (and the activation layers made with it), Flatten, Identity, FanOut,
FanInSum, FanInConcat, Dropout.

A layer is an (init_fun, apply_fun) pair: init_fun(rng, input_shape) -> (output_shape, params),
apply_fun(params, inputs, **kwargs) -> outputs (kwargs may carry rng=key).
"""
import math
import operator

import xjax.numpy as jnp
from xjax import lax, random
from xjax._src.example_libraries import stax_shapes as shapes
from xjax._src.nn.activations import elu, gelu, leaky_relu, relu, selu, sigmoid, softplus
from xjax._src.nn.initializers import glorot_normal, normal, ones, zeros
from xjax._src.nn.normalize import log_softmax, softmax, standardize


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b, W of shape (in_dim, out_dim) over the last axis."""
    def init_fun(rng, input_shape):
        input_shape = shapes.as_shape("Dense", input_shape)
        if not input_shape:
            raise ValueError("Dense: the input needs at least one axis (the features), got shape ().")
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, out_chan, in_chan, filter_shape):
    """The kernel's shape in rhs_spec order; spatial sizes come from filter_shape in that order."""
    spatial = iter(filter_shape)
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec)


def _conv_layer(name, transpose, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lax.conv_general_permutations(dimension_numbers)  # a malformed layout fails here, not at init
    n = len(rhs_spec) - 2
    filter_shape = shapes.window_tuple(name, "filter_shape", filter_shape, n)
    strides = (1,) * n if not strides else shapes.window_tuple(name, "strides", strides, n)
    padding = (shapes.check_padding(name, padding, n, names=("SAME", "VALID")) if transpose
               else shapes.check_padding(name, padding, n))
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    out_shape_of = shapes.conv_transpose_out_shape if transpose else shapes.conv_out_shape

    def init_fun(rng, input_shape):
        input_shape = shapes.as_shape(name, input_shape)
        shapes.check_rank(name, input_shape, len(lhs_spec), lhs_spec)
        kernel_shape = _kernel_shape(rhs_spec, out_chan, input_shape[lhs_spec.index("C")], filter_shape)
        output_shape = out_shape_of(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        shapes.check_rank(name, jnp.shape(inputs), len(lhs_spec), lhs_spec)
        if transpose:
            return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b
        return lax.conv_general_dilated(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6)):
    """A convolution layer in the layout `dimension_numbers` (lhs, rhs, out spec strings such as
    ("NHWC", "HWIO", "NHWC")); filter_shape and strides follow the kernel's spatial order;
    padding is "VALID", "SAME", "SAME_LOWER" or (low, high) pairs."""
    return _conv_layer("GeneralConv", False, dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                         b_init=normal(1e-6)):
    """A transposed convolution layer (lax.conv_transpose) in the layout `dimension_numbers`;
    padding "SAME"/"VALID" names the forward convolution's, pairs are the transposed one's own."""
    return _conv_layer("GeneralConvTranspose", True, dimension_numbers, out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A 2-d convolution layer on NHWC inputs with HWIO kernels."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A 2-d transposed convolution layer on NHWC inputs with HWIO kernels."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A 1-d transposed convolution layer on NHC inputs with HIO kernels."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def _axes(axis):
    if isinstance(axis, (list, tuple)):
        return tuple(operator.index(a) for a in axis)
    return (operator.index(axis),)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Normalizes over `axis` (batch statistics, no running averages), then scales by gamma and
    shifts by beta, both shaped like the axes left over; center/scale=False drop beta/gamma (())."""
    axis = _axes(axis)

    def init_fun(rng, input_shape):
        input_shape = shapes.as_shape("BatchNorm", input_shape)
        if any(not 0 <= a < len(input_shape) for a in axis):
            raise ValueError(f"BatchNorm: axis {axis} out of range for an input of shape {input_shape} (negative axes "
                             "are not allowed: the parameters' shape is taken from the other axes).")
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _flatten_init(rng, input_shape):
    input_shape = shapes.as_shape("Flatten", input_shape)
    if not input_shape:
        raise ValueError("Flatten: the input needs a leading batch axis, got shape ().")
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return jnp.reshape(inputs, (jnp.shape(inputs)[0], -1))


# A layer (not a constructor), as in JAX: serial(..., Flatten, Dense(10)).
Flatten = (_flatten_init, _flatten_apply)
Identity = elementwise(lambda x: x)


def FanOut(num):
    """A layer copying its input into a list of `num` inputs (for parallel)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _input_shapes(layer, input_shape):
    if not isinstance(input_shape, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in input_shape):
        raise TypeError(f"{layer}: expected a list of input shapes (the outputs of parallel), got {input_shape!r}.")
    if not input_shape:
        raise ValueError(f"{layer}: needs at least one input.")
    return [tuple(s) for s in input_shape]


def _fan_in_sum_init(rng, input_shape):
    input_shape = _input_shapes("FanInSum", input_shape)
    if len(set(input_shape)) != 1:
        raise ValueError(f"FanInSum: inputs must have the same shape, got {input_shape}.")
    return input_shape[0], ()


def _fan_in_sum_apply(params, inputs, **kwargs):
    return sum(inputs[1:], inputs[0])


FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        input_shape = _input_shapes("FanInConcat", input_shape)
        rank = len(input_shape[0])
        if not -rank <= axis < rank:
            raise ValueError(f"FanInConcat: axis {axis} out of range for inputs of rank {rank}.")
        ax = axis % rank
        rest = {s[:ax] + s[ax + 1:] for s in input_shape}
        if len(rest) != 1 or any(len(s) != rank for s in input_shape):
            raise ValueError(f"FanInConcat: inputs must agree except along axis {axis}, got {input_shape}.")
        size = sum(s[ax] for s in input_shape)
        return input_shape[0][:ax] + (size,) + input_shape[0][ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """In mode "train", keeps each input with probability `rate` (the keep rate, as in JAX's stax)
    scaled by 1 / rate and zeroes the rest; any other mode passes inputs through. apply_fun needs
    rng=key."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key argument: call "
                             "apply_fun(params, inputs, rng=key) with a key from xjax.random.key / PRNGKey.")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, jnp.shape(inputs))
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun
