"""xjax.sharding (jax.sharding): how arrays are laid out over devices: meshes, PartitionSpecs and
shardings; device_put with a NamedSharding splits an array over a mesh of CPU devices."""
from xjax._src.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,  # noqa: F401
                                Sharding, SingleDeviceSharding, get_abstract_mesh, get_mesh,
                                make_single_device_sharding, set_mesh, use_abstract_mesh)
from xjax._src.reshard import reshard  # noqa: F401
