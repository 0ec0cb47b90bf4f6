"""The lax functions JAX defines under jit, so that their jaxprs nest a `jit[name=...]` equation as
JAX's do: fft and the dynamic index conveniences. (lax sits below jit, so the wrapping is done here.)"""
from xjax._src.jit import jit
from xjax._src.lax import conveniences, fourier, layout

fft = jit(fourier.fft, static_argnums=(1, 2))
dynamic_index_in_dim = jit(layout.dynamic_index_in_dim, static_argnames=("axis", "keepdims"))
dynamic_update_index_in_dim = jit(conveniences.dynamic_update_index_in_dim,
                                  static_argnames=("axis", "allow_negative_indices"))
