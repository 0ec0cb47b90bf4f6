"""jax.nn.initializers: functions init(key, shape, dtype) -> array."""
from xjax._src.nn.initializers import (constant, glorot_normal, glorot_uniform, he_normal, he_uniform,  # noqa: F401
                                       kaiming_normal, kaiming_uniform, lecun_normal, lecun_uniform, normal,
                                       ones, orthogonal, truncated_normal, uniform, variance_scaling, xavier_normal,
                                       xavier_uniform, zeros)
