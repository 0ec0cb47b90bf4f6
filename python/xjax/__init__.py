"""xjax: a JAX-compatible array runtime with a C++ core.

    import xjax as jax
    import xjax.numpy as jnp
"""
from xjax import _core
from xjax._src.api import (block_until_ready, default_backend, device_count, device_get, device_put,  # noqa: F401
                           devices, local_device_count, local_devices, process_count, process_index, typeof)
from xjax._src.array import Array  # noqa: F401
from xjax._src import gpu as _gpu  # noqa: F401 - plugs the GPU runtime into the CPU paths (loads no CuPy)
from xjax._src.config import (check_tracer_leaks, config, debug_infs, debug_nans, default_device,  # noqa: F401
                              default_matmul_precision, disable_jit, enable_checks, enable_x64, log_compiles,
                              numpy_dtype_promotion, numpy_rank_promotion)
from xjax import lax, numpy  # noqa: F401
from xjax import random  # noqa: F401
from xjax import tree_util, tree  # noqa: F401
from xjax._src.jit import jit  # noqa: F401
from xjax._src.autodiff import grad, jvp, linearize, value_and_grad, vjp  # noqa: F401
from xjax._src.jacobians import hessian, jacfwd, jacrev  # noqa: F401
from xjax._src.vmap import vmap  # noqa: F401
from xjax._src.pmap import pmap  # noqa: F401
from xjax._src.shard_map import shard_map  # noqa: F401
from xjax._src.caches import clear_caches  # noqa: F401
from xjax._src.make_jaxpr import eval_shape, make_jaxpr  # noqa: F401
from xjax._src.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from xjax._src.custom_gradient import closure_convert, custom_gradient  # noqa: F401
from xjax import custom_derivatives  # noqa: F401
from xjax._src.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from xjax import ad_checkpoint  # noqa: F401
from xjax._src.stages import ShapeDtypeStruct  # noqa: F401
from xjax import errors  # noqa: F401
from xjax import debug  # noqa: F401
from xjax import nn  # noqa: F401
from xjax import scipy  # noqa: F401 - its submodules load on first use
from xjax import distributed  # noqa: F401
from xjax import export  # noqa: F401
from xjax import dlpack  # noqa: F401
from xjax._src.jax_alias import install_as_jax  # noqa: F401
from xjax import sharding  # noqa: F401
from xjax import flatten_util  # noqa: F401
from xjax import dtypes  # noqa: F401
from xjax import ops  # noqa: F401
from xjax import image  # noqa: F401
from xjax import experimental  # noqa: F401
from xjax._src.sharding import NamedSharding, P, make_mesh, set_mesh  # noqa: F401
from xjax._src.sharded_array import (make_array_from_callback, make_array_from_process_local_data,  # noqa: F401
                                     make_array_from_single_device_arrays)
from xjax._src.reshard import reshard  # noqa: F401
from xjax._src.linear_transpose import linear_transpose  # noqa: F401
from xjax._src.autodiff import float0  # noqa: F401
from xjax._src.jacobians import jacrev as jacobian  # noqa: F401 - JAX's jacobian is jacrev
from xjax._src.devices import Device  # noqa: F401
from xjax._src.callbacks import pure_callback  # noqa: F401
from xjax._src.naming import named_call, named_scope  # noqa: F401
from xjax._src.core import ensure_compile_time_eval  # noqa: F401
from xjax import core, interpreters, stages  # noqa: F401 - JAX imports these with the package

from xjax._src.blas import find_blas_library as _find_blas

if _find_blas():
    _core.load_blas(_find_blas())
from xjax._src.version import __version__  # noqa: F401,E402
