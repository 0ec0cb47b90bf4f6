"""Meshes across MPI processes: mpirun starts 2 xjax processes of 2 CPU devices each, whose 2x2 mesh
has 'data' over the processes or over each process's devices (tests/mpi/mesh.py runs the checks:
arrays, shard_map's collectives against a loop over blocks, and training against one device).
The arrays' side alone also runs in one process, over meshes holding stand-ins for other processes'
devices (CpuDevice objects without a local_hardware_id, as initialize() makes them)."""
import re

import pytest

from isolated import run_isolated
from test_distributed import mpirun, needs_mpirun


@needs_mpirun
@pytest.mark.parametrize("layout", ["processes", "devices"])
@pytest.mark.parametrize("case", ["arrays", "collectives", "training"])
def test_mesh_across_processes(case, layout):
    rc, out, _ = mpirun(2, "mesh.py", case, layout, XJAX_NUM_CPU_DEVICES="2", timeout=240)
    assert rc == 0, out
    assert out.count(f"ok {case}") == 2, out


@needs_mpirun
def test_one_device_per_process_runs_as_pmap():
    rc, out, _ = mpirun(2, "mesh.py", "whole", "processes", XJAX_NUM_CPU_DEVICES="1", timeout=240)
    assert rc == 0, out
    assert out.count("ok whole") == 2, out


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


def test_process_local_data_over_any_layout():
    # This process holds 2 of a 2x2 mesh's devices, anywhere in it; its local data is, along each
    # dimension, its blocks' rows (a NumPy loop finds them) or the whole extent.
    run_isolated("""
        import itertools
        import numpy as np, pytest, xjax as jax
        from hypothesis import given, settings, strategies as st
        from xjax._src.devices import CpuDevice
        from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P

        others = [CpuDevice(10 + i, 1, None) for i in range(2)]
        specs = [P("a"), P("b"), P("a", "b"), P("b", "a"), P(("a", "b")), P(None, ("b", "a")), P()]

        @given(st.sampled_from(list(itertools.combinations(range(4), 2))), st.sampled_from(specs),
               st.integers(1, 3), st.integers(1, 3), st.booleans())
        @settings(max_examples=40, deadline=None)
        def check(mine, spec, r, c, whole):
            order, it_mine, it_other = [], iter(jax.local_devices()), iter(others)
            for i in range(4):
                order.append(next(it_mine) if i in mine else next(it_other))
            s = NamedSharding(Mesh(np.array(order, dtype=object).reshape(2, 2), ("a", "b")), spec)
            g = np.arange(16 * r * c, dtype=np.float32).reshape(4 * r, 4 * c)
            index = s.devices_indices_map(g.shape)
            held = [index[order[i]] for i in mine]
            local = g
            if not whole:  # this process's rows along each dimension, in order
                for d in range(2):
                    keep = sorted({k for idx in held for k in range(g.shape[d])[idx[d]]})
                    local = np.take(local, keep, axis=d)
            x = jax.make_array_from_process_local_data(s, local, g.shape if whole else None)
            assert x.shape == g.shape and len(x.addressable_shards) == 2
            y = x * 2 + 1  # elementwise: block by block
            for sx, sy in zip(x.addressable_shards, y.addressable_shards):
                np.testing.assert_array_equal(np.asarray(sx.data), g[sx.index])
                np.testing.assert_array_equal(np.asarray(sy.data), 2 * g[sx.index] + 1)
            if len({(i[0].start, i[1].start) for i in held}) == len(set(map(str, index.values()))):
                np.testing.assert_array_equal(np.asarray(x), g)  # every block is here
            else:
                with pytest.raises(RuntimeError, match="spans non-addressable"):
                    np.asarray(x)

        check()
        print("ok")
        """, env={"XJAX_NUM_CPU_DEVICES": "2"})


@needs_mpirun
@pytest.mark.parametrize("layout", ["processes", "devices"])
@pytest.mark.parametrize("case", ["training", "reshard"])
def test_jit_partitioned_across_processes(case, layout):
    rc, out, _ = mpirun(2, "mesh_jit.py", case, layout, XJAX_NUM_CPU_DEVICES="2", timeout=240)
    assert rc == 0, out
    assert out.count(f"ok {case}") == 2, out


@needs_mpirun
def test_pmap_across_processes_under_transformations():
    rc, out, _ = mpirun(2, "pmap_transformed.py", XJAX_NUM_CPU_DEVICES="2", timeout=240)
    assert rc == 0, out
    assert out.count("ok") == 2, out


@needs_mpirun
def test_jit_training_bits_across_processes_do_not_depend_on_the_thread_count():
    bits = []
    for threads in ("1", "3"):
        rc, out, _ = mpirun(2, "mesh_jit.py", "training", "processes", threads, XJAX_NUM_CPU_DEVICES="2", timeout=240)
        assert rc == 0, out
        bits.append(re.search(r"bits (\w+)", out).group(1))
    assert bits[0] == bits[1]


@needs_mpirun
@pytest.mark.parametrize("processes, layout, threads", [(2, "processes", "1"), (2, "devices", "1"), (2, "processes", "3"),
                                                        (3, "line", "1")])
def test_block_moving_collectives_send_only_what_is_needed(processes, layout, threads):
    # all_gather, ppermute, all_to_all, psum_scatter against NumPy, and the bytes each process sends
    devices = "1" if layout == "line" else "2"
    rc, out, _ = mpirun(processes, "routes.py", layout, threads, XJAX_NUM_CPU_DEVICES=devices, timeout=240)
    assert rc == 0, out
    assert out.count("ok routes") == processes, out
