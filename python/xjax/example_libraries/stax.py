"""xjax.example_libraries.stax: layers as (init_fun, apply_fun) pairs, with jax.example_libraries.stax's names.

init_fun(rng, input_shape) -> (output_shape, params); apply_fun(params, inputs, **kwargs) -> outputs.
"""
from xjax._src.example_libraries.stax_combinators import parallel, serial, shape_dependent  # noqa: F401
from xjax._src.example_libraries.stax_layers import (BatchNorm, Conv, Conv1DTranspose, ConvTranspose,  # noqa: F401
                                                     Dense, Dropout, Elu, Exp, FanInConcat, FanInSum, FanOut,
                                                     Flatten, Gelu, GeneralConv, GeneralConvTranspose, Identity,
                                                     LeakyRelu, LogSoftmax, Relu, Selu, Sigmoid, Softmax,
                                                     Softplus, Tanh, elementwise)
from xjax._src.example_libraries.stax_pooling import AvgPool, MaxPool, SumPool  # noqa: F401
from xjax._src.nn.activations import elu, gelu, leaky_relu, relu, selu, sigmoid, softplus  # noqa: F401
from xjax._src.nn.initializers import glorot_normal, normal, ones, zeros  # noqa: F401
from xjax._src.nn.normalize import log_softmax, softmax, standardize  # noqa: F401

# The older names stax keeps for backwards compatibility.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax
