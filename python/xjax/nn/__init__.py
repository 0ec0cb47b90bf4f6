"""xjax.nn: neural-network functions under jax.nn's names (activations, softmax, attention, pooling, initializers)."""
from xjax._src.nn.activations import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish,  # noqa: F401
                                      hard_tanh, identity, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid,
                                      silu, soft_sign, softplus, swish)
from xjax._src.nn.activations_extra import (log1mexp, logmeanexp, mish, sparse_plus,  # noqa: F401
                                            sparse_sigmoid, squareplus)
from xjax._src.numpy.ufuncs import tanh  # noqa: F401 - jax.nn.tanh is jnp.tanh
from xjax._src.nn.attention import dot_product_attention  # noqa: F401
from xjax._src.nn.normalize import log_softmax, logsumexp, one_hot, softmax, standardize  # noqa: F401
from xjax._src.nn.pooling import avg_pool, max_pool, min_pool  # noqa: F401
from xjax.nn import initializers  # noqa: F401
from xjax._src.nn.scaled import get_scaled_dot_general_config, scaled_dot_general, scaled_matmul  # noqa: F401
