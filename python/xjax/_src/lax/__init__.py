"""The primitives, grouped by family; xjax.lax re-exports the public names."""
from xjax._src.lax.contraction import *  # noqa: F401,F403
from xjax._src.lax.convolution import *  # noqa: F401,F403
from xjax._src.lax.elementwise import *  # noqa: F401,F403
from xjax._src.lax.elementwise import PRIMITIVES as _ELEMENTWISE
from xjax._src.lax.fourier import *  # noqa: F401,F403
from xjax._src.lax.complex_parts import *  # noqa: F401,F403
from xjax._src.lax.indexing import *  # noqa: F401,F403
from xjax._src.lax.layout import *  # noqa: F401,F403
from xjax._src.lax.reduction import *  # noqa: F401,F403
from xjax._src.lax.sorting import *  # noqa: F401,F403
from xjax._src.lax.special import *  # noqa: F401,F403
from xjax._src.lax.parallel import *  # noqa: F401,F403
from xjax._src.lax.windowed import *  # noqa: F401,F403
from xjax._src.lax.stop_gradient import stop_gradient, stop_gradient_p  # noqa: F401

copy_p = _ELEMENTWISE["copy"]
from xjax._src.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401,E402
from xjax._src.lax.associative_scan import associative_scan  # noqa: F401,E402
from xjax._src.lax.control_flow import cond_p, scan_p, while_p  # noqa: F401,E402
# Modules that add rules to primitives defined above (the largest families' transformation rules;
# parallel_core's lowering of all-reduces across processes): importing them registers the rules.
from xjax._src.lax import elementwise_rules, layout_rules, loop_rules, parallel_core, sharding_rules  # noqa: F401,E402
from xjax._src.lax import sharding_rules_batched, sharding_rules_indexing  # noqa: F401,E402

from xjax._src.interpreters import array_ops as _array_ops  # noqa: E402
from xjax._src.lax.elementwise import add_any_p as _add_any_p  # noqa: E402

# What the interpreters below apply to tangents and batched values (interpreters/array_ops.py).
from xjax._src.lax.parallel import pvary_p as _pvary_p  # noqa: E402
_array_ops.install(add_any=_add_any_p.bind, broadcast_in_dim=broadcast_in_dim, expand_dims=expand_dims,  # noqa: F405
                   reduce_sum=reduce_sum, reshape=reshape, squeeze=squeeze, transpose=transpose,  # noqa: F405
                   pvary_p=_pvary_p)
from xjax._src.lax.composite import *  # noqa: F401,F403,E402
from xjax._src.lax.composed_ops import *  # noqa: F401,F403,E402
from xjax._src.lax.conveniences import *  # noqa: F401,F403,E402
from xjax._src.lax.ordering import *  # noqa: F401,F403,E402
from xjax._src.lax.parallel_extras import *  # noqa: F401,F403,E402
