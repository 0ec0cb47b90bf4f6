"""Run under mpirun by tests/test_distributed.py: one process -- the last -- misbehaves (argv[1]
says how); the others must fail with an error naming it, within a bounded time. With one device
per process the psums run in the core (one compiled program), with more from Python. With argv[2]
"arrays" the operands are xjax Arrays, so that the psum that fails is a repeated call, which pmap
runs from C++ (pmap's PmapCalls). XJAX_MPI_SHARED_MEMORY=0 makes the processes wait for MPI
messages instead of in their shared memory."""
import os
import signal
import sys
import time

import numpy as np

import xjax
from xjax import lax

xjax.distributed.initialize()
case, p, P, L = sys.argv[1], xjax.process_index(), xjax.process_count(), xjax.local_device_count()
psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
gather = xjax.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")
operand = xjax.device_put if sys.argv[2:] == ["arrays"] else np.asarray
x = operand(np.ones((L, 3), np.float32))
psum(x).block_until_ready()  # collective #1: everyone is up
assert xjax._core.mpi_sharing() == (os.environ.get("XJAX_MPI_SHARED_MEMORY", "1") != "0")  # where they wait
assert psum._fast_calls.size == (sys.argv[2:] == ["arrays"]), "the C++ call path did not install the psum"

if p == P - 1:
    if case == "raise":
        raise ValueError("a failure on purpose")
    if case == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if case == "hang":
        time.sleep(60)
    if case == "shape":
        x = operand(np.ones((L, 4), np.float32))
    if case == "order":
        gather(x)
if p == 0 and case == "exit":
    sys.exit(0)
psum(x).block_until_ready()
if case == "order":
    gather(x)
print("finished", p, flush=True)
