"""Host-side utilities of multi-process runs, as jax.experimental.multihost_utils.

They move host data (NumPy arrays, xjax arrays: any pytree) between processes over MPI, through
the checked collectives of mpi_channel.py, and return NumPy arrays as JAX's do. In a single process
(no launcher, or one process) they work on that process alone.
"""
import zlib

import numpy as np

from xjax._src import distributed, tree_util
from xjax._src.distributed import state
from xjax._src.mesh_across import global_value
from xjax._src.sharded_array import ShardedArray
from xjax._src.mpi_channel import run_collective


def _host(x):
    """x as a C-contiguous NumPy array; an xjax array's buffer is read in place."""
    return np.asarray(x, order="C")  # (np.ascontiguousarray would make a scalar 1-d)


def _across(api):
    distributed.check_initialized(f"multihost_utils.{api}")
    return distributed.is_initialized()


def _allgather(x, what):
    """(process_count, *x.shape): every process's x."""
    out = np.empty((state.process_count,) + x.shape, x.dtype)
    MPI = state.mpi
    run_collective(f"{what} of {x.dtype.name}{list(x.shape)}",
                   lambda comm: [comm.Iallgather([x.reshape(-1).view(np.uint8), MPI.BYTE],
                                                 [out.reshape(-1).view(np.uint8), MPI.BYTE])])
    return out


def process_allgather(in_tree, tiled=False):
    """Every process's value of each leaf of in_tree: stacked along a new leading axis (one entry
    per process, in process order), or concatenated along axis 0 when tiled. A leaf that is an
    array over a mesh across processes gives its global value, as in JAX."""

    def gather(leaf):
        if type(leaf) is ShardedArray and not leaf.is_fully_addressable:
            return np.asarray(global_value(leaf))
        x = _host(leaf)
        if tiled and x.ndim == 0:
            raise ValueError("process_allgather: tiled=True concatenates along axis 0, which a scalar lacks")
        out = _allgather(x, "process_allgather") if _across("process_allgather") else x[None]
        return out.reshape((-1,) + x.shape[1:]) if tiled else out

    return tree_util.tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree, is_source=None):
    """in_tree's leaves as the source process has them (process 0 unless is_source says which), on
    every process. Every process passes leaves of the same shapes and dtypes."""
    if is_source is None:
        is_source = distributed.process_index() == 0
    if not _across("broadcast_one_to_all"):
        return tree_util.tree_map(_host, in_tree)
    flags = _allgather(np.array(bool(is_source)), "broadcast_one_to_all's source")
    sources = [int(i) for i in np.flatnonzero(flags)]
    if len(sources) != 1:
        raise ValueError(f"broadcast_one_to_all: exactly one process must be the source (is_source=True); "
                         f"processes {sources} are")
    root = sources[0]
    MPI = state.mpi

    def bcast(leaf):
        x = _host(leaf)
        out = x.copy() if state.process_index == root else np.empty_like(x)
        run_collective(f"broadcast_one_to_all of {x.dtype.name}{list(x.shape)}",
                       lambda comm: [comm.Ibcast([out.reshape(-1).view(np.uint8), MPI.BYTE], root=root)])
        return out

    return tree_util.tree_map(bcast, in_tree)


def sync_global_devices(name):
    """A barrier over all processes; every process must pass the same name (else a ValueError)."""
    if not _across("sync_global_devices"):
        return
    crcs = _allgather(np.array(zlib.crc32(str(name).encode()), np.uint32), f"sync_global_devices({name!r})")
    if len(set(crcs.tolist())) != 1:
        raise ValueError(f"sync_global_devices: the processes passed different names (this one: {name!r})")


def assert_equal(in_tree, fail_message=""):
    """Raises AssertionError unless every process passes equal leaves (same shapes and values)."""

    def check(leaf):
        x = _host(leaf)
        every = process_allgather(x)
        if not all(np.array_equal(every[0], e, equal_nan=x.dtype.kind in "fc") for e in every[1:]):
            raise AssertionError(f"{fail_message} Expected equal leaves across processes, got: {x!r} on process "
                                 f"{distributed.process_index()}".strip())

    tree_util.tree_map(check, in_tree)
