"""Allreduce bandwidth between processes: xjax's pmap(psum) across processes next to mpi4py's own
Allreduce on NumPy arrays, float32 buffers of 1 KB to 64 MB.

    python bench/allreduce.py            # starts itself under mpirun with 2 processes
    mpirun -np 2 python bench/allreduce.py

Started by itself, it leaves Open MPI's default binding on (each process on its own cores, where
there are enough), as a user's mpirun does; xjax's pool then has one thread per bound core.

Bandwidth is bytes / time of one allreduce (the median over repetitions, each started after a
barrier). Columns:
  mpi4py Allreduce, mpi4py Iallreduce (+ Wait): what MPI gives a Python program on NumPy arrays;
  pmap checked / unchecked: a call of pmap(psum) end to end, as a user makes it (dispatch, the
    collective, the result array), with xjax's collective checks on (the default) and off
    (XJAX_CHECK_COLLECTIVES=0). pmap's psum runs in the core, whose check travels in the data's
    own messages and is always on: the two columns differ by noise only (the setting turns off
    the separate check of the collectives that run from Python);
  in one program: LOOP psums in a fori_loop under one pmap (one compiled program; the collectives
    run in the core with their checks on), its time divided by LOOP: a collective as a program
    that computes between collectives gets it, without a Python call per collective.
"""
import os
import shutil
import subprocess
import sys
import time

SIZES = [1 << k for k in range(10, 27, 2)]  # bytes: 1 KB .. 64 MB
LOOP = 16  # all-reduces in the one-program measurement


def _relaunch(np_):
    mpirun = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    if mpirun is None:
        sys.exit("bench/allreduce.py: no mpirun (pip install '.[distributed]')")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    # (Open MPI binds each process to its cores unless it must oversubscribe them; xjax's threads
    # follow the binding)
    oversubscribe = ["--oversubscribe"] if np_ > len(os.sched_getaffinity(0)) else []
    flags = oversubscribe + (["--allow-run-as-root"] if os.geteuid() == 0 else []) if "Open MPI" in version else []
    os.execv(mpirun, [mpirun, "-np", str(np_), *flags, sys.executable, *sys.argv])


def _median_times(runs, reps, barrier):
    """{name: median seconds} of runs {name: (setup, run)}, interleaved rep by rep so that a change
    in the machine's load hits every method alike, in an order rotated each rep: a method's place
    in the order changes its time (measured: with a fixed order, whichever pmap column came first
    after mpi4py's was the slower, checks on or off)."""
    times = {name: [] for name in runs}
    names = list(runs)
    for rep in range(reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            setup, run = runs[name]
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

    xjax.distributed.initialize()
    comm = MPI.COMM_WORLD
    me = xjax.process_index()
    psum = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    # LOOP all-reduces in one program: each doubles the value (2 processes), 2**-60 -> 2**(LOOP-60).
    looped = xjax.pmap(lambda v: lax.fori_loop(0, LOOP, lambda i, c: lax.psum(c, "i"), v), axis_name="i")
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        reps = max(7, min(300, (1 << 26) // nbytes))
        a = np.full(n, me + 1.0, np.float32)
        b = np.empty_like(a)
        x = xjax.device_put(a.reshape(1, n))
        tiny = xjax.device_put(np.full((1, n), 2.0 ** -60, np.float32))

        def checks(on):
            return lambda: setattr(state, "check", on)

        for check in (True, False):
            state.check = check
            out = psum(x)  # warm: traced and compiled once
            assert float(out[0, 0]) == sum(range(1, comm.size + 1))
        state.check = True
        if comm.size == 2:
            assert float(looped(tiny)[0, -1]) == 2.0 ** (LOOP - 60)
        times = _median_times({
            "mpi4py": (checks(True), lambda: comm.Allreduce(a, b)),
            "mpi4py I": (checks(True), lambda: comm.Iallreduce(a, b).Wait()),
            True: (checks(True), lambda: psum(x).block_until_ready()),
            False: (checks(False), lambda: psum(x).block_until_ready()),
            "loop": (checks(True), lambda: looped(tiny).block_until_ready()),
        }, reps, comm.Barrier)
        times["loop"] /= LOOP
        rows.append((nbytes, times))
    if me == 0:
        print(f"allreduce of float32 between {comm.size} processes ({MPI.Get_library_version().splitlines()[0][:40]})")
        print("GB/s (ratio to mpi4py's Allreduce) [median microseconds]; pmap: pmap(psum) end to end, collective "
              f"checks on and off; in one program: {LOOP} psums in a fori_loop under one pmap, per psum")
        print(f"{'bytes':>9} {'mpi4py Allreduce':>17} {'mpi4py Iallreduce':>24} {'pmap checked':>24} "
              f"{'pmap unchecked':>24} {'in one program':>24}")
        for nbytes, t in rows:
            ref = t["mpi4py"]
            cells = [f"{nbytes / ref / 1e9:6.3f} [{ref * 1e6:7.0f}]"]
            for key in ("mpi4py I", True, False, "loop"):
                cells.append(f"{nbytes / t[key] / 1e9:6.3f} ({ref / t[key]:4.2f}) [{t[key] * 1e6:7.0f}]")
            print(f"{nbytes:>9} " + " ".join(f"{c:>24}" if i else f"{c:>17}" for i, c in enumerate(cells)))

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from xjax._src.distributed import launched_processes

    if launched_processes() == 1 and "--no-launch" not in sys.argv:
        _relaunch(2)
    main()
