"""jax.nn.initializers: functions init(key, shape, dtype) -> array."""
from xjax._src.nn.initializers import (Initializer, constant, delta_orthogonal, glorot_normal,  # noqa: F401
                                       glorot_uniform, he_normal, he_uniform, kaiming_normal, kaiming_uniform,
                                       lecun_normal, lecun_uniform, normal, ones, orthogonal, truncated_normal,
                                       uniform, variance_scaling, xavier_normal, xavier_uniform, zeros)
