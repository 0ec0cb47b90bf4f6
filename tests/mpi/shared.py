"""Run under mpirun by tests/test_distributed.py with XJAX_MPI_SHARED_MEMORY=argv[1]: the all-reduces
between the processes of this host pass through their shared memory ("1") or MPI messages alone
("0"), at sizes on both sides of a shared message's room (64 KiB, its 64-byte head included), with
the same bits either way: each process combines the processes' values in pairs, in rank order, as
recursive doubling pairs them. (Sums of more than 1 MiB go by MPI's own all-reduce when MPI
alone carries them, whose pairs are MPI's: not tested here.) Prints "ok shared" when all pass."""
import sys

import numpy as np

import xjax
from xjax import _core, lax

xjax.distributed.initialize()
P, p = xjax.process_count(), xjax.process_index()
assert _core.mpi_sharing() == (sys.argv[1] == "1"), _core.mpi_sharing()


def pairwise(parts, op):
    """op over the processes' parts as recursive doubling pairs them (src/core/distributed/mpi.cpp)."""
    q = 1
    while 2 * q <= P:
        q *= 2
    v = list(parts)
    for r in range(P - q):
        v[r] = op(v[r], v[r + q])
    d = 1
    while d < q:
        for r in range(0, q, 2 * d):
            v[r] = op(v[r], v[r + d])
        d *= 2
    return v[0]


room = ((64 << 10) - 64) // 4  # float32 elements that fill a shared message
# The psums make one exchange of two float32 operands and an int32 one, in rounds of a message's
# room: operands and groups (8-byte aligned) cross the rounds' bounds at some of these sizes.
f = xjax.pmap(lambda x, y, i: (lax.psum(x, "i"), lax.psum(y, "i"), lax.psum(i, "i"), lax.pmax(x, "i")),
              axis_name="i")
rng = np.random.default_rng(5)  # the same draws in every process


def draw(n):
    return [(rng.standard_normal((1, n)) * 10.0 ** rng.integers(-3, 4, (1, n))).astype(np.float32) for _ in range(P)]


for n in [1, 255, room - 14, room - 3, room, room + 2, 1 << 16, (1 << 18) - 32]:
    xs, ys = draw(n), draw(5)
    ints = [rng.integers(-1000, 1000, (1, 7)).astype(np.int32) for _ in range(P)]
    for call in range(2):  # the first call, then the repeated one (pmap's C++ call path)
        args = (xs[p], ys[p], ints[p])
        total, ytotal, itotal, top = f(*(map(xjax.device_put, args) if call else args))
        np.testing.assert_array_equal(np.asarray(total), pairwise(xs, np.add), err_msg=f"n={n}")
        np.testing.assert_array_equal(np.asarray(ytotal), pairwise(ys, np.add), err_msg=f"n={n}")
        np.testing.assert_array_equal(np.asarray(top), pairwise(xs, np.maximum))
        np.testing.assert_array_equal(np.asarray(itotal), sum(ints))
        assert itotal.dtype == ints[p].dtype

# A segment mapped for another run's processes is refused before any round (each process on its own).
name = _core.mpi_shared_create(P + 1)
_core.mpi_share(name, P + 1, p)
_core.mpi_shared_unlink(name)
try:
    f(xs[p], ys[p], ints[p])
    raise AssertionError("a collective ran through a segment of another run's processes")
except xjax.distributed.DistributedError as e:
    assert f"was mapped as process {p} of {P + 1}, MPI was installed for process {p} of {P}" in str(e), e
print("ok shared", p, flush=True)
