"""Host data across the processes of a multi-process run, as jax.experimental.multihost_utils."""
from xjax._src.multihost_utils import (assert_equal, broadcast_one_to_all, process_allgather,  # noqa: F401
                                       sync_global_devices)
