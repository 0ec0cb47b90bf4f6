"""Run under mpirun by tests/test_distributed.py: one process misbehaves (argv[1] says how); the
others must fail with an error naming it, within a bounded time."""
import os
import signal
import sys
import time

import numpy as np

import xjax
from xjax import lax

xjax.distributed.initialize()
case, p = sys.argv[1], xjax.process_index()
psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
gather = xjax.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")
x = np.ones((1, 3), np.float32)
psum(x).block_until_ready()  # collective #1: everyone is up

if p == 1:
    if case == "raise":
        raise ValueError("a failure on purpose")
    if case == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if case == "hang":
        time.sleep(60)
    if case == "shape":
        x = np.ones((1, 4), np.float32)
    if case == "order":
        gather(x)
if p == 0 and case == "exit":
    sys.exit(0)
psum(x).block_until_ready()
if case == "order":
    gather(x)
print("finished", p, flush=True)
