"""Allreduce bandwidth between processes: xjax's pmap(psum) across processes next to mpi4py's own
Allreduce on NumPy arrays, float32 buffers of 1 KB to 64 MB.

    python bench/allreduce.py            # starts itself under mpirun with 2 processes
    mpirun -np 2 python bench/allreduce.py

Bandwidth is bytes / time of one allreduce (the median over repetitions, each started after a
barrier). xjax runs with its collective checks on (the default: each collective is announced to
the others first) and off (XJAX_CHECK_COLLECTIVES=0).
"""
import os
import shutil
import subprocess
import sys
import time

SIZES = [1 << k for k in range(10, 27, 2)]  # bytes: 1 KB .. 64 MB


def _relaunch(np_):
    mpirun = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    if mpirun is None:
        sys.exit("bench/allreduce.py: no mpirun (pip install '.[distributed]')")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) if "Open MPI" in version else []
    os.execv(mpirun, [mpirun, "-np", str(np_), *flags, sys.executable, *sys.argv])


def _median_time(run, reps, barrier):
    times = []
    for _ in range(reps):
        barrier()
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def main():
    import numpy as np
    from mpi4py import MPI

    import xjax
    from xjax import lax
    from xjax._src.distributed import state

    xjax.distributed.initialize()
    comm = MPI.COMM_WORLD
    me = xjax.process_index()
    psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        reps = max(5, min(300, (1 << 26) // nbytes))
        a = np.full(n, me + 1.0, np.float32)
        b = np.empty_like(a)
        x = xjax.device_put(a.reshape(1, n))
        ref = _median_time(lambda: comm.Allreduce(a, b), reps, comm.Barrier)
        ours = {}
        for check in (True, False):
            state.check = check
            out = psum(x)  # warm: traced and compiled once
            assert float(out[0, 0]) == sum(range(1, comm.size + 1))
            ours[check] = _median_time(lambda: psum(x).block_until_ready(), reps, comm.Barrier)
        rows.append((nbytes, ref, ours[True], ours[False]))
    if me == 0:
        print(f"allreduce of float32 between {comm.size} processes ({MPI.Get_library_version().splitlines()[0]})")
        print(f"{'bytes':>10} {'mpi4py GB/s':>12} {'xjax GB/s':>10} {'ratio':>6} {'unchecked GB/s':>15} {'ratio':>6}"
              f"   (median us: mpi4py / xjax / unchecked)")
        for nbytes, ref, checked, unchecked in rows:
            print(f"{nbytes:>10} {nbytes / ref / 1e9:>12.3f} {nbytes / checked / 1e9:>10.3f} {ref / checked:>6.2f} "
                  f"{nbytes / unchecked / 1e9:>15.3f} {ref / unchecked:>6.2f}   "
                  f"({ref * 1e6:.0f} / {checked * 1e6:.0f} / {unchecked * 1e6:.0f})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from xjax._src.distributed import launched_processes

    if launched_processes() == 1 and "--no-launch" not in sys.argv:
        _relaunch(2)
    main()
