"""xjax.lax: the primitives under JAX's names."""
from xjax._src.lax import *  # noqa: F401,F403
from xjax._src.lax import copy_p  # noqa: F401
from xjax._src.jitted_lax import dynamic_index_in_dim, dynamic_update_index_in_dim, fft  # noqa: F401
from xjax._src.lax.elementwise import RoundingMethod, round  # noqa: F401
from xjax._src.lax.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers  # noqa: F401
from xjax._src.random.gamma import random_gamma_grad  # noqa: F401,E402 - defined with the gamma sampler
from xjax.lax import linalg  # noqa: F401,E402
# Public lax.broadcast_shapes is NumPy's rule over shape tuples (the one the primitives' shape rules use
# takes the primitive's name first).
from xjax._src.numpy.util import broadcast_shapes  # noqa: F401,E402
from xjax._src.custom_root import custom_root  # noqa: F401,E402
from xjax._src.lax.reduce_general import reduce  # noqa: F401,E402,A004
from xjax._src.linear_solve import custom_linear_solve  # noqa: F401,E402
from xjax._src.reshard import with_sharding_constraint  # noqa: F401,E402

from xjax._src.out_sharding import add_out_sharding as _add_out_sharding  # noqa: E402

_add_out_sharding(globals(), "jax.lax", ("broadcast", "broadcast_in_dim", "dot",  # (conv, reshape, broadcasted_iota:
                                         "reduce_sum"))  # their own)
from xjax._src.random.bit_generator import (RandomAlgorithm, rng_bit_generator, rng_bit_generator_p,  # noqa: F401,E402
                                           rng_uniform)
