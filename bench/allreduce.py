"""Allreduce bandwidth between processes: xjax's pmap(psum) across processes next to mpi4py's own
Allreduce on NumPy arrays, float32 buffers of 1 KB to 64 MB.

    python bench/allreduce.py            # starts itself under mpirun with 2 processes
    mpirun -np 2 python bench/allreduce.py

Bandwidth is bytes / time of one allreduce (the median over repetitions, each started after a
barrier). xjax runs with its collective checks on (the default: each collective is announced to
the others first) and off (XJAX_CHECK_COLLECTIVES=0). xjax posts MPI's non-blocking Iallreduce, so
mpi4py's Iallreduce (+ Wait) is shown too: Open MPI picks other algorithms for the two.
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


def _median_times(runs, reps, barrier):
    """{name: median seconds} of runs {name: (setup, run)}, interleaved rep by rep so that a change
    in the machine's load hits every method alike."""
    times = {name: [] for name in runs}
    for _ in range(reps):
        for name, (setup, run) in runs.items():
            setup()
            barrier()
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
    return {name: sorted(ts)[len(ts) // 2] for name, ts in times.items()}


def main():
    import numpy as np
    from mpi4py import MPI

    import xjax
    from xjax import lax
    from xjax._src.distributed import state
    from xjax._src.lax import parallel_mpi

    xjax.distributed.initialize()
    comm = MPI.COMM_WORLD
    me = xjax.process_index()
    psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    shards = parallel_mpi.Shards("i", comm.size, me, 1)
    lowering = parallel_mpi.RULES[lax.psum_p]
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        reps = max(7, min(300, (1 << 26) // nbytes))
        a = np.full(n, me + 1.0, np.float32)
        b = np.empty_like(a)
        x = xjax.device_put(a.reshape(1, n))
        flat = xjax.device_put(a)
        def checks(on):
            return lambda: setattr(state, "check", on)

        for check in (True, False):
            state.check = check
            out = psum(x)  # warm: traced and compiled once
            assert float(out[0, 0]) == sum(range(1, comm.size + 1))
        times = _median_times({
            "mpi4py": (checks(True), lambda: comm.Allreduce(a, b)),
            "mpi4py I": (checks(True), lambda: comm.Iallreduce(a, b).Wait()),
            "lowering": (checks(True), lambda: lowering(shards, [flat], axis_name=("i",))),
            True: (checks(True), lambda: psum(x).block_until_ready()),
            False: (checks(False), lambda: psum(x).block_until_ready()),
        }, reps, comm.Barrier)
        rows.append((nbytes, times))
    if me == 0:
        print(f"allreduce of float32 between {comm.size} processes ({MPI.Get_library_version().splitlines()[0][:40]})")
        print("GB/s (ratio to mpi4py's Allreduce) [median microseconds]; xjax lowering: the psum rule on xjax arrays, "
              "checked;")
        print("pmap: pmap(psum) end to end, with the collective checks on and off")
        print(f"{'bytes':>9} {'mpi4py Allreduce':>17} {'mpi4py Iallreduce':>24} {'xjax lowering':>24} "
              f"{'pmap checked':>24} {'pmap unchecked':>24}")
        for nbytes, t in rows:
            ref = t["mpi4py"]
            cells = [f"{nbytes / ref / 1e9:6.3f} [{ref * 1e6:7.0f}]"]
            for key in ("mpi4py I", "lowering", True, False):
                cells.append(f"{nbytes / t[key] / 1e9:6.3f} ({ref / t[key]:4.2f}) [{t[key] * 1e6:7.0f}]")
            print(f"{nbytes:>9} " + " ".join(f"{c:>24}" if i else f"{c:>17}" for i, c in enumerate(cells)))


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from xjax._src.distributed import launched_processes

    if launched_processes() == 1 and "--no-launch" not in sys.argv:
        _relaunch(2)
    main()
