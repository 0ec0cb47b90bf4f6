"""Records JAX's jaxprs of tests/sharding_types_programs.py and tests/sharding_types_more_programs.py into
tests/sharding_types_values.py and tests/sharding_types_more_values.py.

Run with JAX 0.10.2 over 4 CPU devices, from the repository root:
  XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu python tests/tools/record_sharding_types.py
"""
import importlib
import os
import pprint
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

_TESTS = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, _TESTS)

for programs_module, values_module in (("sharding_types_programs", "sharding_types_values"),
                                       ("sharding_types_more_programs", "sharding_types_more_values")):
    out = importlib.import_module(programs_module).programs(jax, jnp, np, P, NamedSharding, AxisType)
    with open(os.path.join(_TESTS, values_module + ".py"), "w") as f:
        f.write(f'"""make_jaxpr texts recorded from JAX {jax.__version__} by tests/tools/record_sharding_types.py."""\n')
        f.write("JAX_TEXTS = " + pprint.pformat(out, width=120) + "\n")
