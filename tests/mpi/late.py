"""Run under mpirun -np 2 by tests/test_distributed.py: process 1 arrives late at collective #2,
after process 0 gave up waiting for it (a timeout it catches and survives). Process 1's data then
completes the MPI operation that process 0 abandoned: it must land in memory process 0 kept, not
in memory freed and reused since (process 0 allocates and computes meanwhile, and checks its
arrays). Afterwards every collective fails at once on process 0, and on process 1 when its #2
failed too (in the core it may complete instead: its next collective then fails waiting). argv[1]:
"core" runs the psum in one compiled program (one device per process; called from pmap's C++ call
path), "python" from Python (two devices per process); both with MPI alone (XJAX_MPI_SHARED_MEMORY=0).
"shared": as "core", a psum small enough to pass through the processes' shared memory, where
process 0 leaves nothing in flight and process 1's late collective completes with its data."""
import sys
import time

import numpy as np

import xjax
import xjax.numpy as jnp
from xjax import _core, lax
from xjax._src.distributed import DistributedError, abandoned, state

xjax.distributed.initialize(collective_timeout=2)
p, L = xjax.process_index(), xjax.local_device_count()
in_core, shared = sys.argv[1] in ("core", "shared"), sys.argv[1] == "shared"
assert L == (1 if in_core else 2), L
assert _core.mpi_sharing() == shared
psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
x = np.ones((L, 1 << (10 if shared else 16)), np.float32)
if in_core:  # an Array: the later psums are repeated calls, which pmap runs from C++
    x = xjax.device_put(x)
np.testing.assert_array_equal(np.asarray(psum(x)), 2 * L)  # collective #1: everyone is up
assert psum._fast_calls.size == in_core, psum._fast_calls.size

if p == 1:
    time.sleep(4)  # process 0 times out meanwhile
completed = False
try:
    y = psum(x)
    # In the core the check and the data travel together: process 0 had sent both before it gave
    # up, so process 1's late collective may complete, with process 0's (kept) contribution.
    assert p == 1 and in_core, "collective #2 did not fail"
    np.testing.assert_array_equal(np.asarray(y), 2 * L)
    completed = True
except DistributedError as e:
    print(f"process {p} failed: {e}", flush=True)
    if p == 0:
        assert "process(es) [1] did not reach collective #2" in str(e), e
    else:  # its data never comes: process 0 left the collective
        assert "did not complete" in str(e) or "exited" in str(e), e
if shared:  # (nothing was in flight)
    assert _core.mpi_abandoned() == 0 and completed == (p == 1), (_core.mpi_abandoned(), completed)
elif in_core:
    assert _core.mpi_abandoned() == (0 if completed else 1), _core.mpi_abandoned()
else:  # the check of the Python collectives runs in the core where it has MPI (the shim built)
    assert len(abandoned) + _core.mpi_abandoned() == 1, (abandoned, _core.mpi_abandoned())
if p == 0:
    # Allocate, compute and check while process 1's late contribution arrives (MPI progresses in
    # every MPI call: the probes here).
    MPI, deadline = state.mpi, time.monotonic() + 5
    while time.monotonic() < deadline:
        a = [np.full(1 << 14, k, np.float32) for k in range(16)]
        b = jnp.asarray(np.arange(1 << 15, dtype=np.float32)) * 2
        state.control.Iprobe(source=MPI.ANY_SOURCE, tag=99)
        time.sleep(0.01)
        assert all(float(v[7]) == k for k, v in enumerate(a)) and float(b[5]) == 10
try:
    psum(x)
    raise AssertionError("a collective ran after a failed one")
except DistributedError as e:
    if completed:  # process 0 runs no collective after its failure: this one waits for it in vain
        assert "did not reach collective #3" in str(e) or "exited" in str(e), e
    else:
        assert "an earlier collective across processes failed" in str(e), e
print("ok late", p, flush=True)
