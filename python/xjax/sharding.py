"""xjax.sharding (jax.sharding): how arrays are laid out over devices. Every xjax array lives on one
device; meshes and named shardings describe layouts, and splitting an array over several devices is
refused by name (partitioning is issue 29)."""
from xjax._src.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,  # noqa: F401
                                Sharding, SingleDeviceSharding, get_abstract_mesh, get_mesh,
                                make_single_device_sharding, reshard, set_mesh, use_abstract_mesh)
