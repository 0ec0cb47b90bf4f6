"""Meshes across MPI processes: mpirun starts 2 xjax processes of 2 CPU devices each, whose 2x2 mesh
has 'data' over the processes or over each process's devices (tests/mpi/mesh.py runs the checks:
arrays, shard_map's collectives against a loop over blocks, and training against one device)."""
import re

import pytest

from test_distributed import mpirun, needs_mpirun


@needs_mpirun
@pytest.mark.parametrize("layout", ["processes", "devices"])
@pytest.mark.parametrize("case", ["arrays", "collectives", "training"])
def test_mesh_across_processes(case, layout):
    rc, out, _ = mpirun(2, "mesh.py", case, layout, XJAX_NUM_CPU_DEVICES="2", timeout=240)
    assert rc == 0, out
    assert out.count(f"ok {case}") == 2, out


@needs_mpirun
def test_training_bits_do_not_depend_on_the_thread_count():
    bits = []
    for threads in ("1", "3"):
        rc, out, _ = mpirun(2, "mesh.py", "training", "processes", threads, XJAX_NUM_CPU_DEVICES="2", timeout=240)
        assert rc == 0, out
        bits.append(re.search(r"bits (\w+)", out).group(1))
    assert bits[0] == bits[1]


def test_one_process_local_data_must_be_the_whole_array():
    import numpy as np
    import xjax
    from xjax.sharding import NamedSharding, PartitionSpec as P

    s = NamedSharding(xjax.make_mesh((1,), ("x",)), P("x"))
    with pytest.raises(ValueError, match=r"global_shape should be None or equal to local_data.shape.Got "
                                         r"global_shape=\(4, 2\) and local_data.shape=\(2, 2\)"):
        xjax.make_array_from_process_local_data(s, np.zeros((2, 2), np.float32), (4, 2))
