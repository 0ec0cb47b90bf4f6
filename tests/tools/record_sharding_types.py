"""Records JAX's jaxprs of tests/sharding_types_programs.py into tests/sharding_types_values.py.

Run with JAX 0.10.2 over 4 CPU devices, from the repository root:
  XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu python tests/tools/record_sharding_types.py
"""
import os
import pprint
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from sharding_types_programs import programs  # noqa: E402

out = programs(jax, jnp, np, P, NamedSharding, AxisType)
path = os.path.join(os.path.dirname(__file__), "..", "sharding_types_values.py")
with open(path, "w") as f:
    f.write(f'"""make_jaxpr texts recorded from JAX {jax.__version__} by tests/tools/record_sharding_types.py."""\n')
    f.write("JAX_TEXTS = " + pprint.pformat(out, width=120) + "\n")
